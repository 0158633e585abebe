/*
 * Fuzz target: what W&B answers (src/source/wandb*.c over net/http.c and
 * libcurl), served raw by the loopback server: a run ref fetched end to end
 * (RunInfo, RunOutputArtifacts pages, ArtifactManifest, the manifest from its
 * signed URL, ArtifactFileURLs, the files), each request taking the next
 * scripted response; and the whole input as an artifact manifest. Errors are
 * one line without the key; the key goes to /graphql and W&B's download
 * handler (/artifactsV2/, /artifacts/) only, never to storage (the server checks);
 * nothing is written outside the download and cache folders.
 */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/source/source.h"

#define KEY "wandbFUZZkey0123456789abcdef0123456789ab"

static void quiet(void *payload, const char *line)
{
	(void)payload;
	(void)line;
}

/* The scratch folder holds only "jail": no download left it. */
static void check_jail(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;

	FUZZ_CHECK(d != NULL, "opendir %s", base);
	while ((e = readdir(d)))
		FUZZ_CHECK(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
			       strcmp(e->d_name, "jail") == 0,
			   "'%s' was written outside the download folders", e->d_name);
	closedir(d);
}

static void check_manifest(const struct wandb_manifest *m)
{
	uint64_t total = 0;

	FUZZ_CHECK(m->n <= WANDB_MAX_FILES, "%u files", m->n);
	for (uint32_t i = 0; i < m->n; i++) {
		const char *why;
		FUZZ_CHECK(wandb_path_check(m->v[i].path, strlen(m->v[i].path), &why) == 0,
			   "an unsafe path kept: %s", m->v[i].path);
		FUZZ_CHECK(m->v[i].size <= WANDB_MAX_FILE_BYTES, "a file over the cap");
		FUZZ_CHECK(i == 0 || strcmp(m->v[i - 1].path, m->v[i].path) < 0,
			   "paths not sorted or doubled: %s", m->v[i].path);
		total += m->v[i].size;
	}
	FUZZ_CHECK(total == m->total_bytes && total <= WANDB_MAX_TOTAL_BYTES, "total bytes");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char base_url[64];
	char out_dir[600], cache[600];
	const char *base = fuzz_scratch_dir();
	struct wandb_manifest m;
	struct wandb_fetch_result r;
	struct wandb_fetch_opts o = {out_dir, quiet, NULL};
	int rc;

	if (!base_url[0]) {
		setenv("PROFGATE_HTTP_ATTEMPTS", "1", 1);
		setenv("PROFGATE_HTTP_TIMEOUT_S", "5", 1);
		snprintf(base_url, sizeof(base_url), "http://127.0.0.1:%d", fuzz_http_port());
		setenv("WANDB_BASE_URL", base_url, 1);
		setenv("WANDB_API_KEY", KEY, 1);
		unsetenv("WANDB_ENTITY");
		unsetenv("WANDB_PROJECT");
	}
	snprintf(cache, sizeof(cache), "%s/jail/cache", base);
	snprintf(out_dir, sizeof(out_dir), "%s/jail/out", base);
	setenv("PROFGATE_CACHE_DIR", cache, 1);

	if (wandb_manifest_parse(&m, (const char *)data, size, "fuzz manifest") == 0)
		check_manifest(&m);
	else
		fuzz_check_error_line();
	wandb_manifest_release(&m);

	/* the key: GraphQL, and W&B's own download handler (a signed URL's fallback) */
	fuzz_http_script(data, size, KEY, "graphql|artifactsV2/|artifacts/");
	rc = wandb_fetch(&r, "wandb://ent/proj/run1", &o);
	if (getenv("FUZZ_VERBOSE")) /* for writing seeds: how far an input got */
		fprintf(stderr, "fetch: rc %d after %d requests: %s\n", rc, fuzz_http_served(),
			rc ? pg_error_last() : r.origin.dir);
	if (rc) {
		/* wandb_fetch's documented codes: no other (PG_ENOMEM is no answer's fault) */
		FUZZ_CHECK(rc == PG_EUSAGE || rc == PG_ENOTFOUND || rc == PG_EDELIVERY ||
			       rc == PG_EFORMAT || rc == PG_ELIMIT || rc == PG_EUNSUPP ||
			       rc == PG_EIO,
			   "rc %d: %s", rc, pg_error_last());
		fuzz_check_error_line();
		FUZZ_CHECK(!strstr(pg_error_last(), KEY), "the key in: %s", pg_error_last());
	} else {
		FUZZ_CHECK(r.origin.dir && *r.origin.dir, "no folder");
		check_manifest(&r.manifest);
	}
	wandb_fetch_result_release(&r);
	check_jail(base);
	return 0;
}
