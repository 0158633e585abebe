/*
 * The summary's lifetime and its JSON form. Field order is fixed, numbers have
 * fixed decimals (µs: 3, shares: 4, rates: 3), absent values are null, and
 * nothing depends on time or hash order: the same summary gives the same
 * bytes. docs/summary.md describes every field.
 */
#include "summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void summary_init(struct summary *s)
{
	memset(s, 0, sizeof(*s));
	s->world_size = -1;
	s->tflops_per_device = -1;
}

static void free_strs(char **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void summary_free(struct summary *s)
{
	free(s->profgate_version);
	for (uint32_t i = 0; i < s->n_files; i++) {
		free(s->files[i].path);
		free(s->files[i].sha256);
		free(s->files[i].format);
		free(s->files[i].dialect);
		free(s->files[i].host);
	}
	free(s->files);
	free(s->device_kind);
	free(s->framework);
	free(s->framework_version);
	free(s->step_source);
	free(s->basis);
	free_strs(s->labels, s->n_labels);
	summary_run_release(&s->run);
	for (uint32_t i = 0; i < s->n_warnings; i++) {
		free(s->warnings[i].code);
		free(s->warnings[i].message);
	}
	free(s->warnings);
	free(s->steps_source);
	free(s->warmup_reason);
	for (uint32_t i = 0; i < s->n_steps; i++)
		free(s->steps[i].device_us);
	free(s->steps);
	for (uint32_t i = 0; i < s->n_classes; i++)
		free(s->classes[i].name);
	free(s->classes);
	free(s->slowest_device);
	for (uint32_t i = 0; i < s->n_devices; i++) {
		free(s->devices[i].id);
		free(s->devices[i].kind);
		free(s->devices[i].name);
		free(s->devices[i].host);
	}
	free(s->devices);
	free(s->worst_device);
	for (uint32_t i = 0; i < s->n_families; i++) {
		free(s->families[i].family);
		free(s->families[i].category);
	}
	free(s->families);
	for (uint32_t i = 0; i < s->n_ops; i++) {
		free(s->ops[i].name);
		free(s->ops[i].family);
		free(s->ops[i].category);
		for (int k = 0; k < 3; k++)
			free(s->ops[i].examples[k]);
	}
	free(s->ops);
	for (uint32_t i = 0; i < s->n_collectives; i++)
		free(s->collectives[i].kind);
	free(s->collectives);
	for (uint32_t i = 0; i < s->n_gaps; i++) {
		free(s->gaps[i].op);
		free(s->gaps[i].marker);
	}
	free(s->gaps);
	for (uint32_t i = 0; i < s->n_regions; i++)
		free(s->regions[i].path);
	free(s->regions);
	for (uint32_t i = 0; i < s->n_candidates; i++) {
		free(s->candidates[i].id);
		free(s->candidates[i].title);
		free(s->candidates[i].evidence);
	}
	free(s->candidates);
	memset(s, 0, sizeof(*s));
}

void summary_add_warning(struct summary *s, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->warnings = pg_xrealloc(s->warnings, (s->n_warnings + 1) * sizeof(*s->warnings));
	s->warnings[s->n_warnings].code = pg_xstrdup(code);
	s->warnings[s->n_warnings].message = pg_xstrdup(msg);
	s->n_warnings++;
}

/* ---- JSON ---- */

/*
 * Numbers without printf, for the step table: it holds a handful per step and
 * a capture can have a quarter million steps, where formatting ran twice per
 * number (pg_buf_addf measures, then prints) and took longer than the whole
 * analysis. The bytes are those of pg_json_int and pg_json_double(v, 3).
 */
#define NUM_TEXT 400 /* "%.3f" of the largest double */

static size_t digits_text(char *buf, int neg, uint64_t int_part, int frac, int with_frac)
{
	char tmp[32], *p = tmp + sizeof(tmp);

	if (with_frac) {
		for (int i = 0; i < 3; i++, frac /= 10)
			*--p = (char)('0' + frac % 10);
		*--p = '.';
	}
	do
		*--p = (char)('0' + int_part % 10);
	while ((int_part /= 10) != 0);
	if (neg)
		*--p = '-';
	size_t n = (size_t)(tmp + sizeof(tmp) - p);
	memcpy(buf, p, n);
	return n;
}

static size_t int_text(char *buf, int64_t v)
{
	return digits_text(buf, v < 0, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 0, 0);
}

/*
 * v with three decimals. printf rounds the exact binary value; x = v * 1000 is
 * within 1/16 of it below 1e12, so when x is more than 0.4 away from a half,
 * the nearest integer to x is printf's answer. Else (and for huge values)
 * printf decides.
 */
static size_t us_text(char *buf, double v)
{
	double x = v * 1000.0, r = nearbyint(x);

	if (!isfinite(v)) {
		memcpy(buf, "null", 4);
		return 4;
	}
	if (v == 0)
		v = 0; /* no "-0.000" for a negative zero, as pg_json_double */
	if (!(fabs(v) < 1e12) || fabs(x - r) > 0.4)
		return (size_t)snprintf(buf, NUM_TEXT, "%.3f", v);
	uint64_t u = (uint64_t)fabs(r);
	return digits_text(buf, v < 0, u / 1000, (int)(u % 1000), 1);
}

/* A value as text: pg_json_null writes the separator and indentation a value
 * needs, then its "null" is replaced. */
static void put_text(struct pg_json *j, const char *p, size_t n)
{
	pg_json_null(j);
	j->out->len -= 4;
	pg_buf_add(j->out, p, n);
}

static void num_int(struct pg_json *j, int64_t v)
{
	char buf[32];
	put_text(j, buf, int_text(buf, v));
}

static void num_us(struct pg_json *j, double v)
{
	char buf[NUM_TEXT];
	put_text(j, buf, us_text(buf, v));
}

static void kv_str(struct pg_json *j, const char *k, const char *v)
{
	pg_json_key(j, k);
	pg_json_str(j, v);
}

static void kv_us(struct pg_json *j, const char *k, double v)
{
	pg_json_key(j, k);
	if (v < 0 && v > -0.5e-3)
		v = 0;
	num_us(j, v);
}

static void kv_us_opt(struct pg_json *j, const char *k, double v)
{
	pg_json_key(j, k);
	if (v < 0)
		pg_json_null(j);
	else
		num_us(j, v);
}

static void kv_share(struct pg_json *j, const char *k, double v)
{
	pg_json_key(j, k);
	pg_json_double(j, v, 4);
}

static void kv_num(struct pg_json *j, const char *k, double v, int decimals)
{
	pg_json_key(j, k);
	pg_json_double(j, v, decimals);
}

static void kv_int(struct pg_json *j, const char *k, int64_t v)
{
	pg_json_key(j, k);
	num_int(j, v);
}

static void write_split(struct pg_json *j, const struct sum_split *x)
{
	kv_us(j, "wall_us", x->wall_us);
	kv_us(j, "busy_us", x->busy_us);
	kv_us(j, "idle_us", x->idle_us);
	kv_us(j, "compute_us", x->compute_us);
	kv_us(j, "exposed_comm_us", x->exposed_comm_us);
	kv_us(j, "exposed_memcpy_us", x->exposed_memcpy_us);
	kv_us(j, "comm_us", x->comm_us);
	kv_us(j, "memcpy_us", x->memcpy_us);
	kv_us(j, "kernel_sum_us", x->kernel_sum_us);
}

static void write_view(struct pg_json *j, const struct sum_breakdown_view *v)
{
	pg_json_obj_begin(j);
	kv_share(j, "compute_share", v->compute_share);
	kv_share(j, "exposed_comm_share", v->exposed_comm_share);
	kv_share(j, "exposed_memcpy_share", v->exposed_memcpy_share);
	kv_share(j, "idle_share", v->idle_share);
	kv_share(j, "comm_overlap_share", v->comm_overlap_share);
	kv_us(j, "kernel_sum_minus_wall_us_per_step", v->kernel_sum_minus_wall_us_per_step);
	pg_json_obj_end(j);
}

static void write_stats(struct pg_json *j, const struct sum_stats *st)
{
	pg_json_obj_begin(j);
	kv_int(j, "count", st->count);
	if (st->count) {
		kv_us(j, "mean_us", st->mean_us);
		kv_us(j, "median_us", st->median_us);
		kv_us(j, "p90_us", st->p90_us);
		kv_us(j, "min_us", st->min_us);
		kv_us(j, "max_us", st->max_us);
		kv_us(j, "mad_us", st->mad_us);
	} else {
		const char *keys[] = {"mean_us", "median_us", "p90_us",
				      "min_us",	 "max_us",    "mad_us"};
		for (size_t i = 0; i < PG_ARRAY_LEN(keys); i++) {
			pg_json_key(j, keys[i]);
			pg_json_null(j);
		}
	}
	pg_json_obj_end(j);
}

int summary_has_run(const struct sum_run *r)
{
	return r->path || r->id || r->name || r->artifact || r->git_sha || r->config_hash ||
	       r->device_kind;
}

static char *dup_opt(const char *s)
{
	return s ? pg_xstrdup(s) : NULL;
}

void summary_run_copy(struct sum_run *dst, const struct sum_run *src)
{
	dst->path = dup_opt(src->path);
	dst->id = dup_opt(src->id);
	dst->name = dup_opt(src->name);
	dst->artifact = dup_opt(src->artifact);
	dst->git_sha = dup_opt(src->git_sha);
	dst->config_hash = dup_opt(src->config_hash);
	dst->device_kind = dup_opt(src->device_kind);
}

void summary_run_release(struct sum_run *r)
{
	free(r->path);
	free(r->id);
	free(r->name);
	free(r->artifact);
	free(r->git_sha);
	free(r->config_hash);
	free(r->device_kind);
	memset(r, 0, sizeof(*r));
}

/* Only when known: local inputs write no "run" key at all. */
static void write_run(struct pg_json *j, const struct sum_run *r)
{
	if (!summary_has_run(r))
		return;
	pg_json_key(j, "run");
	pg_json_obj_begin(j);
	kv_str(j, "source", "wandb");
	kv_str(j, "path", r->path);
	kv_str(j, "id", r->id);
	kv_str(j, "name", r->name);
	kv_str(j, "artifact", r->artifact);
	kv_str(j, "git_sha", r->git_sha);
	kv_str(j, "config_hash", r->config_hash);
	kv_str(j, "device_kind", r->device_kind);
	pg_json_obj_end(j);
}

static void write_identity(struct pg_json *j, const struct summary *s)
{
	pg_json_key(j, "identity");
	pg_json_obj_begin(j);
	kv_str(j, "device_kind", s->device_kind);
	kv_int(j, "device_count", s->device_count);
	kv_int(j, "host_count", s->host_count);
	pg_json_key(j, "world_size");
	if (s->world_size >= 0)
		pg_json_int(j, s->world_size);
	else
		pg_json_null(j);
	kv_str(j, "framework", s->framework);
	kv_str(j, "framework_version", s->framework_version);
	kv_int(j, "steps_captured", s->steps_captured);
	kv_str(j, "step_source", s->step_source);
	kv_str(j, "basis", s->basis);
	pg_json_key(j, "labels");
	pg_json_obj_begin(j);
	for (uint32_t i = 0; i < s->n_labels; i++) {
		const char *eq = strchr(s->labels[i], '=');
		char key[256];
		snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - s->labels[i]) : 255,
			 s->labels[i]);
		kv_str(j, key, eq ? eq + 1 : "");
	}
	pg_json_obj_end(j);
	write_run(j, &s->run);
	pg_json_obj_end(j);
}

static void write_step(struct pg_json *j, const struct sum_step *st, uint32_t n_devices)
{
	pg_json_obj_begin(j);
	kv_int(j, "step", st->step);
	kv_us(j, "us", st->us);
	kv_us_opt(j, "host_us", st->host_us);
	pg_json_key(j, "steady");
	pg_json_bool(j, st->steady);
	pg_json_key(j, "device_us");
	pg_json_arr_begin(j);
	for (uint32_t d = 0; d < n_devices; d++) {
		if (st->device_us[d] < 0)
			pg_json_null(j);
		else
			num_us(j, st->device_us[d]);
	}
	pg_json_arr_end(j);
	pg_json_obj_end(j);
}

/* "\n" and two spaces per level, as pg_json indents pretty output. */
static char *put_indent(char *p, int depth)
{
	*p++ = '\n';
	memset(p, ' ', (size_t)depth * 2);
	return p + (size_t)depth * 2;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

/*
 * A step after the first, written as write_step() writes it in pretty output,
 * straight into the buffer: the first step went through pg_json, and every
 * step leaves the writer as it found it (in the array, a comma due), so the
 * rows after it can skip a few dozen calls each. depth is the array's.
 */
static void write_step_raw(struct pg_buf *b, int depth, const struct sum_step *st,
			   uint32_t n_devices)
{
	size_t line = 2 + 2 * (size_t)(depth + 2) + NUM_TEXT;
	double us = st->us < 0 && st->us > -0.5e-3 ? 0 : st->us;

	pg_buf_grow(b, (8 + (size_t)n_devices) * line);
	char *p = b->ptr + b->len;
	*p++ = ',';
	p = put_indent(p, depth);
	*p++ = '{';
	p = put_str(put_indent(p, depth + 1), "\"step\": ");
	p += int_text(p, st->step);
	*p++ = ',';
	p = put_str(put_indent(p, depth + 1), "\"us\": ");
	p += us_text(p, us);
	*p++ = ',';
	p = put_str(put_indent(p, depth + 1), "\"host_us\": ");
	if (st->host_us < 0)
		p = put_str(p, "null");
	else
		p += us_text(p, st->host_us);
	*p++ = ',';
	p = put_str(put_indent(p, depth + 1),
		    st->steady ? "\"steady\": true" : "\"steady\": false");
	*p++ = ',';
	p = put_str(put_indent(p, depth + 1), "\"device_us\": [");
	for (uint32_t d = 0; d < n_devices; d++) {
		if (d)
			*p++ = ',';
		p = put_indent(p, depth + 2);
		if (st->device_us[d] < 0)
			p = put_str(p, "null");
		else
			p += us_text(p, st->device_us[d]);
	}
	if (n_devices)
		p = put_indent(p, depth + 1);
	*p++ = ']';
	p = put_indent(p, depth);
	*p++ = '}';
	*p = '\0';
	b->len = (size_t)(p - b->ptr);
}

static void write_steps(struct pg_json *j, const struct summary *s)
{
	pg_json_key(j, "steps");
	pg_json_obj_begin(j);
	kv_str(j, "source", s->steps_source);
	kv_int(j, "warmup", s->warmup);
	kv_int(j, "warmup_requested", s->warmup_requested);
	kv_str(j, "warmup_reason", s->warmup_reason);
	pg_json_key(j, "all");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_steps; i++) {
		if (i > 0 && j->pretty && j->depth < 60)
			write_step_raw(j->out, j->depth, &s->steps[i], s->n_devices);
		else
			write_step(j, &s->steps[i], s->n_devices);
	}
	pg_json_arr_end(j);
	pg_json_key(j, "steady");
	write_stats(j, &s->steady);
	pg_json_key(j, "classes");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_classes; i++) {
		const struct sum_class *c = &s->classes[i];
		pg_json_obj_begin(j);
		kv_str(j, "name", c->name);
		kv_int(j, "count", c->count);
		kv_us(j, "median_us", c->median_us);
		kv_int(j, "representative_step", c->representative_step);
		pg_json_key(j, "periodicity");
		if (c->periodicity > 0)
			pg_json_int(j, c->periodicity);
		else
			pg_json_null(j);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
	kv_us(j, "skew_us", s->skew_us);
	kv_str(j, "slowest_device", s->slowest_device);
	pg_json_obj_end(j);
}

static void write_devices(struct pg_json *j, const struct summary *s)
{
	pg_json_key(j, "devices");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_devices; i++) {
		const struct sum_device *d = &s->devices[i];
		pg_json_obj_begin(j);
		kv_str(j, "id", d->id);
		kv_int(j, "file", d->file);
		kv_str(j, "kind", d->kind);
		kv_int(j, "index", d->index);
		kv_str(j, "name", d->name);
		kv_str(j, "host", d->host);
		pg_json_key(j, "rank");
		if (d->rank >= 0)
			pg_json_int(j, d->rank);
		else
			pg_json_null(j);
		write_split(j, &d->all);
		pg_json_key(j, "steady");
		pg_json_obj_begin(j);
		write_split(j, &d->steady);
		pg_json_obj_end(j);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
}

static void write_lists(struct pg_json *j, const struct summary *s)
{
	pg_json_key(j, "families");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_families; i++) {
		const struct sum_family *f = &s->families[i];
		pg_json_obj_begin(j);
		kv_str(j, "family", f->family);
		kv_str(j, "category", f->category);
		kv_num(j, "count_per_step", f->count_per_step, 3);
		kv_us(j, "us_per_step", f->us_per_step);
		kv_share(j, "share", f->share);
		kv_num(j, "count_total", f->count_total, 0);
		kv_us(j, "us_total", f->us_total);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);

	pg_json_key(j, "ops");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_ops; i++) {
		const struct sum_op *o = &s->ops[i];
		pg_json_obj_begin(j);
		kv_str(j, "name", o->name);
		kv_str(j, "family", o->family);
		kv_str(j, "category", o->category);
		kv_num(j, "count_per_step", o->count_per_step, 3);
		kv_us(j, "self_us_per_step", o->self_us_per_step);
		kv_us(j, "total_us_per_step", o->total_us_per_step);
		kv_num(j, "count_total", o->count_total, 0);
		kv_us(j, "self_us_total", o->self_us_total);
		kv_us(j, "total_us_total", o->total_us_total);
		pg_json_key(j, "examples");
		pg_json_arr_begin(j);
		for (int k = 0; k < 3 && o->examples[k]; k++)
			pg_json_str(j, o->examples[k]);
		pg_json_arr_end(j);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);

	pg_json_key(j, "collectives");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_collectives; i++) {
		const struct sum_collective *c = &s->collectives[i];
		pg_json_obj_begin(j);
		kv_str(j, "kind", c->kind);
		kv_num(j, "count_per_step", c->count_per_step, 3);
		kv_us(j, "us_per_step", c->us_per_step);
		kv_us_opt(j, "bytes_per_step", c->bytes_per_step);
		kv_us_opt(j, "algbw_gbps", c->algbw_gbps);
		kv_us_opt(j, "busbw_gbps", c->busbw_gbps);
		kv_num(j, "capture_count_per_device", c->capture_count_per_device, 3);
		kv_us(j, "capture_us_per_device", c->capture_us_per_device);
		kv_num(j, "count_total", c->count_total, 0);
		kv_us(j, "us_total", c->us_total);
		pg_json_key(j, "bytes_total");
		if (c->sized)
			pg_json_double(j, c->bytes_total, 0);
		else
			pg_json_null(j);
		kv_int(j, "group_size", c->group_size);
		kv_num(j, "capture_count_total", c->capture_count_total, 0);
		kv_us(j, "capture_us_total", c->capture_us_total);
		pg_json_key(j, "capture_bytes_total");
		if (c->capture_sized)
			pg_json_double(j, c->capture_bytes_total, 0);
		else
			pg_json_null(j);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);

	pg_json_key(j, "gaps");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_gaps; i++) {
		const struct sum_gap *g = &s->gaps[i];
		pg_json_obj_begin(j);
		kv_str(j, "op", g->op);
		kv_str(j, "marker", g->marker);
		kv_num(j, "count_per_step", g->count_per_step, 3);
		kv_us(j, "us_per_step", g->us_per_step);
		kv_us(j, "max_us", g->max_us);
		kv_num(j, "count_total", g->count_total, 0);
		kv_us(j, "us_total", g->us_total);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);

	pg_json_key(j, "regions");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_regions; i++) {
		const struct sum_region *r = &s->regions[i];
		pg_json_obj_begin(j);
		kv_str(j, "path", r->path);
		kv_int(j, "depth", r->depth);
		kv_num(j, "count_per_step", r->count_per_step, 3);
		kv_us(j, "inclusive_us_per_step", r->inclusive_us_per_step);
		kv_us(j, "exclusive_us_per_step", r->exclusive_us_per_step);
		kv_num(j, "count_total", r->count_total, 0);
		kv_us(j, "inclusive_us_total", r->inclusive_us_total);
		kv_us(j, "exclusive_us_total", r->exclusive_us_total);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);

	pg_json_key(j, "throughput");
	pg_json_obj_begin(j);
	kv_us_opt(j, "tflops_per_device", s->tflops_per_device);
	pg_json_key(j, "flops_total");
	if (s->has_flops)
		pg_json_double(j, s->flops_total, 0);
	else
		pg_json_null(j);
	pg_json_obj_end(j);

	pg_json_key(j, "candidates");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_candidates; i++) {
		const struct sum_candidate *c = &s->candidates[i];
		pg_json_obj_begin(j);
		kv_str(j, "id", c->id);
		kv_str(j, "title", c->title);
		kv_str(j, "evidence", c->evidence);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
}

void summary_write_json(const struct summary *s, struct pg_buf *out)
{
	struct pg_json j;

	pg_json_init(&j, out, 1);
	pg_json_obj_begin(&j);
	kv_str(&j, "schema", SUMMARY_SCHEMA);
	pg_json_key(&j, "source");
	pg_json_obj_begin(&j);
	kv_str(&j, "profgate_version", s->profgate_version);
	pg_json_key(&j, "files");
	pg_json_arr_begin(&j);
	for (uint32_t i = 0; i < s->n_files; i++) {
		const struct sum_file *f = &s->files[i];
		pg_json_obj_begin(&j);
		kv_str(&j, "path", f->path);
		kv_str(&j, "sha256", f->sha256);
		pg_json_key(&j, "bytes");
		pg_json_uint(&j, f->bytes);
		pg_json_key(&j, "events");
		pg_json_uint(&j, f->events);
		kv_str(&j, "format", f->format);
		kv_str(&j, "dialect", f->dialect);
		kv_str(&j, "host", f->host);
		pg_json_key(&j, "rank");
		if (f->rank >= 0)
			pg_json_int(&j, f->rank);
		else
			pg_json_null(&j);
		pg_json_obj_end(&j);
	}
	pg_json_arr_end(&j);
	pg_json_obj_end(&j);
	write_identity(&j, s);
	pg_json_key(&j, "quality");
	pg_json_obj_begin(&j);
	pg_json_key(&j, "warnings");
	pg_json_arr_begin(&j);
	for (uint32_t i = 0; i < s->n_warnings; i++) {
		pg_json_obj_begin(&j);
		kv_str(&j, "code", s->warnings[i].code);
		kv_str(&j, "message", s->warnings[i].message);
		pg_json_obj_end(&j);
	}
	pg_json_arr_end(&j);
	pg_json_obj_end(&j);
	write_steps(&j, s);
	write_devices(&j, s);
	pg_json_key(&j, "per_step_basis");
	pg_json_obj_begin(&j);
	kv_int(&j, "devices", s->basis_devices);
	kv_int(&j, "steady_steps", s->basis_steady_steps);
	pg_json_obj_end(&j);
	pg_json_key(&j, "breakdown");
	pg_json_obj_begin(&j);
	kv_str(&j, "basis", "steady steps, per device; mean over devices and the worst device");
	pg_json_key(&j, "mean");
	write_view(&j, &s->mean);
	pg_json_key(&j, "worst");
	write_view(&j, &s->worst);
	kv_str(&j, "worst_device", s->worst_device);
	pg_json_obj_end(&j);
	write_lists(&j, s);
	pg_json_obj_end(&j);
}
