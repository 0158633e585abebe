/*
 * deliver/ without a network: the report marker, fitting markdown under a size limit (UTF-8
 * boundaries, code fences, the note naming what was cut, the marker kept last), workflow-command
 * escaping and masks, annotations (escaped names, the per-step cap with a "more" line), the
 * $GITHUB_OUTPUT heredoc form parsed back by the runner's rules, the step summary cap, and the
 * event file (same-repository, fork, deleted fork, workflow_run).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/deliver/deliver.h"
#include "../../src/gate/gate.h"
#include "helpers.h"

static int setup(void **state)
{
	(void)state;
	return th_dir_make("test-deliver");
}

static int teardown(void **state)
{
	(void)state;
	return th_dir_remove();
}

/* A gate result of n metrics, names[i] (NULL: op.n<i>.us_per_step) judged verdicts[i], each
 * 1 ms -> 1.3 ms under a rule that warns at +10 % and fails at +25 %; an incomparable one
 * differs on device_kind (A100, H100). Borrows names and verdicts. */
#define MAX_METRICS 32
struct test_result {
	struct gate_result r;
	struct gate_metric_result m[MAX_METRICS];
	char names[MAX_METRICS][32];
	struct gate_rule rule;
	struct gate_field_diff diff;
};
static void result_of(struct test_result *t, enum gate_verdict verdict,
		      const enum gate_verdict *verdicts, int n, const char *const *names)
{
	assert_true(n <= MAX_METRICS);
	memset(t, 0, sizeof(*t));
	t->rule.direction = GATE_LOWER_IS_BETTER;
	t->rule.warn = (struct gate_limit){.has_relative = 1, .relative = 0.1};
	t->rule.fail = (struct gate_limit){.has_relative = 1, .relative = 0.25};
	t->diff = (struct gate_field_diff){"device_kind", "A100", "H100"};
	t->r.verdict = verdict;
	t->r.provenance = verdict == GATE_INCOMPARABLE ? "incomparable" : "comparable";
	t->r.diff = verdict == GATE_INCOMPARABLE ? &t->diff : NULL;
	t->r.n_diff = verdict == GATE_INCOMPARABLE;
	t->r.metrics = t->m;
	t->r.n_metrics = (uint32_t)n;
	for (int i = 0; i < n; i++) {
		struct gate_metric_result *m = &t->m[i];
		snprintf(t->names[i], sizeof(t->names[i]), "op.n%d.us_per_step", i);
		m->name = names ? (char *)names[i] : t->names[i];
		m->has_baseline = m->has_candidate = 1;
		m->baseline = 1000;
		m->candidate = 1300;
		m->delta = 300;
		m->delta_share = 0.3;
		m->rule = &t->rule;
		m->verdict = verdicts[i];
	}
}

static int count_lines_starting(const char *s, const char *prefix)
{
	int n = 0;
	size_t k = strlen(prefix);

	for (const char *p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += strncmp(p, prefix, k) == 0;
	return n;
}

/* ---- the marker ---- */

static void test_marker(void **state)
{
	struct pg_buf md = PG_BUF_INIT;
	struct github_marker m;

	(void)state;
	pg_buf_adds(&md, "## report\n\nbody\n");
	github_marker_append("bench-one-0123abcd", "fail", &md);
	assert_non_null(strstr(md.ptr, "\n" GITHUB_MARKER_PREFIX "bench-one-"));
	assert_int_equal(github_marker_find(md.ptr, md.len, &m), 0);
	assert_true(strncmp(m.series, "bench-one-", 10) == 0 && strlen(m.series) == 18);
	assert_string_equal(m.verdict, "fail");
	/* the last marker wins; a pasted one earlier does not */
	pg_buf_adds(&md, GITHUB_MARKER_PREFIX "other-1 verdict=pass -->\n");
	assert_int_equal(github_marker_find(md.ptr, md.len, &m), 0);
	assert_string_equal(m.series, "other-1");
	assert_string_equal(m.verdict, "pass");
	assert_int_equal(github_marker_find("no marker", 9, &m), PG_ENOTFOUND);
	assert_int_equal(github_marker_find(GITHUB_MARKER_PREFIX "x -->", 29, &m), PG_ENOTFOUND);
	assert_true(github_verdict_alerts("warn") && github_verdict_alerts("fail") &&
		    github_verdict_alerts("incomparable"));
	assert_false(github_verdict_alerts("pass") || github_verdict_alerts("improved") ||
		     github_verdict_alerts("inconclusive") || github_verdict_alerts(NULL));
	pg_buf_release(&md);
}

static void test_comment_mode(void **state)
{
	enum github_comment_mode m;

	(void)state;
	assert_int_equal(github_comment_mode_parse("always", &m), 0);
	assert_int_equal(m, GITHUB_COMMENT_ALWAYS);
	assert_int_equal(github_comment_mode_parse("on-alert", &m), 0);
	assert_int_equal(m, GITHUB_COMMENT_ON_ALERT);
	assert_int_equal(github_comment_mode_parse("never", &m), 0);
	assert_int_equal(m, GITHUB_COMMENT_NEVER);
	assert_int_equal(github_comment_mode_parse("on_alert", &m), PG_EUSAGE);
}

static void test_mentions(void **state)
{
	(void)state;
	assert_int_equal(github_mentions_check(NULL), 0);
	assert_int_equal(github_mentions_check(""), 0);
	assert_int_equal(github_mentions_check("@alice"), 0);
	assert_int_equal(github_mentions_check("@org/perf-team, @bob-1 @a.b_c"), 0);
	/* no '@', a bare '@', two slashes, a slash at an end, markdown or a command */
	assert_int_equal(github_mentions_check("alice"), PG_EUSAGE);
	assert_int_equal(github_mentions_check("@"), PG_EUSAGE);
	assert_int_equal(github_mentions_check("@org/team/x"), PG_EUSAGE);
	assert_int_equal(github_mentions_check("@org/"), PG_EUSAGE);
	assert_int_equal(github_mentions_check("@/team"), PG_EUSAGE);
	assert_int_equal(github_mentions_check("@alice <!-- x -->"), PG_EUSAGE);
	assert_int_equal(github_mentions_check("@alice; rm -rf"), PG_EUSAGE);
}

/* ---- fitting markdown ---- */

/* A report of n table rows in a few sections, with multi-byte characters, a code fence in the
 * middle and the marker at the end. */
static void big_report(struct pg_buf *md, int rows)
{
	pg_buf_adds(md, "## profgate: FAIL\n\n### Metrics\n\n| metric | change |\n|---|---|\n");
	for (int i = 0; i < rows; i++)
		pg_buf_addf(md, "| `op.kernel_\xc3\xa9\xe2\x86\x92%05d` | +%d%% |\n", i, i % 50);
	pg_buf_adds(md, "\n### Attribution\n\n```\n");
	for (int i = 0; i < rows; i++)
		pg_buf_addf(md, "line %d \xe2\x86\x92 \xf0\x9f\x94\xa5\n", i);
	pg_buf_adds(md, "```\n\n### Breakdown\n\ntext\n\n### Quality\n\nnone\n\n");
	pg_buf_adds(md, GITHUB_MARKER_PREFIX "bench-1a2b3c4d verdict=fail -->\n");
}

static int valid_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t k = c < 0x80	    ? 1
			   : (c >> 5) == 6  ? 2
			   : (c >> 4) == 14 ? 3
			   : (c >> 3) == 30 ? 4
					    : 0;
		if (k == 0 || i + k > n)
			return 0;
		for (size_t j = 1; j < k; j++)
			if (((unsigned char)s[i + j] & 0xC0) != 0x80)
				return 0;
		i += k;
	}
	return 1;
}

static void test_md_fit_short(void **state)
{
	struct pg_buf out = PG_BUF_INIT;
	const char *md = "## ok\n\nsmall\n";

	(void)state;
	github_md_fit(md, strlen(md), 100, "x", &out);
	assert_string_equal(out.ptr, md);
	pg_buf_release(&out);
}

static void test_md_fit_cut(void **state)
{
	struct pg_buf md = PG_BUF_INIT, out = PG_BUF_INIT;
	size_t limits[] = {65000, 20000, 5000, 3001, 1500};
	struct github_marker m;

	(void)state;
	big_report(&md, 4000);
	assert_true(md.len > 200000);
	for (size_t i = 0; i < PG_ARRAY_LEN(limits); i++) {
		pg_buf_reset(&out);
		github_md_fit(md.ptr, md.len, limits[i], "the job summary", &out);
		assert_true(out.len <= limits[i]);
		assert_true(valid_utf8(out.ptr, out.len));
		assert_non_null(strstr(out.ptr, "Cut to fit GitHub's size limit"));
		assert_non_null(strstr(out.ptr, "the full report is in the job summary"));
		/* the marker survives, last */
		assert_int_equal(github_marker_find(out.ptr, out.len, &m), 0);
		assert_string_equal(m.series, "bench-1a2b3c4d");
		assert_true(strcmp(out.ptr + out.len - 4, "-->\n") == 0);
	}
	/* at 65000 the cut falls in Metrics: the rest of it and three more sections are named */
	pg_buf_reset(&out);
	github_md_fit(md.ptr, md.len, 65000, "the job summary", &out);
	assert_non_null(strstr(out.ptr, "the rest of \"Metrics\" and 3 more sections "
					"(\"Attribution\", \"Breakdown\", \"Quality\")"));
	assert_null(strstr(out.ptr, "### Attribution"));
	pg_buf_release(&md);
	pg_buf_release(&out);
}

/* A cut inside a code fence closes it, so the note renders as text. */
static void test_md_fit_fence(void **state)
{
	struct pg_buf md = PG_BUF_INIT, out = PG_BUF_INIT;
	const char *note;

	(void)state;
	pg_buf_adds(&md, "## x\n\n```\n");
	for (int i = 0; i < 2000; i++)
		pg_buf_addf(&md, "code line %d\n", i);
	pg_buf_adds(&md, "```\n");
	github_md_fit(md.ptr, md.len, 8000, NULL, &out);
	note = strstr(out.ptr, "\n> **Cut to fit");
	assert_non_null(note);
	assert_true(note - out.ptr >= 4 && memcmp(note - 4, "```\n", 4) == 0);
	assert_int_equal(count_lines_starting(out.ptr, "```"), 2);
	assert_null(strstr(out.ptr, "the full report is in"));
	pg_buf_release(&md);
	pg_buf_release(&out);
}

/* One very long line: the cut lands on a UTF-8 boundary inside it. */
static void test_md_fit_long_line(void **state)
{
	struct pg_buf md = PG_BUF_INIT, out = PG_BUF_INIT;

	(void)state;
	for (int i = 0; i < 30000; i++)
		pg_buf_adds(&md, "\xe2\x82\xac"); /* the euro sign, 3 bytes, no newline */
	for (size_t max = 4000; max < 4010; max++) {
		pg_buf_reset(&out);
		github_md_fit(md.ptr, md.len, max, NULL, &out);
		assert_true(out.len <= max);
		assert_true(valid_utf8(out.ptr, out.len));
	}
	pg_buf_release(&md);
	pg_buf_release(&out);
}

/* ---- workflow commands ---- */

/* ESC, TAB and the other control bytes of a name reach no workflow command
 * as themselves: the runner would pass them to the log. */
static void escape_controls(void)
{
	const char *names[] = {"op.\x1b[31mred\tkernel\x7f\x01.us_per_step"};
	const enum gate_verdict verdicts[] = {GATE_FAIL};
	struct test_result t;
	struct pg_buf b = PG_BUF_INIT;

	result_of(&t, GATE_FAIL, verdicts, 1, names);

	actions_escape_data(&b, "a\x1b[31mb\tc\x7f");
	assert_string_equal(b.ptr, "a\\x1b[31mb\\tc\\x7f");
	pg_buf_reset(&b);
	actions_escape_property(&b, "a\x1b:\t");
	assert_string_equal(b.ptr, "a\\x1b%3A\\t");
	pg_buf_reset(&b);
	actions_annotations(&t.r, 10, &b);
	assert_int_equal(count_lines_starting(b.ptr, "::error "), 1);
	for (size_t i = 0; i < b.len; i++)
		assert_false((unsigned char)b.ptr[i] < 0x20 && b.ptr[i] != '\n');
	assert_null(strchr(b.ptr, 0x7f));
	assert_non_null(strstr(b.ptr, "op.\\x1b[31mred\\tkernel\\x7f\\x01.us_per_step"));
	pg_buf_release(&b);
}

static void test_escape(void **state)
{
	struct pg_buf b = PG_BUF_INIT;

	(void)state;
	actions_escape_data(&b, "50% a:b,c\r\nd");
	assert_string_equal(b.ptr, "50%25 a:b,c%0D%0Ad");
	pg_buf_reset(&b);
	actions_escape_property(&b, "50% a:b,c\r\nd%0A");
	assert_string_equal(b.ptr, "50%25 a%3Ab%2Cc%0D%0Ad%250A");
	pg_buf_reset(&b);
	actions_add_mask(&b, "s3cr%t\nx");
	actions_add_mask(&b, "");
	actions_add_mask(&b, NULL);
	assert_string_equal(b.ptr, "::add-mask::s3cr%25t%0Ax\n");
	pg_buf_release(&b);
	escape_controls();
}

static void test_annotations(void **state)
{
	const char *names[] = {"op.evil,kernel:x%y\n::error::pwned.us_per_step", "step.median_us"};
	const enum gate_verdict verdicts[] = {GATE_FAIL, GATE_WARN};
	struct test_result t;
	struct pg_buf b = PG_BUF_INIT;

	(void)state;
	result_of(&t, GATE_FAIL, verdicts, 2, names);
	actions_annotations(&t.r, 10, &b);
	assert_int_equal(count_lines_starting(b.ptr, "::error "), 1);
	assert_int_equal(count_lines_starting(b.ptr, "::warning "), 1);
	/* nothing a profile names can start a command of its own */
	assert_int_equal(count_lines_starting(b.ptr, "::error::"), 0);
	assert_int_equal(count_lines_starting(b.ptr, "::"), 2);
	assert_non_null(strstr(b.ptr,
			       "::error title=profgate fail%3A op.evil%2Ckernel%3Ax%25y%0A%3A%3A"
			       "error%3A%3Apwned.us_per_step::op.evil,kernel:x%25y%0A::error::"
			       "pwned.us_per_step: 1.00 ms -> 1.30 ms (+30.0%25); fail limit "
			       "+25%25\n"));
	assert_non_null(strstr(b.ptr, "::warning title=profgate warn%3A step.median_us::"));
	pg_buf_release(&b);
}

/* 14 failing metrics and an incomparable verdict: 9 lines and "6 more"; 3 warnings all shown. */
static void test_annotations_cap(void **state)
{
	enum gate_verdict verdicts[17];
	struct test_result t;
	struct pg_buf b = PG_BUF_INIT;

	(void)state;
	for (int i = 0; i < 17; i++)
		verdicts[i] = i < 14 ? GATE_FAIL : GATE_WARN;
	result_of(&t, GATE_INCOMPARABLE, verdicts, 17, NULL);
	actions_annotations(&t.r, 10, &b);
	assert_int_equal(count_lines_starting(b.ptr, "::error "), 10);
	assert_int_equal(count_lines_starting(b.ptr, "::warning "), 3);
	assert_non_null(strstr(b.ptr,
			       "::error title=profgate incomparable::the baseline and the "
			       "candidate are not comparable: device_kind: baseline \"A100\", "
			       "candidate \"H100\"\n"));
	assert_non_null(strstr(b.ptr, "::error title=profgate::6 more failing metrics (see the job "
				      "summary)\n"));
	pg_buf_release(&b);
}

/* ---- files ---- */

/* The runner's reading of $GITHUB_OUTPUT (FileCommandManager): name=value lines, and
 * name<<DELIM ... DELIM. Returns the value of name, malloc'd, or NULL. */
static char *runner_output(const char *text, const char *name)
{
	const char *p = text;
	char *found = NULL;
	size_t k = strlen(name);

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		assert_non_null(nl); /* "EOF marker missing new line" otherwise */
		if (n > k + 2 && memcmp(p, name, k) == 0 && memcmp(p + k, "<<", 2) == 0) {
			char delim[128];
			struct pg_buf v = PG_BUF_INIT;
			const char *q = nl + 1;
			snprintf(delim, sizeof(delim), "%.*s", (int)(n - k - 2), p + k + 2);
			for (;;) {
				const char *e = strchr(q, '\n');
				assert_non_null(e); /* "Matching delimiter not found" otherwise */
				if ((size_t)(e - q) == strlen(delim) &&
				    memcmp(q, delim, (size_t)(e - q)) == 0) {
					nl = e;
					break;
				}
				if (v.len)
					pg_buf_addc(&v, '\n');
				pg_buf_add(&v, q, (size_t)(e - q));
				q = e + 1;
			}
			free(found);
			found = pg_buf_detach(&v, NULL);
		} else if (n > k && memcmp(p, name, k) == 0 && p[k] == '=') {
			free(found);
			found = pg_xstrndup(p + k + 1, n - k - 1);
		}
		p = nl + 1;
	}
	return found;
}

static void test_outputs(void **state)
{
	const char *path = th_path("output");
	const char *tricky = "line one\nghadelimiter_x\nEOF\n\nlast";
	char *text, *v;

	(void)state;
	unlink(path);
	assert_int_equal(actions_output(path, "verdict", "fail"), 0);
	assert_int_equal(actions_output(path, "report", tricky), 0);
	assert_int_equal(actions_output(path, "empty", ""), 0);
	assert_int_equal(actions_output(path, "crlf", "a\r\nb"), 0);
	text = th_read(path, NULL);
	assert_non_null(strstr(text, "verdict=fail\n"));
	assert_non_null(strstr(text, "report<<ghadelimiter_"));
	v = runner_output(text, "verdict");
	assert_string_equal(v, "fail");
	free(v);
	v = runner_output(text, "report");
	assert_string_equal(v, tricky);
	free(v);
	v = runner_output(text, "empty");
	assert_string_equal(v, "");
	free(v);
	free(text);
	assert_int_equal(actions_output("/nonexistent/dir/out", "a", "b"), PG_EIO);
}

static void test_step_summary(void **state)
{
	const char *path = th_path("summary");
	struct pg_buf md = PG_BUF_INIT;
	struct stat st;
	char *text;

	(void)state;
	unlink(path);
	big_report(&md, 30000); /* about 1.9 MB */
	assert_true(md.len > ACTIONS_SUMMARY_MAX_BYTES + 500000);
	assert_int_equal(actions_step_summary(path, "first\n", 6), 0);
	assert_int_equal(actions_step_summary(path, md.ptr, md.len), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true((size_t)st.st_size <= ACTIONS_SUMMARY_MAX_BYTES);
	assert_true((size_t)st.st_size > ACTIONS_SUMMARY_MAX_BYTES - 4096);
	text = th_read(path, NULL);
	assert_true(strncmp(text, "first\n\n## profgate: FAIL", 24) == 0);
	assert_non_null(strstr(text, "Cut to fit"));
	free(text);
	pg_buf_release(&md);
}

/* ---- the event ---- */

static void test_event(void **state)
{
	struct actions_event e;
	const char *path = th_path("event.json");

	(void)state;
	th_write_text(path, "{\"number\": 11, \"pull_request\": {\"number\": 11, "
			    "\"head\": {\"sha\": \"aaa\", \"repo\": {\"full_name\": \"o/r\"}}, "
			    "\"base\": {\"sha\": \"bbb\", \"repo\": {\"full_name\": \"o/r\"}}}}");
	assert_int_equal(actions_event_read(path, &e), 0);
	assert_int_equal(e.pr, 11);
	assert_string_equal(e.head_sha, "aaa");
	assert_string_equal(e.base_sha, "bbb");
	assert_false(e.fork);
	assert_false(e.workflow_run);
	actions_event_release(&e);

	th_write_text(path, "{\"number\": 12, \"pull_request\": {\"number\": 12, "
			    "\"head\": {\"sha\": \"aaa\", \"repo\": {\"full_name\": \"fork/r\"}}, "
			    "\"base\": {\"sha\": \"bbb\", \"repo\": {\"full_name\": \"o/r\"}}}}");
	assert_int_equal(actions_event_read(path, &e), 0);
	assert_true(e.fork);
	actions_event_release(&e);

	th_write_text(path,
		      "{\"number\": 13, \"pull_request\": {\"head\": {\"sha\": \"a\", \"repo\": "
		      "null}, \"base\": {\"repo\": {\"full_name\": \"o/r\"}}}}");
	assert_int_equal(actions_event_read(path, &e), 0);
	assert_int_equal(e.pr, 13);
	assert_true(e.fork); /* the fork was deleted */
	assert_null(e.head_repo);
	actions_event_release(&e);

	th_write_text(path,
		      "{\"workflow_run\": {\"head_sha\": \"ccc\", \"event\": \"pull_request\", "
		      "\"pull_requests\": [{\"number\": 5}], \"repository\": {\"full_name\": "
		      "\"o/r\"}, \"head_repository\": {\"full_name\": \"o/r\"}}}");
	assert_int_equal(actions_event_read(path, &e), 0);
	assert_true(e.workflow_run);
	assert_int_equal(e.pr, 5);
	assert_string_equal(e.head_sha, "ccc");
	actions_event_release(&e);

	th_write_text(path, "{\"ref\": \"refs/heads/main\", \"after\": \"ddd\"}"); /* push */
	assert_int_equal(actions_event_read(path, &e), 0);
	assert_int_equal(e.pr, -1);
	assert_null(e.head_sha);
	actions_event_release(&e);

	th_write_text(path, "[1, 2]");
	assert_int_equal(actions_event_read(path, &e), PG_EFORMAT);
	actions_event_release(&e);
	assert_int_equal(actions_event_read(th_path("missing.json"), &e), PG_EIO);
	actions_event_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_marker),
	    cmocka_unit_test(test_comment_mode),
	    cmocka_unit_test(test_mentions),
	    cmocka_unit_test(test_md_fit_short),
	    cmocka_unit_test(test_md_fit_cut),
	    cmocka_unit_test(test_md_fit_fence),
	    cmocka_unit_test(test_md_fit_long_line),
	    cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_annotations),
	    cmocka_unit_test(test_annotations_cap),
	    cmocka_unit_test(test_outputs),
	    cmocka_unit_test(test_step_summary),
	    cmocka_unit_test(test_event),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
