/*
 * The summary's lifetime and its JSON form. Field order is fixed, numbers have
 * fixed decimals (µs: 3, shares: 4, rates: 3), absent values are null, and
 * nothing depends on time or hash order: the same summary gives the same
 * bytes. docs/summary.md describes every field.
 */
#include "summary.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void summary_init(struct summary *s)
{
	memset(s, 0, sizeof(*s));
	s->world_size = -1;
	s->tflops_per_device = -1;
	s->rate = (struct sum_rate){-1, -1, -1, -1, NULL, NULL, -1, -1, -1, -1, -1};
	s->memory = (struct sum_memory){-1, -1, -1, -1, NULL, 0};
	s->host.step_median_us = -1;
	s->host.wall_us_per_step = -1;
	s->host.busy_us_per_step = -1;
	s->host.idle_us_per_step = -1;
	s->host.busy_share = -1;
	s->host.python_us_per_step = -1;
	s->host.launch_us_per_step = -1;
	s->host.fastest_us_per_step = -1;
	summary_view_undefined(&s->mean);
	summary_view_undefined(&s->worst);
}

void summary_view_undefined(struct sum_breakdown_view *v)
{
	*v = (struct sum_breakdown_view){-1, -1, -1, -1, -1, NAN};
}

#define PART(k, n)                                                                                 \
	{                                                                                          \
#k, n, offsetof(struct sum_breakdown_view, k##_share),                             \
		    offsetof(struct sum_split, k##_us)                                             \
	}
const struct sum_breakdown_part summary_parts[SUM_N_PARTS] = {
    PART(compute, "compute"),
    PART(exposed_comm, "exposed communication"),
    PART(exposed_memcpy, "exposed memory copies"),
    PART(idle, "idle"),
};

double summary_part_share(const struct sum_breakdown_view *v, int k)
{
	return *(const double *)((const char *)v + summary_parts[k].share_off);
}

double summary_part_us(const struct sum_split *x, int k)
{
	return *(const double *)((const char *)x + summary_parts[k].us_off);
}

const struct sum_breakdown_part *summary_part_named(const char *s, size_t n)
{
	for (int k = 0; k < SUM_N_PARTS; k++) {
		const struct sum_breakdown_part *p = &summary_parts[k];
		if ((strlen(p->key) == n && memcmp(s, p->key, n) == 0) ||
		    (strlen(p->name) == n && memcmp(s, p->name, n) == 0))
			return p;
	}
	return NULL;
}

int summary_device_steady(const struct sum_device *d)
{
	return d->steady.wall_us > 0;
}

int summary_host_basis(const struct summary *s)
{
	return s->basis && strcmp(s->basis, SUMMARY_BASIS_HOST) == 0;
}

/* A window baseline rebuilt from history fills the device lists whatever its
 * basis: the host's lists count only when those are empty. */
const struct sum_family *summary_step_families(const struct summary *s, uint32_t *n)
{
	int host = summary_host_basis(s) && s->n_families == 0;

	*n = host ? s->host.n_families : s->n_families;
	return host ? s->host.families : s->families;
}

const struct sum_op *summary_step_ops(const struct summary *s, uint32_t *n)
{
	int host = summary_host_basis(s) && s->n_ops == 0;

	*n = host ? s->host.n_ops : s->n_ops;
	return host ? s->host.ops : s->ops;
}

static void free_steps(struct summary *s)
{
	for (uint32_t i = 0; i < s->n_steps; i++)
		free(s->steps[i].device_us);
	free(s->steps);
}

static void free_custom(const struct sum_field *f, void *base)
{
	switch (f->custom) {
	case SUM_C_STEP_ROWS: free_steps(base); break;
	case SUM_C_LABELS: {
		struct summary *s = base;
		for (uint32_t i = 0; i < s->n_labels; i++)
			free(s->labels[i]);
		free(s->labels);
		break;
	}
	case SUM_C_EXAMPLES: {
		struct sum_op *o = base;
		for (int k = 0; k < 3; k++)
			free(o->examples[k]);
		break;
	}
	default: break;
	}
}

void summary_record_free(const struct sum_shape *sh, void *rec)
{
	for (uint32_t i = 0; i < sh->n; i++) {
		const struct sum_field *f = &sh->f[i];
		char *at = (char *)rec + f->off;
		switch (f->type) {
		case SUM_STR: free(*(char **)(void *)at); break;
		case SUM_OBJ:
		case SUM_FLAT: summary_record_free(f->sub, at); break;
		case SUM_LIST: {
			char *v = *(char **)(void *)at;
			uint32_t n = *(uint32_t *)(void *)((char *)rec + f->n_off);
			for (uint32_t k = 0; k < n; k++)
				summary_record_free(f->sub, v + (size_t)k * f->sub->size);
			free(v);
			break;
		}
		case SUM_CUSTOM: free_custom(f, rec); break;
		default: break;
		}
	}
}

void summary_release(struct summary *s)
{
	summary_record_free(&summary_root, s);
	memset(s, 0, sizeof(*s));
}

void summary_add_warning(struct summary *s, const char *code, const char *fmt, ...)
{
	va_list ap;

	s->warnings = pg_xrealloc(s->warnings, (s->n_warnings + 1) * sizeof(*s->warnings));
	va_start(ap, fmt);
	s->warnings[s->n_warnings].message = pg_xvasprintf(fmt, ap);
	va_end(ap);
	s->warnings[s->n_warnings++].code = pg_xstrdup(code);
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

static void kv_us_opt(struct pg_json *j, const char *k, double v)
{
	pg_json_key(j, k);
	if (v < 0)
		pg_json_null(j);
	else
		num_us(j, v);
}

static void kv_int(struct pg_json *j, const char *k, int64_t v)
{
	pg_json_key(j, k);
	num_int(j, v);
}

static void write_step(struct pg_json *j, const struct sum_step *st, uint32_t n_devices)
{
	pg_json_obj_begin(j);
	kv_int(j, "step", st->step);
	kv_us_opt(j, "us", st->us);
	kv_us_opt(j, "span_us", st->span_us);
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

/* A line "key": value, (null when negative), as kv_us_opt() writes it. */
static char *put_opt_us(char *p, int depth, const char *key, double v)
{
	p = put_str(put_indent(p, depth), key);
	if (v < 0)
		p = put_str(p, "null");
	else
		p += us_text(p, v);
	*p++ = ',';
	return p;
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

	pg_buf_grow(b, (9 + (size_t)n_devices) * line);
	char *p = b->ptr + b->len;
	*p++ = ',';
	p = put_indent(p, depth);
	*p++ = '{';
	p = put_str(put_indent(p, depth + 1), "\"step\": ");
	p += int_text(p, st->step);
	*p++ = ',';
	p = put_opt_us(p, depth + 1, "\"us\": ", st->us);
	p = put_opt_us(p, depth + 1, "\"span_us\": ", st->span_us);
	p = put_opt_us(p, depth + 1, "\"host_us\": ", st->host_us);
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

static void write_step_rows(struct pg_json *j, const struct summary *s)
{
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < s->n_steps; i++) {
		if (i > 0 && j->pretty && j->depth < 60)
			write_step_raw(j->out, j->depth, &s->steps[i], s->n_devices);
		else
			write_step(j, &s->steps[i], s->n_devices);
	}
	pg_json_arr_end(j);
}

static void write_labels(struct pg_json *j, const struct summary *s)
{
	pg_json_obj_begin(j);
	for (uint32_t i = 0; i < s->n_labels; i++) {
		const char *eq = strchr(s->labels[i], '=');
		char key[256];
		snprintf(key, sizeof(key), "%.*s", eq ? (int)(eq - s->labels[i]) : 255,
			 s->labels[i]);
		kv_str(j, key, eq ? eq + 1 : "");
	}
	pg_json_obj_end(j);
}

static void write_examples(struct pg_json *j, const struct sum_op *o)
{
	pg_json_arr_begin(j);
	for (int k = 0; k < 3 && o->examples[k]; k++)
		pg_json_str(j, o->examples[k]);
	pg_json_arr_end(j);
}

static void write_custom(struct pg_json *j, const struct sum_field *f, const void *base)
{
	switch (f->custom) {
	case SUM_C_STEP_ROWS: write_step_rows(j, base); break;
	case SUM_C_LABELS: write_labels(j, base); break;
	case SUM_C_EXAMPLES: write_examples(j, base); break;
	default: pg_json_null(j); break;
	}
}

static void write_double(struct pg_json *j, const struct sum_field *f, const void *base, double v)
{
	switch (f->fmt) {
	case SUM_W_US: num_us(j, v < 0 && v > -0.5e-3 ? 0 : v); break;
	case SUM_W_US_OPT:
		if (v < 0)
			pg_json_null(j);
		else
			num_us(j, v);
		break;
	case SUM_W_US_NAN:
		if (isnan(v))
			pg_json_null(j);
		else
			num_us(j, v < 0 && v > -0.5e-3 ? 0 : v);
		break;
	case SUM_W_SHARE: pg_json_double(j, v, 4); break;
	case SUM_W_SHARE_OPT:
		if (v < 0)
			pg_json_null(j);
		else
			pg_json_double(j, v, 4);
		break;
	case SUM_W_FIX3: pg_json_double(j, v, 3); break;
	case SUM_W_FIX0_OPT:
		if (v < 0)
			pg_json_null(j);
		else
			pg_json_double(j, v, 0);
		break;
	case SUM_W_SIZED:
		if (!*(const int *)(const void *)((const char *)base + f->aux)) {
			pg_json_null(j);
			break;
		}
		/* fall through */
	default: pg_json_double(j, v, 0); break;
	}
}

static void write_int(struct pg_json *j, const struct sum_field *f, int64_t v)
{
	if ((f->fmt == SUM_W_INT_OPT && v < 0) || (f->fmt == SUM_W_INT_POS && v <= 0))
		pg_json_null(j);
	else if (f->fmt == SUM_W_PLAIN)
		num_int(j, v);
	else
		pg_json_int(j, v);
}

static void write_fields(struct pg_json *j, const struct sum_shape *sh, const void *base);

static void write_list(struct pg_json *j, const struct sum_field *f, const void *base)
{
	const char *rec = *(char *const *)(const void *)((const char *)base + f->off);
	uint32_t n = *(const uint32_t *)(const void *)((const char *)base + f->n_off);

	pg_json_arr_begin(j);
	for (uint32_t k = 0; k < n; k++, rec += f->sub->size) {
		pg_json_obj_begin(j);
		write_fields(j, f->sub, rec);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
}

/* One field of the record at base; nulls: the shape's numbers are unknown. */
static void write_field(struct pg_json *j, const struct sum_field *f, const void *base, int nulls)
{
	const char *at = (const char *)base + f->off;

	if (f->type == SUM_FLAT) {
		write_fields(j, f->sub, at);
		return;
	}
	if (f->type == SUM_OBJ && f->sub->present && !f->sub->present(at))
		return;
	pg_json_key(j, f->key);
	switch (f->type) {
	case SUM_STR: pg_json_str(j, *(char *const *)(const void *)at); break;
	case SUM_CONST: pg_json_str(j, f->text); break;
	case SUM_F64:
		if (nulls)
			pg_json_null(j);
		else
			write_double(j, f, base, *(const double *)(const void *)at);
		break;
	case SUM_U32: write_int(j, f, *(const uint32_t *)(const void *)at); break;
	case SUM_I32: write_int(j, f, *(const int32_t *)(const void *)at); break;
	case SUM_I64: write_int(j, f, *(const int64_t *)(const void *)at); break;
	case SUM_U64: pg_json_uint(j, *(const uint64_t *)(const void *)at); break;
	case SUM_OBJ:
		pg_json_obj_begin(j);
		write_fields(j, f->sub, at);
		pg_json_obj_end(j);
		break;
	case SUM_LIST: write_list(j, f, base); break;
	case SUM_CUSTOM: write_custom(j, f, base); break;
	default: break;
	}
}

static void write_fields(struct pg_json *j, const struct sum_shape *sh, const void *base)
{
	int nulls = sh->nulls_unless_count &&
		    *(const uint32_t *)(const void *)((const char *)base + sh->f[0].off) == 0;

	for (uint32_t i = 0; i < sh->n; i++)
		write_field(j, &sh->f[i], base, nulls && i > 0);
}

void summary_write_json(const struct summary *s, struct pg_buf *out)
{
	struct pg_json j;

	pg_json_init(&j, out, 1);
	pg_json_obj_begin(&j);
	write_fields(&j, &summary_root, s);
	pg_json_obj_end(&j);
}
