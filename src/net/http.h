/*
 * net/: the one libcurl wrapper every HTTP call of profgate goes through
 * (GitHub REST, W&B GraphQL, signed storage URLs): timeouts, bounded retries
 * with backoff, Retry-After and rate-limit waits, size caps, and secrets kept
 * out of every message it makes.
 */
#ifndef PG_NET_HTTP_H
#define PG_NET_HTTP_H

#include "../util/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How a failed attempt is judged. The policies are the documented ones of
 * ../shared/docs/integrations.md: GitHub §3.3, W&B §1.8. */
enum http_policy {
	HTTP_POLICY_PLAIN,  /* retry transport errors, 408, 429 and 5xx */
	HTTP_POLICY_GITHUB, /* PLAIN, plus 403 only when rate-limit shaped
			       (x-ratelimit-remaining: 0, retry-after, or a
			       "rate limit" message); waits for x-ratelimit-reset;
			       a 429 or 403 limit that names no wait (a secondary
			       limit) waits at least HTTP_SECONDARY_LIMIT_S,
			       doubling per attempt */
	HTTP_POLICY_NONE,   /* one attempt */
};

struct http_request {
	const char *method; /* "GET" (default when NULL), "POST", "PATCH", "PUT", "DELETE" */
	const char *url;
	/* Extra header lines "Name: value", NULL-terminated, or NULL. The
	 * wrapper always adds User-Agent: profgate/<version> and an empty
	 * Expect:, and Content-Type: application/json when a body is given and
	 * no Content-Type header is. */
	const char *const *headers;
	const void *body; /* sent as is; body_len bytes (may be 0 with a non-NULL body) */
	size_t body_len;
	/* Strings to redact ("***") from every error message and log line the
	 * wrapper makes, NULL-terminated, or NULL (tokens, API keys, signed
	 * URL query strings). The URL's query string is never logged anyway. */
	const char *const *secrets;
	enum http_policy policy;
	/* A request that may have taken effect although its answer was lost (a
	 * POST that creates something): retried only on answers that say it
	 * did not (408, 429, a rate-limit 403). A 5xx is returned to the
	 * caller (rc 0, rs->status), and a transport failure is PG_EDELIVERY
	 * at once with *maybe_sent_out set, so that the caller looks before
	 * sending again. */
	int not_idempotent;
	int *maybe_sent_out; /* may be NULL */
	/* Limits; 0 takes the default. PROFGATE_HTTP_ATTEMPTS replaces the
	 * default attempts, PROFGATE_HTTP_TIMEOUT_S the default timeout_s, and
	 * also cuts connect_timeout_s and low_speed_s when it is lower
	 * (http_env_limits). No attempt runs past the deadline. */
	uint32_t max_attempts;	    /* 0: 5 */
	uint32_t max_wait_s;	    /* longest single wait between attempts; 0: 60 */
	uint32_t deadline_s;	    /* whole call, all attempts and waits; 0: 300 */
	uint32_t timeout_s;	    /* one attempt, total; 0: 60 */
	uint32_t connect_timeout_s; /* 0: 10 */
	uint32_t low_speed_s;	    /* abort an attempt below 1 byte/s for this long; 0: 30 */
	uint64_t max_body_bytes;    /* cap on the response body; 0: 64 MiB */
	/* When set, the response body of a 2xx answer is written here instead
	 * of into http_response.body (downloads); the wrapper truncates and
	 * rewinds it before each attempt, so a retried download starts over. */
	FILE *sink;
	/* Called with bytes received so far and the expected total (0 when
	 * unknown); may be NULL. */
	void (*progress)(void *ctx, uint64_t now_bytes, uint64_t total_bytes);
	void *progress_ctx;
	const char *what; /* names the call in messages ("GitHub comments"); NULL: the host */
};

struct http_response {
	long status;	     /* the last attempt's HTTP status; 0 when none arrived */
	struct pg_buf body;  /* the last attempt's body (empty when sunk), NUL-terminated */
	struct pg_buf heads; /* the last attempt's headers: "name: value\n", names lowercased */
	uint32_t attempts;
	double waited_s; /* time spent waiting between attempts */
};

#define HTTP_RESPONSE_INIT                                                                         \
	{                                                                                          \
		0, PG_BUF_INIT, PG_BUF_INIT, 0, 0                                                  \
	}

/*
 * Perform rq, retrying per its policy. Returns 0 when a response arrived
 * whose status is final (any 2xx, or an error status the policy does not
 * retry: the caller reads rs->status and rs->body and decides), PG_EDELIVERY
 * with the message set when attempts or time ran out on retryable failures
 * or the transport failed for good, PG_ELIMIT when the body exceeded
 * max_body_bytes. rs must be initialised (HTTP_RESPONSE_INIT, or a response
 * already used): it is reset first; the caller frees it with
 * http_response_release() in every case.
 */
int http_do(const struct http_request *rq, struct http_response *rs);
void http_response_release(struct http_response *rs);

/* GitHub's secondary rate limit: a 429 or 403 without retry-after or an
 * exhausted x-ratelimit-remaining waits at least this long (GitHub's docs:
 * "wait at least one minute"). PROFGATE_TEST_SECONDARY_LIMIT_S replaces it,
 * for tests only (docs/action.md). */
#define HTTP_SECONDARY_LIMIT_S 60

/* Defaults of http_request's limits (docs/robustness.md "Faults and limits"). */
#define HTTP_DEFAULT_ATTEMPTS  5
#define HTTP_DEFAULT_TIMEOUT_S 60
#define HTTP_DEFAULT_CONNECT_S 10
#define HTTP_DEFAULT_STALL_S   30

/* What the environment sets; 0 where it sets nothing. */
struct http_env_limits {
	uint32_t timeout_s; /* PROFGATE_HTTP_TIMEOUT_S, 1..3600 */
	uint32_t attempts;  /* PROFGATE_HTTP_ATTEMPTS, 1..20 */
};

/* Read PROFGATE_HTTP_TIMEOUT_S and PROFGATE_HTTP_ATTEMPTS. Returns 0, or
 * PG_EUSAGE with the message set for a value that is not a whole number in
 * range (an empty value counts as unset). */
int http_env_limits(struct http_env_limits *out) PG_WUR;

/* The value of header name (case-insensitive) in rs, copied into out
 * (cut at out_len - 1); 1 when present, 0 when not. */
int http_header(const struct http_response *rs, const char *name, char *out, size_t out_len);

/* s percent-encoded into b as Python's urllib.parse.quote does: letters,
 * digits, "-._~" and '/' kept, every other byte %XX. */
void http_url_escape(struct pg_buf *b, const char *s);

/* The URL of rel="next" in a Link header value, malloc'd, or NULL. */
char *http_link_next(const char *link);

/* Seconds to wait from a Retry-After value (delta seconds, fractional
 * allowed, or an HTTP date); -1 when it is neither. now is the epoch time. */
double http_retry_after_s(const char *value, double now);

/* The message rs->body's JSON carries ("message", or "error", or the first of
 * "errors"), copied into out; "" when none. For one-line errors. */
void http_error_message(const struct http_response *rs, char *out, size_t out_len);

/* 1 when url (scheme://...) carries user info: "user[:password]@host". */
int http_url_has_userinfo(const char *url);

/* ---- TLS (tls.c) ---- */

/* The CA bundle to trust: SSL_CERT_FILE when set, else the first readable of
 * the distributions' usual bundle files, else NULL (the libraries' built-in
 * default). A static string or the environment's; never freed. */
const char *http_ca_bundle(void);

/* ---- libgit2's connections (git_stream.c) ---- */

/*
 * Give libgit2 sockets with timeouts (libgit2 1.5 has none): connecting is
 * cut after connect_s (0: 10), a read or write waiting idle_s without
 * progress fails (0: 30), and no I/O runs past deadline (CLOCK_MONOTONIC
 * seconds; 0: none). Covers http and https remotes; tls: the remote is
 * https, so libgit2 is pointed at http_ca_bundle() (parsing a bundle costs a
 * local read more than its records). Call after each git_libgit2_init(),
 * before the fetch or push; the limits are the process's (one git operation
 * at a time). Returns 0 or PG_EDELIVERY.
 */
int http_git_streams(double deadline, uint32_t connect_s, uint32_t idle_s, int tls) PG_WUR;

#endif
