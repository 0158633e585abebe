/*
 * W&B pieces that need no server: ref parsing (every accepted form, the
 * defaults, the refusals), manifest path safety, manifest parsing with its
 * caps, the MD5 / base64 helpers the digests are checked with, and W&B's JSON
 * dialect for run summaries (NaN and Infinity kept byte for byte).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/source/source.h"

/* ---- refs ---- */

static void ref_ok(const char *text, const char *entity, const char *project,
		   enum wandb_ref_kind kind, const char *e, const char *p, const char *name,
		   const char *alias)
{
	struct wandb_ref r;

	if (wandb_ref_parse(&r, text, entity, project) != 0)
		fail_msg("'%s' did not parse: %s", text, pg_error_last());
	assert_int_equal(r.kind, kind);
	assert_string_equal(r.entity, e);
	assert_string_equal(r.project, p);
	assert_string_equal(r.name, name);
	if (alias)
		assert_string_equal(r.alias, alias);
	else
		assert_null(r.alias);
	wandb_ref_release(&r);
}

static void ref_bad(const char *text, const char *entity, const char *project, const char *why)
{
	struct wandb_ref r;

	assert_int_equal(wandb_ref_parse(&r, text, entity, project), PG_EUSAGE);
	if (!strstr(pg_error_last(), why))
		fail_msg("'%s': '%s' does not say '%s'", text, pg_error_last(), why);
	assert_null(strstr(pg_error_last(), "profgate:"));
	wandb_ref_release(&r);
}

static void test_run_refs(void **state)
{
	(void)state;
	ref_ok("wandb://acme/llm/abc123", NULL, NULL, WANDB_REF_RUN, "acme", "llm", "abc123", NULL);
	ref_ok("wandb://acme/llm/runs/abc123", NULL, NULL, WANDB_REF_RUN, "acme", "llm", "abc123",
	       NULL);
	ref_ok("wandb://acme/llm/abc123:best", NULL, NULL, WANDB_REF_RUN, "acme", "llm", "abc123",
	       "best");
	ref_ok("wandb://llm/abc123", "ent", NULL, WANDB_REF_RUN, "ent", "llm", "abc123", NULL);
	ref_ok("wandb://abc123", "ent", "proj", WANDB_REF_RUN, "ent", "proj", "abc123", NULL);
	/* the ref's own names win over the environment's */
	ref_ok("wandb://acme/llm/abc123", "ent", "proj", WANDB_REF_RUN, "acme", "llm", "abc123",
	       NULL);
	ref_ok("https://wandb.ai/acme/llm/runs/abc123", NULL, NULL, WANDB_REF_RUN, "acme", "llm",
	       "abc123", NULL);
	ref_ok("https://wandb.ai/acme/llm/runs/abc123/overview?nw=x#top", NULL, NULL, WANDB_REF_RUN,
	       "acme", "llm", "abc123", NULL);
	ref_ok("http://127.0.0.1:8080/acme/my%2Dproj/runs/a%3Db", NULL, NULL, WANDB_REF_RUN, "acme",
	       "my-proj", "a=b", NULL);
}

static void test_url_base(void **state)
{
	struct wandb_ref r;
	(void)state;

	assert_int_equal(
	    wandb_ref_parse(&r, "https://wandb.example.com:8443/e/p/runs/x", NULL, NULL), 0);
	assert_string_equal(r.url_base, "https://wandb.example.com:8443");
	wandb_ref_release(&r);
	assert_int_equal(wandb_ref_parse(&r, "wandb://e/p/x", NULL, NULL), 0);
	assert_null(r.url_base);
	wandb_ref_release(&r);
}

static void test_artifact_refs(void **state)
{
	(void)state;
	ref_ok("wandb-artifact://acme/llm/run-abc-profiler:v3", NULL, NULL, WANDB_REF_ARTIFACT,
	       "acme", "llm", "run-abc-profiler", "v3");
	ref_ok("wandb-artifact://acme/llm/profiler", NULL, NULL, WANDB_REF_ARTIFACT, "acme", "llm",
	       "profiler", "latest");
	ref_ok("wandb-artifact://profiler:main", "e", "p", WANDB_REF_ARTIFACT, "e", "p", "profiler",
	       "main");
	ref_ok("https://wandb.ai/acme/llm/artifacts/jax_profile/run-abc-profiler/v0", NULL, NULL,
	       WANDB_REF_ARTIFACT, "acme", "llm", "run-abc-profiler", "v0");
	ref_ok("https://wandb.ai/acme/llm/artifacts/jax_profile/run-abc-profiler", NULL, NULL,
	       WANDB_REF_ARTIFACT, "acme", "llm", "run-abc-profiler", "latest");
}

static void test_bad_refs(void **state)
{
	(void)state;
	ref_bad("wandb://abc123", NULL, NULL, "no entity");
	ref_bad("wandb://abc123", "ent", NULL, "no project");
	ref_bad("wandb://a/b/c/d", NULL, NULL, "want wandb://ENTITY/PROJECT/RUN_ID");
	ref_bad("wandb://", NULL, NULL, "want wandb://ENTITY/PROJECT/RUN_ID");
	ref_bad("wandb://e/../x", NULL, NULL, "characters W&B does not allow");
	ref_bad("wandb://e/p/r un", NULL, NULL, "characters W&B does not allow");
	ref_bad("wandb://e/p/x:", NULL, NULL, "alias");
	ref_bad("wandb-artifact://e/p/a/b", NULL, NULL,
		"want wandb-artifact://ENTITY/PROJECT/NAME");
	ref_bad("https://wandb.ai/acme/llm/reports/x", NULL, NULL, "runs/RUN_ID");
	ref_bad("https://wandb.ai/e/p/runs/a%2Fb", NULL, NULL, "characters W&B does not allow");
	ref_bad("https://wandb.ai/e/p/runs/a%00b", NULL, NULL, "does not decode");
	ref_bad("https://wandb.ai/e/p/runs/a%zz", NULL, NULL, "does not decode");
	ref_bad("https:///e/p/runs/x", NULL, NULL, "no host");
	ref_bad("s3://bucket/x", NULL, NULL, "want wandb://");
	assert_true(wandb_is_ref("wandb://x"));
	assert_true(wandb_is_ref("wandb-artifact://x"));
	assert_true(wandb_is_ref("https://wandb.ai/x"));
	assert_false(wandb_is_ref("logs/wandb://x"));
	assert_false(wandb_is_ref("profile.xplane.pb"));
}

static int host_ok(const char *base, const char *url)
{
	struct wandb_config c;
	struct wandb_ref r;
	int rc;

	memset(&c, 0, sizeof(c));
	c.base_url = (char *)base;
	assert_int_equal(wandb_ref_parse(&r, url, NULL, NULL), 0);
	rc = wandb_check_host(&c, &r, url);
	wandb_ref_release(&r);
	return rc;
}

static void test_run_url_host(void **state)
{
	(void)state;
	assert_int_equal(host_ok("https://api.wandb.ai", "https://wandb.ai/e/p/runs/x"), 0);
	assert_int_equal(host_ok("https://api.wandb.ai", "https://WandB.ai/e/p/runs/x"), 0);
	assert_int_equal(host_ok("https://api.wandb.ai", "https://api.wandb.ai/e/p/runs/x"), 0);
	assert_int_equal(host_ok("https://api.corp.net/wandb", "https://app.corp.net/e/p/runs/x"),
			 0);
	assert_int_equal(host_ok("https://wandb.corp.net", "https://wandb.corp.net/e/p/runs/x"), 0);
	assert_int_equal(host_ok("http://127.0.0.1:8080", "http://127.0.0.1:8080/e/p/runs/x"), 0);
	assert_int_equal(host_ok("https://api.wandb.ai", "https://ai/e/p/runs/x"), PG_EUSAGE);
	assert_int_equal(host_ok("https://api.wandb.ai", "https://evil.example/e/p/runs/x"),
			 PG_EUSAGE);
	assert_non_null(strstr(pg_error_last(), "set WANDB_BASE_URL"));
	assert_int_equal(host_ok("http://127.0.0.1:8080", "http://127.0.0.1:9090/e/p/runs/x"),
			 PG_EUSAGE);
	assert_int_equal(host_ok("https://api.wandb.ai", "http://wandb.ai/e/p/runs/x"), PG_EUSAGE);
	assert_int_equal(host_ok("https://api.wandb.ai", "wandb://e/p/x"), 0);
}

/* ---- manifest paths ---- */

static void path_ok(const char *p)
{
	const char *why;
	if (wandb_path_check(p, strlen(p), &why) != 0)
		fail_msg("'%s' refused: %s", p, why);
}

static void path_bad(const char *p, size_t len, const char *want)
{
	const char *why = NULL;
	assert_int_equal(wandb_path_check(p, len, &why), -1);
	assert_non_null(why);
	if (!strstr(why, want))
		fail_msg("'%s': '%s' does not say '%s'", p, why, want);
}

static void test_path_check(void **state)
{
	char long_path[1100], long_seg[300];
	(void)state;

	path_ok("plugins/profile/2025_03_16_07_26_24/t1v-n-0.xplane.pb");
	path_ok("a");
	path_ok("..a/b..c/...");
	path_ok("with space/é.json");
	path_bad("", 0, "empty");
	path_bad("/etc/passwd", 11, "absolute");
	path_bad("../x", 4, "climbs out");
	path_bad("a/../../x", 9, "climbs out");
	path_bad("a/..", 4, "climbs out");
	path_bad("..", 2, "climbs out");
	path_bad("a/./b", 5, "'.' segment");
	path_bad("a//b", 4, "empty segment");
	path_bad("a/", 2, "empty segment");
	path_bad("a\\..\\b", 6, "backslash");
	path_bad("a\nb", 3, "control character");
	path_bad("a\0/../../b", 10, "NUL");
	memset(long_path, 'x', sizeof(long_path));
	for (size_t i = 100; i < sizeof(long_path); i += 100)
		long_path[i] = '/';
	path_bad(long_path, 1025, "longer than 1024");
	memset(long_seg, 'y', sizeof(long_seg));
	path_bad(long_seg, 256, "longer than 255");
	long_seg[255] = '\0';
	path_ok(long_seg);
}

/* ---- manifests ---- */

#define D_A "kAFQmDzST7DWlj99KOF/cg==" /* md5("abc") */

static int parse(struct wandb_manifest *m, const char *text)
{
	return wandb_manifest_parse(m, text, strlen(text), "t");
}

static void test_manifest_ok(void **state)
{
	struct wandb_manifest m;
	(void)state;

	assert_int_equal(
	    parse(&m, "{\"version\": 1, \"storagePolicy\": \"wandb-storage-policy-v1\","
		      " \"storagePolicyConfig\": {\"storageLayout\": \"V2\", "
		      "\"storageRegion\": \"us\"}, \"contents\": {"
		      "\"z/b.xplane.pb\": {\"digest\": \"" D_A "\", \"size\": 3, "
		      "\"birthArtifactID\": \"QXJ0\", \"extra\": {}, \"skip_cache\": "
		      "true},"
		      "\"a/perfetto_trace.json.gz\": {\"digest\": \"" D_A "\", \"size\": 3}}}"),
	    0);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.v[0].path, "a/perfetto_trace.json.gz"); /* sorted */
	assert_string_equal(m.v[1].path, "z/b.xplane.pb");
	assert_string_equal(m.v[1].birth_artifact_id, "QXJ0");
	assert_null(m.v[0].birth_artifact_id);
	assert_int_equal(m.v[0].size, 3);
	assert_int_equal(m.total_bytes, 6);
	assert_int_equal(m.v[0].md5[0], 0x90);
	assert_int_equal(m.v[0].md5[15], 0x72);
	/* where W&B's download handler keeps the files */
	assert_int_equal(m.layout_v1, 0);
	assert_string_equal(m.region, "us");
	wandb_manifest_release(&m);

	/* no storagePolicyConfig: layout V1 (as the SDK reads it), region default; a region that is
	 * no plain name (it goes into a URL) is not taken */
	assert_int_equal(parse(&m, "{\"version\": 1, \"contents\": {}}"), 0);
	assert_int_equal(m.layout_v1, 1);
	assert_string_equal(m.region, "default");
	wandb_manifest_release(&m);
	assert_int_equal(parse(&m, "{\"version\": 1, \"storagePolicyConfig\": {\"storageLayout\": "
				   "\"V2\", \"storageRegion\": \"../x?y\"}, \"contents\": {}}"),
			 0);
	assert_int_equal(m.layout_v1, 0);
	assert_string_equal(m.region, "default");
	wandb_manifest_release(&m);
}

static void manifest_bad(const char *contents, int code, const char *want)
{
	struct wandb_manifest m;
	char text[4096];

	snprintf(text, sizeof(text), "{\"version\": 1, \"contents\": {%s}}", contents);
	assert_int_equal(parse(&m, text), code);
	if (!strstr(pg_error_last(), want))
		fail_msg("%s: '%s' does not say '%s'", contents, pg_error_last(), want);
	assert_int_equal(m.n, 0);
	assert_null(m.v);
}

static void test_manifest_refused(void **state)
{
	(void)state;
	manifest_bad("\"../../x\": {\"digest\": \"" D_A "\", \"size\": 3}", PG_EFORMAT,
		     "refused the manifest path '../../x': climbs out");
	manifest_bad("\"/etc/cron.d/x\": {\"digest\": \"" D_A "\", \"size\": 3}", PG_EFORMAT,
		     "absolute");
	manifest_bad("\"a\\u0000/../../b\": {\"digest\": \"" D_A "\", \"size\": 3}", PG_EFORMAT,
		     "NUL");
	manifest_bad("\"a\\nb\": {\"digest\": \"" D_A "\", \"size\": 3}", PG_EFORMAT,
		     "refused the manifest path 'a?b': holds a control character");
	manifest_bad("\"x\": {\"digest\": \"" D_A "\", \"size\": 17179869185}", PG_ELIMIT,
		     "over the cap of 16 GiB");
	manifest_bad("\"x\": {\"digest\": \"" D_A "\", \"size\": -1}", PG_EFORMAT, "no size");
	manifest_bad("\"x\": {\"digest\": \"" D_A "\", \"size\": 1.5}", PG_EFORMAT, "no size");
	manifest_bad("\"x\": {\"digest\": \"" D_A "\"}", PG_EFORMAT, "no size");
	manifest_bad("\"x\": {\"digest\": \"abc\", \"size\": 3}", PG_EFORMAT, "no MD5 digest");
	manifest_bad("\"x\": {\"digest\": \"Zm9vYmFy\", \"size\": 3}", PG_EFORMAT, "no MD5 digest");
	manifest_bad("\"x\": {\"digest\": \"" D_A "\", \"size\": 3, \"ref\": \"gs://b/x\"}",
		     PG_EUNSUPP, "reference to outside storage");
	manifest_bad("\"x\": {\"digest\": \"" D_A "\", \"size\": 3}, \"x\": {\"digest\": \"" D_A
		     "\", \"size\": 3}",
		     PG_EFORMAT, "lists 'x' twice");
	manifest_bad("\"a\": {\"digest\": \"" D_A "\", \"size\": 3}, \"a-b\": {\"digest\": \"" D_A
		     "\", \"size\": 3}, \"a/b\": {\"digest\": \"" D_A "\", \"size\": 3}",
		     PG_EFORMAT, "'a/b' runs through a file");
	manifest_bad("\"x\": 3", PG_EFORMAT, "not an object");
}

static void test_manifest_caps_and_shape(void **state)
{
	struct wandb_manifest m;
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	pg_buf_adds(&b, "{\"version\": 1, \"contents\": {");
	for (int i = 0; i <= WANDB_MAX_FILES; i++)
		pg_buf_addf(&b, "%s\"f%05d\": {\"digest\": \"" D_A "\", \"size\": 3}", i ? "," : "",
			    i);
	pg_buf_adds(&b, "}}");
	assert_int_equal(wandb_manifest_parse(&m, b.ptr, b.len, "t"), PG_ELIMIT);
	assert_non_null(strstr(pg_error_last(), "lists 10001 files, over the cap of 10000"));
	pg_buf_release(&b);

	/* 5 files of 15 GiB each: each under the file cap, together over the total cap */
	pg_buf_adds(&b, "{\"version\": 1, \"contents\": {");
	for (int i = 0; i < 5; i++)
		pg_buf_addf(&b, "%s\"f%d\": {\"digest\": \"" D_A "\", \"size\": %llu}",
			    i ? "," : "", i, 15ULL << 30);
	pg_buf_adds(&b, "}}");
	assert_int_equal(wandb_manifest_parse(&m, b.ptr, b.len, "t"), PG_ELIMIT);
	assert_non_null(strstr(pg_error_last(), "add up to over the cap of 64 GiB"));
	pg_buf_release(&b);

	assert_int_equal(parse(&m, "{\"version\": 2, \"contents\": {}}"), PG_EUNSUPP);
	assert_int_equal(parse(&m, "{\"version\": 1}"), PG_EFORMAT);
	assert_int_equal(parse(&m, "[1, 2]"), PG_EFORMAT);
	assert_int_equal(parse(&m, "{\"version\": 1, \"contents\": {"), PG_EFORMAT);
	assert_int_equal(wandb_manifest_parse(&m, "{\"version\": 1}\0x", 17, "t"), PG_EFORMAT);
	assert_int_equal(parse(&m, "{\"version\": 1, \"contents\": {}}"), 0);
	assert_int_equal(m.n, 0);
	wandb_manifest_release(&m);
}

/* ---- md5, base64 ---- */

static void test_md5_base64(void **state)
{
	unsigned char md[16], out[32];
	char hex[33];
	struct pg_buf b = PG_BUF_INIT;
	size_t n;
	static const char *const vec[][2] = {
	    {"", ""},	     {"f", "Zg=="},	   {"fo", "Zm8="},
	    {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"foobar", "Zm9vYmFy"}};
	(void)state;

	assert_int_equal(pg_md5("", 0, md), 0);
	pg_hex(hex, md, 16);
	assert_string_equal(hex, "d41d8cd98f00b204e9800998ecf8427e");
	assert_int_equal(pg_md5("abc", 3, md), 0);
	pg_hex(hex, md, 16);
	assert_string_equal(hex, "900150983cd24fb0d6963f7d28e17f72");
	pg_base64_encode(&b, md, 16);
	assert_string_equal(b.ptr, D_A);
	for (size_t i = 0; i < PG_ARRAY_LEN(vec); i++) {
		pg_buf_reset(&b);
		pg_base64_encode(&b, vec[i][0], strlen(vec[i][0]));
		assert_string_equal(b.ptr, vec[i][1]);
		assert_int_equal(pg_base64_decode(vec[i][1], out, sizeof(out), &n), 0);
		assert_int_equal(n, strlen(vec[i][0]));
		assert_memory_equal(out, vec[i][0], n);
	}
	pg_buf_release(&b);
	assert_int_equal(pg_base64_decode("Zm9", out, sizeof(out), &n), -1);
	assert_int_equal(pg_base64_decode("Z=9v", out, sizeof(out), &n), -1);
	assert_int_equal(pg_base64_decode("Zg==Zg==", out, sizeof(out), &n), -1);
	assert_int_equal(pg_base64_decode("Zm 9", out, sizeof(out), &n), -1);
	assert_int_equal(pg_base64_decode("Zm9vYmFy", out, 5, &n), -1);
}

/* W&B's JSON dialect: members as raw spans, NaN and Infinity kept byte for byte; a strict copy
 * reads them as null; anything else refused with the byte and why. */
static void test_summary_dialect(void **state)
{
	static const char text[] = " {\"loss\": NaN, \"g\":-Infinity ,\"h\": {\"v\": [1, Infinity, "
				   "-0.5e-3]}, \"s\": \"NaN \\\"x\\\"\", \"a\\/b\": null}";
	struct wandb_json_members m;
	struct cJSON *strict;
	(void)state;

	assert_int_equal(wandb_json_members(text, strlen(text), "t", &m), 0);
	assert_int_equal(m.n, 5);
	assert_string_equal(m.v[0].name, "loss");
	assert_int_equal(m.v[0].value_len, 3);
	assert_memory_equal(m.v[0].value, "NaN", 3);
	assert_memory_equal(m.v[1].value, "-Infinity", 9);
	assert_int_equal(m.v[1].value_len, 9);
	assert_memory_equal(m.v[2].value, "{\"v\": [1, Infinity, -0.5e-3]}", m.v[2].value_len);
	assert_string_equal(m.v[4].name, "a/b"); /* decoded */
	assert_memory_equal(m.v[4].key, "\"a\\/b\"", m.v[4].key_len);
	wandb_json_members_release(&m);

	assert_int_equal(wandb_json_strict(text, strlen(text), "t", &strict), 0);
	assert_non_null(strict);
	char *out = cJSON_PrintUnformatted(strict);
	assert_string_equal(out, "{\"loss\":null,\"g\":null,\"h\":{\"v\":[1,null,-0.0005]},"
				 "\"s\":\"NaN \\\"x\\\"\",\"a/b\":null}");
	free(out);
	cJSON_Delete(strict);

	static const char *const bad[] = {"{\"a\": Nan}",     "{\"a\": 1",   "{\"a\": 1} x",
					  "{\"a\": \"\\q\"}", "{\"a\": -}",  "[1, 2]",
					  "{\"a\": 01}",      "{\"a\" 1}",   "",
					  "{\"a\": inf}",     "{\"a\": 1,}", "{\"a\": \"x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = wandb_json_members(bad[i], strlen(bad[i]), "t", &m);
		assert_int_equal(rc, PG_EFORMAT);
		wandb_json_members_release(&m);
	}
	assert_non_null(strstr(pg_error_last(), "is not JSON as W&B writes it (byte"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_summary_dialect),  cmocka_unit_test(test_run_refs),
	    cmocka_unit_test(test_url_base),	     cmocka_unit_test(test_artifact_refs),
	    cmocka_unit_test(test_bad_refs),	     cmocka_unit_test(test_run_url_host),
	    cmocka_unit_test(test_path_check),	     cmocka_unit_test(test_manifest_ok),
	    cmocka_unit_test(test_manifest_refused), cmocka_unit_test(test_manifest_caps_and_shape),
	    cmocka_unit_test(test_md5_base64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
