/*
 * Sockets with timeouts for libgit2's fetches and pushes. libgit2 1.5 has no
 * timeout of its own (GIT_OPT_SET_SERVER_TIMEOUT came in 1.7): a git server
 * that accepts and never answers, or answers a byte now and then, would hold
 * a history append for ever. This registers a stream for libgit2's plain
 * sockets (GIT_STREAM_STANDARD); its TLS stream (mbedTLS in Debian) is built
 * on a socket from the same registry, so https remotes get the same limits.
 *
 * Connecting is cut after connect_s, a read or a write that has waited idle_s
 * without progress fails, and no read or write runs past the deadline, so a
 * slow drip is cut there too. Writes use MSG_NOSIGNAL: a server that resets
 * the connection during a push is an error, not a SIGPIPE that kills the
 * process. Name resolution (getaddrinfo) is not bounded here.
 *
 * libgit2 keeps an http connection alive between requests and never checks
 * that the server still holds it. A push asks for the ref advertisement,
 * builds its pack, and only then sends its POST: a pack that takes longer to
 * build than the server's keep-alive timeout (Apache's KeepAliveTimeout, 5
 * s; a compaction's push of many series refs on a busy machine) finds the
 * connection closed, and the push fails with "unexpected EOF" though the
 * server never saw it. So a request's first write, on a plain http
 * connection that the server closed while it sat idle, goes to a new
 * connection instead, as HTTP lets a client do with a request of which no
 * byte was sent. Under TLS the session is bound to its socket: there the
 * error stands.
 */
#include "http.h"

#include <errno.h>
#include <git2.h>
#include <git2/sys/stream.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The limits of the fetch or push under way: one set per process, set by
 * http_git_streams() before it. */
static struct {
	double deadline; /* CLOCK_MONOTONIC seconds; 0: none */
	uint32_t connect_s, idle_s;
	int tls; /* the remote is https: no new connection under a request */
} lim;

struct sock {
	git_stream parent; /* first: libgit2 holds a git_stream * */
	char *host, *port;
	int fd;
	int in_request; /* written since the last read: a request is under way */
};

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *fmt, ...) PG_PRINTF(1, 2);
static int fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	git_error_set_str(GIT_ERROR_NET, msg);
	return -1;
}

static int out_of_time(const struct sock *s, const char *doing)
{
	return fail("timed out %s %s: the time budget ran out", doing, s->host);
}

/* Wait until fd is ready for events: at most limit_s, never past the
 * deadline. 0 when ready (or in error: the next call says which). */
static int wait_ready(const struct sock *s, short events, uint32_t limit_s, const char *doing)
{
	for (;;) {
		double left = lim.deadline > 0 ? lim.deadline - now_mono() : 1e9;
		double wait = (double)limit_s < left ? (double)limit_s : left;
		struct pollfd p = {s->fd, events, 0};
		int n;

		if (wait <= 0)
			return out_of_time(s, doing);
		n = poll(&p, 1, (int)(wait * 1000) + 1);
		if (n > 0)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail("%s %s: %s", doing, s->host, strerror(errno));
		if (wait < (double)limit_s)
			return out_of_time(s, doing);
		return fail("timed out %s %s: nothing moved for %u s", doing, s->host, limit_s);
	}
}

/* Connect one address without blocking past the connect limit: 0, -1 with
 * *err set, or -2 when the time ran out (the message set). */
static int connect_one(struct sock *s, const struct addrinfo *a, int *err)
{
	int fd =
	    socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
	socklen_t len = sizeof(*err);

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	s->fd = fd;
	if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
		return 0;
	*err = errno;
	if (*err == EINPROGRESS) {
		if (wait_ready(s, POLLOUT, lim.connect_s, "connecting to")) {
			close(fd);
			s->fd = -1;
			return -2;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &len) == 0 && *err == 0)
			return 0;
	}
	close(fd);
	s->fd = -1;
	return -1;
}

static int sock_connect(git_stream *stream)
{
	struct sock *s = (struct sock *)stream;
	struct addrinfo hints, *info = NULL;
	int rc = -1, err = ECONNREFUSED;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_family = AF_UNSPEC;
	if ((err = getaddrinfo(s->host, s->port, &hints, &info)) != 0)
		return fail("cannot resolve %s: %s", s->host, gai_strerror(err));
	for (const struct addrinfo *a = info; a && rc == -1; a = a->ai_next)
		rc = connect_one(s, a, &err);
	freeaddrinfo(info);
	if (rc == -1) /* at -2, wait_ready has said that the time ran out */
		fail("cannot connect to %s port %s: %s", s->host, s->port, strerror(err));
	return rc == 0 ? 0 : -1;
}

/* One read or write on the non-blocking socket, bounded by the idle limit and
 * the history's deadline; the bytes moved, or -1 with the error set. */
static ssize_t sock_io(struct sock *s, int writing, void *buf, size_t len)
{
	const char *what = writing ? "writing to" : "reading from";
	short ev = writing ? POLLOUT : POLLIN;

	for (;;) {
		ssize_t n;

		if (lim.deadline > 0 && now_mono() >= lim.deadline)
			return out_of_time(s, what);
		n = writing ? send(s->fd, buf, len, MSG_NOSIGNAL) : recv(s->fd, buf, len, 0);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return fail("%s %s: %s", what, s->host, strerror(errno));
		if (wait_ready(s, ev, lim.idle_s, what))
			return -1;
	}
}

static ssize_t sock_read(git_stream *stream, void *data, size_t len)
{
	struct sock *s = (struct sock *)stream;

	s->in_request = 0;
	return sock_io(s, 0, data, len);
}

/* The server has closed the connection: its end of file (or a reset) is
 * waiting to be read, and nothing else. */
static int peer_closed(const struct sock *s)
{
	char c;
	ssize_t n = recv(s->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	return n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE));
}

static ssize_t sock_write(git_stream *stream, const char *data, size_t len, int flags)
{
	struct sock *s = (struct sock *)stream;

	if (!s->in_request && !lim.tls && s->fd >= 0 && peer_closed(s)) {
		close(s->fd); /* a request's first bytes: on a new connection */
		s->fd = -1;
		if (sock_connect(stream))
			return -1;
	}
	s->in_request = 1;
	return sock_io(s, 1, (void *)data, len); /* only sent */
}

static int sock_close(git_stream *stream)
{
	struct sock *s = (struct sock *)stream;

	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	return 0;
}

static void sock_free(git_stream *stream)
{
	struct sock *s = (struct sock *)stream;

	sock_close(stream);
	free(s->host);
	free(s->port);
	free(s);
}

static int sock_init(git_stream **out, const char *host, const char *port)
{
	struct sock *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s) {
		git_error_set_oom();
		return -1;
	}
	s->parent.version = GIT_STREAM_VERSION;
	s->parent.connect = sock_connect;
	s->parent.read = sock_read;
	s->parent.write = sock_write;
	s->parent.close = sock_close;
	s->parent.free = sock_free;
	s->host = pg_xstrdup(host);
	s->port = pg_xstrdup(port ? port : "80");
	s->fd = -1;
	*out = &s->parent;
	return 0;
}

int http_git_streams(double deadline, uint32_t connect_s, uint32_t idle_s, int tls)
{
	git_stream_registration r;

	lim.deadline = deadline;
	lim.tls = tls;
	lim.connect_s = connect_s ? connect_s : HTTP_DEFAULT_CONNECT_S;
	lim.idle_s = idle_s ? idle_s : HTTP_DEFAULT_STALL_S;
	memset(&r, 0, sizeof(r));
	r.version = GIT_STREAM_VERSION;
	r.init = sock_init;
	if (git_stream_register(GIT_STREAM_STANDARD, &r) < 0) {
		const git_error *e = git_error_last();
		return pg_error_set(PG_EDELIVERY, "cannot set up libgit2's sockets: %s",
				    e && e->message ? e->message : "unknown libgit2 error");
	}
	/* a libgit2 without TLS refuses the option: https remotes then fail
	 * with its own message, as before */
	if (tls && http_ca_bundle())
		(void)git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, http_ca_bundle(), NULL);
	return 0;
}
