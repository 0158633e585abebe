/*
 * The W&B fetch's downloads: the manifest and files of the chosen artifact
 * from signed URLs, never with the key (W&B's own download handler, with
 * the key, only when a signed URL fails), checked against the manifest's
 * size and MD5 and laid out as a folder for discovery.
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
#include "wandb_fetch.h"

#include "../net/http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

	wandb_vars(&v, kv, 1);
	pg_buf_addc(&v, '}');
	if ((rc = wandb_gql(f, "ArtifactManifest", MANIFEST_Q, &v, &root, &data)) != 0)
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
int wandb_load_manifest(struct fetch *f, const char *what)
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

void wandb_urls_release(struct fetch *f)
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
		wandb_vars(&v, kv, 5);
		pg_buf_adds(&v, ", \"perPage\": 1000}");
		rc = wandb_gql_status(f, "ArtifactCollectionMembershipFileURLs", MEMBERSHIP_FILES_Q,
				      &v, &root, &data, &status);
		pg_buf_release(&v);
		if (rc && (status == 400 || status == 200) && !*cursor) {
			pg_error_clear(); /* an older server: by the artifact's id */
			f->by_id = 1;
			return urls_page(f, cursor);
		}
		files = wandb_at(data, "project.artifactCollection.artifactMembership.files");
	} else {
		const char *kv[] = {"id", f->art.id, "cursor", *cursor};
		wandb_vars(&v, kv, 2);
		pg_buf_adds(&v, ", \"perPage\": 1000}");
		rc = wandb_gql(f, "ArtifactFileURLs", FILES_Q, &v, &root, &data);
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
	wandb_next_page(cursor, files);
	cJSON_Delete(root);
	return 0;
}

/* The signed URL of every file (fresh ones: they expire). */
static int load_urls(struct fetch *f)
{
	char *cursor = NULL;
	int rc = 0;

	wandb_urls_release(f);
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

	wandb_say(f,
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
int wandb_get_files(struct fetch *f, const char *what)
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
