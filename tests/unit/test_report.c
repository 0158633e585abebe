/*
 * Markdown safety and the summary round trip: hostile profile text cannot
 * mention, open HTML or break a table; a summary read back and written again
 * is byte-identical; the reader names the file and key it refuses.
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

#include "../../src/analyze/analyze.h"
#include "../../src/report/report.h"
#include "../../src/summary/summary.h"
#include "../../src/trace/trace.h"

static void test_code_span(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	report_code(&b, "a|b`c\nd@team <script>", 100);
	assert_string_equal(b.ptr, "`a\\|b'c d@team <script>`");
	pg_buf_reset(&b);
	/* cut on a UTF-8 boundary: "é" is two bytes */
	report_code(&b, "ab\xc3\xa9z", 3);
	assert_string_equal(b.ptr, "`ab…`");
	pg_buf_release(&b);
}

static void test_text(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	report_text(&b, "@octocat <img src=x> | *bold* #1 & [x](y)", 200);
	assert_null(strstr(b.ptr, "<img"));
	assert_null(strstr(b.ptr, "@o")); /* '@' is followed by a zero-width joiner */
	assert_null(strstr(b.ptr, "#1"));
	assert_non_null(strstr(b.ptr, "&lt;img"));
	assert_non_null(strstr(b.ptr, "\\|"));
	assert_non_null(strstr(b.ptr, "\\*bold\\*"));
	assert_non_null(strstr(b.ptr, "&amp;"));
	pg_buf_release(&b);
}

static void test_time(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	report_time(&b, 812.04);
	pg_buf_adds(&b, ",");
	report_time(&b, 3412.0);
	pg_buf_adds(&b, ",");
	report_time(&b, 1205000.0);
	assert_string_equal(b.ptr, "812.0 us,3.41 ms,1.205 s");
	pg_buf_release(&b);
}

/* A small trace with a hostile kernel name, summarized, written, read, written. */
static void test_round_trip_and_report(void **state)
{
	struct trace t;
	struct summary s, r;
	struct analyze_options o;
	struct pg_buf a = PG_BUF_INIT, b2 = PG_BUF_INIT, md = PG_BUF_INIT;
	char path[256];
	(void)state;

	trace_init(&t);
	uint32_t f = trace_file_add(&t, "x.json");
	struct trace_device d = {TRACE_DEV_GPU, 0, -1, f, 0, 0, 0, 0};
	uint32_t dev = trace_device_add(&t, &d);
	struct trace_track tr;
	memset(&tr, 0, sizeof(tr));
	tr.device = dev;
	tr.kind = TRACE_TRACK_STREAM;
	uint32_t k = trace_track_add(&t, &tr);
	const char *names[] = {"@everyone <b>|boom|</b> `x`", "ncclKernel_AllReduce", "gemm"};
	for (int i = 0; i < 30; i++) {
		struct trace_event *e = trace_event_add(&t);
		e->ts_ns = i * 1000;
		e->dur_ns = 700;
		e->name = trace_intern_cstr(&t, names[i % 3]);
		e->track = k;
		e->cat = trace_cat_intern(&t, "kernel", 6);
		e->ph = 'X';
		trace_event_commit(&t, e);
	}
	analyze_options_init(&o);
	o.version = "test";
	summary_init(&s);
	analyze_summarize(&t, &o, &s);
	summary_write_json(&s, &a);
	snprintf(path, sizeof(path), "%s/pg-report-%d.json",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	assert_int_equal(pg_write_file_atomic(path, a.ptr, a.len), 0);
	assert_int_equal(summary_read_json(path, &r), 0);
	summary_write_json(&r, &b2);
	assert_int_equal(a.len, b2.len);
	assert_memory_equal(a.ptr, b2.ptr, a.len);

	report_summary_md(&r, &md);
	assert_non_null(strstr(md.ptr, "# profgate report"));
	/* the hostile name only ever appears as one whole code span (GitHub neither
	 * links mentions nor renders HTML inside code), with its pipes escaped */
	const char *span = "`@everyone <b>\\|boom\\|</b> 'x'`";
	int spans = 0, raw = 0;
	for (const char *p = md.ptr; (p = strstr(p, span)); p++)
		spans++;
	for (const char *p = md.ptr; (p = strstr(p, "@everyone")); p++)
		raw++;
	assert_true(spans > 0);
	assert_int_equal(spans, raw);

	/* the reader refuses a wrong schema and a bad type, naming file and key */
	const char *bad1 = "{\"schema\": \"profile_summary.v2\"}";
	assert_int_equal(pg_write_file_atomic(path, bad1, strlen(bad1)), 0);
	struct summary z;
	assert_int_equal(summary_read_json(path, &z), PG_EUNSUPP);
	assert_non_null(strstr(pg_error_last(), "profile_summary.v2"));
	const char *bad2 = "{\"schema\": \"profgate.summary/1\", \"source\": {\"files\": []}, "
			   "\"identity\": {\"basis\": 7}}";
	assert_int_equal(pg_write_file_atomic(path, bad2, strlen(bad2)), 0);
	assert_int_equal(summary_read_json(path, &z), PG_EFORMAT);
	assert_non_null(strstr(pg_error_last(), "basis"));
	unlink(path);

	summary_free(&s);
	summary_free(&r);
	pg_buf_release(&a);
	pg_buf_release(&b2);
	pg_buf_release(&md);
	trace_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_code_span),
	    cmocka_unit_test(test_text),
	    cmocka_unit_test(test_time),
	    cmocka_unit_test(test_round_trip_and_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
