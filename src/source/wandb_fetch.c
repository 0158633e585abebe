/*
 * The W&B fetch: a run's jax_profile artifact
 * (or an artifact by name) is looked up over GraphQL, its files downloaded
 * from signed URLs without the key, checked against the manifest's size and
 * MD5, kept in a cache by digest and laid out as a folder for discovery.
 *
 * The cache (under pg_cache_dir()/wandb):
 *   blobs/<hex md5>                    every file once, by content
 *   manifests/<16 hex>.json            committed artifacts' manifests (immutable), by server
 *                                      and artifact id
 *   artifacts/<e>/<p>/<name>/v<N>-<8 hex>/<path>   the folder discovery reads: hard links
 *                                      to the blobs (copies across file systems)
 * so a rerun asks GraphQL which artifact the ref means and downloads nothing.
 *
 * Files are downloaded side by side on a bounded pool (FETCH_THREADS, as
 * the W&B clients do), one job per distinct digest. The jobs share only the
 * signed URLs (under a mutex: a job refused with 401/403 reloads them unless
 * another job did since it read them) and the request counter (atomic);
 * everything else a job touches is its own.
 */
#include "source.h"

#include "../net/http.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_COMPONENT	   128 /* entity, project, run id, artifact name */
#define PAGE_SIZE	   100
#define MAX_PAGES	   100
#define MAX_MANIFEST_BYTES (64u << 20)
#define FETCH_THREADS	   8 /* downloads at once */

/* An artifact version the API named. */
struct art {
	char *id, *name, *entity, *project, *type, *state, *time;
	char *aliases; /* ",latest,v3," */
	long version;
};

struct fetch {
	struct wandb_config c;
	struct wandb_ref ref;
	const struct wandb_fetch_opts *o;
	struct wandb_fetch_result *r;
	struct art art; /* the chosen artifact */
	int have_art;
	int alias_matched;
	char *log_dir, *trainer_id; /* the run config's trainer.log_dir and trainer.id */
	uint32_t n_profiles, n_other;
	char **url_names, **urls; /* signed URLs by logical path */
	uint32_t n_urls;
	int by_id;	    /* the server lacks the collection-membership file query */
	pthread_mutex_t mu; /* the URLs below, while downloads run side by side */
	unsigned url_gen;   /* how often the URLs were loaded */
	int urls_rc;	    /* loading them failed: every job after says so, none asks again */
	char *urls_err;
	int tty;
};

static void art_release(struct art *a)
{
	free(a->id);
	free(a->name);
	free(a->entity);
	free(a->project);
	free(a->type);
	free(a->state);
	free(a->time);
	free(a->aliases);
	memset(a, 0, sizeof(*a));
}

static void say(struct fetch *f, const char *fmt, ...) PG_PRINTF(2, 3);
static void say(struct fetch *f, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	wandb_redact(&f->c, line);
	if (f->o && f->o->log)
		f->o->log(f->o->payload, line);
	else
		pg_log("%s", line);
}

/* {"k1": "v1", ...} from NULL-terminated key/value pairs (a NULL value is null). */
static void vars(struct pg_buf *b, const char *const *kv, int n)
{
	pg_buf_addc(b, '{');
	for (int i = 0; i < n; i++) {
		if (i)
			pg_buf_adds(b, ", ");
		pg_json_escape(b, kv[2 * i], strlen(kv[2 * i]));
		pg_buf_adds(b, ": ");
		if (kv[2 * i + 1])
			pg_json_escape(b, kv[2 * i + 1], strlen(kv[2 * i + 1]));
		else
			pg_buf_adds(b, "null");
	}
}

/* The cursor of a connection's next page ("after:"), in place of *cursor;
 * NULL on the last page. */
static void next_page(char **cursor, const cJSON *conn)
{
	free(*cursor);
	*cursor = cJSON_IsTrue(wandb_at(conn, "pageInfo.hasNextPage"))
		      ? wandb_dup_at(conn, "pageInfo.endCursor")
		      : NULL;
}

static int gql(struct fetch *f, const char *op, const char *query, struct pg_buf *v, cJSON **root,
	       cJSON **data)
{
	__atomic_add_fetch(&f->r->requests, 1, __ATOMIC_RELAXED);
	return wandb_graphql(&f->c, op, query, v->ptr, root, data);
}

static int gql_status(struct fetch *f, const char *op, const char *query, struct pg_buf *v,
		      cJSON **root, cJSON **data, long *status)
{
	__atomic_add_fetch(&f->r->requests, 1, __ATOMIC_RELAXED);
	return wandb_graphql_status(&f->c, op, query, v->ptr, root, data, status);
}

/* ---- config and summary of a run ---- */

/* A JSONString field (config, summaryMetrics): parsed, or a copy when the
 * server already sent an object. */
static cJSON *json_field(const cJSON *run, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(run, key);

	if (cJSON_IsString(v))
		return cJSON_Parse(v->valuestring);
	return cJSON_IsObject(v) ? cJSON_Duplicate(v, 1) : NULL;
}

/* Each top-level key is {"value": v} (older SDKs add "desc"): unwrap; drop the
 * SDK's own keys. */
static void unwrap_config(cJSON *cfg)
{
	if (!cJSON_IsObject(cfg))
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(cfg, "_wandb");
	cJSON_DeleteItemFromObjectCaseSensitive(cfg, "wandb_version");
	for (cJSON *it = cfg->child, *next; it; it = next) {
		cJSON *v =
		    cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "value") : NULL;
		next = it->next;
		if (v && it->string)
			cJSON_ReplaceItemInObjectCaseSensitive(cfg, it->string,
							       cJSON_DetachItemViaPointer(it, v));
	}
}

/* A string as Python's json.dumps writes it (ensure_ascii). */
static void canon_str(struct pg_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	pg_buf_addc(b, '"');
	while (*p) {
		uint32_t cp = *p++;
		int more = cp >= 0xf0 ? 3 : cp >= 0xe0 ? 2 : cp >= 0xc0 ? 1 : 0;
		if (more) {
			cp &= 0x3fu >> more;
			for (int k = 0; k < more && (*p & 0xc0) == 0x80; k++)
				cp = (cp << 6) | (*p++ & 0x3f);
		}
		if (cp == '"' || cp == '\\')
			pg_buf_addf(b, "\\%c", (char)cp);
		else if (cp == '\n')
			pg_buf_adds(b, "\\n");
		else if (cp == '\r')
			pg_buf_adds(b, "\\r");
		else if (cp == '\t')
			pg_buf_adds(b, "\\t");
		else if (cp == '\b')
			pg_buf_adds(b, "\\b");
		else if (cp == '\f')
			pg_buf_adds(b, "\\f");
		else if (cp < 0x20 || (cp >= 0x80 && cp < 0x10000))
			pg_buf_addf(b, "\\u%04x", (unsigned)cp);
		else if (cp >= 0x10000)
			pg_buf_addf(b, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
				    0xdc00 + ((cp - 0x10000) & 0x3ff));
		else
			pg_buf_addc(b, (char)cp);
	}
	pg_buf_addc(b, '"');
}

/* A number as Python writes it: whole numbers as integers (JSON text does not
 * say int or float once parsed), others as the shortest text that reads back. */
static void canon_num(struct pg_buf *b, double v)
{
	char tmp[64];

	if (floor(v) == v && fabs(v) < 1e16) {
		pg_buf_addf(b, "%.0f", v == 0 ? 0.0 : v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	pg_buf_adds(b, tmp);
	if (!strpbrk(tmp, ".e"))
		pg_buf_adds(b, ".0");
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* json.dumps(v, sort_keys=True): what marin hashes for config_hash. */
static void canon(struct pg_buf *b, const cJSON *v, int depth)
{
	const cJSON *it;
	int n = 0;

	if (depth > 64) {
		pg_buf_adds(b, "null");
	} else if (cJSON_IsObject(v)) {
		const cJSON **kids = pg_xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*kids));
		cJSON_ArrayForEach (it, v)
			kids[n++] = it;
		qsort(kids, (size_t)n, sizeof(*kids), cmp_key);
		pg_buf_addc(b, '{');
		for (int i = 0; i < n; i++) {
			pg_buf_adds(b, i ? ", " : "");
			canon_str(b, kids[i]->string);
			pg_buf_adds(b, ": ");
			canon(b, kids[i], depth + 1);
		}
		pg_buf_addc(b, '}');
		free(kids);
	} else if (cJSON_IsArray(v)) {
		pg_buf_addc(b, '[');
		cJSON_ArrayForEach (it, v) {
			pg_buf_adds(b, n++ ? ", " : "");
			canon(b, it, depth + 1);
		}
		pg_buf_addc(b, ']');
	} else if (cJSON_IsString(v)) {
		canon_str(b, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		canon_num(b, v->valuedouble);
	} else {
		pg_buf_adds(b, cJSON_IsTrue(v) ? "true" : cJSON_IsFalse(v) ? "false" : "null");
	}
}

/* The first 16 hex digits of the sha256 of the canonical config. */
static char *config_hash(const cJSON *cfg)
{
	struct pg_buf b = PG_BUF_INIT;
	struct pg_sha256 s;
	char hex[65];

	canon(&b, cfg, 0);
	pg_sha256_init(&s);
	pg_sha256_update(&s, b.ptr, b.len);
	pg_sha256_hex(&s, hex);
	pg_buf_release(&b);
	hex[16] = '\0';
	return pg_xstrdup(hex);
}

/* What a run's config and summary say about the capture. */
static void run_facts(struct fetch *f, const cJSON *run)
{
	struct source_origin *o = &f->r->origin;
	cJSON *cfg = json_field(run, "config"), *sum = json_field(run, "summaryMetrics");

	unwrap_config(cfg);
	if (cfg) {
		o->config_hash = config_hash(cfg);
		o->git_sha = wandb_dup_at(cfg, "git_commit");
		if (!o->git_sha)
			o->git_sha = wandb_dup_at(cfg, "git_sha");
		f->log_dir = wandb_dup_at(cfg, "trainer.log_dir");
		f->trainer_id = wandb_dup_at(cfg, "trainer.id");
		if (!f->log_dir) {
			f->log_dir = wandb_dup_at(cfg, "trainer.trainer.log_dir");
			free(f->trainer_id);
			f->trainer_id = wandb_dup_at(cfg, "trainer.trainer.id");
		}
	}
	if (!o->git_sha)
		o->git_sha = wandb_dup_at(run, "commit");
	if (sum) {
		const cJSON *dk = cJSON_GetObjectItemCaseSensitive(sum, "throughput/device_kind");
		if (!cJSON_IsString(dk))
			dk = cJSON_GetObjectItemCaseSensitive(sum, "device_kind");
		if (cJSON_IsString(dk) && *dk->valuestring)
			o->device_kind = pg_xstrdup(dk->valuestring);
	}
	cJSON_Delete(cfg);
	cJSON_Delete(sum);
}

static const char RUN_INFO_Q[] =
    "query RunInfo($entity: String!, $project: String!, $name: String!) {\n"
    "  project(name: $project, entityName: $entity) {\n"
    "    run(name: $name) { id name displayName state config summaryMetrics createdAt commit }\n"
    "  }\n"
    "}";

/* Look the run up; its path, id, name and facts go into the origin. */
static int run_info(struct fetch *f, const char *entity, const char *project, const char *name)
{
	struct pg_buf v = PG_BUF_INIT;
	const char *kv[] = {"entity", entity, "project", project, "name", name};
	cJSON *root = NULL, *data;
	const cJSON *proj, *run;
	struct source_origin *o = &f->r->origin;
	int rc;

	vars(&v, kv, 3);
	pg_buf_addc(&v, '}');
	if ((rc = gql(f, "RunInfo", RUN_INFO_Q, &v, &root, &data)) != 0)
		goto out;
	proj = cJSON_GetObjectItemCaseSensitive(data, "project");
	run = cJSON_GetObjectItemCaseSensitive(proj, "run");
	if ((rc = wandb_answer_need(root, proj, "RunInfo", "data.project")) != 0) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(
			    rc, "wandb: project '%s/%s' not found (or not visible with this key)",
			    entity, project);
		goto out;
	}
	if ((rc = wandb_answer_need(root, run, "RunInfo", "data.project.run")) != 0) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(rc, "wandb: run '%s/%s/%s' not found", entity, project, name);
		goto out;
	}
	o->run_id = wandb_dup_at(run, "name");
	if (!o->run_id)
		o->run_id = pg_xstrdup(name);
	o->run_path = pg_xasprintf("%s/%s/%s", entity, project, o->run_id);
	o->run_name = wandb_dup_at(run, "displayName");
	run_facts(f, run);
out:
	cJSON_Delete(root);
	pg_buf_release(&v);
	return rc;
}

/* ---- which artifact ---- */

static void art_from_node(struct art *a, const cJSON *node)
{
	const cJSON *al = cJSON_GetObjectItemCaseSensitive(node, "aliases"), *it;
	const cJSON *vi = cJSON_GetObjectItemCaseSensitive(node, "versionIndex");
	struct pg_buf b = PG_BUF_INIT;

	memset(a, 0, sizeof(*a));
	a->id = wandb_dup_at(node, "id");
	a->name = wandb_dup_at(node, "artifactSequence.name");
	a->entity = wandb_dup_at(node, "artifactSequence.project.entityName");
	a->project = wandb_dup_at(node, "artifactSequence.project.name");
	a->type = wandb_dup_at(node, "artifactType.name");
	a->state = wandb_dup_at(node, "state");
	a->time = wandb_dup_at(node, "updatedAt");
	if (!a->time)
		a->time = wandb_dup_at(node, "createdAt");
	int64_t version;
	a->version = cJSON_IsNumber(vi) && pg_whole(vi->valuedouble, &version) && version >= 0 &&
			     version < (1LL << 31)
			 ? (long)version
			 : -1;
	pg_buf_addc(&b, ',');
	cJSON_ArrayForEach (it, al) {
		const cJSON *s = cJSON_IsString(it) ? it : wandb_at(it, "alias");
		if (cJSON_IsString(s))
			pg_buf_addf(&b, "%s,", s->valuestring);
	}
	a->aliases = pg_buf_detach(&b, NULL);
}

static int has_alias(const struct art *a, const char *alias)
{
	char tmp[160];

	snprintf(tmp, sizeof(tmp), ",%s,", alias);
	if (strstr(a->aliases, tmp))
		return 1;
	snprintf(tmp, sizeof(tmp), "v%ld", a->version);
	return a->version >= 0 && strcmp(tmp, alias) == 0;
}

/* Newer first: updatedAt (else createdAt), then the version, then the name. */
static int newer(const struct art *a, const struct art *b)
{
	int c = strcmp(a->time ? a->time : "", b->time ? b->time : "");
	if (c)
		return c > 0;
	if (a->version != b->version)
		return a->version > b->version;
	return strcmp(a->name ? a->name : "", b->name ? b->name : "") > 0;
}

/* Keep node when it is a committed jax_profile that beats the current pick:
 * one with the wanted alias beats one without, then the newer wins. */
static void consider(struct fetch *f, const cJSON *node)
{
	const char *want = f->ref.alias ? f->ref.alias : "latest";
	struct art a;

	art_from_node(&a, node);
	if (!a.id || !a.name || !a.type || strcmp(a.type, "jax_profile") != 0) {
		f->n_other++;
		art_release(&a);
		return;
	}
	f->n_profiles++;
	int match = has_alias(&a, want);
	if (!a.state || strcmp(a.state, "COMMITTED") != 0 ||
	    (f->have_art && match < f->alias_matched) ||
	    (f->have_art && match == f->alias_matched && !newer(&a, &f->art))) {
		art_release(&a);
		return;
	}
	art_release(&f->art);
	f->art = a;
	f->have_art = 1;
	f->alias_matched = match;
}

static const char RUN_ARTS_Q[] =
    "query RunOutputArtifacts($entity: String!, $project: String!, $run: String!, "
    "$cursor: String, $perPage: Int) {\n"
    "  project(name: $project, entityName: $entity) {\n"
    "    run(name: $run) {\n"
    "      outputArtifacts(after: $cursor, first: $perPage) {\n"
    "        totalCount\n"
    "        pageInfo { endCursor hasNextPage }\n"
    "        edges { node {\n"
    "          id versionIndex state digest fileCount size createdAt updatedAt\n"
    "          artifactType { name }\n"
    "          artifactSequence { name project { name entityName } }\n"
    "          aliases { alias }\n"
    "        } }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}";

/* Page through the run's output artifacts, keeping the best jax_profile. */
static int run_artifacts(struct fetch *f)
{
	char *cursor = NULL;
	int rc = 0;

	for (int page = 0; page < MAX_PAGES; page++) {
		struct pg_buf v = PG_BUF_INIT;
		const char *kv[] = {"entity", f->ref.entity,	   "project", f->ref.project,
				    "run",    f->r->origin.run_id, "cursor",  cursor};
		cJSON *root = NULL, *data;
		const cJSON *oa, *edge;

		vars(&v, kv, 4);
		pg_buf_addf(&v, ", \"perPage\": %d}", PAGE_SIZE);
		rc = gql(f, "RunOutputArtifacts", RUN_ARTS_Q, &v, &root, &data);
		pg_buf_release(&v);
		if (rc)
			break;
		oa = wandb_at(data, "project.run.outputArtifacts");
		cJSON_ArrayForEach (edge, cJSON_GetObjectItemCaseSensitive(oa, "edges"))
			consider(f, cJSON_GetObjectItemCaseSensitive(edge, "node"));
		next_page(&cursor, oa);
		cJSON_Delete(root);
		if (!cursor)
			break;
	}
	free(cursor);
	return rc;
}

/* No jax_profile artifact: the run config's trainer.log_dir, when it is a
 * folder here (<log_dir>/<trainer.id or run id>/profiler as Levanter writes,
 * else log_dir itself). */
static int use_log_dir(struct fetch *f)
{
	const char *id = f->trainer_id ? f->trainer_id : f->r->origin.run_id;
	struct stat st;
	char *cand[2] = {NULL, NULL};
	int rc = 0;

	if (!f->log_dir)
		return pg_error_set(
		    PG_ENOTFOUND,
		    "wandb: run '%s' has no jax_profile artifact (%u of other types) "
		    "and its config has no trainer.log_dir",
		    f->r->origin.run_path, f->n_other);
	cand[0] = pg_xasprintf("%s/%s/profiler", f->log_dir, id);
	cand[1] = pg_xstrdup(f->log_dir);
	for (int i = 0; i < 2; i++)
		if (stat(cand[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			f->r->origin.dir = cand[i];
			cand[i] = NULL;
			say(f,
			    "wandb: run %s logged no jax_profile artifact; reading its "
			    "trainer.log_dir '%s'",
			    f->r->origin.run_path, f->r->origin.dir);
			goto out;
		}
	rc = pg_error_set(PG_ENOTFOUND,
			  "wandb: run '%s' has no jax_profile artifact (%u of other types) and its "
			  "trainer.log_dir '%s' is not a folder here",
			  f->r->origin.run_path, f->n_other, cand[0]);
out:
	free(cand[0]);
	free(cand[1]);
	return rc;
}

static const char ART_Q[] =
    "query ArtifactByName($entityName: String!, $projectName: String!, $name: String!) {\n"
    "  project(name: $projectName, entityName: $entityName) {\n"
    "    artifact(name: $name) {\n"
    "      id versionIndex state createdAt updatedAt\n"
    "      artifactType { name }\n"
    "      artifactSequence { name project { name entityName } }\n"
    "      aliases { alias }\n"
    "      createdBy { __typename ... on Run { name project { name entityName } } }\n"
    "    }\n"
    "  }\n"
    "}";

/* An artifact by entity/project/name:alias; the run that logged it, when the
 * API says, gives the run facts. */
static int artifact_by_name(struct fetch *f)
{
	struct pg_buf v = PG_BUF_INIT;
	char *full = pg_xasprintf("%s:%s", f->ref.name, f->ref.alias);
	const char *kv[] = {"entityName",   f->ref.entity, "projectName",
			    f->ref.project, "name",	   full};
	cJSON *root = NULL, *data;
	const cJSON *node;
	int rc;

	vars(&v, kv, 3);
	pg_buf_addc(&v, '}');
	if ((rc = gql(f, "ArtifactByName", ART_Q, &v, &root, &data)) != 0)
		goto out;
	if ((rc = wandb_answer_need(root, wandb_at(data, "project"), "ArtifactByName",
				    "data.project"))) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(rc, "wandb: project '%s/%s' not found", f->ref.entity,
				     f->ref.project);
		goto out;
	}
	node = wandb_at(data, "project.artifact");
	if ((rc = wandb_answer_need(root, node, "ArtifactByName", "data.project.artifact"))) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(rc, "wandb: artifact '%s/%s/%s' not found", f->ref.entity,
				     f->ref.project, full);
		goto out;
	}
	art_from_node(&f->art, node);
	f->have_art = 1;
	if (!f->art.id || !f->art.name) {
		rc = pg_error_set(PG_EFORMAT, "wandb: artifact '%s' came without an id or name",
				  full);
		goto out;
	}
	if (!f->art.type || (strcmp(f->art.type, "jax_profile") != 0 &&
			     strcmp(f->art.type, "profile_summary") != 0)) {
		rc = pg_error_set(PG_EFORMAT,
				  "wandb: artifact '%s/%s/%s' is of type '%s', not jax_profile or "
				  "profile_summary",
				  f->ref.entity, f->ref.project, full,
				  f->art.type ? f->art.type : "(none)");
		goto out;
	}
	char *re = wandb_dup_at(node, "createdBy.project.entityName");
	char *rp = wandb_dup_at(node, "createdBy.project.name");
	char *rn = wandb_dup_at(node, "createdBy.name");
	if (re && rp && rn && run_info(f, re, rp, rn) != 0) {
		say(f, "wandb: the run that logged %s: %s", full, pg_error_last());
		pg_error_clear();
	}
	free(re);
	free(rp);
	free(rn);
out:
	cJSON_Delete(root);
	pg_buf_release(&v);
	free(full);
	return rc;
}

/* ---- storage: manifests and files from signed URLs, never with the key ---- */

struct prog {
	struct fetch *f;
	const char *path;
	double last;
	int shown;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* On a terminal, one line rewritten in place at most 5 times a second. */
static void on_progress(void *ctx, uint64_t now, uint64_t total)
{
	struct prog *p = ctx;
	double t = now_s();

	if (!p->f->tty || (p->shown && t - p->last < 0.2 && now != total))
		return;
	p->last = t;
	p->shown = 1;
	pg_progress("wandb: %.60s %.1f / %.1f MB ", p->path, (double)now / 1e6,
		    (double)total / 1e6);
}

/* GET a signed URL (no key), or with keyed set one of W&B's own under the
 * base URL (the key as Basic auth). */
static int storage_get(struct fetch *f, const char *signed_url, int keyed, FILE *sink, uint64_t cap,
		       struct prog *p, struct http_response *rs)
{
	char *url = wandb_absolute_url(&f->c, signed_url);
	const char *secrets[2] = {f->c.api_key, NULL}, *heads[2] = {NULL, NULL};
	struct pg_buf auth = PG_BUF_INIT;
	uint64_t t = 120 + cap / (256 * 1024);
	uint32_t timeout = (uint32_t)(t > 21600 ? 21600 : t);
	struct http_request rq = {
	    .url = url,
	    .secrets = secrets,
	    .policy = HTTP_POLICY_PLAIN,
	    .max_body_bytes = cap,
	    .sink = sink,
	    .timeout_s = timeout,
	    .deadline_s = timeout * 3,
	    .progress = p ? on_progress : NULL,
	    .progress_ctx = p,
	    .what = keyed ? "W&B download" : "W&B storage",
	};
	int rc;

	if (keyed) {
		wandb_auth_header(&f->c, &auth);
		heads[0] = auth.len ? auth.ptr : NULL;
		rq.headers = heads;
	}
	__atomic_add_fetch(&f->r->requests, 1, __ATOMIC_RELAXED);
	rc = http_do(&rq, rs);
	if (p && p->shown)
		pg_progress_end();
	pg_buf_release(&auth);
	free(url);
	return rc;
}

/* 16 hex digits naming something of this server in the cache. */
static void cache_key(const struct fetch *f, const char *id, char out[17])
{
	struct pg_sha256 s;
	char hex[65];

	pg_sha256_init(&s);
	pg_sha256_update(&s, f->c.base_url, strlen(f->c.base_url));
	pg_sha256_update(&s, "\n", 1);
	pg_sha256_update(&s, id, strlen(id));
	pg_sha256_hex(&s, hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
}

static const char MANIFEST_Q[] =
    "query ArtifactManifest($artifact_id: ID!) {\n"
    "  artifact(id: $artifact_id) { currentManifest { file { directUrl } } }\n"
    "}";

static int download_manifest(struct fetch *f, const char *what, struct pg_buf *text)
{
	struct pg_buf v = PG_BUF_INIT;
	struct http_response rs = HTTP_RESPONSE_INIT;
	const char *kv[] = {"artifact_id", f->art.id};
	cJSON *root = NULL, *data;
	char *url = NULL;
	int rc;

	vars(&v, kv, 1);
	pg_buf_addc(&v, '}');
	if ((rc = gql(f, "ArtifactManifest", MANIFEST_Q, &v, &root, &data)) != 0)
		goto out;
	url = wandb_dup_at(data, "artifact.currentManifest.file.directUrl");
	if (!url) {
		rc = pg_error_set(PG_ENOTFOUND, "wandb: artifact %s has no manifest", what);
		goto out;
	}
	rc = storage_get(f, url, 0, NULL, MAX_MANIFEST_BYTES, NULL, &rs);
	if (rc == PG_ELIMIT)
		rc = pg_error_set(PG_ELIMIT, "wandb: the manifest of %s is over the cap of %u MiB",
				  what, MAX_MANIFEST_BYTES >> 20);
	if (rc)
		goto out;
	if (rs.status < 200 || rs.status > 299) {
		rc = pg_error_set(PG_EDELIVERY,
				  "wandb: cannot download the manifest of %s: HTTP %ld", what,
				  rs.status);
		goto out;
	}
	pg_buf_add(text, rs.body.ptr, rs.body.len);
out:
	http_response_release(&rs);
	cJSON_Delete(root);
	pg_buf_release(&v);
	free(url);
	return rc;
}

/* The manifest: from the cache for a committed artifact seen before. */
static int load_manifest(struct fetch *f, const char *what)
{
	struct pg_buf text = PG_BUF_INIT;
	char key[17], *dir, *path, *mwhat = pg_xasprintf("wandb: %s", what);
	int rc, committed = strcmp(f->art.state, "COMMITTED") == 0;

	cache_key(f, f->art.id, key);
	dir = pg_xasprintf("%s/wandb/manifests", f->c.cache_dir);
	path = pg_xasprintf("%s/%s.json", dir, key);
	if (committed && pg_read_small(path, MAX_MANIFEST_BYTES, 0, &text) == 0 &&
	    wandb_manifest_parse(&f->r->manifest, text.ptr, text.len, mwhat) == 0) {
		rc = 0;
		goto out;
	}
	pg_error_clear();
	pg_buf_reset(&text);
	if ((rc = download_manifest(f, what, &text)) != 0 ||
	    (rc = wandb_manifest_parse(&f->r->manifest, text.ptr, text.len, mwhat)) != 0)
		goto out;
	/* a cache that cannot be written costs a download next time */
	if (committed &&
	    (pg_mkdir_p(dir, 0700) != 0 || pg_write_file_atomic(path, text.ptr, text.len) != 0))
		pg_error_clear();
out:
	pg_buf_release(&text);
	free(dir);
	free(path);
	free(mwhat);
	return rc;
}

static void urls_release(struct fetch *f)
{
	for (uint32_t i = 0; i < f->n_urls; i++) {
		free(f->url_names[i]);
		free(f->urls[i]);
	}
	free(f->url_names);
	free(f->urls);
	f->url_names = f->urls = NULL;
	f->n_urls = 0;
}

/* The file URLs as the Python client asks for them: through the artifact's
 * collection membership (which also serves linked and registry artifacts);
 * a server without that query answers a validation error, and then the
 * artifact's own files (by id, as wandb-core asks) are asked for instead. */
static const char MEMBERSHIP_FILES_Q[] =
    "query ArtifactCollectionMembershipFileURLs($entityName: String!, $projectName: String!, "
    "$artifactName: String!, $artifactVersionIndex: String!, $cursor: String, $perPage: Int) {\n"
    "  project(name: $projectName, entityName: $entityName) {\n"
    "    artifactCollection(name: $artifactName) {\n"
    "      artifactMembership(aliasName: $artifactVersionIndex) {\n"
    "        files(after: $cursor, first: $perPage) {\n"
    "          pageInfo { hasNextPage endCursor }\n"
    "          edges { node { name directUrl } }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}";

static const char FILES_Q[] = "query ArtifactFileURLs($id: ID!, $cursor: String, $perPage: Int) {\n"
			      "  artifact(id: $id) {\n"
			      "    files(after: $cursor, first: $perPage) {\n"
			      "      pageInfo { hasNextPage endCursor }\n"
			      "      edges { node { name directUrl } }\n"
			      "    }\n"
			      "  }\n"
			      "}";

/* One page of file URLs into f; *cursor becomes the next page's. */
static int urls_page(struct fetch *f, char **cursor)
{
	struct pg_buf v = PG_BUF_INIT;
	char version[32];
	cJSON *root = NULL, *data;
	const cJSON *files, *edge;
	long status = 0;
	int rc;

	snprintf(version, sizeof(version), "v%ld", f->art.version);
	if (!f->by_id && f->art.version >= 0) {
		const char *kv[] = {
		    "entityName",   f->art.entity, "projectName",	   f->art.project,
		    "artifactName", f->art.name,   "artifactVersionIndex", version,
		    "cursor",	    *cursor};
		vars(&v, kv, 5);
		pg_buf_adds(&v, ", \"perPage\": 1000}");
		rc = gql_status(f, "ArtifactCollectionMembershipFileURLs", MEMBERSHIP_FILES_Q, &v,
				&root, &data, &status);
		pg_buf_release(&v);
		if (rc && (status == 400 || status == 200) && !*cursor) {
			pg_error_clear(); /* an older server: by the artifact's id */
			f->by_id = 1;
			return urls_page(f, cursor);
		}
		files = wandb_at(data, "project.artifactCollection.artifactMembership.files");
	} else {
		const char *kv[] = {"id", f->art.id, "cursor", *cursor};
		vars(&v, kv, 2);
		pg_buf_adds(&v, ", \"perPage\": 1000}");
		rc = gql(f, "ArtifactFileURLs", FILES_Q, &v, &root, &data);
		pg_buf_release(&v);
		files = wandb_at(data, "artifact.files");
	}
	if (rc)
		return rc;
	cJSON_ArrayForEach (edge, cJSON_GetObjectItemCaseSensitive(files, "edges")) {
		char *name = wandb_dup_at(edge, "node.name"),
		     *url = wandb_dup_at(edge, "node.directUrl");
		if (!name || !url || f->n_urls >= 2 * WANDB_MAX_FILES) {
			free(name);
			free(url);
			continue;
		}
		f->url_names = pg_xrealloc(f->url_names, (f->n_urls + 1) * sizeof(char *));
		f->urls = pg_xrealloc(f->urls, (f->n_urls + 1) * sizeof(char *));
		f->url_names[f->n_urls] = name;
		f->urls[f->n_urls++] = url;
	}
	next_page(cursor, files);
	cJSON_Delete(root);
	return 0;
}

/* The signed URL of every file (fresh ones: they expire). */
static int load_urls(struct fetch *f)
{
	char *cursor = NULL;
	int rc = 0;

	urls_release(f);
	for (int page = 0; page < WANDB_MAX_FILES / 1000 + 2; page++)
		if ((rc = urls_page(f, &cursor)) != 0 || !cursor)
			break;
	free(cursor);
	return rc;
}

static const char *url_of(const struct fetch *f, const char *path);

/* A copy of path's signed URL (NULL when the artifact names none) and the
 * URLs' generation; the URLs are loaded first when none are, or again when
 * stale_gen (>= 0) is still the generation (nobody reloaded them since). */
static int signed_url(struct fetch *f, const char *path, long stale_gen, char **url, unsigned *gen)
{
	const char *u;
	int rc = 0;

	*url = NULL;
	pthread_mutex_lock(&f->mu);
	if (f->urls_rc) {
		rc = pg_error_set(f->urls_rc, "%s", f->urls_err);
	} else if (!f->n_urls || (stale_gen >= 0 && (unsigned)stale_gen == f->url_gen)) {
		if ((rc = load_urls(f)) != 0) {
			f->urls_rc = rc;
			f->urls_err = pg_xstrdup(pg_error_last());
		}
		f->url_gen++;
	}
	if (!rc && (u = url_of(f, path)) != NULL)
		*url = pg_xstrdup(u);
	*gen = f->url_gen;
	pthread_mutex_unlock(&f->mu);
	return rc;
}

static const char *url_of(const struct fetch *f, const char *path)
{
	for (uint32_t i = 0; i < f->n_urls; i++)
		if (strcmp(f->url_names[i], path) == 0)
			return f->urls[i];
	return NULL;
}

/* Size first (a cut download), then the MD5 the manifest names. */
static int verify(const char *tmp, const struct wandb_entry *e, const char *what)
{
	unsigned char md5[16];
	uint64_t bytes = 0;
	struct pg_buf got = PG_BUF_INIT;
	int rc;

	if ((rc = pg_md5_file(tmp, md5, &bytes)) != 0)
		return rc;
	if (bytes < e->size)
		return pg_error_set(
		    PG_EFORMAT, "wandb: '%s' of %s is truncated: %llu of %llu bytes arrived",
		    e->path, what, (unsigned long long)bytes, (unsigned long long)e->size);
	if (bytes > e->size)
		return pg_error_set(
		    PG_EFORMAT, "wandb: '%s' of %s is %llu bytes, the manifest says %llu", e->path,
		    what, (unsigned long long)bytes, (unsigned long long)e->size);
	if (memcmp(md5, e->md5, 16) != 0) {
		pg_base64_encode(&got, md5, 16);
		rc = pg_error_set(
		    PG_EFORMAT,
		    "wandb: '%s' of %s does not match its digest: the manifest says %s, "
		    "the bytes give %s",
		    e->path, what, e->digest, got.ptr);
		pg_buf_release(&got);
	}
	return rc;
}

/* One GET of e into tmp (keyed: with the key, from W&B's own handler);
 * *status gets the answer's status. PG_EDELIVERY (the network, after
 * retries) leaves the wrapper's message, for the caller to place. */
static int get_file(struct fetch *f, const struct wandb_entry *e, const char *url, int keyed,
		    const char *tmp, const char *what, long *status)
{
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct prog p = {f, e->path, 0, 0};
	char why[512];
	FILE *fp = fopen(tmp, "w+b");
	int rc;

	*status = 0;
	if (!fp)
		return pg_error_set(PG_EIO, "wandb: cannot write '%s': %s", tmp, strerror(errno));
	rc = storage_get(f, url, keyed, fp, e->size ? e->size : 1, &p, &rs);
	if (fclose(fp) != 0 && !rc)
		rc = pg_error_set(PG_EIO, "wandb: cannot write '%s': %s", tmp, strerror(errno));
	*status = rs.status;
	if (rc == PG_ELIMIT) {
		rc = pg_error_set(PG_EFORMAT,
				  "wandb: '%s' of %s is longer than the manifest's %llu bytes",
				  e->path, what, (unsigned long long)e->size);
	} else if (rc && rc != PG_EDELIVERY) {
		snprintf(why, sizeof(why), "%s", pg_error_last());
		rc = pg_error_set(rc, "wandb: cannot download '%s' of %s: %s", e->path, what, why);
	}
	http_response_release(&rs);
	return rc;
}

/* W&B's own download path of e (the SDK's _file_url), under the base URL:
 * layout V2 with the collection (newer servers; which = 0), or without it
 * (which = 1); layout V1. NULL when there is no such path. */
static char *handler_url(const struct fetch *f, const struct wandb_entry *e, int which)
{
	const struct wandb_manifest *m = &f->r->manifest;
	const char *slash = strrchr(e->path, '/');
	struct pg_buf b = PG_BUF_INIT;
	char hex[33];

	pg_hex(hex, e->md5, 16);
	if (m->layout_v1 && which > 0)
		return NULL;
	if (m->layout_v1) {
		pg_buf_addf(&b, "%s/artifacts/", f->c.base_url);
		http_url_escape(&b, f->art.entity);
		pg_buf_addf(&b, "/%s", hex);
		return pg_buf_detach(&b, NULL);
	}
	if (which > 1)
		return NULL;
	pg_buf_addf(&b, "%s/artifactsV2/%s/", f->c.base_url, m->region);
	http_url_escape(&b, f->art.entity);
	if (which == 0) {
		pg_buf_addc(&b, '/');
		http_url_escape(&b, f->art.project);
		pg_buf_addc(&b, '/');
		http_url_escape(&b, f->art.name);
	}
	pg_buf_addc(&b, '/');
	http_url_escape(&b, e->birth_artifact_id ? e->birth_artifact_id : "");
	pg_buf_addf(&b, "/%s", hex);
	if (which == 0) {
		pg_buf_addc(&b, '/');
		http_url_escape(&b, slash ? slash + 1 : e->path);
	}
	return pg_buf_detach(&b, NULL);
}

/* The signed URL failed (why): W&B's own download handler, with the key, as
 * the Python client falls back (self-hosted servers whose storage URLs the
 * runner cannot reach need it). A 404 on the newer path tries the older. */
static int from_handler(struct fetch *f, const struct wandb_entry *e, const char *tmp,
			const char *what, const char *why)
{
	long status = 0;
	int rc = 0;

	say(f,
	    "wandb: '%s' of %s: the signed URL failed (%s); downloading it from W&B with the "
	    "key",
	    e->path, what, why);
	for (int which = 0;; which++) {
		char *url = handler_url(f, e, which);
		if (!url)
			break;
		rc = get_file(f, e, url, 1, tmp, what, &status);
		free(url);
		if (rc || status != 404)
			break;
	}
	if (rc == PG_EDELIVERY) {
		char *cause = pg_xstrdup(pg_error_last());
		rc = pg_error_set(
		    PG_EDELIVERY,
		    "wandb: cannot download '%s' of %s: the signed URL failed (%s), and "
		    "W&B's download handler: %s",
		    e->path, what, why, cause);
		free(cause);
	}
	if (rc)
		return rc;
	if (status < 200 || status > 299)
		return pg_error_set(
		    PG_EDELIVERY,
		    "wandb: cannot download '%s' of %s: the signed URL failed (%s), "
		    "and W&B's download handler answered HTTP %ld",
		    e->path, what, why, status);
	return verify(tmp, e, what);
}

/* Download e into the blob store: from its signed URL (fresh URLs once when
 * one is refused: expired), else from W&B's own handler with the key. */
static int fetch_blob(struct fetch *f, const struct wandb_entry *e, const char *blob,
		      const char *what)
{
	char *tmp = pg_xasprintf("%s.part.%ld", blob, (long)getpid()), why[512] = "", *url = NULL;
	long status = 0;
	unsigned gen = 0;
	int rc = 0;

	for (int round = 0; round < 2; round++) {
		free(url);
		if ((rc = signed_url(f, e->path, round ? (long)gen : -1, &url, &gen)) != 0)
			break;
		if (!url) {
			snprintf(why, sizeof(why), "the artifact gives no URL for it");
			break;
		}
		if ((rc = get_file(f, e, url, 0, tmp, what, &status)) != 0) {
			if (rc == PG_EDELIVERY)
				snprintf(why, sizeof(why), "%s", pg_error_last());
			break;
		}
		if ((status == 401 || status == 403) && round == 0)
			continue;
		if (status < 200 || status > 299)
			snprintf(why, sizeof(why), "HTTP %ld", status);
		else
			rc = verify(tmp, e, what);
		break;
	}
	if (*why && f->c.api_key) {
		pg_error_clear();
		rc = from_handler(f, e, tmp, what, why);
	} else if (*why) {
		rc = pg_error_set(PG_EDELIVERY, "wandb: cannot download '%s' of %s: %s", e->path,
				  what, why);
	}
	if (!rc && rename(tmp, blob) != 0)
		rc = pg_error_set(PG_EIO, "wandb: cannot write '%s': %s", blob, strerror(errno));
	if (rc)
		unlink(tmp);
	free(url);
	free(tmp);
	return rc;
}

/* ---- the folder ---- */

static int copy_file(const char *from, const char *to)
{
	char *tmp = pg_xasprintf("%s.tmp.%ld", to, (long)getpid()), buf[65536];
	FILE *in = fopen(from, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
	size_t n;
	int rc = 0;

	if (!in || !out) {
		rc = pg_error_set(PG_EIO, "wandb: cannot copy '%s' to '%s': %s", from, to,
				  strerror(errno));
		goto out;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || fclose(out) != 0 || rename(tmp, to) != 0)
		rc = pg_error_set(PG_EIO, "wandb: cannot copy '%s' to '%s': %s", from, to,
				  strerror(errno));
	out = NULL;
out:
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* dest becomes the blob's bytes: a hard link (a copy across file systems);
 * a link to the blob already there is kept. */
static int place(const char *blob, const char *dest)
{
	struct stat bs, ds;
	char *parent = pg_xstrdup(dest), *slash = strrchr(parent, '/');
	int rc = 0;

	if (slash)
		*slash = '\0';
	if (slash && (rc = pg_mkdir_p(parent, 0755)) != 0)
		goto out;
	if (lstat(dest, &ds) == 0) {
		if (S_ISREG(ds.st_mode) && stat(blob, &bs) == 0 && ds.st_ino == bs.st_ino &&
		    ds.st_dev == bs.st_dev)
			goto out;
		if (S_ISDIR(ds.st_mode)) {
			rc = pg_error_set(PG_EIO, "wandb: '%s' is a folder", dest);
			goto out;
		}
		unlink(dest);
	}
	if (link(blob, dest) != 0)
		rc = copy_file(blob, dest);
out:
	free(parent);
	return rc;
}

/* A name as one safe folder name: [A-Za-z0-9._-], no leading dot. */
static void add_segment(struct pg_buf *b, const char *s)
{
	pg_buf_addc(b, '/');
	if (*s == '.' || !*s)
		pg_buf_addc(b, '_');
	for (size_t i = 0; s[i] && i < MAX_COMPONENT; i++) {
		char c = s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		pg_buf_addc(b, ok ? c : '_');
	}
}

static char *artifact_dir(const struct fetch *f)
{
	struct pg_buf b = PG_BUF_INIT;
	char key[17];

	cache_key(f, f->art.id, key);
	pg_buf_addf(&b, "%s/wandb/artifacts", f->c.cache_dir);
	add_segment(&b, f->art.entity);
	add_segment(&b, f->art.project);
	add_segment(&b, f->art.name);
	pg_buf_addf(&b, "/v%ld-%.8s", f->art.version, key);
	return pg_buf_detach(&b, NULL);
}

static char *blob_path(const struct fetch *f, const struct wandb_entry *e)
{
	char hex[33];

	pg_hex(hex, e->md5, 16);
	return pg_xasprintf("%s/wandb/blobs/%s", f->c.cache_dir, hex);
}

/* The downloads: one job per distinct digest missing from the blob store. */
struct downloads {
	struct fetch *f;
	const char *what;
	uint32_t *entry; /* the manifest entry of each job */
	int *rc;	 /* 0 done, < 0 failed, 1 not tried (another job had failed) */
	char **err;	 /* each failed job's message (errors are per thread) */
	int failed;	 /* set once a job fails: the jobs not started yet are not tried */
};

static void download_job(void *ctx, uint32_t job, void *scratch)
{
	struct downloads *d = ctx;
	struct wandb_entry *e = &d->f->r->manifest.v[d->entry[job]];
	char *blob = blob_path(d->f, e);

	(void)scratch;
	if (__atomic_load_n(&d->failed, __ATOMIC_RELAXED)) {
		d->rc[job] = 1;
	} else if ((d->rc[job] = fetch_blob(d->f, e, blob, d->what)) != 0) {
		d->err[job] = pg_xstrdup(pg_error_last());
		__atomic_store_n(&d->failed, 1, __ATOMIC_RELAXED);
	}
	free(blob);
}

/* Whether the blob store holds e already. */
static int cached(const struct fetch *f, const struct wandb_entry *e)
{
	char *blob = blob_path(f, e);
	struct stat st;
	int hit = stat(blob, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == e->size;

	free(blob);
	return hit;
}

/* Download what the blob store lacks, side by side; the first failure in
 * manifest order is the error. */
static int download_all(struct fetch *f, const char *what)
{
	struct wandb_manifest *m = &f->r->manifest;
	struct downloads d = {f, what, pg_xcalloc(m->n + 1, sizeof(uint32_t)), NULL, NULL, 0};
	uint32_t n = 0;
	int rc = 0;

	for (uint32_t i = 0; i < m->n; i++) {
		int dup = 0;
		for (uint32_t k = 0; k < n && !dup; k++)
			dup = memcmp(m->v[d.entry[k]].md5, m->v[i].md5, 16) == 0;
		if (!dup && !cached(f, &m->v[i]))
			d.entry[n++] = i;
	}
	d.rc = pg_xcalloc(n + 1, sizeof(int));
	d.err = pg_xcalloc(n + 1, sizeof(char *));
	if (n > 1)
		f->tty = 0; /* one progress line cannot show several downloads */
	pg_pool_run(&(struct pg_pool_jobs){download_job, &d, n, NULL, 0, NULL},
		    n < FETCH_THREADS ? (int)n : FETCH_THREADS);
	for (uint32_t k = 0; k < n; k++) {
		struct wandb_entry *e = &m->v[d.entry[k]];
		if (d.rc[k] < 0 && !rc)
			rc = pg_error_set(d.rc[k], "%s", d.err[k]);
		if (!d.rc[k]) {
			f->r->downloaded++;
			f->r->downloaded_bytes += e->size;
			e->downloaded = 1;
		}
		free(d.err[k]);
	}
	f->r->cached = m->n - f->r->downloaded;
	free(d.entry);
	free(d.rc);
	free(d.err);
	return rc;
}

/* Every file: from the blob store when it holds the digest, else downloaded;
 * then linked into the folder. */
static int get_files(struct fetch *f, const char *what)
{
	struct wandb_fetch_result *r = f->r;
	struct wandb_manifest *m = &r->manifest;
	char *blobs = pg_xasprintf("%s/wandb/blobs", f->c.cache_dir);
	int rc = pg_mkdir_p(blobs, 0700);

	r->origin.dir = f->o && f->o->out_dir ? pg_xstrdup(f->o->out_dir) : artifact_dir(f);
	if (!rc)
		rc = pg_mkdir_p(r->origin.dir, 0755);
	if (!rc)
		rc = download_all(f, what);
	for (uint32_t i = 0; i < m->n && !rc; i++) {
		char *blob = blob_path(f, &m->v[i]);
		char *dest = pg_xasprintf("%s/%s", r->origin.dir, m->v[i].path);
		rc = place(blob, dest);
		free(blob);
		free(dest);
	}
	free(blobs);
	return rc;
}

/* ---- the whole fetch ---- */

/* A run: its best jax_profile artifact, else its trainer.log_dir (1). */
static int pick_from_run(struct fetch *f)
{
	int rc;

	if ((rc = run_info(f, f->ref.entity, f->ref.project, f->ref.name)) != 0 ||
	    (rc = run_artifacts(f)) != 0)
		return rc;
	if (f->have_art && f->ref.alias && !f->alias_matched)
		return pg_error_set(PG_ENOTFOUND,
				    "wandb: run '%s' has no jax_profile artifact with alias '%s'",
				    f->r->origin.run_path, f->ref.alias);
	if (!f->have_art && f->n_profiles)
		return pg_error_set(PG_ENOTFOUND,
				    "wandb: run '%s' has %u jax_profile artifacts, none committed",
				    f->r->origin.run_path, f->n_profiles);
	if (!f->have_art)
		return (rc = use_log_dir(f)) != 0 ? rc : 1;
	if (!f->alias_matched)
		f->r->alias_note = pg_xstrdup("the newest: none has the alias 'latest'");
	else
		f->r->alias_note =
		    pg_xasprintf("alias '%s'", f->ref.alias ? f->ref.alias : "latest");
	return 0;
}

static void fetch_release(struct fetch *f)
{
	wandb_config_release(&f->c);
	wandb_ref_release(&f->ref);
	art_release(&f->art);
	urls_release(f);
	pthread_mutex_destroy(&f->mu);
	free(f->urls_err);
	free(f->log_dir);
	free(f->trainer_id);
}

int wandb_fetch(struct wandb_fetch_result *out, const char *text, const struct wandb_fetch_opts *o)
{
	struct fetch f;
	char *what = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&f, 0, sizeof(f));
	pthread_mutex_init(&f.mu, NULL);
	f.o = o;
	f.r = out;
	f.tty = isatty(2);
	out->origin.input = pg_xstrdup(text);
	if ((rc = wandb_config_from_env(&f.c)) != 0 ||
	    (rc = wandb_ref_parse(&f.ref, text, f.c.entity, f.c.project)) != 0 ||
	    (rc = wandb_check_host(&f.c, &f.ref, text)) != 0)
		goto out;
	if (f.ref.kind == WANDB_REF_RUN) {
		rc = pick_from_run(&f);
		if (rc == 1)
			rc = 0; /* the trainer.log_dir: nothing to download */
		if (rc || !f.have_art)
			goto out;
	} else if ((rc = artifact_by_name(&f)) != 0) {
		goto out;
	}
	if (!f.art.entity)
		f.art.entity = pg_xstrdup(f.ref.entity);
	if (!f.art.project)
		f.art.project = pg_xstrdup(f.ref.project);
	what =
	    pg_xasprintf("%s/%s/%s:v%ld", f.art.entity, f.art.project, f.art.name, f.art.version);
	if (!f.art.state || strcmp(f.art.state, "COMMITTED") != 0) {
		rc = pg_error_set(PG_ENOTFOUND, "wandb: artifact %s is not committed (state %s)",
				  what, f.art.state ? f.art.state : "unknown");
		goto out;
	}
	out->origin.artifact = pg_xstrdup(what);
	out->origin.display = pg_xasprintf("wandb-artifact://%s", what);
	if ((rc = load_manifest(&f, what)) != 0)
		goto out;
	if (f.ref.kind == WANDB_REF_RUN)
		say(&f, "wandb: run %s: artifact %s (%s), %u file%s, %.1f MB", out->origin.run_path,
		    what, out->alias_note, out->manifest.n, out->manifest.n == 1 ? "" : "s",
		    (double)out->manifest.total_bytes / 1e6);
	else
		say(&f, "wandb: artifact %s: %u file%s, %.1f MB", what, out->manifest.n,
		    out->manifest.n == 1 ? "" : "s", (double)out->manifest.total_bytes / 1e6);
	if ((rc = get_files(&f, what)) != 0)
		goto out;
	if (out->downloaded)
		say(&f, "wandb: %s: downloaded %u file%s (%.1f MB), %u from the cache, into %s",
		    what, out->downloaded, out->downloaded == 1 ? "" : "s",
		    (double)out->downloaded_bytes / 1e6, out->cached, out->origin.dir);
	else
		say(&f, "wandb: %s: every file from the cache, in %s", what, out->origin.dir);
out:
	free(what);
	fetch_release(&f);
	return rc;
}

void wandb_fetch_result_release(struct wandb_fetch_result *r)
{
	source_origin_release(&r->origin);
	wandb_manifest_release(&r->manifest);
	free(r->alias_note);
	memset(r, 0, sizeof(*r));
}
