/*
 * GitHub REST for profgate: the sticky PR comment (one per series, found by
 * its hidden marker and its author through every page of comments, updated in
 * place), check runs, and fitting markdown under GitHub's size limits. Every
 * request goes through net/http.h with the GitHub policy (retries on 5xx, 429
 * and rate-limit 403s, waits for Retry-After and x-ratelimit-reset).
 *
 * Why the author matters: anyone can paste a marker into a comment, so only a
 * comment by the token's own login is ever edited. A personal token names its
 * login through GET /user. An app's installation token (the Actions
 * GITHUB_TOKEN, or another GitHub App's) cannot read /user, nor learn its own
 * bot login from any endpoint it may call (GET /app wants the app's JWT), so
 * then a comment counts as ours when a bot account wrote it (user.type
 * "Bot"): people cannot make bot accounts, and a bot that pastes our marker is
 * far less likely than a person who does. PROFGATE_GITHUB_LOGIN (the action's
 * github_login input) names the login outright.
 *
 * Why a comment POST is never retried blindly: GitHub may create the comment
 * and still answer 502 (or the answer may be lost). After such an answer the
 * comments are listed again and the one holding the series' marker, by us, is
 * taken as the one just made; only when there is none is it posted again.
 */
#include "deliver.h"

#include "../net/http.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define API_DEFAULT	"https://api.github.com"
#define API_VERSION	"X-GitHub-Api-Version: 2022-11-28"
#define ACCEPT		"Accept: application/vnd.github+json"
#define ACTIONS_BOT	"github-actions[bot]"
#define NOTE_RESERVE	1024 /* bytes kept for the cut note */
#define MAX_PAGES	200  /* 20,000 comments at 100 a page */
#define CHECK_MAX_BYTES 65000

/* ---- the marker ---- */

void github_marker_append(const char *series, const char *verdict, struct pg_buf *out)
{
	pg_buf_addf(out, "%s%s verdict=%s -->\n", GITHUB_MARKER_PREFIX, series, verdict);
}

/* Copy the run of characters of class ok at *p into out (cut to cap - 1). */
static size_t take_word(const char *p, const char *end, char *out, size_t cap, const char *extra)
{
	size_t n = 0;

	while (p + n < end && (isalnum((unsigned char)p[n]) || strchr(extra, p[n])) && p[n])
		n++;
	if (n == 0 || n >= cap)
		return 0;
	memcpy(out, p, n);
	out[n] = 0;
	return n;
}

static const char *last_marker(const char *md, size_t len)
{
	const char *hit = NULL, *p = md, *end = md + len;
	size_t k = strlen(GITHUB_MARKER_PREFIX);

	while (p + k <= end && (p = memmem(p, (size_t)(end - p), GITHUB_MARKER_PREFIX, k))) {
		hit = p;
		p += k;
	}
	return hit;
}

int github_marker_find(const char *md, size_t len, struct github_marker *out)
{
	const char *p = last_marker(md, len), *end = md + len;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!p)
		return pg_error_set(PG_ENOTFOUND, "no profgate marker (write the report with "
						  "profgate gate --report)");
	p += strlen(GITHUB_MARKER_PREFIX);
	n = take_word(p, end, out->series, sizeof(out->series), "-_.");
	p += n;
	if (n == 0 || end - p < 9 || memcmp(p, " verdict=", 9) != 0 ||
	    !take_word(p + 9, end, out->verdict, sizeof(out->verdict), ""))
		return pg_error_set(PG_ENOTFOUND, "the profgate marker is malformed");
	return 0;
}

int github_verdict_alerts(const char *v)
{
	return v &&
	       (strcmp(v, "warn") == 0 || strcmp(v, "fail") == 0 || strcmp(v, "incomparable") == 0);
}

int github_comment_mode_parse(const char *s, enum github_comment_mode *out)
{
	if (s && strcmp(s, "always") == 0)
		*out = GITHUB_COMMENT_ALWAYS;
	else if (s && strcmp(s, "on-alert") == 0)
		*out = GITHUB_COMMENT_ON_ALERT;
	else if (s && strcmp(s, "never") == 0)
		*out = GITHUB_COMMENT_NEVER;
	else
		return pg_error_set(PG_EUSAGE, "comment mode '%s': give always, on-alert or never",
				    s ? s : "");
	return 0;
}

/* ---- fitting markdown under a size limit ---- */

static int is_fence(const char *line, size_t n)
{
	return n >= 3 && (memcmp(line, "```", 3) == 0 || memcmp(line, "~~~", 3) == 0);
}

/* The text of a heading line ("### Metrics" -> "Metrics"), into out. */
static void heading_name(const char *line, size_t n, struct pg_buf *out)
{
	size_t i = 0;

	while (i < n && line[i] == '#')
		i++;
	while (i < n && line[i] == ' ')
		i++;
	if (n - i > 60) {
		n = i + 60;
		while (n > i && ((unsigned char)line[n] & 0xC0) == 0x80)
			n--;
	}
	pg_buf_addc(out, '"');
	pg_buf_add(out, line + i, n - i);
	pg_buf_addc(out, '"');
}

/* Where to cut: at most budget bytes, on a UTF-8 boundary, at a line end when
 * one is there. */
static size_t cut_point(const char *md, size_t len, size_t budget)
{
	size_t cut = budget < len ? budget : len;
	const char *nl;

	while (cut > 0 && cut < len && ((unsigned char)md[cut] & 0xC0) == 0x80)
		cut--;
	nl = cut ? memrchr(md, '\n', cut) : NULL;
	if (nl)
		cut = (size_t)(nl - md) + 1;
	return cut;
}

struct cut_info {
	int open_fence;	       /* the kept part ends inside a code fence */
	struct pg_buf in;      /* the heading the cut fell under, or empty */
	struct pg_buf dropped; /* headings left out entirely, quoted, ", " between */
	uint32_t n_dropped, lines;
};

static void scan_cut(const char *md, size_t cut, size_t len, struct cut_info *ci)
{
	const char *p = md, *end = md + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int kept = p < md + cut;

		if (kept && is_fence(p, n))
			ci->open_fence = !ci->open_fence;
		if (n > 0 && p[0] == '#') {
			if (kept) {
				pg_buf_reset(&ci->in);
				heading_name(p, n, &ci->in);
			} else if (ci->n_dropped++ < 6) {
				if (ci->dropped.len)
					pg_buf_adds(&ci->dropped, ", ");
				heading_name(p, n, &ci->dropped);
			}
		}
		if (!kept)
			ci->lines++;
		p = nl ? nl + 1 : end;
	}
}

static void cut_note(const struct cut_info *ci, size_t bytes, const char *where_full,
		     struct pg_buf *out)
{
	struct pg_buf note = PG_BUF_INIT;

	pg_buf_adds(&note, "\n> **Cut to fit GitHub's size limit:** ");
	if (ci->in.len)
		pg_buf_addf(&note, "the rest of %s", ci->in.ptr);
	else
		pg_buf_adds(&note, "the rest of the report");
	if (ci->n_dropped)
		pg_buf_addf(&note, " and %u more section%s (%s%s)", ci->n_dropped,
			    ci->n_dropped == 1 ? "" : "s", ci->dropped.ptr,
			    ci->n_dropped > 6 ? ", ..." : "");
	pg_buf_addf(&note, ", %u lines (%.1f KB), left out", ci->lines, (double)bytes / 1000);
	if (where_full)
		pg_buf_addf(&note, "; the full report is in %s", where_full);
	pg_buf_adds(&note, ".\n");
	if (note.len > NOTE_RESERVE - 16) {
		pg_buf_reset(&note);
		pg_buf_addf(&note, "\n> **Cut to fit GitHub's size limit:** %u lines left out.\n",
			    ci->lines);
	}
	pg_buf_add(out, note.ptr, note.len);
	pg_buf_release(&note);
}

void github_md_fit(const char *md, size_t len, size_t max_bytes, const char *where_full,
		   struct pg_buf *out)
{
	const char *marker = last_marker(md, len);
	size_t body_len = len, marker_len = 0, cut, budget;
	struct cut_info ci;

	if (len <= max_bytes) {
		pg_buf_add(out, md, len);
		return;
	}
	/* the marker (the rest of its line) goes last, whatever is cut */
	if (marker && (marker == md || marker[-1] == '\n')) {
		const char *nl = memchr(marker, '\n', (size_t)(md + len - marker));
		body_len = (size_t)(marker - md);
		marker_len = nl ? (size_t)(nl - marker) : (size_t)(md + len - marker);
	}
	budget = max_bytes > marker_len + NOTE_RESERVE ? max_bytes - marker_len - NOTE_RESERVE : 0;
	cut = cut_point(md, body_len, budget);
	memset(&ci, 0, sizeof(ci));
	pg_buf_init(&ci.in);
	pg_buf_init(&ci.dropped);
	scan_cut(md, cut, body_len, &ci);
	pg_buf_add(out, md, cut);
	if (cut > 0 && md[cut - 1] != '\n')
		pg_buf_addc(out, '\n');
	if (ci.open_fence)
		pg_buf_adds(out, "```\n");
	cut_note(&ci, body_len - cut, where_full, out);
	if (marker_len) {
		pg_buf_adds(out, "\n");
		pg_buf_add(out, marker, marker_len);
		pg_buf_adds(out, "\n");
	}
	pg_buf_release(&ci.in);
	pg_buf_release(&ci.dropped);
}

/* ---- the client ---- */

static int repo_valid(const char *repo)
{
	const char *slash = repo ? strchr(repo, '/') : NULL;

	if (!slash || slash == repo || !slash[1] || strchr(slash + 1, '/'))
		return 0;
	for (const char *p = repo; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_./", *p))
			return 0;
	return strstr(repo, "..") == NULL;
}

int github_init(struct github *g, const char *api, const char *repo, const char *token)
{
	size_t n;

	memset(g, 0, sizeof(*g));
	pg_secret_add(token); /* no message may carry it, whatever a server echoes */
	if (!api || !*api)
		api = API_DEFAULT;
	if (strncmp(api, "https://", 8) != 0 && strncmp(api, "http://", 7) != 0) {
		const char *secrets[2] = {token, NULL};
		char shown[256];

		snprintf(shown, sizeof(shown), "%s", api);
		pg_redact(shown, secrets);
		return pg_error_set(PG_EUSAGE, "GITHUB_API_URL '%s' is not an http(s) URL", shown);
	}
	/* curl would send them as Basic auth next to the token; and URLs get printed */
	if (http_url_has_userinfo(api))
		return pg_error_set(PG_EUSAGE,
				    "GITHUB_API_URL holds credentials (user:password@host): "
				    "give the URL without them and the token in "
				    "GITHUB_TOKEN");
	if (!repo_valid(repo))
		return pg_error_set(PG_EUSAGE, "repository '%s' is not owner/name",
				    repo ? repo : "");
	if (!token || !*token)
		return pg_error_set(PG_EUSAGE, "no GitHub token (set GITHUB_TOKEN or "
					       "PROFGATE_GITHUB_TOKEN)");
	g->api = pg_xstrdup(api);
	n = strlen(g->api);
	while (n > 0 && g->api[n - 1] == '/')
		g->api[--n] = 0;
	g->repo = pg_xstrdup(repo);
	g->token = pg_xstrdup(token);
	return 0;
}

void github_release(struct github *g)
{
	free(g->api);
	free(g->repo);
	if (g->token)
		memset(g->token, 0, strlen(g->token));
	free(g->token);
	free(g->login);
	memset(g, 0, sizeof(*g));
}

/* One request with GitHub's headers and policy. A 0 return means a final
 * status is in rs (the caller judges it). */
static int gh_do_once(struct github *g, const char *method, const char *url,
		      const struct pg_buf *body, const char *what, int not_idempotent,
		      int *maybe_sent, struct http_response *rs)
{
	struct pg_buf auth = PG_BUF_INIT;
	const char *headers[4], *secrets[2] = {g->token, NULL};
	struct http_request rq;
	int rc;

	pg_buf_addf(&auth, "Authorization: Bearer %s", g->token);
	headers[0] = ACCEPT;
	headers[1] = API_VERSION;
	headers[2] = auth.ptr;
	headers[3] = NULL;
	memset(&rq, 0, sizeof(rq));
	rq.method = method;
	rq.url = url;
	rq.headers = headers;
	if (body) {
		rq.body = body->ptr;
		rq.body_len = body->len;
	}
	rq.secrets = secrets;
	rq.policy = HTTP_POLICY_GITHUB;
	rq.max_wait_s = g->max_wait_s;
	rq.what = what;
	rq.not_idempotent = not_idempotent;
	rq.maybe_sent_out = maybe_sent;
	rc = http_do(&rq, rs);
	g->last_status = rs->status;
	memset(auth.ptr, 0, auth.len);
	pg_buf_release(&auth);
	return rc;
}

static int gh_do(struct github *g, const char *method, const char *url, const struct pg_buf *body,
		 const char *what, struct http_response *rs)
{
	return gh_do_once(g, method, url, body, what, 0, NULL, rs);
}

/* The one-line error for a final status that is not the one wanted. */
static int gh_fail(struct github *g, const char *what, const struct http_response *rs)
{
	const char *secrets[2] = {g->token, NULL};
	char msg[512];
	const char *hint = "";

	http_error_message(rs, msg, sizeof(msg));
	pg_redact(msg, secrets);
	if (rs->status == 401)
		hint = " (the token was refused)";
	else if (rs->status == 403 && strstr(msg, "not accessible"))
		hint = " (the token may not write here: a pull_request run from a fork gets a "
		       "read-only token, or the workflow lacks 'permissions: pull-requests: "
		       "write')";
	else if (rs->status == 404)
		hint = " (no such repository or pull request, or the token cannot see it)";
	return pg_error_set(PG_EDELIVERY, "GitHub: %s: HTTP %ld%s%s%s", what, rs->status,
			    msg[0] ? " " : "", msg, hint);
}

static cJSON *parse_body(const struct http_response *rs)
{
	return cJSON_ParseWithLength(rs->body.ptr, rs->body.len);
}

/* The one-line error for a successful status whose answer is not what the
 * API answers (a proxy's page, a cut body): key is the field it lacks. */
static int gh_bad_answer(const char *what, const struct http_response *rs, const cJSON *root,
			 const char *key)
{
	char type[64];

	if (root)
		return pg_error_set(PG_EDELIVERY,
				    "GitHub: %s: HTTP %ld, but the answer holds no %s", what,
				    rs->status, key);
	if (!http_header(rs, "content-type", type, sizeof(type)))
		snprintf(type, sizeof(type), "no content type");
	for (char *p = type; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	return pg_error_set(PG_EDELIVERY, "GitHub: %s: HTTP %ld, but the answer is not JSON (%s)",
			    what, rs->status, type);
}

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int github_login(struct github *g)
{
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT;
	const char *env = getenv("PROFGATE_GITHUB_LOGIN");
	cJSON *root = NULL;
	int rc;

	if (g->login)
		return 0;
	if (env && *env) {
		g->login = pg_xstrdup(env);
		return 0;
	}
	pg_buf_addf(&url, "%s/user", g->api);
	rc = gh_do(g, "GET", url.ptr, NULL, "GitHub user", &rs);
	if (rc)
		goto out;
	if (rs.status == 200 && (root = parse_body(&rs)) && str_of(root, "login"))
		g->login = pg_xstrdup(str_of(root, "login"));
	else if (rs.status == 200)
		rc = gh_bad_answer("reading the token's user", &rs, root, "login");
	else if (rs.status == 403 || rs.status == 404) {
		/* an app's installation token: no /user; its comments are by a bot */
		g->login = pg_xstrdup(ACTIONS_BOT);
		g->any_bot = 1;
	} else
		rc = gh_fail(g, "reading the token's user", &rs);
out:
	cJSON_Delete(root);
	pg_buf_release(&url);
	http_response_release(&rs);
	return rc;
}

/* "scheme://host[:port]" of a URL: its length. */
static size_t origin_len(const char *url)
{
	const char *p = strstr(url, "://");
	const char *slash = p ? strchr(p + 3, '/') : NULL;

	return slash ? (size_t)(slash - url) : strlen(url);
}

/* A found comment. */
struct found {
	int64_t id;
	char *verdict; /* of its marker; NULL when unreadable */
	char *body, *url;
};

/* Whether a comment's author is this token's: its login, or with an app's
 * token whose login is unknown, any bot account. */
static int ours(const struct github *g, const cJSON *user)
{
	const char *who = str_of(user, "login"), *type = str_of(user, "type");

	if (!who)
		return 0;
	return strcasecmp(who, g->login) == 0 || (g->any_bot && type && strcmp(type, "Bot") == 0);
}

/* Look through one page (a JSON array) for the first comment by us whose
 * body holds key. 1 when found. */
static int page_find(const struct github *g, const cJSON *arr, const char *key, struct found *f)
{
	const cJSON *c;

	cJSON_ArrayForEach (c, arr) {
		const char *body = str_of(c, "body");
		const cJSON *who = cJSON_GetObjectItemCaseSensitive(c, "user");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
		struct github_marker m;

		int64_t n;

		/* an id that is no positive whole number cannot be PATCHed */
		if (!body || !who || !cJSON_IsNumber(id) || !pg_whole(id->valuedouble, &n) ||
		    n < 1 || !ours(g, who) || !strstr(body, key))
			continue;
		f->id = n;
		if (github_marker_find(body, strlen(body), &m) == 0)
			f->verdict = pg_xstrdup(m.verdict);
		f->body = pg_xstrdup(body);
		if (str_of(c, "html_url"))
			f->url = pg_xstrdup(str_of(c, "html_url"));
		return 1;
	}
	return 0;
}

/* Every page of the comments of pr, until the series' comment turns up. */
static int find_comment(struct github *g, int64_t pr, const char *key, struct found *f)
{
	struct http_response rs = HTTP_RESPONSE_INIT;
	char *url = NULL, link[8192];
	size_t origin = origin_len(g->api);
	int rc = 0, pages = 0, hit = 0;

	url = pg_xasprintf("%s/repos/%s/issues/%lld/comments?per_page=100", g->api, g->repo,
			   (long long)pr);
	while (url && !hit) {
		cJSON *arr;

		if (++pages > MAX_PAGES) {
			rc = pg_error_set(PG_EDELIVERY,
					  "GitHub: more than %d pages of comments "
					  "on #%lld",
					  MAX_PAGES, (long long)pr);
			break;
		}
		if ((rc = gh_do(g, "GET", url, NULL, "GitHub comments", &rs)))
			break;
		if (rs.status != 200) {
			rc = gh_fail(g, "listing the comments", &rs);
			break;
		}
		arr = parse_body(&rs);
		if (!cJSON_IsArray(arr)) {
			cJSON_Delete(arr);
			rc = pg_error_set(PG_EDELIVERY,
					  "GitHub: the comments of #%lld are not "
					  "a JSON array",
					  (long long)pr);
			break;
		}
		hit = page_find(g, arr, key, f);
		cJSON_Delete(arr);
		free(url);
		url = NULL;
		if (!hit && http_header(&rs, "link", link, sizeof(link)))
			url = http_link_next(link);
		/* the token goes to the API's own host only */
		if (url && (strncmp(url, g->api, origin) != 0 || url[origin] != '/')) {
			rc = pg_error_set(PG_EDELIVERY, "GitHub: the next page of comments is on "
							"another host; not followed");
			break;
		}
	}
	free(url);
	http_response_release(&rs);
	return rc;
}

/* The comment's JSON request body. */
static void comment_json(const char *body, size_t n, struct pg_buf *out)
{
	pg_buf_adds(out, "{\"body\":");
	pg_json_escape(out, body, n);
	pg_buf_adds(out, "}");
}

static int too_long(const struct http_response *rs)
{
	return rs->status == 422 &&
	       (strstr(rs->body.ptr, "too long") || strstr(rs->body.ptr, "too_long") ||
		strstr(rs->body.ptr, "is too large"));
}

/* The body to send: an all-clear line, md fitted, a link to the run, and
 * md's marker last. */
static void compose(const char *md, size_t len, size_t max, int all_clear, const char *mentions,
		    const char *run_url, struct pg_buf *out)
{
	struct pg_buf head = PG_BUF_INIT, tail = PG_BUF_INIT;
	const char *marker = last_marker(md, len);
	size_t body_len = marker ? (size_t)(marker - md) : len, room;

	if (mentions)
		pg_buf_addf(&head, "> **Alert:** %s: this run fails the performance gate.\n\n",
			    mentions);
	if (all_clear)
		pg_buf_adds(&head, "> **All clear:** this run passes; the alert this comment "
				   "showed before is resolved.\n\n");
	if (run_url)
		pg_buf_addf(&tail, "\n<sub>profgate: [workflow run](%s)</sub>\n", run_url);
	if (marker) {
		pg_buf_adds(&tail, "\n");
		pg_buf_add(&tail, marker, len - body_len);
	}
	room = max > head.len + tail.len ? max - head.len - tail.len : 0;
	pg_buf_add(out, head.ptr, head.len);
	github_md_fit(md, body_len, room, run_url ? "the workflow run's job summary" : NULL, out);
	while (out->len > 0 && out->ptr[out->len - 1] == '\n' && tail.len > 0)
		out->ptr[--out->len] = 0; /* one blank line before the tail, not several */
	pg_buf_adds(out, "\n");
	pg_buf_add(out, tail.ptr, tail.len);
	pg_buf_release(&head);
	pg_buf_release(&tail);
}

/* POST or PATCH the comment; on success fill out. A 404 on PATCH (deleted
 * meanwhile) sets *gone; a POST whose answer was lost sets *maybe_sent. */
static int send_comment(struct github *g, int64_t pr, int64_t id, const struct pg_buf *body,
			struct http_response *rs, int *gone, int *maybe_sent)
{
	struct pg_buf url = PG_BUF_INIT, json = PG_BUF_INIT;
	int rc;

	if (id > 0)
		pg_buf_addf(&url, "%s/repos/%s/issues/comments/%lld", g->api, g->repo,
			    (long long)id);
	else
		pg_buf_addf(&url, "%s/repos/%s/issues/%lld/comments", g->api, g->repo,
			    (long long)pr);
	comment_json(body->ptr, body->len, &json);
	/* a PATCH says the same twice; a POST twice makes two comments */
	rc = gh_do_once(g, id > 0 ? "PATCH" : "POST", url.ptr, &json, "GitHub comment", id <= 0,
			maybe_sent, rs);
	if (rc == 0 && id > 0 && rs->status == 404)
		*gone = 1;
	pg_buf_release(&url);
	pg_buf_release(&json);
	return rc;
}

/* A 200 or 201: the comment, unless the answer is not one (a proxy's page
 * says nothing of whether GitHub has it). */
static int comment_done(struct github *g, int64_t id, const struct http_response *rs,
			struct github_comment_result *out)
{
	cJSON *root = parse_body(rs);
	const cJSON *jid = cJSON_GetObjectItemCaseSensitive(root, "id");

	if (!cJSON_IsObject(root) || !cJSON_IsNumber(jid)) {
		int rc = gh_bad_answer(id > 0 ? "updating the comment" : "creating the comment", rs,
				       cJSON_IsObject(root) ? root : NULL, "comment id");
		cJSON_Delete(root);
		return rc;
	}
	out->action = id > 0 ? GITHUB_COMMENT_UPDATED : GITHUB_COMMENT_CREATED;
	if (!cJSON_IsNumber(jid) || !pg_whole(jid->valuedouble, &out->id) || out->id < 1)
		out->id = id;
	out->url = str_of(root, "html_url") ? pg_xstrdup(str_of(root, "html_url")) : NULL;
	cJSON_Delete(root);
	return 0;
}

static void found_release(struct found *f)
{
	free(f->verdict);
	free(f->body);
	free(f->url);
	memset(f, 0, sizeof(*f));
}

/* After a POST answered 5xx or not at all: the comment may be there. Look
 * for ours again; the same body means the POST was done (out is filled, 1),
 * another body is ours to update (*f takes it, 0). Else *f is left alone and
 * the POST is to be tried again (0). */
static int look_again(struct github *g, int64_t pr, const char *key, const struct pg_buf *body,
		      long status, struct found *f, struct github_comment_result *out)
{
	struct found again = {0, NULL, NULL, NULL};
	int rc;

	if (status)
		pg_log("profgate: GitHub comment: HTTP %ld on the POST; listing the comments to "
		       "see whether it was made before posting again",
		       status);
	else
		pg_log("profgate: GitHub comment: the POST's answer was lost (%s); listing the "
		       "comments to see whether it was made before posting again",
		       pg_error_last());
	pg_error_clear();
	if ((rc = find_comment(g, pr, key, &again)) != 0 || again.id < 1) {
		found_release(&again);
		return rc;
	}
	if (again.body && strcmp(again.body, body->ptr) == 0) {
		out->action = GITHUB_COMMENT_CREATED;
		out->id = again.id;
		out->url = again.url;
		again.url = NULL;
		found_release(&again);
		return 1;
	}
	found_release(f);
	*f = again;
	return 0;
}

/* Send the comment: update f (f->id > 0) unless it says exactly this already,
 * else create it; halve once on a 422 "too long", create anew when the
 * comment was deleted meanwhile, and after a POST that may have been done,
 * look before posting again. */
static int deliver_comment(struct github *g, int64_t pr, const char *key, struct found *f,
			   const char *md, size_t len, int all_clear, const char *mentions,
			   const char *run_url, struct github_comment_result *out)
{
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct pg_buf body = PG_BUF_INIT;
	size_t max = GITHUB_COMMENT_MAX_BYTES;
	int rc = 0, gone = 0, maybe_sent, posts = 0;

	for (int attempt = 0; attempt < 5; attempt++) {
		pg_buf_reset(&body);
		compose(md, len, max, all_clear, mentions, run_url, &body);
		if (f->id > 0 && f->body && strcmp(f->body, body.ptr) == 0) {
			out->action = GITHUB_COMMENT_UNCHANGED;
			out->id = f->id;
			out->url = f->url ? pg_xstrdup(f->url) : NULL;
			break;
		}
		gone = maybe_sent = 0;
		posts += f->id < 1;
		rc = send_comment(g, pr, f->id, &body, &rs, &gone, &maybe_sent);
		if (f->id < 1 && (maybe_sent || (rc == 0 && rs.status >= 500)) && posts < 3) {
			int r = look_again(g, pr, key, &body, rc ? 0 : rs.status, f, out);
			if (r < 0) {
				rc = r;
				break;
			}
			rc = 0;
			if (r == 1)
				break;
			continue;
		}
		if (rc && maybe_sent) {
			char *why = pg_xstrdup(pg_error_last());
			rc = pg_error_set(
			    PG_EDELIVERY,
			    "GitHub: creating the comment: %s (%d POSTs, each answer lost; "
			    "the comments hold none of them)",
			    why, posts);
			free(why);
		}
		if (rc)
			break;
		if (rs.status == 200 || rs.status == 201) {
			rc = comment_done(g, f->id, &rs, out);
			break;
		}
		if (gone) {
			f->id = 0; /* deleted since it was listed: create it anew */
			continue;
		}
		if (too_long(&rs) && max > 4096) {
			max /= 2;
			continue;
		}
		rc = gh_fail(g, f->id > 0 ? "updating the comment" : "creating the comment", &rs);
		break;
	}
	if (rc == 0 && out->action == GITHUB_COMMENT_SKIPPED)
		rc = gh_fail(g, "sending the comment", &rs);
	pg_buf_release(&body);
	http_response_release(&rs);
	return rc;
}

/* The verdicts mentions are for: those that fail the gate. */
static int verdict_fails(const char *v)
{
	return strcmp(v, "fail") == 0 || strcmp(v, "incomparable") == 0;
}

/* One mention: @login or @org/team (letters, digits, '-', '_', '.'). */
static int mention_ok(const char *p, size_t n)
{
	size_t slashes = 0;

	if (n < 2 || p[0] != '@')
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (p[i] == '/') {
			if (++slashes > 1 || i == 1 || i == n - 1)
				return 0;
		} else if (!isalnum((unsigned char)p[i]) && !strchr("-_.", p[i])) {
			return 0;
		}
	}
	return 1;
}

int github_mentions_check(const char *s)
{
	const char *p = s;

	while (p && *p) {
		size_t n;

		p += strspn(p, " ,");
		n = strcspn(p, " ,");
		if (n && !mention_ok(p, n))
			return pg_error_set(
			    PG_EUSAGE,
			    "alert mentions '%.80s': give @user or @org/team names, "
			    "separated by spaces or commas",
			    s);
		p += n;
	}
	return 0;
}

int github_comment_upsert(struct github *g, int64_t pr, const char *md, size_t len,
			  enum github_comment_mode mode, const char *mentions, const char *run_url,
			  struct github_comment_result *out)
{
	struct github_marker m;
	struct found f = {0, NULL, NULL, NULL};
	struct pg_buf key = PG_BUF_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	if (github_marker_find(md, len, &m) || github_mentions_check(mentions))
		return PG_EUSAGE;
	if (mentions && (!*mentions || !verdict_fails(m.verdict)))
		mentions = NULL;
	if (mode == GITHUB_COMMENT_NEVER)
		return 0;
	if ((rc = github_login(g)))
		return rc;
	pg_buf_addf(&key, "%s%s ", GITHUB_MARKER_PREFIX, m.series);
	rc = find_comment(g, pr, key.ptr, &f);
	if (rc == 0 &&
	    (f.id > 0 || mode == GITHUB_COMMENT_ALWAYS || github_verdict_alerts(m.verdict)))
		rc = deliver_comment(g, pr, key.ptr, &f, md, len,
				     f.id > 0 && github_verdict_alerts(f.verdict) &&
					 !github_verdict_alerts(m.verdict),
				     mentions, run_url, out);
	found_release(&f);
	pg_buf_release(&key);
	return rc;
}

/* ---- check runs and pulls ---- */

static const char *conclusion(const char *v)
{
	if (v && (strcmp(v, "pass") == 0 || strcmp(v, "improved") == 0))
		return "success";
	if (v && (strcmp(v, "fail") == 0 || strcmp(v, "incomparable") == 0))
		return "failure";
	return "neutral";
}

static void check_json(const char *name, const char *head_sha, const char *verdict,
		       const char *title, const char *md, size_t len, const char *external_id,
		       struct pg_buf *out)
{
	struct pg_buf summary = PG_BUF_INIT;
	struct pg_json j;

	github_md_fit(md, len, CHECK_MAX_BYTES, "the workflow run's job summary", &summary);
	pg_json_init(&j, out, 0);
	pg_json_obj_begin(&j);
	pg_json_key(&j, "name");
	pg_json_str(&j, name);
	pg_json_key(&j, "head_sha");
	pg_json_str(&j, head_sha);
	pg_json_key(&j, "status");
	pg_json_str(&j, "completed");
	pg_json_key(&j, "conclusion");
	pg_json_str(&j, conclusion(verdict));
	pg_json_key(&j, "external_id");
	pg_json_str(&j, external_id);
	pg_json_key(&j, "output");
	pg_json_obj_begin(&j);
	pg_json_key(&j, "title");
	pg_json_str(&j, title);
	pg_json_key(&j, "summary");
	pg_json_strn(&j, summary.ptr, summary.len);
	pg_json_obj_end(&j);
	pg_json_obj_end(&j);
	pg_buf_release(&summary);
}

/* After a check-run POST answered 5xx or not at all: the commit's check runs
 * named name; 1 when one holds external_id (*url_out its html_url), 0 when
 * none does, else the error. */
static int check_run_landed(struct github *g, const char *name, const char *head_sha,
			    const char *external_id, char **url_out)
{
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT;
	cJSON *root = NULL;
	const cJSON *run;
	int rc, found = 0;

	pg_buf_addf(&url,
		    "%s/repos/%s/commits/%s/check-runs?per_page=100&filter=all&check_name=", g->api,
		    g->repo, head_sha);
	http_url_escape(&url, name);
	rc = gh_do(g, "GET", url.ptr, NULL, "GitHub check runs", &rs);
	if (rc == 0 && rs.status != 200)
		rc = gh_fail(g, "listing the check runs", &rs);
	if (rc == 0) {
		root = parse_body(&rs);
		if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "check_runs")))
			rc = gh_bad_answer("listing the check runs", &rs, root, "check_runs");
	}
	if (rc)
		goto out;
	cJSON_ArrayForEach (run, cJSON_GetObjectItemCaseSensitive(root, "check_runs")) {
		const char *ext = str_of(run, "external_id");
		if (ext && strcmp(ext, external_id) == 0) {
			found = 1;
			if (str_of(run, "html_url"))
				*url_out = pg_xstrdup(str_of(run, "html_url"));
			break;
		}
	}
out:
	cJSON_Delete(root);
	pg_buf_release(&url);
	http_response_release(&rs);
	return rc ? rc : found;
}

int github_check_run(struct github *g, const char *name, const char *head_sha, const char *verdict,
		     const char *title, const char *md, size_t len, char **url_out)
{
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT, json = PG_BUF_INIT;
	cJSON *root = NULL;
	char external_id[33];
	int rc = 0;

	*url_out = NULL;
	actions_random_hex(external_id, 16);
	pg_buf_addf(&url, "%s/repos/%s/check-runs", g->api, g->repo);
	check_json(name, head_sha, verdict, title, md, len, external_id, &json);
	for (int posts = 1; posts <= 3; posts++) {
		int maybe_sent = 0, landed;

		rc = gh_do_once(g, "POST", url.ptr, &json, "GitHub check run", 1, &maybe_sent, &rs);
		if (!(maybe_sent || (rc == 0 && rs.status >= 500)) || posts == 3)
			break;
		if (rc)
			pg_log(
			    "profgate: GitHub check run: the POST's answer was lost (%s); listing "
			    "the commit's check runs to see whether it was made before posting "
			    "again",
			    pg_error_last());
		else
			pg_log("profgate: GitHub check run: HTTP %ld on the POST; listing the "
			       "commit's "
			       "check runs to see whether it was made before posting again",
			       rs.status);
		pg_error_clear();
		if ((landed = check_run_landed(g, name, head_sha, external_id, url_out)) != 0) {
			rc = landed < 0 ? landed : 0;
			goto out;
		}
	}
	if (rc == 0 && rs.status != 201 && rs.status != 200)
		rc = gh_fail(g, "creating the check run", &rs);
	if (rc == 0 && (root = parse_body(&rs)) && str_of(root, "html_url"))
		*url_out = pg_xstrdup(str_of(root, "html_url"));
out:
	cJSON_Delete(root);
	pg_buf_release(&url);
	pg_buf_release(&json);
	http_response_release(&rs);
	return rc;
}

/* A commit id: 40 (SHA-1) or 64 (SHA-256) hex digits. */
static int is_commit_sha(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	return s[n] == '\0' && (n == 40 || n == 64);
}

int github_pull_head_sha(struct github *g, int64_t pr, char **out)
{
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct pg_buf url = PG_BUF_INIT;
	cJSON *root = NULL;
	const char *sha;
	int rc;

	*out = NULL;
	pg_buf_addf(&url, "%s/repos/%s/pulls/%lld", g->api, g->repo, (long long)pr);
	rc = gh_do(g, "GET", url.ptr, NULL, "GitHub pull request", &rs);
	if (rc == 0 && rs.status != 200)
		rc = gh_fail(g, "reading the pull request", &rs);
	if (rc == 0) {
		root = parse_body(&rs);
		sha = str_of(cJSON_GetObjectItemCaseSensitive(root, "head"), "sha");
		/* it names a commit in check runs and history records: hex only */
		if (sha && is_commit_sha(sha))
			*out = pg_xstrdup(sha);
		else
			rc =
			    pg_error_set(PG_EDELIVERY,
					 "GitHub: pull request #%lld has no head sha (40 or 64 hex "
					 "digits) in the answer",
					 (long long)pr);
	}
	cJSON_Delete(root);
	pg_buf_release(&url);
	http_response_release(&rs);
	return rc;
}
