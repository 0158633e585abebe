/*
 * The verdict JSON (profgate.verdict/1): what the gate decided and why, for
 * machines — the Action's outputs, history records, other tools. Field by
 * field in docs/gate.md "The verdict JSON". Deterministic bytes.
 */
#include "gate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void num(struct pg_json *j, const char *k, double v, int decimals)
{
	double half = 0.5 * pow(10, -decimals);

	if (k)
		pg_json_key(j, k);
	if (isfinite(v) && fabs(v) < half)
		v = 0;
	pg_json_double(j, v, decimals);
}

static void str(struct pg_json *j, const char *k, const char *v)
{
	pg_json_kv_str(j, k, v);
}

/* A number, or null where it is not known. */
static void num_if(struct pg_json *j, const char *k, int known, double v, int decimals)
{
	if (!known) {
		pg_json_key(j, k);
		pg_json_null(j);
		return;
	}
	num(j, k, v, decimals);
}

/* What a test compared: the kind of sample and how many on each side. */
static void write_samples(struct pg_json *j, const char *basis, uint32_t n_baseline,
			  uint32_t n_candidate)
{
	pg_json_key(j, "samples");
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "basis", basis);
	pg_json_kv_uint(j, "baseline", n_baseline);
	pg_json_kv_uint(j, "candidate", n_candidate);
	pg_json_obj_end(j);
}

/* The values of every identity field a thresholds file may name, and the
 * summary's labels: what a history record files the run under. */
static void write_identity(struct pg_json *j, const struct summary *s)
{
	pg_json_key(j, "identity");
	pg_json_obj_begin(j);
	for (size_t i = 0; i < SUMMARY_ID_N; i++) {
		const struct summary_id_field *f = &summary_id_fields[i];
		if (f->type == SUMMARY_ID_STRING) {
			pg_json_kv_str(j, f->name, summary_id_str(s, f));
			continue;
		}
		pg_json_key(j, f->name);
		if (summary_id_num(s, f) < 0)
			pg_json_null(j);
		else
			pg_json_int(j, summary_id_num(s, f));
	}
	pg_json_key(j, "labels");
	pg_json_obj_begin(j);
	for (uint32_t i = 0; i < s->n_labels; i++) {
		struct pg_buf k = PG_BUF_INIT;
		size_t n;
		const char *v = summary_label_split(s->labels[i], &n);
		pg_buf_add(&k, s->labels[i], n);
		pg_json_kv_str(j, k.ptr, v);
		pg_buf_release(&k);
	}
	pg_json_obj_end(j);
	pg_json_obj_end(j);
}

static void write_profiles(struct pg_json *j, const struct summary *s)
{
	pg_json_key(j, "profiles");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_files; i++) {
		pg_json_obj_begin(j);
		pg_json_kv_str(j, "path", s->files[i].path);
		pg_json_kv_str(j, "sha256", s->files[i].sha256);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
}

/* Every run of a side: its input, digests, profiles, step values and
 * whether it was set aside as disturbed (and why). */
static void write_run_list(struct pg_json *j, const struct gate_result *r, int k)
{
	pg_json_key(j, "run_list");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < r->n_runs[k]; i++) {
		const struct gate_run *x = &r->runs[k][i];
		pg_json_obj_begin(j);
		pg_json_kv_str(j, "path", x->path);
		pg_json_kv_str(j, "sha256", x->sha256);
		pg_json_kv_str(j, "summary_sha256",
			       x->summary_sha256[0] ? x->summary_sha256 : NULL);
		pg_json_key(j, "profiles");
		pg_json_arr_begin(j);
		for (uint32_t f = 0; f < x->n_profiles; f++) {
			pg_json_obj_begin(j);
			pg_json_kv_str(j, "path", x->profile_path[f]);
			pg_json_kv_str(j, "sha256", x->profile_sha256[f]);
			pg_json_obj_end(j);
		}
		pg_json_arr_end(j);
		num_if(j, "step_median_us", isfinite(x->step_median_us), x->step_median_us, 3);
		num_if(j, "step_p90_us", isfinite(x->step_p90_us), x->step_p90_us, 3);
		num_if(j, "above_typical_share", isfinite(x->from_share), x->from_share, 6);
		num_if(j, "step_mean_excess_share", isfinite(x->excess_share), x->excess_share, 6);
		num_if(j, "fastest_step_us", isfinite(x->fastest_us), x->fastest_us, 3);
		num_if(j, "slowed_share", isfinite(x->slowed_share), x->slowed_share, 6);
		pg_json_key(j, "burst_steps");
		if (x->burst_share > 0) {
			pg_json_arr_begin(j);
			pg_json_int(j, x->burst_first);
			pg_json_int(j, x->burst_last);
			pg_json_arr_end(j);
		} else {
			pg_json_null(j);
		}
		num_if(j, "burst_p90_share", x->burst_share > 0, x->burst_share, 6);
		pg_json_key(j, "set_aside");
		pg_json_bool(j, x->set_aside);
		pg_json_kv_str(j, "why", x->why);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
}

/* The run a side's report shows (its representative), named: for a side of
 * one run the file given, for several the one whose summary is shown. */
static const struct gate_run *shown_run(const struct gate_result *r, int k)
{
	for (uint32_t i = 0; i < r->n_runs[k]; i++)
		if (r->runs[k][i].shown)
			return &r->runs[k][i];
	return NULL;
}

static void write_side(struct pg_json *j, const struct gate_result *r, int k, const char *key,
		       const char *path, const char *sha, const struct summary *s,
		       const char *summary_sha, const char *history_json, uint32_t runs,
		       double jitter)
{
	const struct gate_run *shown = r->n_runs[k] > 1 ? shown_run(r, k) : NULL;

	pg_json_key(j, key);
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "path", shown ? shown->path : path);
	pg_json_kv_str(j, "sha256", shown ? shown->sha256 : sha);
	write_profiles(j, s);
	pg_json_kv_str(j, "device_kind", s->device_kind);
	pg_json_kv_uint(j, "device_count", s->device_count);
	pg_json_kv_uint(j, "steady_steps", s->steady.count);
	pg_json_kv_uint(j, "runs", runs);
	pg_json_kv_uint(j, "runs_set_aside", r->set_aside[k]);
	num(j, "step_jitter", jitter, 6);
	pg_json_kv_str(j, "summary_sha256", summary_sha[0] ? summary_sha : NULL);
	write_run_list(j, r, k);
	write_identity(j, s);
	if (history_json) {
		pg_json_key(j, "history");
		pg_json_raw(j, history_json);
	}
	pg_json_obj_end(j);
}

static void write_limit(struct pg_json *j, const char *k, const struct gate_limit *l)
{
	if (!l->has_relative && !l->has_absolute)
		return;
	pg_json_key(j, k);
	pg_json_obj_begin(j);
	if (l->has_relative)
		num(j, "relative", l->relative, 6);
	if (l->has_absolute)
		num(j, "absolute", l->absolute, 6);
	pg_json_obj_end(j);
}

static void write_rule(struct pg_json *j, const struct gate_rule *r)
{
	static const char *const dirs[] = {"lower", "higher", "info"};

	pg_json_key(j, "limit");
	if (!r) {
		pg_json_null(j);
		return;
	}
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "rule", r->metric);
	pg_json_kv_str(j, "direction", dirs[r->direction]);
	write_limit(j, "warn", &r->warn);
	write_limit(j, "fail", &r->fail);
	if (r->floor_share >= 0)
		num(j, "floor_share", r->floor_share, 6);
	if (r->noise.has_relative || r->noise.has_absolute || r->noise_step_share > 0) {
		pg_json_key(j, "noise");
		pg_json_obj_begin(j);
		if (r->noise.has_relative)
			num(j, "relative", r->noise.relative, 6);
		if (r->noise.has_absolute)
			num(j, "absolute", r->noise.absolute, 6);
		if (r->noise_step_share > 0)
			num(j, "step_share", r->noise_step_share, 6);
		pg_json_obj_end(j);
	}
	if (r->min_step_share >= 0)
		num(j, "min_step_share", r->min_step_share, 6);
	pg_json_obj_end(j);
}

static void write_metric(struct pg_json *j, const struct gate_metric_result *m)
{
	int dec = summary_metric_decimals(m->name);

	pg_json_obj_begin(j);
	pg_json_kv_str(j, "name", m->name);
	num_if(j, "baseline", m->has_baseline, m->baseline, dec);
	num_if(j, "candidate", m->has_candidate, m->candidate, dec);
	num_if(j, "delta", m->has_baseline && m->has_candidate, m->delta, dec);
	num(j, "delta_share", m->delta_share, 6);
	num_if(j, "step_share", m->step_share >= 0, m->step_share, 6);
	write_rule(j, m->rule);
	pg_json_kv_str(j, "verdict", gate_verdict_name(m->verdict));
	if (m->tested) {
		num(j, "p_value", m->p_value, 6);
		num(j, "noise_sd", m->noise_sd, dec);
		pg_json_kv_str(j, "noise_from", m->noise_from);
		write_samples(j, m->samples, m->n_baseline, m->n_candidate);
	}
	pg_json_kv_str(j, "note", m->note);
	pg_json_obj_end(j);
}

static void write_step(struct pg_json *j, const struct gate_result *r)
{
	pg_json_key(j, "step");
	if (!r->has_step) {
		pg_json_null(j);
		return;
	}
	pg_json_obj_begin(j);
	num(j, "baseline_median_us", r->step_baseline_us, 3);
	num(j, "candidate_median_us", r->step_candidate_us, 3);
	num(j, "delta_us", r->step_delta_us, 3);
	num(j, "delta_share", r->step_delta_share, 6);
	pg_json_key(j, "interval_share");
	if (r->has_interval) {
		pg_json_arr_begin(j);
		num(j, NULL, r->interval_lo_share, 6);
		num(j, NULL, r->interval_hi_share, 6);
		pg_json_arr_end(j);
	} else {
		pg_json_null(j);
	}
	num(j, "confidence", r->confidence, 4);
	num_if(j, "p_value", r->step_tested, r->step_p_value, 6);
	write_samples(j, r->step_samples, r->step_n_baseline, r->step_n_candidate);
	pg_json_obj_end(j);
}

static void write_provenance(struct pg_json *j, const struct gate_result *r)
{
	pg_json_key(j, "provenance");
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "result", r->provenance);
	pg_json_key(j, "checked");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < r->thresholds->n_identity; i++)
		pg_json_str(j, r->thresholds->identity[i]);
	pg_json_arr_end(j);
	pg_json_key(j, "diff");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < r->n_diff; i++) {
		pg_json_obj_begin(j);
		pg_json_kv_str(j, "field", r->diff[i].field);
		pg_json_kv_str(j, "baseline", r->diff[i].baseline);
		pg_json_kv_str(j, "candidate", r->diff[i].candidate);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
	num(j, "workload_overlap_share", r->workload_overlap, 4);
	num(j, "min_workload_overlap_share", r->thresholds->min_workload_overlap, 4);
	pg_json_kv_str(j, "reason",
		       r->verdict == GATE_RECORDED && r->in.recorded_why ? r->in.recorded_why
									 : r->refusal);
	pg_json_obj_end(j);
}

static void write_attribution(struct pg_json *j, const struct gate_result *r)
{
	static const char *const kinds[] = {"family", "op", "breakdown"};

	pg_json_key(j, "attribution");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < r->n_attribution; i++) {
		const struct gate_attribution *a = &r->attribution[i];
		pg_json_obj_begin(j);
		pg_json_kv_str(j, "kind", kinds[a->kind]);
		pg_json_kv_str(j, "name", a->name);
		num(j, "delta_us_per_step", a->delta_us_per_step, 3);
		num(j, "z", a->z, 2);
		if (a->family)
			pg_json_kv_str(j, "family", a->family);
		if (a->detail) {
			pg_json_key(j, "ops");
			pg_json_arr_begin(j);
			for (const char *p = a->detail;;) {
				const char *e = strchr(p, GATE_DETAIL_SEP);
				pg_json_strn(j, p, e ? (size_t)(e - p) : strlen(p));
				if (!e)
					break;
				p = e + 1;
			}
			pg_json_arr_end(j);
		}
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
}

static void write_quality(struct pg_json *j, const struct gate_result *r)
{
	static const char *const sides[] = {"baseline", "candidate"};

	pg_json_key(j, "quality");
	pg_json_obj_begin(j);
	for (int k = 0; k < 2; k++) {
		pg_json_key(j, sides[k]);
		pg_json_arr_begin(j);
		for (uint32_t i = 0; i < r->n_quality; i++) {
			const struct gate_quality_hit *q = &r->quality[i];
			if (q->candidate != k)
				continue;
			pg_json_obj_begin(j);
			pg_json_kv_str(j, "code", q->code);
			pg_json_kv_str(j, "message", q->message);
			pg_json_kv_str(j, "effect", gate_verdict_name(q->action));
			pg_json_obj_end(j);
		}
		pg_json_arr_end(j);
	}
	pg_json_obj_end(j);
}

static void write_breakdown(struct pg_json *j, const struct gate_result *r)
{
	const double *side[2] = {r->bd_baseline_us, r->bd_candidate_us};
	static const char *const names[2] = {"baseline", "candidate"};

	pg_json_key(j, "breakdown_us_per_step");
	pg_json_obj_begin(j);
	for (int k = 0; k < 2; k++) {
		pg_json_key(j, names[k]);
		pg_json_obj_begin(j);
		for (int i = 0; i < SUM_N_PARTS; i++) {
			char key[64];
			snprintf(key, sizeof(key), "%s_us", summary_parts[i].key);
			num(j, key, side[k][i], 3);
		}
		pg_json_obj_end(j);
	}
	pg_json_obj_end(j);
}

static void write_counts(struct pg_json *j, const struct gate_result *r)
{
	static const enum gate_verdict order[] = {GATE_FAIL,	 GATE_WARN,	  GATE_INCONCLUSIVE,
						  GATE_IMPROVED, GATE_PASS,	  GATE_NEW,
						  GATE_GONE,	 GATE_UNRECORDED, GATE_RECORDED};

	pg_json_key(j, "counts");
	pg_json_obj_begin(j);
	for (size_t k = 0; k < PG_ARRAY_LEN(order); k++) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < r->n_metrics; i++)
			n += r->metrics[i].verdict == order[k];
		pg_json_kv_uint(j, gate_verdict_name(order[k]), n);
	}
	pg_json_kv_uint(j, "below_floor", r->n_below_floor);
	pg_json_obj_end(j);
}

void gate_result_write_json(const struct gate_result *r, struct pg_buf *out)
{
	struct pg_json j;

	pg_json_init(&j, out, 1);
	pg_json_obj_begin(&j);
	str(&j, "schema", GATE_VERDICT_SCHEMA);
	str(&j, "profgate_version", r->in.version);
	str(&j, "label", r->in.label);
	str(&j, "verdict", gate_verdict_name(r->verdict));
	pg_json_kv_int(&j, "exit_code", gate_verdict_exit(r->verdict));
	pg_json_key(&j, "thresholds");
	pg_json_obj_begin(&j);
	str(&j, "origin", r->in.thresholds_origin);
	str(&j, "name", r->thresholds->name);
	num(&j, "significance", r->thresholds->significance, 6);
	pg_json_kv_uint(&j, "min_samples", r->thresholds->min_samples);
	pg_json_obj_end(&j);
	write_side(&j, r, 0, "baseline", r->in.baseline_path, r->in.baseline_sha256, r->baseline,
		   r->baseline_summary_sha256, r->in.baseline_history_json, r->baseline_runs,
		   r->jitter_baseline);
	write_side(&j, r, 1, "candidate", r->in.candidate_path, r->in.candidate_sha256,
		   r->candidate, r->candidate_summary_sha256, NULL, r->candidate_runs,
		   r->jitter_candidate);
	write_provenance(&j, r);
	write_step(&j, r);
	write_counts(&j, r);
	pg_json_key(&j, "metrics");
	pg_json_arr_begin(&j);
	for (uint32_t i = 0; i < r->n_metrics; i++)
		write_metric(&j, &r->metrics[i]);
	pg_json_arr_end(&j);
	write_attribution(&j, r);
	if (r->verdict != GATE_INCOMPARABLE && r->verdict != GATE_RECORDED) {
		num(&j, "attribution_z", r->attribution_z, 2);
		num(&j, "attribution_z_against", r->attribution_z_against, 2);
		num(&j, "attribution_remainder_us_per_step", r->attribution_remainder_us, 3);
	}
	write_breakdown(&j, r);
	pg_json_key(&j, "too_noisy");
	if (r->noisy) {
		pg_json_obj_begin(&j);
		num(&j, "between_runs_share", r->noisy_between_share, 6);
		num_if(&j, "within_run_share", isfinite(r->noisy_within_share),
		       r->noisy_within_share, 6);
		str(&j, "advice", r->noisy_advice);
		pg_json_obj_end(&j);
	} else {
		pg_json_null(&j);
	}
	write_quality(&j, r);
	pg_json_obj_end(&j);
	pg_buf_addc(out, '\n');
}
