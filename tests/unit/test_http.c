/*
 * net/http against a real HTTP server on loopback (a thread of this test that answers each
 * connection with the next scripted response): retries on 5xx, 429 and GitHub's rate-limit 403,
 * no retry on other 4xx, Retry-After beyond the allowed wait refused, 5xx storms bounded, body
 * caps, downloads restarted into a truncated sink, slow drips cut, refused connections, and
 * secrets redacted from every message; the limits from the environment (PROFGATE_HTTP_TIMEOUT_S,
 * PROFGATE_HTTP_ATTEMPTS: defaults, overrides, refusals) and the call's deadline cutting a hung
 * attempt; plus the Link, Retry-After and error-body parsers and user info in URLs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../../src/net/http.h"

/* ---- a scripted loopback server ---- */

#define MAX_SCRIPT 8
#define HANG_S	   20

struct server {
	int fd, port, n, served;
	/* raw responses; "DRIP" sends a byte every 2 s four times, then closes (a partial body);
	 * "HANG" answers nothing until the client hangs up or HANG_S pass, then closes (an empty
	 * reply): a call cut by its own limits says so, one that was not ends otherwise */
	const char *script[MAX_SCRIPT];
	char requests[MAX_SCRIPT][4096];
	pthread_t thread;
};

static void read_request(int c, char *out, size_t cap)
{
	size_t len = 0, need = 0;
	char *end;

	out[0] = '\0';
	while (len + 1 < cap) {
		ssize_t r = recv(c, out + len, cap - 1 - len, 0);

		if (r <= 0)
			break;
		len += (size_t)r;
		out[len] = '\0';
		if ((end = strstr(out, "\r\n\r\n"))) {
			const char *cl = strcasestr(out, "content-length:");

			need = (size_t)(end + 4 - out) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
			if (len >= need)
				break;
		}
	}
}

static void *serve(void *arg)
{
	struct server *s = arg;

	for (int i = 0; i < s->n; i++) {
		int c = accept(s->fd, NULL, NULL);

		if (c < 0)
			break;
		read_request(c, s->requests[i], sizeof(s->requests[i]));
		if (strcmp(s->script[i], "HANG") == 0) {
			struct timeval tv = {.tv_sec = HANG_S};
			char b[256];

			setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			while (recv(c, b, sizeof(b), 0) > 0)
				;
		} else if (strcmp(s->script[i], "DRIP") == 0) {
			const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";

			if (send(c, h, strlen(h), MSG_NOSIGNAL) > 0)
				for (int k = 0; k < 4 && send(c, "x", 1, MSG_NOSIGNAL) == 1; k++)
					sleep(2);
		} else if (send(c, s->script[i], strlen(s->script[i]), MSG_NOSIGNAL) < 0) {
			/* the client gave up; nothing to do */
		}
		s->served = i + 1;
		close(c);
	}
	return NULL;
}

static void server_start(struct server *s, int n, ...)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	va_list ap;
	int one = 1;

	memset(s, 0, sizeof(*s));
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s->script[i] = va_arg(ap, const char *);
	va_end(ap);
	s->n = n;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 8), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
}

/* Stop: unblock accept() by shutting the socket, then join. */
static void server_stop(struct server *s)
{
	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	pthread_join(s->thread, NULL);
}

static char url_buf[256];
static const char *url(const struct server *s, const char *path)
{
	snprintf(url_buf, sizeof(url_buf), "http://127.0.0.1:%d%s", s->port, path);
	return url_buf;
}

/* A raw response with its Content-Length counted: status line "404 Not Found", extra header
 * lines ("Name: v\r\n"...), body. The result lives in a static pool (tests are short). */
static char pool[8][1024];
static int pool_next;
static const char *resp(const char *status, const char *extra, const char *body)
{
	char *r = pool[pool_next++ % 8];

	snprintf(r, sizeof(pool[0]), "HTTP/1.1 %s\r\n%sContent-Length: %zu\r\n\r\n%s", status,
		 extra, strlen(body), body);
	return r;
}

#define OK_JSON                                                                                    \
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"ok\":1}"
#define EMPTY(code, reason, extra)                                                                 \
	"HTTP/1.1 " code " " reason "\r\n" extra "Content-Length: 0\r\nConnection: close\r\n\r\n"

/* ---- retries ---- */

static void test_retry_502_then_ok(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.url = NULL, .max_wait_s = 1, .what = "test"};
	const char *body = "{\"a\":1}";

	(void)state;
	server_start(&s, 2, EMPTY("502", "Bad Gateway", ""), OK_JSON);
	rq.url = url(&s, "/x");
	rq.method = "POST";
	rq.body = body;
	rq.body_len = strlen(body);
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 200);
	assert_int_equal(rs.attempts, 2);
	assert_string_equal(rs.body.ptr, "{\"ok\":1}");
	server_stop(&s);
	/* What every request carries: our User-Agent, a JSON content type, no Expect. */
	assert_non_null(strstr(s.requests[1], "User-Agent: profgate/"));
	assert_non_null(strstr(s.requests[1], "Content-Type: application/json"));
	assert_null(strcasestr(s.requests[1], "expect:"));
	assert_non_null(strstr(s.requests[1], "\r\n\r\n{\"a\":1}"));
	http_response_release(&rs);
}

static void test_429_retry_after(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.policy = HTTP_POLICY_PLAIN};

	(void)state;
	server_start(&s, 2, EMPTY("429", "Too Many Requests", "Retry-After: 0\r\n"), OK_JSON);
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 200);
	assert_int_equal(rs.attempts, 2);
	assert_true(rs.waited_s == 0); /* Retry-After: 0 was honoured, no backoff */
	server_stop(&s);
	http_response_release(&rs);
}

static void test_404_not_retried(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {0};
	char msg[128];

	(void)state;
	server_start(&s, 1,
		     resp("404 Not Found", "",
			  "{\"message\":\"Not Found\",\"documentation_url\":\"https://x/y\"}"));
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 404);
	assert_int_equal(rs.attempts, 1);
	http_error_message(&rs, msg, sizeof(msg));
	assert_string_equal(msg, "Not Found");
	server_stop(&s);
	http_response_release(&rs);
}

static void test_github_rate_limit_403(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.policy = HTTP_POLICY_GITHUB, .max_wait_s = 5};
	char limited[256];

	(void)state;
	/* reset = now (whole seconds): wait until a second after it, then succeed */
	snprintf(limited, sizeof(limited),
		 "HTTP/1.1 403 Forbidden\r\nx-ratelimit-remaining: 0\r\nx-ratelimit-reset: %ld\r\n"
		 "Content-Length: 2\r\n\r\n{}",
		 (long)time(NULL));
	server_start(
	    &s, 3, limited, OK_JSON,
	    resp("403 Forbidden", "", "{\"message\":\"Resource not accessible by integration\"}"));
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 200);
	assert_int_equal(rs.attempts, 2);
	assert_true(rs.waited_s > 0 && rs.waited_s <= 1.0);
	/* A permission 403 is final. */
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 403);
	assert_int_equal(rs.attempts, 1);
	server_stop(&s);
	http_response_release(&rs);
}

/* A request that may have taken effect: a 502 goes back to the caller at once,
 * a 429 (it was not done) is retried; a lost answer says it may have been sent. */
static void test_not_idempotent(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.policy = HTTP_POLICY_GITHUB, .not_idempotent = 1};
	int maybe = 0;

	(void)state;
	setenv("PROFGATE_TEST_SECONDARY_LIMIT_S", "0", 1);
	server_start(&s, 3, EMPTY("502", "Bad Gateway", ""), EMPTY("429", "Too Many Requests", ""),
		     OK_JSON);
	rq.url = url(&s, "/");
	rq.method = "POST";
	rq.body = "{}";
	rq.body_len = 2;
	rq.maybe_sent_out = &maybe;
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 502);
	assert_int_equal(rs.attempts, 1);
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 200);
	assert_int_equal(rs.attempts, 2);
	assert_int_equal(maybe, 0);
	server_stop(&s);
	/* the request goes out, the connection closes without an answer */
	server_start(&s, 1, "");
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_int_equal(rs.attempts, 1);
	assert_int_equal(maybe, 1);
	server_stop(&s);
	unsetenv("PROFGATE_TEST_SECONDARY_LIMIT_S");
	http_response_release(&rs);
}

/* GitHub's secondary limit: a 429 naming no wait waits the minimum (60 s;
 * the test-only variable sets 1 s here), not a second of backoff. */
static void test_secondary_limit_minimum(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.policy = HTTP_POLICY_GITHUB, .max_wait_s = 5};

	(void)state;
	setenv("PROFGATE_TEST_SECONDARY_LIMIT_S", "1", 1);
	server_start(&s, 2, EMPTY("429", "Too Many Requests", ""), OK_JSON);
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 200);
	assert_true(rs.waited_s >= 1.0 && rs.waited_s < 1.01); /* exactly the minimum, no jitter */
	server_stop(&s);
	/* a minimum over the longest wait: given up at once */
	setenv("PROFGATE_TEST_SECONDARY_LIMIT_S", "9", 1);
	server_start(&s, 1, EMPTY("429", "Too Many Requests", ""));
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_non_null(strstr(pg_error_last(), "secondary rate limit wants at least 9 s"));
	server_stop(&s);
	unsetenv("PROFGATE_TEST_SECONDARY_LIMIT_S");
	http_response_release(&rs);
}

static void test_retry_after_too_long(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.max_wait_s = 2, .what = "GitHub comments"};

	(void)state;
	server_start(&s, 1, EMPTY("503", "Service Unavailable", "Retry-After: 3600\r\n"));
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_non_null(strstr(pg_error_last(), "GitHub comments: HTTP 503"));
	assert_non_null(strstr(pg_error_last(), "asks to wait 3600 s"));
	server_stop(&s);
	http_response_release(&rs);
}

static void test_5xx_storm_bounded(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.max_attempts = 3};
	const char *r = EMPTY("503", "Service Unavailable", "Retry-After: 0\r\n");

	(void)state;
	server_start(&s, 3, r, r, r);
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_int_equal(rs.attempts, 3);
	assert_non_null(strstr(pg_error_last(), "gave up after 3 attempts: HTTP 503"));
	server_stop(&s);
	assert_int_equal(s.served, 3);
	http_response_release(&rs);
}

static void test_body_cap(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.max_body_bytes = 4};

	(void)state;
	server_start(&s, 1, OK_JSON);
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_ELIMIT);
	assert_non_null(strstr(pg_error_last(), "larger than 4 bytes"));
	server_stop(&s);
	http_response_release(&rs);
}

static void test_sink_restarts(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.max_wait_s = 1};
	char got[64] = {0};
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	/* The first answer is a 500 whose body must not reach the sink. */
	server_start(&s, 2,
		     "HTTP/1.1 500 Oops\r\nContent-Length: 9\r\nConnection: close\r\n\r\nwrongdata",
		     "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabcdef");
	rq.url = url(&s, "/f");
	rq.sink = f;
	assert_int_equal(http_do(&rq, &rs), 0);
	assert_int_equal(rs.status, 200);
	rewind(f);
	assert_int_equal(fread(got, 1, sizeof(got) - 1, f), 6);
	assert_string_equal(got, "abcdef");
	assert_int_equal(rs.body.len, 0);
	fclose(f);
	server_stop(&s);
	http_response_release(&rs);
}

static void test_slow_drip_cut(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.max_attempts = 1, .low_speed_s = 1};

	(void)state;
	server_start(&s, 1, "DRIP");
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	/* cut by the stall limit, not ended by the server's close after 8 s */
	assert_non_null(strstr(pg_error_last(), "too slow"));
	server_stop(&s);
	http_response_release(&rs);
}

static void test_refused_and_redacted(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	const char *secrets[] = {"sekrit-token-123", NULL};
	struct http_request rq = {.max_attempts = 2, .max_wait_s = 1, .secrets = secrets};
	char u[256];
	int port;

	(void)state;
	/* A port that was just free: nothing listens there. */
	server_start(&s, 0);
	port = s.port;
	server_stop(&s);
	snprintf(u, sizeof(u), "http://127.0.0.1:%d/a/sekrit-token-123/b?sig=sekrit-token-123",
		 port);
	rq.url = u;
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_int_equal(rs.attempts, 2);
	assert_null(strstr(pg_error_last(), "sekrit"));
	assert_null(strstr(pg_error_last(), "sig="));
	assert_non_null(strstr(pg_error_last(), "/a/***/b"));
	http_response_release(&rs);

	/* A server that echoes the secret in its error body. */
	server_start(&s, 1, resp("500 Oops", "", "{\"error\":\"bad key sekrit-token-123 !!\"}"));
	rq.url = url(&s, "/");
	rq.max_attempts = 1;
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_non_null(strstr(pg_error_last(), "bad key *** !!"));
	server_stop(&s);
	http_response_release(&rs);
}

/* ---- limits from the environment, the deadline ---- */

/* A token or key the process holds never travels in a URL, whoever made the
 * URL (a Link header, a signed URL from an answer): refused before any
 * connection, and the message does not repeat it. */
static void test_secret_never_in_url(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.max_attempts = 1};

	(void)state;
	pg_secret_add("ghp_in_url_0123456789");
	server_start(&s, 1, resp("200 OK", "", "[]"));
	rq.url = url(&s, "/repos/o/r/issues/7/comments?page=2&t=ghp_in_url_0123456789");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_int_equal(rs.attempts, 0);
	assert_null(strstr(pg_error_last(), "ghp_in_url"));
	assert_non_null(strstr(pg_error_last(), "carries a token or key"));
	rq.url = url(&s, "/repos/o/r/issues/7/comments?page=2");
	assert_int_equal(http_do(&rq, &rs), 0);
	server_stop(&s);
	assert_int_equal(s.served, 1);
	http_response_release(&rs);
}

static void test_env_limits(void **state)
{
	struct http_env_limits l;

	(void)state;
	unsetenv("PROFGATE_HTTP_TIMEOUT_S");
	unsetenv("PROFGATE_HTTP_ATTEMPTS");
	assert_int_equal(http_env_limits(&l), 0);
	assert_int_equal(l.timeout_s, 0);
	assert_int_equal(l.attempts, 0);
	/* the defaults they replace are finite */
	assert_true(HTTP_DEFAULT_TIMEOUT_S == 60 && HTTP_DEFAULT_ATTEMPTS == 5);
	assert_true(HTTP_DEFAULT_CONNECT_S == 10 && HTTP_DEFAULT_STALL_S == 30);
	setenv("PROFGATE_HTTP_TIMEOUT_S", "7", 1);
	setenv("PROFGATE_HTTP_ATTEMPTS", "", 1); /* empty: unset */
	assert_int_equal(http_env_limits(&l), 0);
	assert_int_equal(l.timeout_s, 7);
	assert_int_equal(l.attempts, 0);
	for (const char *const *bad = (const char *const[]){"0", "-1", "3601", "5s", " 5", "x",
							    "99999999999999999999", NULL};
	     *bad; bad++) {
		setenv("PROFGATE_HTTP_TIMEOUT_S", *bad, 1);
		assert_int_equal(http_env_limits(&l), PG_EUSAGE);
		assert_non_null(strstr(pg_error_last(), "PROFGATE_HTTP_TIMEOUT_S="));
	}
	unsetenv("PROFGATE_HTTP_TIMEOUT_S");
	setenv("PROFGATE_HTTP_ATTEMPTS", "21", 1);
	assert_int_equal(http_env_limits(&l), PG_EUSAGE);
	setenv("PROFGATE_HTTP_ATTEMPTS", "20", 1);
	assert_int_equal(http_env_limits(&l), 0);
	assert_int_equal(l.attempts, 20);
	unsetenv("PROFGATE_HTTP_ATTEMPTS");
}

static void test_env_limits_applied(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.what = "test"};
	const char *r = EMPTY("503", "Service Unavailable", "Retry-After: 0\r\n");

	(void)state;
	/* PROFGATE_HTTP_ATTEMPTS replaces the default 5 */
	setenv("PROFGATE_HTTP_ATTEMPTS", "2", 1);
	server_start(&s, 2, r, r);
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_int_equal(rs.attempts, 2);
	server_stop(&s);
	/* PROFGATE_HTTP_TIMEOUT_S cuts an attempt to a server that never answers */
	setenv("PROFGATE_HTTP_ATTEMPTS", "1", 1);
	setenv("PROFGATE_HTTP_TIMEOUT_S", "1", 1);
	server_start(&s, 1, "HANG");
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	assert_non_null(strstr(pg_error_last(), "test: gave up after 1 attempt: "));
	/* cut by the 1 s limits (the attempt's or the stall's), not by the server's close */
	assert_true(strstr(pg_error_last(), "timed out") || strstr(pg_error_last(), "too slow"));
	server_stop(&s);
	/* a bad value: a usage error before anything is sent */
	setenv("PROFGATE_HTTP_TIMEOUT_S", "soon", 1);
	assert_int_equal(http_do(&rq, &rs), PG_EUSAGE);
	unsetenv("PROFGATE_HTTP_TIMEOUT_S");
	unsetenv("PROFGATE_HTTP_ATTEMPTS");
	http_response_release(&rs);
}

static void test_deadline_cuts_attempt(void **state)
{
	struct server s;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq = {.deadline_s = 1, .timeout_s = 60, .low_speed_s = 60};

	(void)state;
	server_start(&s, 1, "HANG");
	rq.url = url(&s, "/");
	assert_int_equal(http_do(&rq, &rs), PG_EDELIVERY);
	/* the whole call's deadline cut the attempt, not its 60 s nor the server's close */
	assert_non_null(strstr(pg_error_last(), "timed out"));
	assert_int_equal(rs.attempts, 1);
	server_stop(&s);
	http_response_release(&rs);
}

/* ---- parsers ---- */

static void test_url_userinfo(void **state)
{
	(void)state;
	assert_true(http_url_has_userinfo("https://x-access-token:t0k@github.com/o/r.git"));
	assert_true(http_url_has_userinfo("http://t0k@127.0.0.1:80"));
	assert_false(http_url_has_userinfo("https://github.com/o/r.git"));
	assert_false(http_url_has_userinfo("https://github.com/a@b/r.git"));
	assert_false(http_url_has_userinfo("https://h/x?u=a@b"));
}

static void test_link_next(void **state)
{
	char *n;

	(void)state;
	n = http_link_next(
	    "<https://api.github.com/repositories/1300192/issues?page=2>; rel=\"prev\", "
	    "<https://api.github.com/repositories/1300192/issues?page=4>; rel=\"next\", "
	    "<https://api.github.com/repositories/1300192/issues?page=515>; "
	    "rel=\"last\"");
	assert_string_equal(n, "https://api.github.com/repositories/1300192/issues?page=4");
	free(n);
	n = http_link_next("<http://h/x?a=1,2>; rel=\"next last\"");
	assert_string_equal(n, "http://h/x?a=1,2");
	free(n);
	assert_null(http_link_next("<http://h/x?page=1>; rel=\"first\", <http://h/nextpage>; "
				   "rel=\"prev\""));
	assert_null(http_link_next(""));
	assert_null(http_link_next("garbage <no close"));
}

static void test_retry_after_values(void **state)
{
	(void)state;
	assert_true(http_retry_after_s("120", 0) == 120.0);
	assert_true(http_retry_after_s(" 1.5", 0) == 1.5);
	/* Sun, 06 Nov 1994 08:49:37 GMT is 784111777 */
	assert_true(http_retry_after_s("Sun, 06 Nov 1994 08:49:37 GMT", 784111770.0) == 7.0);
	assert_true(http_retry_after_s("Sun, 06 Nov 1994 08:49:37 GMT", 784111790.0) == 0.0);
	assert_true(http_retry_after_s("soon", 0) < 0);
	assert_true(http_retry_after_s("", 0) < 0);
}

static void test_redact_and_errors(void **state)
{
	const char *secrets[] = {"abcd1234", "xy", NULL};
	char s[] = "token abcd1234 and abcd1234abcd1234 xy";
	struct http_response rs = HTTP_RESPONSE_INIT;
	char msg[64];

	(void)state;
	pg_redact(s, secrets);
	assert_string_equal(s, "token *** and ****** xy");
	pg_buf_adds(&rs.body, "{\"errors\":[{\"message\":\"run\\nnot found\"}],\"data\":null}");
	http_error_message(&rs, msg, sizeof(msg));
	assert_string_equal(msg, "run not found");
	pg_buf_reset(&rs.body);
	pg_buf_adds(&rs.body, "{\"errors\":[\"Server down\"]}");
	http_error_message(&rs, msg, sizeof(msg));
	assert_string_equal(msg, "Server down");
	pg_buf_reset(&rs.body);
	pg_buf_adds(&rs.body, "<html>not json</html>");
	http_error_message(&rs, msg, sizeof(msg));
	assert_string_equal(msg, "");
	http_response_release(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_retry_502_then_ok),
	    cmocka_unit_test(test_429_retry_after),
	    cmocka_unit_test(test_404_not_retried),
	    cmocka_unit_test(test_github_rate_limit_403),
	    cmocka_unit_test(test_not_idempotent),
	    cmocka_unit_test(test_secondary_limit_minimum),
	    cmocka_unit_test(test_retry_after_too_long),
	    cmocka_unit_test(test_5xx_storm_bounded),
	    cmocka_unit_test(test_body_cap),
	    cmocka_unit_test(test_sink_restarts),
	    cmocka_unit_test(test_slow_drip_cut),
	    cmocka_unit_test(test_refused_and_redacted),
	    cmocka_unit_test(test_secret_never_in_url),
	    cmocka_unit_test(test_env_limits),
	    cmocka_unit_test(test_env_limits_applied),
	    cmocka_unit_test(test_deadline_cuts_attempt),
	    cmocka_unit_test(test_url_userinfo),
	    cmocka_unit_test(test_link_next),
	    cmocka_unit_test(test_retry_after_values),
	    cmocka_unit_test(test_redact_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
