/*
 * The W&B API client the fetch (source/) and the publisher (deliver/) share:
 * configuration from the environment, GraphQL calls with the key sent as
 * Basic "api:<key>" to the base URL only, and the key kept out of messages.
 */
#include "source.h"

#include "../net/http.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_BASE_URL "https://api.wandb.ai"

static char *env_dup(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? pg_xstrdup(v) : NULL;
}

static void basic_token(const struct wandb_config *c, struct pg_buf *out);

int wandb_config_from_env(struct wandb_config *c)
{
	size_t n;

	memset(c, 0, sizeof(*c));
	c->base_url = env_dup("WANDB_BASE_URL");
	if (!c->base_url)
		c->base_url = pg_xstrdup(DEFAULT_BASE_URL);
	n = strlen(c->base_url);
	while (n > 0 && c->base_url[n - 1] == '/')
		c->base_url[--n] = '\0';
	c->api_key = env_dup("WANDB_API_KEY");
	if (c->api_key) { /* no message may carry it, whatever a server echoes */
		struct pg_buf tok = PG_BUF_INIT;

		pg_secret_add(c->api_key);
		basic_token(c, &tok);
		pg_secret_add(tok.ptr);
		pg_buf_release(&tok);
	}
	c->entity = env_dup("WANDB_ENTITY");
	c->project = env_dup("WANDB_PROJECT");
	c->cache_dir = pg_cache_dir();
	if (strncmp(c->base_url, "https://", 8) != 0 && strncmp(c->base_url, "http://", 7) != 0) {
		char shown[256];

		snprintf(shown, sizeof(shown), "%s", c->base_url);
		wandb_redact(c, shown);
		return pg_error_set(PG_EUSAGE, "wandb: WANDB_BASE_URL '%s' is not an http(s) URL",
				    shown);
	}
	/* the key goes as Basic auth to this URL only; user info would go with it, and
	 * URLs get printed */
	if (http_url_has_userinfo(c->base_url))
		return pg_error_set(PG_EUSAGE,
				    "wandb: WANDB_BASE_URL holds credentials (user:password@host): "
				    "give the URL without them and the key in WANDB_API_KEY");
	return 0;
}

void wandb_config_release(struct wandb_config *c)
{
	free(c->base_url);
	free(c->api_key);
	free(c->entity);
	free(c->project);
	free(c->cache_dir);
	memset(c, 0, sizeof(*c));
}

/* base64("api:" + key): what the Authorization header carries. */
static void basic_token(const struct wandb_config *c, struct pg_buf *out)
{
	struct pg_buf raw = PG_BUF_INIT;

	pg_buf_addf(&raw, "api:%s", c->api_key);
	pg_base64_encode(out, raw.ptr, raw.len);
	pg_buf_release(&raw);
}

void wandb_auth_header(const struct wandb_config *c, struct pg_buf *out)
{
	if (!c->api_key)
		return;
	pg_buf_adds(out, "Authorization: Basic ");
	basic_token(c, out);
}

void wandb_redact(const struct wandb_config *c, char *s)
{
	struct pg_buf tok = PG_BUF_INIT;
	const char *secrets[3] = {NULL, NULL, NULL};

	if (c->api_key) {
		basic_token(c, &tok);
		secrets[0] = tok.ptr;
		secrets[1] = c->api_key;
	}
	pg_redact(s, secrets);
	pg_buf_release(&tok);
}

char *wandb_absolute_url(const struct wandb_config *c, const char *url)
{
	struct pg_buf b = PG_BUF_INIT;

	if (url[0] == '/')
		pg_buf_adds(&b, c->base_url);
	pg_buf_adds(&b, url);
	return pg_buf_detach(&b, NULL);
}

/* The message of a failed answer, the key redacted, for one line. */
static void answer_message(const struct wandb_config *c, const struct http_response *rs, char *out,
			   size_t cap)
{
	http_error_message(rs, out, cap);
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	wandb_redact(c, out);
}

static int status_error(const struct wandb_config *c, const char *op,
			const struct http_response *rs)
{
	char msg[512];

	answer_message(c, rs, msg, sizeof(msg));
	if (rs->status == 401 && !c->api_key)
		return pg_error_set(PG_EDELIVERY,
				    "wandb: %s asks for an API key (HTTP 401); set WANDB_API_KEY",
				    c->base_url);
	if (rs->status == 401)
		return pg_error_set(PG_EDELIVERY,
				    "wandb: %s refused the API key (HTTP 401); check WANDB_API_KEY",
				    c->base_url);
	if (rs->status == 403)
		return pg_error_set(PG_EDELIVERY, "wandb: %s: permission denied (HTTP 403)%s%s", op,
				    *msg ? ": " : "", msg);
	return pg_error_set(PG_EDELIVERY, "wandb: %s: HTTP %ld from %s%s%s", op, rs->status,
			    c->base_url, *msg ? ": " : "", msg);
}

/* The first GraphQL error's message: errors[] of objects or strings, or "error". */
static void graphql_error(const cJSON *root, char *out, size_t cap)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "errors");
	const cJSON *first = cJSON_IsArray(e) ? cJSON_GetArrayItem(e, 0) : NULL;
	const cJSON *m = NULL;

	out[0] = '\0';
	if (cJSON_IsString(first))
		m = first;
	else if (cJSON_IsObject(first))
		m = cJSON_GetObjectItemCaseSensitive(first, "message");
	else if (!first)
		m = cJSON_GetObjectItemCaseSensitive(root, "error");
	if (cJSON_IsString(m))
		snprintf(out, cap, "%s", m->valuestring);
	else if (first)
		snprintf(out, cap, "an error without a message");
}

static void request_body(struct pg_buf *b, const char *op, const char *query, const char *vars)
{
	pg_buf_adds(b, "{\"query\": ");
	pg_json_escape(b, query, strlen(query));
	pg_buf_adds(b, ", \"variables\": ");
	pg_buf_adds(b, vars && *vars ? vars : "{}");
	pg_buf_adds(b, ", \"operationName\": ");
	pg_json_escape(b, op, strlen(op));
	pg_buf_addc(b, '}');
}

/* A GraphQL error's path as "a.b.0.c", into out; "" without one. */
static void error_path(const cJSON *e, char *out, size_t cap)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "path"), *it;
	size_t n = 0;

	out[0] = '\0';
	if (!cJSON_IsArray(p))
		return;
	cJSON_ArrayForEach (it, p) {
		int w = cJSON_IsString(it)
			    ? snprintf(out + n, cap - n, "%s%s", n ? "." : "", it->valuestring)
			: cJSON_IsNumber(it)
			    ? snprintf(out + n, cap - n, "%s%d", n ? "." : "", (int)it->valuedouble)
			    : 0;
		if (w < 0 || (size_t)w >= cap - n)
			break;
		n += (size_t)w;
	}
}

static const char *error_message(const cJSON *e)
{
	const cJSON *m = cJSON_IsString(e) ? e : cJSON_GetObjectItemCaseSensitive(e, "message");

	return cJSON_IsString(m) ? m->valuestring : "an error without a message";
}

/* Errors next to data: W&B answered, but some fields failed (their values are
 * null). Each is reported on its line; whether one is fatal is the caller's
 * to say, by what it needs (wandb_answer_need). */
static void report_partial(const struct wandb_config *c, const char *op, const cJSON *root)
{
	const cJSON *e;

	cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(root, "errors")) {
		char path[256], line[768];

		error_path(e, path, sizeof(path));
		snprintf(line, sizeof(line), "wandb: %s: W&B reported an error%s%s: %s", op,
			 *path ? " at " : "", path, error_message(e));
		for (char *q = line; *q; q++)
			if (*q == '\n' || *q == '\r')
				*q = ' ';
		wandb_redact(c, line);
		pg_log("%s", line);
	}
}

int wandb_answer_need(const cJSON *root, const cJSON *v, const char *op, const char *path)
{
	const cJSON *e;
	int rc = wandb_answer_object(v, op, path);
	size_t n;

	if (rc != PG_ENOTFOUND)
		return rc;
	/* "data.project.run": an error at project, or at project.run, says why it is null */
	if (strncmp(path, "data.", 5) == 0)
		path += 5;
	cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(root, "errors")) {
		char at[256];

		error_path(e, at, sizeof(at));
		n = strlen(at);
		if (n && strncmp(path, at, n) == 0 && (path[n] == '\0' || path[n] == '.'))
			return pg_error_set(PG_EDELIVERY, "wandb: %s: %s", op, error_message(e));
	}
	return rc;
}

int wandb_graphql(const struct wandb_config *c, const char *operation, const char *query,
		  const char *variables_json, struct cJSON **root, struct cJSON **data)
{
	return wandb_graphql_status(c, operation, query, variables_json, root, data, NULL);
}

int wandb_graphql_status(const struct wandb_config *c, const char *operation, const char *query,
			 const char *variables_json, struct cJSON **root, struct cJSON **data,
			 long *status)
{
	struct pg_buf url = PG_BUF_INIT, body = PG_BUF_INIT, auth = PG_BUF_INIT, tok = PG_BUF_INIT;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq;
	const char *headers[2] = {NULL, NULL}, *secrets[3] = {NULL, NULL, NULL};
	char what[128], msg[512];
	cJSON *doc = NULL, *d;
	int rc;

	*root = *data = NULL;
	pg_buf_addf(&url, "%s/graphql", c->base_url);
	request_body(&body, operation, query, variables_json);
	wandb_auth_header(c, &auth);
	if (auth.len) {
		headers[0] = auth.ptr;
		basic_token(c, &tok);
		secrets[0] = tok.ptr;
		secrets[1] = c->api_key;
	}
	snprintf(what, sizeof(what), "wandb: %s", operation);
	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	rq.url = url.ptr;
	rq.headers = headers;
	rq.body = body.ptr;
	rq.body_len = body.len;
	rq.secrets = secrets;
	rq.policy = HTTP_POLICY_PLAIN;
	rq.what = what;
	rc = http_do(&rq, &rs);
	if (status)
		*status = rs.status;
	if (rc != 0)
		goto out;
	if (rs.status < 200 || rs.status > 299) {
		rc = status_error(c, operation, &rs);
		goto out;
	}
	doc = cJSON_ParseWithLength(rs.body.ptr, rs.body.len);
	if (!cJSON_IsObject(doc)) {
		rc = pg_error_set(PG_EFORMAT, "wandb: %s: the answer from %s is not JSON",
				  operation, c->base_url);
		goto out;
	}
	d = cJSON_GetObjectItemCaseSensitive(doc, "data");
	graphql_error(doc, msg, sizeof(msg));
	if (!cJSON_IsObject(d)) {
		wandb_redact(c, msg);
		rc = pg_error_set(PG_EDELIVERY, "wandb: %s: %s", operation,
				  *msg ? msg : "the answer holds no data");
		goto out;
	}
	if (*msg)
		report_partial(c, operation, doc);
	*root = doc;
	*data = d;
	doc = NULL;
out:
	cJSON_Delete(doc);
	http_response_release(&rs);
	pg_buf_release(&url);
	pg_buf_release(&body);
	pg_buf_release(&auth);
	pg_buf_release(&tok);
	return rc;
}

const cJSON *wandb_at(const cJSON *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
		path += n + (path[n] == '.');
	}
	return o;
}

char *wandb_dup_at(const cJSON *o, const char *path)
{
	const cJSON *v = wandb_at(o, path);
	return cJSON_IsString(v) && *v->valuestring ? pg_xstrdup(v->valuestring) : NULL;
}

int wandb_answer_object(const cJSON *v, const char *op, const char *path)
{
	const char *type = cJSON_IsString(v)   ? "a string"
			   : cJSON_IsNumber(v) ? "a number"
			   : cJSON_IsBool(v)   ? "a boolean"
			   : cJSON_IsArray(v)  ? "an array"
					       : "not JSON";

	if (cJSON_IsObject(v))
		return 0;
	if (!v || cJSON_IsNull(v))
		return PG_ENOTFOUND;
	return pg_error_set(PG_EFORMAT, "wandb: %s: the answer's %s is %s, not an object", op, path,
			    type);
}

/* "scheme://host[:port]" of url, malloc'd. */
static char *url_origin(const char *url)
{
	const char *h = strstr(url, "://");
	h = h ? h + 3 : url;
	return pg_xstrndup(url, (size_t)(h + strcspn(h, "/?#") - url));
}

/* W&B's app host from its API host: api.wandb.X -> wandb.X, api.X -> app.X. */
static char *app_origin(const char *api)
{
	const char *p = strstr(api, "://api.");
	struct pg_buf b = PG_BUF_INIT;

	if (!p)
		return pg_xstrdup(api);
	pg_buf_add(&b, api, (size_t)(p - api) + 3);
	if (strncmp(p + 7, "wandb.", 6) != 0)
		pg_buf_adds(&b, "app.");
	pg_buf_adds(&b, p + 7);
	return pg_buf_detach(&b, NULL);
}

int wandb_check_host(const struct wandb_config *c, const struct wandb_ref *r, const char *text)
{
	char *api, *app;
	int rc = 0;

	if (!r->url_base)
		return 0;
	api = url_origin(c->base_url);
	app = app_origin(api);
	if (strcasecmp(r->url_base, api) != 0 && strcasecmp(r->url_base, app) != 0)
		rc = pg_error_set(
		    PG_EUSAGE,
		    "wandb: '%s' is on %s, not on the W&B server %s; set "
		    "WANDB_BASE_URL to that server (the key goes to WANDB_BASE_URL only)",
		    text, r->url_base, c->base_url);
	free(api);
	free(app);
	return rc;
}

int wandb_mutation_payload(const struct wandb_config *c, const cJSON *root, const cJSON *data,
			   const char *op, const char *field, const cJSON **out)
{
	const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "errors"), 0);
	char msg[512];

	*out = cJSON_GetObjectItemCaseSensitive(data, field);
	if (e) {
		snprintf(msg, sizeof(msg), "%s", error_message(e));
		wandb_redact(c, msg);
		for (char *q = msg; *q; q++)
			if (*q == '\n' || *q == '\r')
				*q = ' ';
		*out = NULL;
		return pg_error_set(PG_EDELIVERY, "wandb: %s: %s", op, msg);
	}
	if (!cJSON_IsObject(*out)) {
		*out = NULL;
		return pg_error_set(PG_EDELIVERY, "wandb: %s: W&B answered a null %s", op, field);
	}
	return 0;
}
