/*
 * Reading a profgate.summary/1 file back into struct summary (for report,
 * merge and the gate). Summaries are small, so cJSON parses the whole
 * document; every field is checked for its type, and an error names the file
 * and the key. Unknown keys are ignored; an unknown schema is refused.
 */
#include "summary.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SUMMARY_BYTES (512u << 20)

struct rd {
	const char *path;
	const cJSON *root;
	int bad;
};

static int fail(struct rd *r, const char *key, const char *why)
{
	if (!r->bad)
		pg_error_set(PG_EFORMAT, "cannot read summary '%s': %s %s", r->path, key, why);
	r->bad = 1;
	return -1;
}

static char *str(struct rd *r, const cJSON *o, const char *key, int required)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v || cJSON_IsNull(v)) {
		if (required)
			fail(r, key, "is missing");
		return NULL;
	}
	if (!cJSON_IsString(v)) {
		fail(r, key, "is not a string");
		return NULL;
	}
	return pg_xstrdup(v->valuestring);
}

/* A number; def when absent or null (null stands for "unknown"). */
static double num(struct rd *r, const cJSON *o, const char *key, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v || cJSON_IsNull(v))
		return def;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
		fail(r, key, "is not a number");
		return def;
	}
	return v->valuedouble;
}

/* A whole number in [lo, hi] (counts, indexes, ranks); def when absent or
 * null. The bounds keep the conversion to the field's type defined. */
static double whole(struct rd *r, const cJSON *o, const char *key, double def, double lo, double hi)
{
	double v = num(r, o, key, def);

	if (v != floor(v) || v < lo || v > hi) {
		fail(r, key, "is not a whole number in range");
		return def;
	}
	return v;
}
#define U32(r, o, k, d) ((uint32_t)whole(r, o, k, d, 0, 4294967295.0))
#define I32(r, o, k, d) ((int32_t)whole(r, o, k, d, -2147483648.0, 2147483647.0))
#define U64(r, o, k, d) ((uint64_t)whole(r, o, k, d, 0, 18446744073709549568.0))
#define I64(r, o, k, d) ((int64_t)whole(r, o, k, d, -9223372036854775808.0, 9223372036854774784.0))

static const cJSON *arr(struct rd *r, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return NULL;
	if (!cJSON_IsArray(v)) {
		fail(r, key, "is not an array");
		return NULL;
	}
	return v;
}

static const cJSON *obj(struct rd *r, const cJSON *o, const char *key, int required)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v) {
		if (required)
			fail(r, key, "is missing");
		return NULL;
	}
	if (!cJSON_IsObject(v)) {
		fail(r, key, "is not an object");
		return NULL;
	}
	return v;
}

static uint32_t count(const cJSON *a)
{
	return a ? (uint32_t)cJSON_GetArraySize(a) : 0;
}

/* steps.all[]: device_us holds one value per device of the file's devices[]. */
static void read_step_rows(struct rd *r, const cJSON *st, struct summary *s)
{
	const cJSON *devs = cJSON_GetObjectItemCaseSensitive(r->root, "devices");
	uint32_t n_devices = cJSON_IsArray(devs) ? count(devs) : 0, i = 0;
	const cJSON *all = arr(r, st, "all"), *it;

	s->steps = pg_xcalloc(count(all) + 1, sizeof(*s->steps));
	cJSON_ArrayForEach (it, all) {
		struct sum_step *x = &s->steps[i++];
		x->step = I64(r, it, "step", 0);
		x->us = num(r, it, "us", -1);
		x->span_us = num(r, it, "span_us", -1);
		x->host_us = num(r, it, "host_us", -1);
		const cJSON *sd = cJSON_GetObjectItemCaseSensitive(it, "steady");
		x->steady = cJSON_IsTrue(sd);
		x->device_us = pg_xmalloc((n_devices + 1) * sizeof(double));
		const cJSON *du = arr(r, it, "device_us"), *d;
		uint32_t k = 0;
		if (count(du) != n_devices)
			fail(r, "steps.all[].device_us", "does not have one value per device");
		cJSON_ArrayForEach (d, du) {
			if (k < n_devices)
				x->device_us[k] = cJSON_IsNumber(d) ? d->valuedouble : -1;
			k++;
		}
		for (; k < n_devices; k++)
			x->device_us[k] = -1;
	}
	s->n_steps = i;
}

static void read_labels(struct rd *r, const cJSON *id, struct summary *s)
{
	const cJSON *labels = obj(r, id, "labels", 0), *it;

	cJSON_ArrayForEach (it, labels) {
		if (!cJSON_IsString(it)) {
			fail(r, "identity.labels", "holds a value that is not a string");
			break;
		}
		size_t n = strlen(it->string) + strlen(it->valuestring) + 2;
		char *kv = pg_xmalloc(n);
		snprintf(kv, n, "%s=%s", it->string, it->valuestring);
		s->labels = pg_xrealloc(s->labels, (s->n_labels + 1) * sizeof(char *));
		s->labels[s->n_labels++] = kv;
	}
}

static void read_examples(struct rd *r, const cJSON *it, struct sum_op *o)
{
	const cJSON *ex = arr(r, it, "examples"), *e;
	int k = 0;

	cJSON_ArrayForEach (e, ex)
		if (k < 3 && cJSON_IsString(e))
			o->examples[k++] = pg_xstrdup(e->valuestring);
}

/* Through summary_add_warning, which holds messages as summarize does. */
static void read_warnings(struct rd *r, const cJSON *q, struct summary *s)
{
	const cJSON *warnings = arr(r, q, "warnings"), *w;

	cJSON_ArrayForEach (w, warnings) {
		char *code = str(r, w, "code", 1), *msg = str(r, w, "message", 0);
		if (code)
			summary_add_warning(s, code, "%s", msg ? msg : "");
		free(code);
		free(msg);
	}
}

static void read_custom(struct rd *r, const struct sum_field *f, const cJSON *o, void *base)
{
	switch (f->custom) {
	case SUM_C_STEP_ROWS: read_step_rows(r, o, base); break;
	case SUM_C_LABELS: read_labels(r, o, base); break;
	case SUM_C_EXAMPLES: read_examples(r, o, base); break;
	case SUM_C_WARNINGS: read_warnings(r, o, base); break;
	default: break;
	}
}

/* A sized total: null or absent is "size not known" (the flag at aux). */
static double read_double(struct rd *r, const struct sum_field *f, const cJSON *o, void *base)
{
	double v = num(r, o, f->key, f->def);

	if (f->fmt != SUM_W_SIZED)
		return v;
	*(int *)(void *)((char *)base + f->aux) = v >= 0;
	return v >= 0 ? v : 0;
}

static void read_fields(struct rd *r, const struct sum_shape *sh, const cJSON *o, void *base);

static void read_list(struct rd *r, const struct sum_field *f, const cJSON *o, void *base)
{
	const cJSON *a = arr(r, o, f->key), *it;
	size_t size = f->sub->size;
	char *v = pg_xcalloc(count(a) + 1, size);
	uint32_t i = 0;

	*(char **)(void *)((char *)base + f->off) = v;
	cJSON_ArrayForEach (it, a)
		read_fields(r, f->sub, it, v + size * i++);
	*(uint32_t *)(void *)((char *)base + f->n_off) = i;
}

static void read_field(struct rd *r, const struct sum_field *f, const cJSON *o, void *base)
{
	void *at = (char *)base + f->off;
	const cJSON *sub;

	switch (f->type) {
	case SUM_STR: *(char **)at = str(r, o, f->key, f->flags & SUM_REQUIRED); break;
	case SUM_F64: *(double *)at = read_double(r, f, o, base); break;
	case SUM_U32: *(uint32_t *)at = U32(r, o, f->key, f->def); break;
	case SUM_I32: *(int32_t *)at = I32(r, o, f->key, f->def); break;
	case SUM_I64: *(int64_t *)at = I64(r, o, f->key, f->def); break;
	case SUM_U64: *(uint64_t *)at = U64(r, o, f->key, f->def); break;
	case SUM_FLAT: read_fields(r, f->sub, o, at); break;
	case SUM_OBJ:
		sub = obj(r, o, f->key, f->flags & SUM_REQUIRED);
		if (sub)
			read_fields(r, f->sub, sub, at);
		break;
	case SUM_LIST:
		if (f->custom)
			read_custom(r, f, o, base);
		else
			read_list(r, f, o, base);
		break;
	case SUM_CUSTOM: read_custom(r, f, o, base); break;
	default: break;
	}
}

static void read_fields(struct rd *r, const struct sum_shape *sh, const cJSON *o, void *base)
{
	for (uint32_t i = 0; i < sh->n; i++)
		read_field(r, &sh->f[i], o, base);
}

int summary_read_json(const char *path, struct summary *s)
{
	struct pg_buf text = PG_BUF_INIT;
	int rc;

	summary_init(s);
	rc = pg_read_small(path, MAX_SUMMARY_BYTES, 0, &text);
	if (rc == PG_ELIMIT)
		pg_error_set(PG_ELIMIT, "cannot read summary '%s': larger than %u MiB", path,
			     MAX_SUMMARY_BYTES >> 20);
	if (rc) {
		pg_buf_release(&text);
		return PG_EIO;
	}
	rc = summary_parse_json(text.ptr ? text.ptr : "", text.len, path, s);
	pg_buf_release(&text);
	return rc;
}

int summary_parse_json(const char *text, size_t len, const char *path, struct summary *s)
{
	struct rd r = {path, NULL, 0};
	cJSON *root;

	summary_init(s);
	root = cJSON_ParseWithLength(text, len);
	if (!root) {
		const char *at = cJSON_GetErrorPtr();
		pg_error_set(PG_EFORMAT, "cannot read summary '%s': not JSON (at byte %llu)", path,
			     (unsigned long long)(at && at >= text ? at - text : 0));
		return PG_EFORMAT;
	}
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	const cJSON *marin = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
	if (cJSON_IsObject(root) && !schema && cJSON_IsString(marin) &&
	    strcmp(marin->valuestring, "profile_summary.v1") == 0) {
		int rc = summary_from_marin(path, root, s);
		cJSON_Delete(root);
		if (rc)
			summary_release(s);
		return rc;
	}
	if (!cJSON_IsObject(root) || !cJSON_IsString(schema)) {
		pg_error_set(PG_EFORMAT,
			     "cannot read summary '%s': not a profgate summary (no schema)", path);
		cJSON_Delete(root);
		return PG_EFORMAT;
	}
	if (strcmp(schema->valuestring, SUMMARY_SCHEMA) != 0) {
		pg_error_set(PG_EUNSUPP, "cannot read summary '%s': schema '%.60s' is not %s", path,
			     schema->valuestring, SUMMARY_SCHEMA);
		cJSON_Delete(root);
		return PG_EUNSUPP;
	}
	r.root = root;
	read_fields(&r, &summary_root, root, s);
	cJSON_Delete(root);
	if (r.bad) {
		summary_release(s);
		return PG_EFORMAT;
	}
	return 0;
}
