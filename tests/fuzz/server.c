/*
 * The fuzz targets' loopback HTTP server (fuzz.h): answers each connection
 * with the next scripted response, raw, so that what a remote may send --
 * any status line, headers, body, cut short or not -- reaches profgate's real
 * client code (libcurl, net/http.c, the GitHub and W&B clients) unchanged.
 */
#include "fuzz.h"

#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int port;
static struct {
	char *resp[FUZZ_HTTP_MAX];
	size_t len[FUZZ_HTTP_MAX];
	int n, next;
	char *secret, *auth_path;
} script;

/* Read one request: headers, then Content-Length bytes of body. Bounded by
 * the socket's receive timeout and the buffer. */
static size_t read_request(int c, char *buf, size_t cap)
{
	size_t len = 0, need = 0;

	while (len + 1 < cap) {
		ssize_t r = recv(c, buf + len, cap - 1 - len, 0);
		char *end;

		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
		if (!need && (end = strstr(buf, "\r\n\r\n"))) {
			const char *cl = strcasestr(buf, "\r\ncontent-length:");

			need = (size_t)(end + 4 - buf) + (cl ? strtoul(cl + 17, NULL, 10) : 0);
		}
		if (need && len >= need)
			break;
	}
	buf[len] = '\0';
	return len;
}

/* The request's checks: no secret in the request line, no Authorization
 * header to a path other than the API's (auth_path). */
static void check_request(const char *req)
{
	const char *eol = strstr(req, "\r\n");
	size_t line = eol ? (size_t)(eol - req) : strlen(req);
	const char *path = strchr(req, ' ');
	const char *hdr_end = strstr(req, "\r\n\r\n");
	size_t hdrs = hdr_end ? (size_t)(hdr_end - req) : strlen(req);

	if (script.secret && *script.secret) {
		size_t sl = strlen(script.secret);
		for (size_t i = 0; i + sl <= line; i++)
			FUZZ_CHECK(memcmp(req + i, script.secret, sl) != 0,
				   "a secret in the request line: %.*s", (int)line, req);
	}
	if (script.auth_path && path) {
		const char *target = path + 1 + (path[1] == '/'); /* " /graphql HTTP/1.1" */
		const char *a = script.auth_path;
		int api = 0;

		/* '|'-separated: an exact path, or a prefix when it ends with '/' */
		while (!api && *a) {
			size_t al = strcspn(a, "|");
			api = strncmp(target, a, al) == 0 &&
			      (a[al - 1] == '/' || target[al] == ' ' || target[al] == '?');
			a += al + (a[al] == '|');
		}
		if (!api) {
			for (const char *h = req; h && h < req + hdrs; h = strstr(h + 1, "\r\n"))
				FUZZ_CHECK(strncasecmp(h, "\r\nauthorization:", 16) != 0,
					   "an Authorization header off the API: %.*s", (int)line,
					   req);
		}
	}
}

static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static char req[1 << 20];

	for (;;) {
		int c = accept(fd, NULL, NULL);
		struct timeval tv = {2, 0};
		const char *r = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
		size_t n = strlen(r);

		if (c < 0)
			continue;
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		read_request(c, req, sizeof(req));
		pthread_mutex_lock(&lock);
		check_request(req);
		if (script.next < script.n) {
			r = script.resp[script.next];
			n = script.len[script.next];
		}
		script.next++;
		for (size_t off = 0; off < n;) {
			ssize_t w = send(c, r + off, n - off, MSG_NOSIGNAL);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		pthread_mutex_unlock(&lock);
		shutdown(c, SHUT_WR);
		close(c);
	}
	return NULL;
}

int fuzz_http_port(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	pthread_t t;
	int fd, one = 1;

	if (port)
		return port;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	FUZZ_CHECK(fd >= 0, "socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	FUZZ_CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 16) == 0 &&
		       getsockname(fd, (struct sockaddr *)&a, &al) == 0,
		   "cannot listen on loopback");
	FUZZ_CHECK(pthread_create(&t, NULL, serve, (void *)(intptr_t)fd) == 0, "thread");
	pthread_detach(t);
	port = ntohs(a.sin_port);
	return port;
}

/* One response of the script, with FUZZ_HTTP_API replaced by the server's
 * base URL (links and signed URLs that point back here). */
static void add_response(const char *p, size_t n)
{
	struct pg_buf b = PG_BUF_INIT;
	char api[64];
	size_t al = strlen(FUZZ_HTTP_API), apil;

	apil = (size_t)snprintf(api, sizeof(api), "http://127.0.0.1:%d", port);
	for (size_t i = 0; i < n;) {
		const char *hit = memmem(p + i, n - i, FUZZ_HTTP_API, al);
		size_t k = hit ? (size_t)(hit - (p + i)) : n - i;

		pg_buf_add(&b, p + i, k);
		i += k;
		if (hit) {
			pg_buf_add(&b, api, apil);
			i += al;
		}
	}
	script.resp[script.n] = pg_buf_detach(&b, &script.len[script.n]);
	script.n++;
}

void fuzz_http_script(const uint8_t *data, size_t size, const char *secret, const char *auth_path)
{
	const char *p = (const char *)data, *end = p + size;
	size_t sl = strlen(FUZZ_HTTP_SEP);

	fuzz_http_port();
	pthread_mutex_lock(&lock);
	for (int i = 0; i < script.n; i++)
		free(script.resp[i]);
	free(script.secret);
	free(script.auth_path);
	memset(&script, 0, sizeof(script));
	script.secret = secret ? pg_xstrdup(secret) : NULL;
	script.auth_path = auth_path ? pg_xstrdup(auth_path) : NULL;
	while (p <= end && script.n < FUZZ_HTTP_MAX) {
		const char *cut = size ? memmem(p, (size_t)(end - p), FUZZ_HTTP_SEP, sl) : NULL;
		size_t n = cut ? (size_t)(cut - p) : (size_t)(end - p);

		add_response(p, n);
		if (!cut)
			break;
		p = cut + sl;
	}
	pthread_mutex_unlock(&lock);
}

int fuzz_http_served(void)
{
	int n;

	pthread_mutex_lock(&lock);
	n = script.next;
	pthread_mutex_unlock(&lock);
	return n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

static char scratch[512];

static int rm_all(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void scratch_remove(void)
{
	nftw(scratch, rm_all, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_scratch_dir(void)
{
	const char *dir = scratch;

	if (!scratch[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(scratch, sizeof(scratch), "%s/pg-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		FUZZ_CHECK(mkdtemp(scratch) != NULL, "mkdtemp %s", scratch);
		atexit(scratch_remove);
	}
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return dir;
}
