/*
 * The libcurl wrapper: one request, performed with bounded retries. Each
 * attempt is a fresh easy handle (no state leaks between attempts); waits
 * follow Retry-After, then GitHub's rate-limit reset, then jittered
 * exponential backoff, all bounded by max_wait_s and the call's deadline.
 *
 * Why a fresh handle per attempt: a retried download must start over into a
 * truncated sink, headers must belong to the answer being judged, and the
 * cost (one handle per attempt) is nothing next to a network round trip.
 * Only http and https are allowed, for the request and for redirects.
 */
#include "http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define BACKOFF_BASE_S	   1.0
#define DEFAULT_MAX_WAIT_S 60
#define DEFAULT_DEADLINE_S 300
#define DEFAULT_MAX_BODY   (64ull << 20)
#define ENV_MAX_TIMEOUT_S  3600
#define ENV_MAX_ATTEMPTS   20

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The limits of one call: the request's, else the environment's, else the
 * defaults. */
struct limits {
	uint32_t attempts, timeout_s, connect_s, stall_s;
};

/* What one attempt saw, for the write and header callbacks. */
struct attempt {
	const struct http_request *rq;
	struct http_response *rs;
	CURL *curl;
	uint64_t max_body, got;
	int over_limit, sink_failed;
};

static double now_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int http_url_has_userinfo(const char *url)
{
	const char *p = strstr(url, "://"), *host = p ? p + 3 : url;
	size_t n = strcspn(host, "/?#");

	return memchr(host, '@', n) != NULL;
}

/* The URL as messages show it: scheme, host and path, no query string (signed
 * URLs carry their signature there) and no user info. */
static void url_for_messages(const char *url, char *out, size_t len)
{
	const char *p = strstr(url, "://"), *host = p ? p + 3 : url, *at, *end;
	size_t n;

	end = host + strcspn(host, "/?#");
	at = memchr(host, '@', (size_t)(end - host));
	if (at)
		host = at + 1;
	end = host + strcspn(host, "?#");
	n = (size_t)(end - host);
	snprintf(out, len, "%.*s", (int)(n < 200 ? n : 200), host);
}

static void describe(const struct http_request *rq, char *out, size_t len)
{
	if (rq->what)
		snprintf(out, len, "%s", rq->what);
	else
		url_for_messages(rq->url, out, len);
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct attempt *at = ctx;
	size_t len = size * n, colon;

	/* A new status line starts a new answer (after 100 Continue or a redirect). */
	if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
		pg_buf_reset(&at->rs->heads);
		return len;
	}
	for (colon = 0; colon < len && data[colon] != ':'; colon++)
		;
	if (colon == len || colon == 0)
		return len;
	for (size_t i = 0; i < colon; i++)
		pg_buf_addc(&at->rs->heads, (char)tolower((unsigned char)data[i]));
	pg_buf_adds(&at->rs->heads, ": ");
	{
		size_t v = colon + 1, e = len;

		while (v < e && (data[v] == ' ' || data[v] == '\t'))
			v++;
		while (e > v && (data[e - 1] == '\r' || data[e - 1] == '\n' || data[e - 1] == ' '))
			e--;
		pg_buf_add(&at->rs->heads, data + v, e - v);
	}
	pg_buf_addc(&at->rs->heads, '\n');
	return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct attempt *at = ctx;
	size_t len = size * n;
	long status = 0;

	at->got += len;
	if (at->got > at->max_body) {
		at->over_limit = 1;
		return 0;
	}
	curl_easy_getinfo(at->curl, CURLINFO_RESPONSE_CODE, &status);
	if (at->rq->sink && status >= 200 && status < 300) {
		if (fwrite(data, 1, len, at->rq->sink) != len) {
			at->sink_failed = 1;
			return 0;
		}
		return len;
	}
	pg_buf_add(&at->rs->body, data, len);
	return len;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct attempt *at = ctx;

	(void)ultotal;
	(void)ulnow;
	at->rq->progress(at->rq->progress_ctx, (uint64_t)dlnow, (uint64_t)dltotal);
	return 0;
}

int http_header(const struct http_response *rs, const char *name, char *out, size_t out_len)
{
	size_t n = strlen(name);
	const char *p = rs->heads.ptr;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t line = eol ? (size_t)(eol - p) : strlen(p);

		if (line > n + 1 && strncasecmp(p, name, n) == 0 && p[n] == ':') {
			const char *v = p + n + 2;
			size_t vl = line - n - 2;

			if (out_len) {
				if (vl >= out_len)
					vl = out_len - 1;
				memcpy(out, v, vl);
				out[vl] = '\0';
			}
			return 1;
		}
		p = eol ? eol + 1 : p + line;
	}
	if (out_len)
		out[0] = '\0';
	return 0;
}

void http_url_escape(struct pg_buf *b, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c))
			pg_buf_addc(b, (char)c);
		else
			pg_buf_addf(b, "%%%02X", c);
	}
}

char *http_link_next(const char *link)
{
	const char *p = link;

	while (p && *p) {
		const char *lt = strchr(p, '<'), *gt, *end, *rel;

		if (!lt || !(gt = strchr(lt, '>')))
			return NULL;
		/* This link's parameters run to the next '<' (URLs are bracketed,
		 * so a comma inside one does not end it). */
		end = strchr(gt, '<');
		if (!end)
			end = gt + strlen(gt);
		for (rel = strstr(gt, "rel="); rel && rel < end; rel = strstr(rel + 4, "rel=")) {
			const char *v = rel + 4;

			if (*v == '"')
				v++;
			/* rel may list several relation types: "next last". */
			while (v < end && *v != '"' && *v != ';' && *v != ',') {
				size_t vl = strcspn(v, "\" ;,");

				if (vl == 4 && strncmp(v, "next", 4) == 0)
					return strndup(lt + 1, (size_t)(gt - lt - 1));
				v += vl;
				while (*v == ' ')
					v++;
			}
		}
		p = end;
	}
	return NULL;
}

double http_retry_after_s(const char *value, double now)
{
	char *end;
	double s;
	time_t t;

	while (*value == ' ')
		value++;
	if (!*value)
		return -1;
	errno = 0;
	s = strtod(value, &end);
	if (end != value && errno == 0 && isfinite(s)) {
		while (*end == ' ')
			end++;
		if (*end == '\0')
			return s < 0 ? 0 : s;
	}
	t = curl_getdate(value, NULL);
	if (t == (time_t)-1)
		return -1;
	s = (double)t - now;
	return s < 0 ? 0 : s;
}

/* A server's message as one line cut to out_len, redacted whole before it
 * is cut: a token cut in two would no longer be found. */
static void copy_line(char *out, size_t out_len, const char *text)
{
	char *all = pg_xstrdup(text ? text : "");
	size_t i = 0;

	pg_secret_redact(all);
	for (const char *s = all; *s && i + 1 < out_len; s++)
		out[i++] = (*s == '\n' || *s == '\r' || *s == '\t') ? ' ' : *s;
	if (out_len)
		out[i] = '\0';
	free(all);
}

void http_error_message(const struct http_response *rs, char *out, size_t out_len)
{
	cJSON *root = cJSON_ParseWithLength(rs->body.ptr, rs->body.len);
	const cJSON *m = NULL, *errs;

	if (out_len)
		out[0] = '\0';
	if (!root)
		return;
	if (cJSON_IsString(m = cJSON_GetObjectItemCaseSensitive(root, "message")) ||
	    cJSON_IsString(m = cJSON_GetObjectItemCaseSensitive(root, "error"))) {
		copy_line(out, out_len, m->valuestring);
	} else if (cJSON_IsArray(errs = cJSON_GetObjectItemCaseSensitive(root, "errors")) &&
		   (m = cJSON_GetArrayItem(errs, 0))) {
		if (cJSON_IsString(m))
			copy_line(out, out_len, m->valuestring);
		else if (cJSON_IsString(m = cJSON_GetObjectItemCaseSensitive(m, "message")))
			copy_line(out, out_len, m->valuestring);
	}
	cJSON_Delete(root);
}

/* The request's header list; libcurl failing to copy a line is out of memory. */
static struct curl_slist *add_header(struct curl_slist *h, const char *line)
{
	struct curl_slist *t = curl_slist_append(h, line);

	if (!t)
		pg_oom(strlen(line));
	return t;
}

static struct curl_slist *build_headers(const struct http_request *rq)
{
	struct curl_slist *h = NULL;
	int has_type = 0;

	for (const char *const *p = rq->headers; p && *p; p++) {
		if (strncasecmp(*p, "content-type:", 13) == 0)
			has_type = 1;
		h = add_header(h, *p);
	}
	if (rq->body && !has_type)
		h = add_header(h, "Content-Type: application/json");
	/* libcurl would send Expect: 100-continue on PUT and larger POST bodies
	 * and then stall up to a second for an answer most servers never send. */
	return add_header(h, "Expect:");
}

/* One limit from the environment: unset or empty leaves *out alone. */
static int env_u32(const char *name, uint32_t max, uint32_t *out)
{
	const char *v = getenv(name);
	int64_t n;

	if (!v || !*v)
		return 0;
	if (pg_parse_int(v, 1, max, &n))
		return pg_error_set(PG_EUSAGE, "%s='%.40s': give a whole number from 1 to %u", name,
				    v, max);
	*out = (uint32_t)n;
	return 0;
}

int http_env_limits(struct http_env_limits *out)
{
	memset(out, 0, sizeof(*out));
	if (env_u32("PROFGATE_HTTP_TIMEOUT_S", ENV_MAX_TIMEOUT_S, &out->timeout_s) ||
	    env_u32("PROFGATE_HTTP_ATTEMPTS", ENV_MAX_ATTEMPTS, &out->attempts))
		return PG_EUSAGE;
	return 0;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static int limits_of(const struct http_request *rq, struct limits *l)
{
	struct http_env_limits env;

	if (http_env_limits(&env))
		return PG_EUSAGE;
	l->attempts = rq->max_attempts ? rq->max_attempts
		      : env.attempts   ? env.attempts
				       : HTTP_DEFAULT_ATTEMPTS;
	l->timeout_s = rq->timeout_s   ? rq->timeout_s
		       : env.timeout_s ? env.timeout_s
				       : HTTP_DEFAULT_TIMEOUT_S;
	l->connect_s = rq->connect_timeout_s ? rq->connect_timeout_s : HTTP_DEFAULT_CONNECT_S;
	l->stall_s = rq->low_speed_s ? rq->low_speed_s : HTTP_DEFAULT_STALL_S;
	if (env.timeout_s) {
		l->connect_s = min_u32(l->connect_s, env.timeout_s);
		l->stall_s = min_u32(l->stall_s, env.timeout_s);
	}
	return 0;
}

static CURL *make_handle(const struct http_request *rq, const struct limits *l, long timeout_ms,
			 struct attempt *at, struct curl_slist *heads, char *errbuf)
{
	CURL *c = curl_easy_init();
	const char *method = rq->method ? rq->method : "GET";

	if (!c)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, rq->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "profgate/" PG_VERSION);
	if (http_ca_bundle())
		curl_easy_setopt(c, CURLOPT_CAINFO, http_ca_bundle());
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, heads);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)l->connect_s);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)l->stall_s);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, at);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, at);
	if (rq->progress) {
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, at);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	}
	if (rq->body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->body);
	}
	if (strcmp(method, "GET") == 0 && !rq->body)
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else if (strcmp(method, "POST") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	return c;
}

static int is_rate_limit_403(const struct http_response *rs)
{
	char v[64];

	if (http_header(rs, "x-ratelimit-remaining", v, sizeof(v)) && strcmp(v, "0") == 0)
		return 1;
	if (http_header(rs, "retry-after", v, sizeof(v)))
		return 1;
	return strcasestr(rs->body.ptr, "rate limit") != NULL;
}

static int retryable_status(const struct http_request *rq, const struct http_response *rs)
{
	long s = rs->status;

	if (rq->policy == HTTP_POLICY_NONE)
		return 0;
	if (s >= 500 && s <= 599)
		return !rq->not_idempotent; /* it may have been done: the caller looks first */
	if (s == 408 || s == 429)
		return 1;
	return rq->policy == HTTP_POLICY_GITHUB && s == 403 && is_rate_limit_403(rs);
}

/* GitHub's secondary limit: at least the minimum (PROFGATE_TEST_SECONDARY_LIMIT_S
 * in tests), doubling per attempt up to max_wait; *told is 2 when even the
 * minimum is more than max_wait (then the call gives up and says so). */
static double secondary_wait(uint32_t n, double max_wait, int *told)
{
	const char *env = getenv("PROFGATE_TEST_SECONDARY_LIMIT_S");
	double min = HTTP_SECONDARY_LIMIT_S, s;
	int64_t v;

	if (env && *env && pg_parse_int(env, 0, 3600, &v) == 0)
		min = (double)v;
	s = min * pow(2.0, n > 10 ? 10 : (double)n - 1);
	if (s > max_wait)
		s = max_wait > min ? max_wait : min;
	*told = min > max_wait ? 2 : 0;
	return s;
}

/* Seconds to wait before attempt n + 1: what the server asked for when it
 * said, else exponential backoff with ±25% jitter. *told is 1 when the
 * server named the wait (so that a wait longer than allowed is reported). */
static double wait_for(const struct http_request *rq, const struct http_response *rs, uint32_t n,
		       double max_wait, unsigned *rng, int *told)
{
	char v[128];
	double s, now = now_wall();

	*told = 0;
	if (http_header(rs, "retry-after", v, sizeof(v)) && (s = http_retry_after_s(v, now)) >= 0) {
		*told = 1;
		return s;
	}
	if (rq->policy == HTTP_POLICY_GITHUB &&
	    http_header(rs, "x-ratelimit-remaining", v, sizeof(v)) && strcmp(v, "0") == 0 &&
	    http_header(rs, "x-ratelimit-reset", v, sizeof(v))) {
		*told = 1;
		s = strtod(v, NULL) - now + 1.0;
		return s < 0 ? 0 : s;
	}
	/* a limit that names no wait: GitHub's secondary limit, "wait at least
	 * one minute" (a 429 as well as a rate-limit 403) */
	if (rq->policy == HTTP_POLICY_GITHUB && (rs->status == 403 || rs->status == 429))
		return secondary_wait(n, max_wait, told);
	s = BACKOFF_BASE_S * pow(2.0, n > 10 ? 10 : (double)n - 1);
	*rng = *rng * 1103515245u + 12345u;
	return s * (0.75 + 0.5 * ((*rng >> 8) & 0xffff) / 65536.0);
}

/* One attempt, cut at timeout_ms. Returns the CURLcode; fills rs. */
static CURLcode attempt_once(const struct http_request *rq, const struct limits *l, long timeout_ms,
			     struct http_response *rs, struct curl_slist *heads, char *errbuf,
			     int *over, int *sink_failed)
{
	struct attempt at = {
	    rq, rs, NULL, rq->max_body_bytes ? rq->max_body_bytes : DEFAULT_MAX_BODY, 0, 0, 0};
	CURLcode rc;

	pg_buf_reset(&rs->body);
	pg_buf_reset(&rs->heads);
	rs->status = 0;
	errbuf[0] = '\0';
	if (rq->sink) {
		fflush(rq->sink);
		if (ftruncate(fileno(rq->sink), 0) != 0 || fseek(rq->sink, 0, SEEK_SET) != 0) {
			*sink_failed = 1;
			return CURLE_WRITE_ERROR;
		}
	}
	if (!(at.curl = make_handle(rq, l, timeout_ms, &at, heads, errbuf)))
		return CURLE_OUT_OF_MEMORY;
	rc = curl_easy_perform(at.curl);
	curl_easy_getinfo(at.curl, CURLINFO_RESPONSE_CODE, &rs->status);
	curl_easy_cleanup(at.curl);
	if (rq->sink && fflush(rq->sink) != 0)
		at.sink_failed = 1;
	*over = at.over_limit;
	*sink_failed = at.sink_failed;
	return rc;
}

/* Transport errors after which the request cannot have reached the server. */
static int never_sent(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	       rc == CURLE_COULDNT_RESOLVE_PROXY;
}

/* Transport errors worth another attempt: the network, not the request. A
 * request that may have taken effect is tried again only when it cannot
 * have been sent. */
static int retryable_curl(const struct http_request *rq, CURLcode rc)
{
	if (rq->not_idempotent && !never_sent(rc))
		return 0;
	switch (rc) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_TOO_MANY_REDIRECTS:
	case CURLE_WRITE_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE: return 0;
	default: return 1;
	}
}

static void cause_of(const struct http_response *rs, CURLcode rc, const char *errbuf, char *out,
		     size_t len)
{
	char msg[256];

	if (rc != CURLE_OK) {
		snprintf(out, len, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		return;
	}
	http_error_message(rs, msg, sizeof(msg));
	if (msg[0])
		snprintf(out, len, "HTTP %ld: %s", rs->status, msg);
	else
		snprintf(out, len, "HTTP %ld", rs->status);
}

/* The time one attempt may take: its own limit, cut at the call's deadline
 * (at least a millisecond: 0 would mean none to libcurl). */
static long attempt_ms(const struct limits *l, double deadline)
{
	double left = (deadline - now_mono()) * 1e3, own = (double)l->timeout_s * 1e3;

	if (left < own)
		own = left;
	return own < 1 ? 1 : (long)own;
}

int http_do(const struct http_request *rq, struct http_response *rs)
{
	struct limits lim;
	uint32_t max;
	double max_wait = rq->max_wait_s ? rq->max_wait_s : DEFAULT_MAX_WAIT_S;
	double deadline = now_mono() + (rq->deadline_s ? rq->deadline_s : DEFAULT_DEADLINE_S);
	struct curl_slist *heads = NULL;
	unsigned rng = (unsigned)getpid() ^ (unsigned)now_wall();
	char errbuf[CURL_ERROR_SIZE], what[256], cause[600];
	int rc = 0;

	pg_buf_release(&rs->body);
	pg_buf_release(&rs->heads);
	memset(rs, 0, sizeof(*rs));
	pg_buf_init(&rs->body);
	pg_buf_init(&rs->heads);
	describe(rq, what, sizeof(what));
	pg_redact(what, rq->secrets);
	if (limits_of(rq, &lim))
		return PG_EUSAGE;
	/* URLs end up in logs (proxies, servers): a token or key never travels
	 * in one, whoever made it (a Link header, a signed URL from an answer) */
	if (pg_secret_in(rq->url))
		return pg_error_set(PG_EDELIVERY, "%s: the URL carries a token or key; not sent",
				    what);
	max = lim.attempts;
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK)
		return pg_error_set(PG_EDELIVERY, "%s: cannot start libcurl: %s", what,
				    curl_easy_strerror(global_rc));
	heads = build_headers(rq);

	for (uint32_t n = 1;; n++) {
		int over = 0, sink_failed = 0, told;
		CURLcode cc;
		double wait;

		rs->attempts = n;
		cc = attempt_once(rq, &lim, attempt_ms(&lim, deadline), rs, heads, errbuf, &over,
				  &sink_failed);
		if (over) {
			rc = pg_error_set(
			    PG_ELIMIT, "%s: the answer is larger than %llu bytes", what,
			    (unsigned long long)(rq->max_body_bytes ? rq->max_body_bytes
								    : DEFAULT_MAX_BODY));
			break;
		}
		if (sink_failed) {
			rc = pg_error_set(PG_EIO, "%s: cannot write the download: %s", what,
					  strerror(errno));
			break;
		}
		if (cc == CURLE_OK && !retryable_status(rq, rs))
			break;
		cause_of(rs, cc, errbuf, cause, sizeof(cause));
		pg_redact(cause, rq->secrets);
		if (cc != CURLE_OK && (rq->policy == HTTP_POLICY_NONE || !retryable_curl(rq, cc))) {
			if (rq->maybe_sent_out && rq->not_idempotent && !never_sent(cc))
				*rq->maybe_sent_out = 1;
			rc = pg_error_set(PG_EDELIVERY, "%s: %s", what, cause);
			break;
		}
		wait = wait_for(rq, rs, n, max_wait, &rng, &told);
		if (told && wait > max_wait) {
			rc = pg_error_set(PG_EDELIVERY,
					  "%s: %s; %s %.0f s, more than the %.0f s profgate waits",
					  what, cause,
					  told == 2 ? "GitHub's secondary rate limit wants at least"
						    : "the server asks to wait",
					  wait, max_wait);
			break;
		}
		if (wait > max_wait)
			wait = max_wait;
		if (n >= max || now_mono() + wait > deadline) {
			rc = pg_error_set(PG_EDELIVERY, "%s: gave up after %u attempt%s: %s", what,
					  n, n == 1 ? "" : "s", cause);
			break;
		}
		pg_log("profgate: %s: attempt %u of %u: %s; retrying in %.1f s", what, n, max,
		       cause, wait);
		sleep_s(wait);
		rs->waited_s += wait;
	}
	curl_slist_free_all(heads);
	return rc;
}

void http_response_release(struct http_response *rs)
{
	pg_buf_release(&rs->body);
	pg_buf_release(&rs->heads);
}
