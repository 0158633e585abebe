/*
 * The history record against docs/history.md "The history record": built from a verdict JSON and
 * the CI environment (fields, series, record id, kind and PR number from GitHub's variables and
 * event file, PROFGATE_TIME), written and read back byte for byte, and the tolerant shard
 * reader (corrupt lines reported by line number and skipped, an unknown version refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/history/history.h"

/* ---- helpers ---- */

/* A verdict JSON as `gate --json` writes it, cut to what a record reads. %s: the label's
 * JSON, the labels object, the device count, the step median. */
static char *verdict(const char *label, const char *labels, int devices, double median)
{
	struct pg_buf b = PG_BUF_INIT;

	pg_buf_addf(
	    &b,
	    "{\"schema\": \"profgate.verdict/1\", \"profgate_version\": \"0.1.0\", \"label\": %s,\n"
	    " \"verdict\": \"fail\", \"exit_code\": 1, \"thresholds\": {\"name\": \"default\"},\n"
	    " \"baseline\": {\"path\": \"b.json\", \"sha256\": \"b1\", \"summary_sha256\": "
	    "\"b2\"},\n"
	    " \"candidate\": {\"path\": \"c.json\", \"sha256\": \"c1\", \"summary_sha256\": "
	    "\"c2\",\n"
	    "  \"identity\": {\"device_kind\": \"NVIDIA H100\", \"device_count\": %d,\n"
	    "   \"host_count\": 1, \"world_size\": null, \"framework\": \"jax\",\n"
	    "   \"framework_version\": \"0.4.30\", \"step_source\": \"steps-line\", \"basis\": "
	    "\"x\",\n"
	    "   \"steps_captured\": 10, \"labels\": %s}},\n"
	    " \"metrics\": [\n"
	    "  {\"name\": \"step.median_us\", \"candidate\": %.3f, \"limit\": {\"direction\": "
	    "\"lower\"}},\n"
	    "  {\"name\": \"family.matmul.us_per_step\", \"candidate\": 100.25, \"limit\": "
	    "{\"direction\": \"lower\"}},\n"
	    "  {\"name\": \"op.x.us_per_step\", \"candidate\": 5, \"limit\": null},\n"
	    "  {\"name\": \"breakdown.idle_share\", \"candidate\": 0.125, \"limit\": "
	    "{\"direction\": "
	    "\"info\"}},\n"
	    "  {\"name\": \"family.gone.us_per_step\", \"candidate\": null, \"limit\": "
	    "{\"direction\": \"lower\"}},\n"
	    "  {\"name\": \"step.p90_us\", \"candidate\": 2000, \"limit\": null}]}\n",
	    label, devices, labels, median);
	return pg_buf_detach(&b, NULL);
}

static void from_verdict(struct history_record *r, const char *json, const struct history_env *e)
{
	int rc = history_record_from_verdict(r, json, strlen(json), "v.json", e, NULL);

	if (rc != 0)
		fail_msg("from_verdict: %s", pg_error_last());
}

static struct history_env env0(void)
{
	struct history_env e;

	memset(&e, 0, sizeof(e));
	e.time = "2024-05-01T12:00:00Z";
	return e;
}

static char *series_of(const char *label, const char *labels, int devices)
{
	struct history_env e = env0();
	struct history_record r;
	char *v = verdict(label, labels, devices, 1234.5), *s;

	from_verdict(&r, v, &e);
	s = pg_xstrdup(r.series);
	history_record_release(&r);
	free(v);
	return s;
}

static const struct history_field *field(const struct history_record *r, const char *key)
{
	for (uint32_t i = 0; i < r->n_identity; i++)
		if (strcmp(r->identity[i].key, key) == 0)
			return &r->identity[i];
	return NULL;
}

/* A temporary event file with this text; the path is returned (free() it). */
static char *event_file(const char *text)
{
	char *path = pg_xstrdup("/tmp/pg-test-event.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* ---- building a record ---- */

static void test_from_verdict_fields(void **state)
{
	struct history_env e = env0();
	struct history_record r;
	char *v = verdict("\"Bench: A/B\"", "{\"model\": \"llama\"}", 8, 1234.5);
	(void)state;

	from_verdict(&r, v, &e);
	assert_string_equal(r.time, "2024-05-01T12:00:00Z");
	assert_string_equal(r.label, "Bench: A/B");
	assert_string_equal(r.kind, "manual");
	assert_string_equal(r.verdict, "fail");
	assert_int_equal(r.exit_code, 1);
	assert_int_equal(strlen(r.record_id), 32);
	assert_int_equal(strspn(r.record_id, "0123456789abcdef"), 32);
	assert_int_equal(strncmp(r.series, "bench-a-b-", 10), 0);
	assert_int_equal(strlen(r.series), 18);
	assert_null(r.repo);
	assert_null(r.run_id);
	assert_int_equal(r.pr, -1);
	assert_int_equal(r.run_attempt, -1);
	/* judged (not info, with a candidate value), step and breakdown metrics, by name */
	assert_int_equal(r.n_metrics, 4);
	assert_string_equal(r.metrics[0].name, "breakdown.idle_share");
	assert_string_equal(r.metrics[1].name, "family.matmul.us_per_step");
	assert_string_equal(r.metrics[2].name, "step.median_us");
	assert_string_equal(r.metrics[3].name, "step.p90_us");
	assert_true(r.metrics[2].value == 1234.5);
	assert_string_equal(field(&r, "device_kind")->text, "NVIDIA H100");
	assert_int_equal(field(&r, "device_count")->type, HISTORY_NUMBER);
	assert_string_equal(field(&r, "device_count")->text, "8");
	assert_int_equal(field(&r, "world_size")->type, HISTORY_NULL);
	assert_string_equal(field(&r, "labels.model")->text, "llama");
	assert_string_equal(r.baseline_kind, "file");
	assert_string_equal(r.baseline_path, "b.json");
	assert_string_equal(r.baseline_sha256, "b1");
	assert_string_equal(r.baseline_summary_sha256, "b2");
	assert_string_equal(r.summary_sha256, "c2");
	assert_string_equal(r.thresholds, "default");
	assert_string_equal(r.profgate_version, "0.1.0");
	history_record_release(&r);
	free(v);
}

static void test_series(void **state)
{
	char *a = series_of("\"Bench: A/B\"", "{\"model\": \"llama\", \"size\": \"8b\"}", 8);
	char *b = series_of("\"Bench: A/B\"", "{\"size\": \"8b\", \"model\": \"llama\"}", 8);
	char *c = series_of("\"Bench: A/B\"", "{\"model\": \"llama\", \"size\": \"8b\"}", 16);
	char *d = series_of("\"Bench A-B\"", "{\"model\": \"llama\", \"size\": \"8b\"}", 8);
	char *e = series_of("null", "{}", 8);
	char *f = series_of("\"--Ünïcode!! ..name\"", "{}", 8);
	(void)state;

	assert_string_equal(a, b); /* label order does not matter */
	assert_string_not_equal(a, c);
	/* the same slug, another label: the hash tells them apart */
	assert_int_equal(strncmp(d, "bench-a-b-", 10), 0);
	assert_string_not_equal(a, d);
	assert_int_equal(strncmp(e, "default-", 8), 0);
	assert_int_equal(strncmp(f, "n-code-name-", 12), 0); /* non-ASCII bytes separate */
	free(a), free(b), free(c), free(d), free(e), free(f);
}

static void test_record_id(void **state)
{
	struct history_env e = env0();
	struct history_record r1, r2, r3, r4;
	char *v1 = verdict("\"x\"", "{}", 8, 1000), *v2 = verdict("\"x\"", "{}", 8, 1001);
	(void)state;

	/* outside CI: the verdict bytes */
	from_verdict(&r1, v1, &e);
	from_verdict(&r2, v1, &e);
	from_verdict(&r3, v2, &e);
	assert_string_equal(r1.record_id, r2.record_id);
	assert_string_not_equal(r1.record_id, r3.record_id);
	history_record_release(&r1);
	history_record_release(&r2);
	history_record_release(&r3);
	/* in CI: run, attempt and series, whatever the bytes */
	e.run_id = "555";
	e.run_attempt = "1";
	from_verdict(&r1, v1, &e);
	from_verdict(&r2, v2, &e);
	e.run_attempt = "2";
	from_verdict(&r3, v1, &e);
	e.run_attempt = "1";
	e.run_id = "556";
	from_verdict(&r4, v1, &e);
	assert_string_equal(r1.record_id, r2.record_id);
	assert_string_not_equal(r1.record_id, r3.record_id);
	assert_string_not_equal(r1.record_id, r4.record_id);
	assert_string_equal(r1.run_id, "555");
	assert_int_equal(r1.run_attempt, 1);
	history_record_release(&r1);
	history_record_release(&r2);
	history_record_release(&r3);
	history_record_release(&r4);
	free(v1);
	free(v2);
}

static void test_kind_and_pr(void **state)
{
	struct history_env e = env0();
	struct history_record r;
	char *ev = event_file("{\"number\": 7, \"pull_request\": {\"number\": 42}, "
			      "\"repository\": {\"default_branch\": \"trunk\"}}");
	char *v = verdict("\"x\"", "{}", 8, 1000);
	(void)state;

	e.event_name = "pull_request";
	e.event_path = ev;
	assert_string_equal(history_kind_infer(&e), "pr");
	from_verdict(&r, v, &e);
	assert_int_equal(r.pr, 42); /* pull_request.number first */
	history_record_release(&r);
	e.event_path = NULL;
	e.ref = "refs/pull/9/merge";
	from_verdict(&r, v, &e);
	assert_int_equal(r.pr, 9); /* no event file: the ref */
	history_record_release(&r);

	e.event_name = "schedule";
	assert_string_equal(history_kind_infer(&e), "nightly");
	from_verdict(&r, v, &e);
	assert_int_equal(r.pr, -1);
	history_record_release(&r);
	e.event_name = "push";
	e.event_path = ev;
	e.ref = "refs/heads/trunk";
	assert_string_equal(history_kind_infer(&e), "main");
	e.ref = "refs/heads/main"; /* not the default branch the event names */
	assert_string_equal(history_kind_infer(&e), "manual");
	e.event_path = NULL; /* no event: main or master count as the default */
	assert_string_equal(history_kind_infer(&e), "main");
	e.ref = "refs/heads/feature";
	assert_string_equal(history_kind_infer(&e), "manual");
	e.event_name = "workflow_dispatch";
	e.ref = "refs/heads/main";
	assert_string_equal(history_kind_infer(&e), "manual");
	e.event_name = NULL;
	assert_string_equal(history_kind_infer(&e), "manual");
	/* an explicit kind wins; a wrong one is a usage error */
	assert_int_equal(history_record_from_verdict(&r, v, strlen(v), "v", &e, "nightly"), 0);
	assert_string_equal(r.kind, "nightly");
	history_record_release(&r);
	assert_int_equal(history_record_from_verdict(&r, v, strlen(v), "v", &e, "weekly"),
			 PG_EUSAGE);
	history_record_release(&r);
	unlink(ev);
	free(ev);
	free(v);
}

static void test_time(void **state)
{
	struct history_env e = env0();
	struct history_record r;
	char *v = verdict("\"x\"", "{}", 8, 1000);
	static const char *const bad[] = {
	    "2024-05-01",	    "2024-13-01T00:00:00Z",	 "2024-05-01T25:00:00Z",
	    "2024-05-01 12:00:00Z", "2024-05-01T12:00:00+01:00", "yesterday"};
	(void)state;

	for (size_t i = 0; i < PG_ARRAY_LEN(bad); i++) {
		e.time = bad[i];
		assert_int_equal(history_record_from_verdict(&r, v, strlen(v), "v", &e, NULL),
				 PG_EUSAGE);
		assert_non_null(strstr(pg_error_last(), "PROFGATE_TIME"));
		history_record_release(&r);
	}
	e.time = NULL; /* the clock */
	from_verdict(&r, v, &e);
	assert_int_equal(strlen(r.time), 20);
	assert_int_equal(r.time[10], 'T');
	assert_int_equal(r.time[19], 'Z');
	history_record_release(&r);
	assert_int_equal(history_filter_check_since("2024-05"), 0);
	assert_int_equal(history_filter_check_since("2024-05-02"), 0);
	assert_int_equal(history_filter_check_since("2024-05-02T01:02:03Z"), 0);
	assert_int_equal(history_filter_check_since("May 2024"), PG_EUSAGE);
	free(v);
}

static void test_not_a_verdict(void **state)
{
	struct history_env e = env0();
	struct history_record r;
	const char *no_identity = "{\"schema\": \"profgate.verdict/1\", \"verdict\": \"pass\", "
				  "\"exit_code\": 0, \"baseline\": {}, \"candidate\": {}, "
				  "\"metrics\": []}";
	(void)state;

	assert_int_equal(history_record_from_verdict(&r, "[]", 2, "v.json", &e, NULL), PG_EFORMAT);
	assert_non_null(strstr(pg_error_last(), "v.json: not a verdict JSON"));
	history_record_release(&r);
	assert_int_equal(
	    history_record_from_verdict(&r, no_identity, strlen(no_identity), "old.json", &e, NULL),
	    PG_EFORMAT);
	assert_non_null(strstr(pg_error_last(), "old.json: candidate.identity missing"));
	history_record_release(&r);
}

/* ---- writing and reading ---- */

static void test_write_parse_round_trip(void **state)
{
	struct history_env e = env0();
	struct history_record r, back;
	struct pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	char *v = verdict("\"a \\\"quoted\\\" label\"", "{\"k\": \"v\"}", 8, 1234.5678);
	(void)state;

	e.repo = "o/r";
	e.sha = "abc";
	e.run_id = "12";
	e.run_attempt = "3";
	from_verdict(&r, v, &e);
	history_record_write(&r, &a);
	assert_int_equal(a.ptr[a.len - 1], '\n');
	assert_null(memchr(a.ptr, '\n', a.len - 1)); /* one line */
	assert_int_equal(strncmp(a.ptr, "{\"schema\":\"profgate.history/1\",\"record_id\":\"", 44),
			 0);
	assert_non_null(strstr(a.ptr, "\"step.median_us\":1234.568"));
	assert_non_null(strstr(a.ptr, "\"device_count\":8,"));
	assert_non_null(strstr(a.ptr, "\"world_size\":null"));
	assert_non_null(strstr(a.ptr, "\"run_attempt\":3"));
	assert_int_equal(history_record_parse(&back, a.ptr, a.len - 1), 0);
	assert_memory_equal(back.line, a.ptr, a.len - 1);
	history_record_write(&back, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	assert_string_equal(back.label, "a \"quoted\" label");
	assert_string_equal(back.repo, "o/r");
	assert_int_equal(back.run_attempt, 3);
	assert_string_equal(field(&back, "labels.k")->text, "v");
	history_record_write(&r, &b); /* deterministic */
	assert_memory_equal(a.ptr, b.ptr + a.len, a.len);
	pg_buf_reset(&b);
	history_record_shard(&r, &b);
	assert_int_equal(strlen(b.ptr), strlen(r.series) + strlen("/2024-05.jsonl"));
	assert_string_equal(b.ptr + strlen(r.series), "/2024-05.jsonl");
	history_record_release(&r);
	history_record_release(&back);
	pg_buf_release(&a);
	pg_buf_release(&b);
	free(v);
}

/* One size limit: the writer's check and the reader's skip agree on the byte. */
static void test_line_limit(void **state)
{
	struct history_list l = {0};
	struct pg_buf shard = PG_BUF_INIT;
	struct history_record r;
	(void)state;

	assert_int_equal(history_line_check(HISTORY_MAX_LINE), 0);
	assert_int_equal(history_line_check((size_t)HISTORY_MAX_LINE + 1), PG_ELIMIT);
	assert_non_null(strstr(pg_error_last(), "over the limit of 4194304 bytes"));
	/* a line one byte over: refused by the parser, skipped by the shard reader */
	pg_buf_adds(&shard, "{\"schema\": \"profgate.history/1\", \"label\": \"");
	while (shard.len < (size_t)HISTORY_MAX_LINE - 1)
		pg_buf_addc(&shard, 'a');
	pg_buf_adds(&shard, "\"}");
	assert_int_equal(shard.len, (size_t)HISTORY_MAX_LINE + 1);
	assert_int_equal(history_record_parse(&r, shard.ptr, shard.len), PG_ELIMIT);
	history_record_release(&r);
	pg_buf_addc(&shard, '\n');
	assert_int_equal(
	    history_shard_parse(shard.ptr, shard.len, "s/2024-05.jsonl", &l, NULL, NULL), 0);
	assert_int_equal(l.n, 0);
	history_list_release(&l);
	pg_buf_release(&shard);
}

/* A record line is UTF-8 without raw control bytes, wherever the bad byte sits
 * (the check reads eight bytes at a time: every offset within a word), and
 * UTF-8 text or JSON's blanks anywhere pass. */
static void test_record_text_checked(void **state)
{
	static const struct {
		const char *bytes, *why;
	} bad[] = {{"\x01", "control byte 0x01"}, {"\x1f", "control byte 0x1f"},
		   {"\x7f", "control byte 0x7f"}, {"\xff", "not UTF-8"},
		   {"\xc3(", "not UTF-8"},	  {"\x80", "not UTF-8"}};
	(void)state;

	for (size_t b = 0; b <= PG_ARRAY_LEN(bad); b++)
		for (int at = 0; at < 17; at++) {
			struct history_record r;
			struct pg_buf line = PG_BUF_INIT;
			int good = b == PG_ARRAY_LEN(bad);

			pg_buf_addf(
			    &line,
			    "{\"schema\": \"profgate.history/1\",\t\"record_id\": \"r1\", "
			    "\"time\": \"2024-05-01T00:00:00Z\", \"series\": \"s-00000000\", "
			    "\"kind\": \"pr\", \"verdict\": \"pass\", \"metrics\": {}, "
			    "\"label\": \"%.*s%s%.*s\"}",
			    at, "abcdefghijklmnopq", good ? "\xc3\xa9" : bad[b].bytes, 17 - at,
			    "ABCDEFGHIJKLMNOPQ");
			if (good) {
				assert_int_equal(history_record_parse(&r, line.ptr, line.len), 0);
				assert_non_null(strstr(r.label, "\xc3\xa9"));
			} else {
				assert_int_equal(history_record_parse(&r, line.ptr, line.len),
						 PG_EFORMAT);
				assert_non_null(strstr(pg_error_last(), bad[b].why));
			}
			history_record_release(&r);
			pg_buf_release(&line);
		}
}

static void assert_same_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* Two reads of one record are the same record, field for field and metric
 * values bit for bit. */
static void assert_same_record(const struct history_record *a, const struct history_record *b)
{
	const char *const *sa[] = {(const char *const *)&a->record_id,
				   (const char *const *)&a->time,
				   (const char *const *)&a->series,
				   (const char *const *)&a->label,
				   (const char *const *)&a->kind,
				   (const char *const *)&a->verdict,
				   (const char *const *)&a->repo,
				   (const char *const *)&a->sha,
				   (const char *const *)&a->ref,
				   (const char *const *)&a->run_id,
				   (const char *const *)&a->baseline_kind,
				   (const char *const *)&a->baseline_path,
				   (const char *const *)&a->baseline_sha256,
				   (const char *const *)&a->baseline_summary_sha256,
				   (const char *const *)&a->baseline_window,
				   (const char *const *)&a->summary_sha256,
				   (const char *const *)&a->thresholds,
				   (const char *const *)&a->profgate_version};

	for (size_t i = 0; i < PG_ARRAY_LEN(sa); i++) {
		size_t off = (size_t)((const char *)sa[i] - (const char *)a);
		assert_same_str(*sa[i], *(const char *const *)((const char *)b + off));
	}
	assert_int_equal(a->exit_code, b->exit_code);
	assert_int_equal(a->pr, b->pr);
	assert_int_equal(a->run_attempt, b->run_attempt);
	assert_int_equal(a->n_identity, b->n_identity);
	for (uint32_t i = 0; i < a->n_identity; i++) {
		assert_string_equal(a->identity[i].key, b->identity[i].key);
		assert_same_str(a->identity[i].text, b->identity[i].text);
		assert_int_equal(a->identity[i].type, b->identity[i].type);
	}
	assert_int_equal(a->n_metrics, b->n_metrics);
	for (uint32_t i = 0; i < a->n_metrics; i++) {
		assert_string_equal(a->metrics[i].name, b->metrics[i].name);
		assert_memory_equal(&a->metrics[i].value, &b->metrics[i].value, sizeof(double));
	}
}

/* A line in the writer's form is read without cJSON's tree (record.c,
 * canonical_parse); the same line with one blank after its brace is not that
 * form and goes through cJSON. Both must give the same record, or the same
 * refusal: for lines the writer made and for hand-made ones with what the
 * direct reader must take (nulls, identity labels, negative, zero and
 * 15-digit numbers, out-of-order metrics) or hand back (escapes, exponents,
 * 16 digits, a history window, other types, a bad id). */
static void test_record_read_two_ways(void **state)
{
	static const char *const head =
	    "{\"schema\":\"profgate.history/"
	    "1\",\"record_id\":\"r-1\",\"time\":\"2024-05-01T00:00:00Z\","
	    "\"series\":\"s-00000000\",";
	static const char *const tails[] = {
	    "\"label\":\"l\",\"kind\":\"nightly\",\"verdict\":\"pass\",\"exit_code\":0,\"repo\":"
	    "\"o/"
	    "r\",\"sha\":\"abc\",\"ref\":\"refs/heads/main\",\"pr\":12,\"run_id\":\"7\","
	    "\"run_attempt\":2,\"identity\":{\"device_kind\":\"NVIDIA H100\",\"device_count\":8,"
	    "\"world_size\":null,\"labels\":{\"seq\":\"4k\",\"n\":3,\"z\":null}},\"metrics\":{"
	    "\"a.us\":123456789.012345,\"b.share\":-0,\"c\":0.000001,\"d\":-12.5,\"e\":0,"
	    "\"f\":999999999999999,\"g\":0.0000000000000000000123}",
	    "\"label\":null,\"kind\":\"pr\",\"verdict\":\"warn\",\"exit_code\":null,\"repo\":null,"
	    "\"sha\":null,\"ref\":null,\"pr\":null,\"run_id\":null,\"run_attempt\":null,"
	    "\"identity\":{},\"metrics\":{\"z\":1,\"a\":2,\"m\":3}",
	    "\"label\":\"\\\"q\\\"\",\"kind\":\"pr\",\"verdict\":\"pass\",\"exit_code\":0,"
	    "\"repo\":null,\"sha\":null,\"ref\":null,\"pr\":null,\"run_id\":null,"
	    "\"run_attempt\":null,\"identity\":{\"labels\":\"flat\"},\"metrics\":{\"x\":1e5,"
	    "\"y\":1234567890123456,\"w\":0.1,\"v\":0.1234567890123456789012}",
	    "\"label\":\"l\",\"kind\":\"main\",\"verdict\":\"pass\",\"exit_code\":1.5,"
	    "\"repo\":null,\"sha\":null,\"ref\":null,\"pr\":null,\"run_id\":null,"
	    "\"run_attempt\":null,\"identity\":{},\"metrics\":{}",
	    "\"label\":\"l\",\"kind\":\"weekly\",\"verdict\":\"pass\",\"exit_code\":0,"
	    "\"repo\":null,\"sha\":null,\"ref\":null,\"pr\":null,\"run_id\":null,"
	    "\"run_attempt\":null,\"identity\":{\"b\":true},\"metrics\":{}",
	    "\"label\":\"l\",\"kind\":\"main\",\"verdict\":\"pass\",\"exit_code\":0,"
	    "\"repo\":null,\"sha\":null,\"ref\":null,\"pr\":null,\"run_id\":null,"
	    "\"run_attempt\":null,\"identity\":{},\"metrics\":{\"x\":01}",
	};
	static const char *const baselines[] = {
	    "\"baseline\":{\"kind\":\"file\",\"path\":\"b.json\",\"sha256\":\"b1\","
	    "\"summary_sha256\":\"b2\"}",
	    "\"baseline\":{\"kind\":null,\"path\":null,\"sha256\":null,\"summary_sha256\":null}",
	    "\"baseline\":{\"kind\":\"history\",\"path\":null,\"sha256\":null,\"summary_sha256\":"
	    "null,\"window\":{\"records\":5,\"kind\":[\"main\"]}}",
	};
	struct history_env e = env0();
	struct history_record made;
	struct pg_buf written = PG_BUF_INIT;
	char *v = verdict("\"lab\"", "{\"k\": \"v\", \"n\": 2}", 8, 1234.5678);
	int read = 0;
	(void)state;

	from_verdict(&made, v, &e);
	history_record_write(&made, &written);
	written.ptr[--written.len] = '\0'; /* a shard line: no newline */
	for (size_t t = 0; t <= PG_ARRAY_LEN(tails); t++)
		for (size_t b = 0; b < PG_ARRAY_LEN(baselines); b++) {
			struct pg_buf line = PG_BUF_INIT, spaced = PG_BUF_INIT;
			struct history_record direct, tree;
			int rc_direct, rc_tree;

			if (t == PG_ARRAY_LEN(tails)) {
				if (b > 0)
					continue;
				pg_buf_add(&line, written.ptr, written.len);
			} else {
				pg_buf_addf(&line,
					    "%s%s,%s,\"summary_sha256\":\"c2\",\"thresholds\":"
					    "\"default\",\"profgate_version\":\"0.1.0\"}",
					    head, tails[t], baselines[b]);
			}
			pg_buf_addf(&spaced, "{ %s", line.ptr + 1);
			rc_direct = history_record_parse(&direct, line.ptr, line.len);
			rc_tree = history_record_parse(&tree, spaced.ptr, spaced.len);
			if (rc_direct != rc_tree)
				fail_msg("line %zu/%zu read %d directly, %d through cJSON", t, b,
					 rc_direct, rc_tree);
			if (rc_direct == 0) {
				assert_same_record(&direct, &tree);
				assert_memory_equal(direct.line, line.ptr, line.len);
				read++;
			}
			history_record_release(&direct);
			history_record_release(&tree);
			pg_buf_release(&line);
			pg_buf_release(&spaced);
		}
	assert_int_equal(read, 1 + 4 * 3); /* the writer's; tails 3 and 4 are refused */
	history_record_release(&made);
	pg_buf_release(&written);
	free(v);
}

/* The id names a file in the cache (pending records): no path can hide in it. */
static void test_record_id_refused(void **state)
{
	static const char *const bad[] = {"../../etc/x", "a/b", "", "a b", "x.json"};
	struct history_record r;
	(void)state;

	for (size_t i = 0; i < PG_ARRAY_LEN(bad); i++) {
		struct pg_buf line = PG_BUF_INIT;
		pg_buf_addf(&line,
			    "{\"schema\": \"profgate.history/1\", \"record_id\": \"%s\", "
			    "\"time\": \"2024-05-01T00:00:00Z\", \"series\": \"s-00000000\", "
			    "\"kind\": \"pr\", \"verdict\": \"pass\", \"metrics\": {}}",
			    bad[i]);
		assert_int_equal(history_record_parse(&r, line.ptr, line.len), PG_EFORMAT);
		assert_non_null(strstr(pg_error_last(), "record_id"));
		history_record_release(&r);
		pg_buf_release(&line);
	}
}

static void test_load(void **state)
{
	struct history_env e = env0();
	struct history_record r, loaded;
	struct pg_buf line = PG_BUF_INIT, pretty = PG_BUF_INIT, again = PG_BUF_INIT;
	char *v = verdict("\"x\"", "{}", 8, 1000);
	(void)state;

	from_verdict(&r, v, &e);
	history_record_write(&r, &line);
	/* the same record spread over lines, as a person might save it */
	for (size_t i = 0; i < line.len; i++) {
		pg_buf_addc(&pretty, line.ptr[i]);
		if (line.ptr[i] == ',' && line.ptr[i + 1] == '"')
			pg_buf_adds(&pretty, "\n  ");
	}
	assert_int_equal(history_record_load(&loaded, pretty.ptr, pretty.len, "r.json", &e, NULL),
			 0);
	assert_null(loaded.line);
	history_record_write(&loaded, &again);
	assert_string_equal(again.ptr, line.ptr);
	history_record_release(&loaded);
	assert_int_equal(history_record_load(&loaded, line.ptr, line.len, "r.json", &e, "main"),
			 PG_EUSAGE);
	history_record_release(&loaded);
	assert_int_equal(history_record_load(&loaded, v, strlen(v), "v.json", &e, NULL), 0);
	assert_string_equal(loaded.record_id, r.record_id);
	history_record_release(&loaded);
	assert_int_equal(history_record_load(&loaded, "hello", 5, "h.json", &e, NULL), PG_EFORMAT);
	assert_non_null(strstr(pg_error_last(), "h.json: not a history record or a verdict JSON"));
	history_record_release(&loaded);
	history_record_release(&r);
	pg_buf_release(&line);
	pg_buf_release(&pretty);
	pg_buf_release(&again);
	free(v);
}

/* ---- shards ---- */

struct warnings {
	char text[2048];
	int n;
};

static void collect(void *payload, const char *msg)
{
	struct warnings *w = payload;

	w->n++;
	strncat(w->text, msg, sizeof(w->text) - strlen(w->text) - 2);
	strcat(w->text, "\n");
}

/* Two records as lines, for shards. */
static void two_lines(struct pg_buf *l1, struct pg_buf *l2, char **id1)
{
	struct history_env e = env0();
	struct history_record r;
	char *v1 = verdict("\"x\"", "{}", 8, 1000), *v2 = verdict("\"x\"", "{}", 8, 2000);

	from_verdict(&r, v1, &e);
	history_record_write(&r, l1);
	*id1 = pg_xstrdup(r.record_id);
	history_record_release(&r);
	e.time = "2024-05-02T00:00:00Z";
	from_verdict(&r, v2, &e);
	history_record_write(&r, l2);
	history_record_release(&r);
	free(v1);
	free(v2);
}

static void test_shard_tolerant(void **state)
{
	struct pg_buf l1 = PG_BUF_INIT, l2 = PG_BUF_INIT, text = PG_BUF_INIT;
	struct history_list list = {0};
	struct warnings w = {"", 0};
	char *id1;
	(void)state;

	two_lines(&l1, &l2, &id1);
	pg_buf_add(&text, l1.ptr, l1.len);			     /* 1 */
	pg_buf_adds(&text, "\n");				     /* 2: blank */
	pg_buf_adds(&text, "{\"schema\": \"profgate.history/1\"\n"); /* 3: cut */
	pg_buf_adds(&text, "{\"schema\": \"profgate.history/1\", \"record_id\": \"r\", \"time\": "
			   "\"2024-05-01\", \"series\": \"s\", \"kind\": \"pr\", \"verdict\": "
			   "\"pass\", \"metrics\": {}}\n"); /* 4: a date, not a time */
	pg_buf_add(&text, l2.ptr, l2.len - 1);		    /* 5, with CRLF */
	pg_buf_adds(&text, "\r\n");
	pg_buf_adds(&text, "{\"schema\": \"other\"}"); /* 6, no newline at the end */
	assert_int_equal(
	    history_shard_parse(text.ptr, text.len, "s/2024-05.jsonl", &list, collect, &w), 0);
	assert_int_equal(list.n, 2);
	assert_string_equal(list.r[0].record_id, id1);
	assert_string_equal(list.r[1].time, "2024-05-02T00:00:00Z");
	assert_int_equal(w.n, 3);
	assert_non_null(strstr(w.text, "history: s/2024-05.jsonl:3: not a JSON object; line "
				       "skipped\n"));
	assert_non_null(strstr(w.text, "history: s/2024-05.jsonl:4: time '2024-05-01' is not of "
				       "the form"));
	assert_non_null(strstr(w.text, "history: s/2024-05.jsonl:6: schema 'other' is not "
				       "profgate.history/1; line skipped"));
	assert_true(history_shard_has(text.ptr, text.len, id1));
	assert_true(history_shard_has(text.ptr, text.len, "r"));     /* any line with that id */
	assert_false(history_shard_has(text.ptr, text.len, "pass")); /* a value, not an id */
	assert_false(history_shard_has(text.ptr, text.len, "0123456789abcdef0123456789abcdef"));
	history_list_release(&list);
	pg_buf_release(&l1);
	pg_buf_release(&l2);
	pg_buf_release(&text);
	free(id1);
}

static void test_shard_unknown_version(void **state)
{
	struct pg_buf l1 = PG_BUF_INIT, l2 = PG_BUF_INIT, text = PG_BUF_INIT;
	struct history_list list = {0};
	struct warnings w = {"", 0};
	char *id1;
	(void)state;

	two_lines(&l1, &l2, &id1);
	pg_buf_add(&text, l1.ptr, l1.len);
	pg_buf_adds(&text, "{\"schema\": \"profgate.history/2\", \"new\": true}\n");
	pg_buf_add(&text, l2.ptr, l2.len);
	assert_int_equal(
	    history_shard_parse(text.ptr, text.len, "s/2024-06.jsonl", &list, collect, &w),
	    PG_EUNSUPP);
	assert_string_equal(pg_error_last(),
			    "history: s/2024-06.jsonl:2: record schema 'profgate.history/2' is not "
			    "one this profgate reads (profgate.history/1); upgrade profgate");
	assert_int_equal(w.n, 0);
	history_list_release(&list);
	pg_buf_release(&l1);
	pg_buf_release(&l2);
	pg_buf_release(&text);
	free(id1);
}

static void test_filter(void **state)
{
	struct history_env e = env0();
	struct history_record r;
	struct history_filter f;
	char *v = verdict("\"bench\"", "{}", 8, 1000);
	(void)state;

	from_verdict(&r, v, &e);
	memset(&f, 0, sizeof(f));
	assert_true(history_filter_match(&f, &r));
	f.since = "2024-05";
	assert_true(history_filter_match(&f, &r));
	f.since = "2024-05-01T12:00:00Z";
	assert_true(history_filter_match(&f, &r));
	f.since = "2024-05-01T12:00:01Z";
	assert_false(history_filter_match(&f, &r));
	f.since = NULL;
	f.label = "bench";
	f.kind = "manual";
	f.verdict = "fail";
	f.series = r.series;
	assert_true(history_filter_match(&f, &r));
	f.verdict = "pass";
	assert_false(history_filter_match(&f, &r));
	f.verdict = NULL;
	f.label = "other";
	assert_false(history_filter_match(&f, &r));
	history_record_release(&r);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_from_verdict_fields),
	    cmocka_unit_test(test_series),
	    cmocka_unit_test(test_record_id),
	    cmocka_unit_test(test_kind_and_pr),
	    cmocka_unit_test(test_time),
	    cmocka_unit_test(test_not_a_verdict),
	    cmocka_unit_test(test_write_parse_round_trip),
	    cmocka_unit_test(test_record_id_refused),
	    cmocka_unit_test(test_record_text_checked),
	    cmocka_unit_test(test_record_read_two_ways),
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_shard_tolerant),
	    cmocka_unit_test(test_line_limit),
	    cmocka_unit_test(test_shard_unknown_version),
	    cmocka_unit_test(test_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
