/*
 * The trend as JSON (profgate.trend/1): per series its records once, and per
 * metric the values aligned with them, the change points and the nightly
 * rule's runs. Fields in docs/cli.md "history trend". Deterministic bytes: series
 * and metrics by name, fixed decimals by unit.
 */
#include "history.h"

#include <math.h>
#include <string.h>

#include "../gate/gate.h"

#ifndef PG_VERSION
#define PG_VERSION "0.0.0-dev"
#endif

#define TREND_SCHEMA "profgate.trend/1"

static void kv_str(struct pg_json *j, const char *k, const char *v)
{
	pg_json_key(j, k);
	pg_json_str(j, v);
}

static void kv_uint(struct pg_json *j, const char *k, uint64_t v)
{
	pg_json_key(j, k);
	pg_json_uint(j, v);
}

/* With the metric's decimals (times to the nanosecond, shares to 1e-6, the
 * rest to 1e-3); what rounds to zero is written 0. */
static void value(struct pg_json *j, const char *k, double v, int d)
{
	if (k)
		pg_json_key(j, k);
	if (!isfinite(v)) {
		pg_json_null(j);
		return;
	}
	if (fabs(v) < 0.5 * pow(10, -d))
		v = 0;
	pg_json_double(j, v, d);
}

static void write_filters(struct pg_json *j, const struct history_trend *t, const char *branch,
			  const struct history_filter *f)
{
	pg_json_key(j, "history");
	pg_json_obj_begin(j);
	kv_str(j, "branch", branch ? branch : HISTORY_DEFAULT_BRANCH);
	pg_json_key(j, "kinds");
	pg_json_arr_begin(j);
	for (size_t i = 0; t->o.kinds[i]; i++)
		pg_json_str(j, t->o.kinds[i]);
	pg_json_arr_end(j);
	kv_str(j, "series", f ? f->series : NULL);
	kv_str(j, "label", f ? f->label : NULL);
	kv_str(j, "since", f ? f->since : NULL);
	kv_str(j, "metric", t->o.metric);
	pg_json_obj_end(j);
}

static void write_method(struct pg_json *j, const struct history_trend *t)
{
	pg_json_key(j, "change_points");
	pg_json_obj_begin(j);
	kv_str(j, "method",
	       "binary segmentation; best split by the standardized rank sum; its p-value over "
	       "every split: a permutation test under 48 records, the tail of the maximum from 48");
	pg_json_key(j, "alpha");
	pg_json_double(j, t->o.alpha, 6);
	kv_str(j, "correction", "benjamini-hochberg over the metrics tested in a series");
	kv_uint(j, "min_segment_records", t->o.min_segment);
	kv_str(j, "magnitude", "the metric's warn limit; 1% for metrics no rule judges");
	pg_json_obj_end(j);
	pg_json_key(j, "nightly_rule");
	pg_json_obj_begin(j);
	kv_str(j, "thresholds", t->o.th ? t->o.th->name : NULL);
	kv_uint(j, "consecutive_violations", t->consecutive);
	kv_str(j, "limit", "warn");
	kv_uint(j, "baseline_records", t->o.window);
	pg_json_obj_end(j);
}

static void write_records(struct pg_json *j, const struct history_trend_series *s)
{
	pg_json_key(j, "records");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct history_record *r = s->r[i];
		pg_json_obj_begin(j);
		kv_str(j, "record_id", r->record_id);
		kv_str(j, "time", r->time);
		kv_str(j, "kind", r->kind);
		kv_str(j, "verdict", r->verdict);
		kv_str(j, "sha", r->sha);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
}

static const char *cp_direction(const struct history_trend_metric *m, const struct history_cp *c)
{
	if (!m->rule || m->rule->direction == GATE_INFO || c->after == c->before)
		return "change";
	if ((c->after > c->before) == (m->rule->direction == GATE_LOWER_IS_BETTER))
		return "regression";
	return "improvement";
}

static void write_cp(struct pg_json *j, const struct history_trend_series *s,
		     const struct history_trend_metric *m, const struct history_cp *c)
{
	pg_json_obj_begin(j);
	kv_uint(j, "index", c->index);
	kv_str(j, "time", s->r[c->index]->time);
	kv_str(j, "sha", s->r[c->index]->sha);
	kv_str(j, "direction", cp_direction(m, c));
	value(j, "before", c->before, m->decimals);
	value(j, "after", c->after, m->decimals);
	value(j, "delta", c->after - c->before, m->decimals);
	value(j, "delta_share", c->before != 0 ? (c->after - c->before) / fabs(c->before) : NAN, 6);
	pg_json_key(j, "p_value");
	pg_json_double(j, c->p_value, 7);
	pg_json_key(j, "confidence");
	pg_json_double(j, history_cp_confidence(s, c), 6);
	pg_json_obj_end(j);
}

static void write_nightly(struct pg_json *j, const struct history_trend_metric *m)
{
	pg_json_key(j, "nightly");
	if (!m->rule || m->rule->direction == GATE_INFO) {
		pg_json_null(j);
		return;
	}
	pg_json_obj_begin(j);
	kv_uint(j, "judged", m->n_judged);
	pg_json_key(j, "runs");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < m->n_runs; i++) {
		const struct history_trend_run *r = &m->runs[i];
		pg_json_obj_begin(j);
		kv_uint(j, "first", r->first);
		kv_uint(j, "last", r->last);
		kv_uint(j, "records", r->length);
		kv_str(j, "level", r->reached_fail ? "fail" : "warn");
		pg_json_key(j, "ongoing");
		pg_json_bool(j, r->ongoing);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
	pg_json_key(j, "flagged");
	pg_json_bool(j, m->flagged);
	pg_json_obj_end(j);
}

static void write_metric(struct pg_json *j, const struct history_trend_series *s,
			 const struct history_trend_metric *m)
{
	static const char *const dirs[] = {"lower", "higher", "info"};

	pg_json_obj_begin(j);
	kv_str(j, "name", m->name);
	kv_str(j, "unit", m->unit);
	kv_str(j, "rule", m->rule ? m->rule->metric : NULL);
	kv_str(j, "direction", m->rule ? dirs[m->rule->direction] : "info");
	pg_json_key(j, "values");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n; i++)
		value(j, NULL, m->value[i], m->decimals);
	pg_json_arr_end(j);
	pg_json_key(j, "tested");
	pg_json_bool(j, m->tested);
	pg_json_key(j, "change_points");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < m->n_cp; i++)
		write_cp(j, s, m, &m->cp[i]);
	pg_json_arr_end(j);
	write_nightly(j, m);
	pg_json_obj_end(j);
}

static void write_series(struct pg_json *j, const struct history_trend_series *s)
{
	pg_json_obj_begin(j);
	kv_str(j, "series", s->series);
	kv_str(j, "label", s->label);
	kv_uint(j, "metrics_tested", s->n_tested);
	kv_uint(j, "metrics_changed", s->n_changed);
	pg_json_key(j, "flagged");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_m; i++)
		if (s->m[i].flagged)
			pg_json_str(j, s->m[i].name);
	pg_json_arr_end(j);
	write_records(j, s);
	pg_json_key(j, "metrics");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_m; i++)
		write_metric(j, s, &s->m[i]);
	pg_json_arr_end(j);
	pg_json_obj_end(j);
}

void history_trend_write_json(const struct history_trend *t, const char *branch,
			      const struct history_filter *filters, struct pg_buf *out)
{
	struct pg_json j;

	pg_json_init(&j, out, 1);
	pg_json_obj_begin(&j);
	kv_str(&j, "schema", TREND_SCHEMA);
	kv_str(&j, "profgate_version", PG_VERSION);
	write_filters(&j, t, branch, filters);
	write_method(&j, t);
	pg_json_key(&j, "series");
	pg_json_arr_begin(&j);
	for (uint32_t i = 0; i < t->n; i++)
		write_series(&j, &t->s[i]);
	pg_json_arr_end(&j);
	pg_json_obj_end(&j);
	pg_buf_addc(out, '\n');
}
