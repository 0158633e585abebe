/*
 * The summary's schema tables (src/summary/schema.c): docs/summary.md's field
 * reference lists exactly the tables' fields, row for row (a field in one and
 * not the other fails, naming it), and metric names, units and digits come
 * back from the tables.
 *
 * PG_SCHEMA_DOC=1 build/tests/test_schema prints the reference the tables
 * make, for pasting into docs/summary.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/summary/summary.h"

#define MAX_SHAPES 64

/* Every shape under the root, each once, in the order the JSON meets them. */
static void collect(const struct sum_shape *sh, const struct sum_shape **v, int *n)
{
	for (int i = 0; i < *n; i++)
		if (v[i] == sh)
			return;
	v[(*n)++] = sh;
	for (uint32_t i = 0; i < sh->n; i++)
		if (sh->f[i].sub && sh->f[i].type != SUM_FLAT)
			collect(sh->f[i].sub, v, n);
}

static const char *written(const struct sum_field *f)
{
	static const char *const nums[] = {
	    [SUM_W_PLAIN] = "",
	    [SUM_W_US] = "3 decimals",
	    [SUM_W_US_OPT] = "3 decimals, null when not known",
	    [SUM_W_US_NAN] = "3 decimals, null when not defined",
	    [SUM_W_SHARE] = "4 decimals",
	    [SUM_W_SHARE_OPT] = "4 decimals, null when not defined",
	    [SUM_W_FIX3] = "3 decimals",
	    [SUM_W_FIX0] = "whole",
	    [SUM_W_SIZED] = "whole, null when not known",
	    [SUM_W_INT_OPT] = "integer, null when not known",
	    [SUM_W_INT_POS] = "integer, null when none",
	    [SUM_W_FIX0_OPT] = "whole, null when not known",
	};
	switch (f->type) {
	case SUM_STR: return f->flags & SUM_REQUIRED ? "string, required" : "string";
	case SUM_CONST: return "fixed string";
	case SUM_F64: return nums[f->fmt];
	case SUM_U32:
	case SUM_I32:
	case SUM_I64:
	case SUM_U64: return f->fmt == SUM_W_PLAIN ? "integer" : nums[f->fmt];
	case SUM_OBJ: return "object";
	case SUM_LIST: return "array";
	default: return "by hand";
	}
}

static const char *merged(const struct sum_field *f)
{
	static const char *const names[] = {
	    [SUM_M_DERIVED] = "",
	    [SUM_M_KEY] = "key",
	    [SUM_M_FIRST] = "first",
	    [SUM_M_SUM] = "sum",
	    [SUM_M_MAX] = "max",
	    [SUM_M_LAST_NOT_KEY] = "last other than the key",
	    [SUM_M_UNION] = "first three distinct",
	};
	return names[f->merge];
}

static void row(struct pg_buf *b, const struct sum_shape *sh, const struct sum_field *f)
{
	if (f->type == SUM_FLAT) {
		for (uint32_t i = 0; i < f->sub->n; i++)
			row(b, f->sub, &f->sub->f[i]);
		return;
	}
	pg_buf_addf(b, "| `%s` | %s | %s | %s |", f->key, written(f), summary_unit_name(f->unit),
		    merged(f));
	if (f->metric) {
		const char *pc = strstr(f->metric, "%s");
		const struct sum_field *key = summary_shape_key(sh);
		if (pc)
			pg_buf_addf(b, " `%.*s<%s>%s` |", (int)(pc - f->metric), f->metric,
				    key ? key->key : "key", pc + 2);
		else
			pg_buf_addf(b, " `%s` |", f->metric);
	} else {
		pg_buf_adds(b, "  |");
	}
	pg_buf_addc(b, '\n');
}

/* The reference as the tables make it. */
static void reference(struct pg_buf *b)
{
	const struct sum_shape *v[MAX_SHAPES];
	int n = 0;

	collect(&summary_root, v, &n);
	for (int i = 0; i < n; i++) {
		pg_buf_addf(b, "\n### `%s`\n\n", v[i]->name);
		pg_buf_adds(b, "| field | written | unit | merge | gate metric |\n");
		pg_buf_adds(b, "|---|---|---|---|---|\n");
		for (uint32_t k = 0; k < v[i]->n; k++)
			row(b, v[i], &v[i]->f[k]);
	}
}

static char *docs_text(void)
{
	const char *self = __FILE__, *cut = strstr(self, "tests/unit/test_schema.c");
	char path[4096];
	FILE *f;
	long n;
	char *text;

	snprintf(path, sizeof(path), "%.*sdocs/summary.md", cut ? (int)(cut - self) : 0, self);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = malloc((size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* The field rows of a reference, each as "\n### heading | row": a row counts
 * under its own shape's heading. */
static void rows_of(const char *text, struct pg_buf *out)
{
	const char *head = "", *p = text;
	int head_len = 0;

	pg_buf_addc(out, '\n');
	while (*p) {
		const char *e = strchr(p, '\n');
		int len = (int)(e ? (size_t)(e - p) : strlen(p));
		if (strncmp(p, "### ", 4) == 0) {
			head = p;
			head_len = len;
		} else if (strncmp(p, "| `", 3) == 0) {
			pg_buf_addf(out, "%.*s %.*s\n", head_len, head, len, p);
		}
		p += len + (e ? 1 : 0);
	}
}

/* Rows of a that b lacks, each printed; returns how many. */
static int rows_missing(const struct pg_buf *a, const struct pg_buf *b, const char *what)
{
	int missing = 0;

	for (const char *p = a->ptr + 1; *p;) {
		const char *e = strchr(p, '\n');
		char line[2048];
		snprintf(line, sizeof(line), "\n%.*s\n", (int)(e - p), p);
		if (!strstr(b->ptr, line)) {
			fprintf(stderr, "# %s: %.*s\n", what, (int)(e - p), p);
			missing++;
		}
		p = e + 1;
	}
	return missing;
}

static void test_docs_match_tables(void **state)
{
	struct pg_buf ref = PG_BUF_INIT, want = PG_BUF_INIT, got = PG_BUF_INIT;
	char *doc = docs_text();
	const char *at = strstr(doc, "\n## Field reference\n");

	(void)state;
	reference(&ref);
	rows_of(ref.ptr, &want);
	assert_non_null(at);
	/* the reference runs to the next "## " heading or the end */
	const char *end = strstr(at + 1, "\n## ");
	char *section = pg_xstrndup(at, end ? (size_t)(end - at) + 1 : strlen(at));
	rows_of(section, &got);
	free(section);
	assert_true(got.len > 1);
	int bad = rows_missing(&want, &got, "in the tables, not in docs/summary.md") +
		  rows_missing(&got, &want, "in docs/summary.md, not in the tables");
	if (bad)
		fprintf(stderr, "# PG_SCHEMA_DOC=1 %s prints the reference\n", "test_schema");
	assert_int_equal(bad, 0);
	pg_buf_release(&ref);
	pg_buf_release(&want);
	pg_buf_release(&got);
	free(doc);
}

struct seen {
	int n, shared;
};

static void check_metric(void *ctx, const struct sum_metric *m)
{
	struct seen *s = ctx;
	const struct sum_field *list;
	char *subject;
	size_t at;

	assert_ptr_equal(summary_metric_field(m->name, &list, &subject, &at), m->field);
	assert_true(m->subject ? subject && strcmp(subject, m->subject) == 0 : !subject);
	free(subject);
	s->n++;
	s->shared += m->step_share >= 0;
}

/* Every metric a summary gives names its own field again. */
static void test_metric_names_round_trip(void **state)
{
	struct summary s;
	struct sum_family fam = {.family = "matmul", .us_per_step = 50, .share = 0.5};
	struct sum_op op = {.name = "a.b::c", .self_us_per_step = 10};
	struct sum_collective co = {.kind = "all-reduce", .us_per_step = 5, .busbw_gbps = 100};
	struct seen seen = {0, 0};

	(void)state;
	summary_init(&s);
	s.steady.count = 3;
	s.steady.median_us = 100;
	s.n_devices = 2;
	s.families = &fam;
	s.n_families = 1;
	s.ops = &op;
	s.n_ops = 1;
	s.collectives = &co;
	s.n_collectives = 1;
	s.has_flops = 1;
	s.tflops_per_device = 1;
	s.mean = (struct sum_breakdown_view){0.5, 0.2, 0.1, 0.2, 0.4, 3};
	summary_metrics_each(&s, check_metric, &seen);
	/* step 5 + skew, breakdown 5, family, op, collective 2, throughput */
	assert_int_equal(seen.n, 6 + 5 + 1 + 1 + 2 + 1);
	assert_int_equal(seen.shared, 3); /* family, op, collective time */
	/* a null share is no metric: no communication, then no device with a
	 * steady window */
	s.mean.comm_overlap_share = -1;
	seen = (struct seen){0, 0};
	summary_metrics_each(&s, check_metric, &seen);
	assert_int_equal(seen.n, 6 + 4 + 1 + 1 + 2 + 1);
	summary_view_undefined(&s.mean);
	seen = (struct seen){0, 0};
	summary_metrics_each(&s, check_metric, &seen);
	assert_int_equal(seen.n, 6 + 0 + 1 + 1 + 2 + 1);
}

static void test_units_and_digits(void **state)
{
	(void)state;
	assert_string_equal(summary_metric_unit("step.median_us"), "us");
	assert_string_equal(summary_metric_unit("op.x.y.us_per_step"), "us");
	assert_string_equal(summary_metric_unit("breakdown.idle_share"), "share");
	assert_string_equal(summary_metric_unit("collective.all-reduce.busbw_gbps"), "GB/s");
	assert_string_equal(summary_metric_unit("throughput.tflops_per_device"), "TFLOP/s");
	assert_string_equal(summary_metric_unit("made.up"), "");
	assert_int_equal(summary_metric_decimals("breakdown.compute_share"), 6);
	assert_int_equal(summary_metric_decimals("family.matmul.us_per_step"), 3);
	assert_int_equal(summary_metric_decimals("made.up"), 3);
}

int main(void)
{
	if (getenv("PG_SCHEMA_DOC")) {
		struct pg_buf b = PG_BUF_INIT;
		reference(&b);
		fputs(b.ptr, stdout);
		pg_buf_release(&b);
		return 0;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_docs_match_tables),
	    cmocka_unit_test(test_metric_names_round_trip),
	    cmocka_unit_test(test_units_and_digits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
