/*
 * Reading a profgate.summary/1 file back into struct summary (for report,
 * merge and the gate). Summaries are small, so cJSON parses the whole
 * document; every field is checked for its type, and an error names the file
 * and the key. Unknown keys are ignored; an unknown schema is refused.
 */
#include "summary.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SUMMARY_BYTES (512u << 20)

struct rd {
	const char *path;
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

static void read_split(struct rd *r, const cJSON *o, struct sum_split *x)
{
	x->wall_us = num(r, o, "wall_us", 0);
	x->busy_us = num(r, o, "busy_us", 0);
	x->idle_us = num(r, o, "idle_us", 0);
	x->compute_us = num(r, o, "compute_us", 0);
	x->exposed_comm_us = num(r, o, "exposed_comm_us", 0);
	x->exposed_memcpy_us = num(r, o, "exposed_memcpy_us", 0);
	x->comm_us = num(r, o, "comm_us", 0);
	x->memcpy_us = num(r, o, "memcpy_us", 0);
	x->kernel_sum_us = num(r, o, "kernel_sum_us", 0);
}

static void read_view(struct rd *r, const cJSON *o, struct sum_breakdown_view *v)
{
	if (!o)
		return;
	v->compute_share = num(r, o, "compute_share", 0);
	v->exposed_comm_share = num(r, o, "exposed_comm_share", 0);
	v->exposed_memcpy_share = num(r, o, "exposed_memcpy_share", 0);
	v->idle_share = num(r, o, "idle_share", 0);
	v->comm_overlap_share = num(r, o, "comm_overlap_share", 0);
	v->kernel_sum_minus_wall_us_per_step = num(r, o, "kernel_sum_minus_wall_us_per_step", 0);
}

static void read_source_identity(struct rd *r, const cJSON *root, struct summary *s)
{
	const cJSON *src = obj(r, root, "source", 1), *id = obj(r, root, "identity", 1), *it;
	const cJSON *files = src ? arr(r, src, "files") : NULL;
	uint32_t i = 0;

	if (src)
		s->profgate_version = str(r, src, "profgate_version", 0);
	s->files = pg_xcalloc(count(files) + 1, sizeof(*s->files));
	cJSON_ArrayForEach (it, files) {
		struct sum_file *f = &s->files[i++];
		f->path = str(r, it, "path", 1);
		f->sha256 = str(r, it, "sha256", 0);
		f->format = str(r, it, "format", 0);
		f->dialect = str(r, it, "dialect", 0);
		f->host = str(r, it, "host", 0);
		f->rank = I32(r, it, "rank", -1);
		f->bytes = U64(r, it, "bytes", 0);
		f->events = U64(r, it, "events", 0);
	}
	s->n_files = i;
	if (!id)
		return;
	s->device_kind = str(r, id, "device_kind", 0);
	s->device_count = U32(r, id, "device_count", 0);
	s->host_count = U32(r, id, "host_count", 0);
	s->world_size = I32(r, id, "world_size", -1);
	s->framework = str(r, id, "framework", 0);
	s->framework_version = str(r, id, "framework_version", 0);
	s->steps_captured = U32(r, id, "steps_captured", 0);
	s->step_source = str(r, id, "step_source", 0);
	s->basis = str(r, id, "basis", 1);
	const cJSON *labels = obj(r, id, "labels", 0);
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
	const cJSON *run = obj(r, id, "run", 0);
	if (run) {
		s->run.path = str(r, run, "path", 0);
		s->run.id = str(r, run, "id", 0);
		s->run.name = str(r, run, "name", 0);
		s->run.artifact = str(r, run, "artifact", 0);
		s->run.git_sha = str(r, run, "git_sha", 0);
		s->run.config_hash = str(r, run, "config_hash", 0);
		s->run.device_kind = str(r, run, "device_kind", 0);
	}
}

static void read_steps(struct rd *r, const cJSON *root, struct summary *s, uint32_t n_devices)
{
	const cJSON *st = obj(r, root, "steps", 1), *it;
	uint32_t i = 0;

	if (!st)
		return;
	s->steps_source = str(r, st, "source", 1);
	s->warmup = U32(r, st, "warmup", 0);
	s->warmup_requested = I32(r, st, "warmup_requested", -1);
	s->warmup_reason = str(r, st, "warmup_reason", 0);
	const cJSON *all = arr(r, st, "all");
	s->steps = pg_xcalloc(count(all) + 1, sizeof(*s->steps));
	cJSON_ArrayForEach (it, all) {
		struct sum_step *x = &s->steps[i++];
		x->step = I64(r, it, "step", 0);
		x->us = num(r, it, "us", 0);
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
	const cJSON *sy = obj(r, st, "steady", 1);
	if (sy) {
		s->steady.count = U32(r, sy, "count", 0);
		s->steady.mean_us = num(r, sy, "mean_us", 0);
		s->steady.median_us = num(r, sy, "median_us", 0);
		s->steady.p90_us = num(r, sy, "p90_us", 0);
		s->steady.min_us = num(r, sy, "min_us", 0);
		s->steady.max_us = num(r, sy, "max_us", 0);
		s->steady.mad_us = num(r, sy, "mad_us", 0);
	}
	const cJSON *cl = arr(r, st, "classes");
	s->classes = pg_xcalloc(count(cl) + 1, sizeof(*s->classes));
	i = 0;
	cJSON_ArrayForEach (it, cl) {
		struct sum_class *c = &s->classes[i++];
		c->name = str(r, it, "name", 1);
		c->count = U32(r, it, "count", 0);
		c->median_us = num(r, it, "median_us", 0);
		c->representative_step = I64(r, it, "representative_step", 0);
		c->periodicity = I32(r, it, "periodicity", 0);
	}
	s->n_classes = i;
	s->skew_us = num(r, st, "skew_us", 0);
	s->slowest_device = str(r, st, "slowest_device", 0);
}

static void read_devices(struct rd *r, const cJSON *devs, struct summary *s)
{
	const cJSON *it;
	uint32_t i = 0;

	s->devices = pg_xcalloc(count(devs) + 1, sizeof(*s->devices));
	cJSON_ArrayForEach (it, devs) {
		struct sum_device *d = &s->devices[i++];
		d->id = str(r, it, "id", 1);
		d->file = U32(r, it, "file", 0);
		d->kind = str(r, it, "kind", 1);
		d->name = str(r, it, "name", 0);
		d->host = str(r, it, "host", 0);
		d->index = I32(r, it, "index", -1);
		d->rank = I32(r, it, "rank", -1);
		read_split(r, it, &d->all);
		const cJSON *sd = obj(r, it, "steady", 1);
		if (sd)
			read_split(r, sd, &d->steady);
	}
	s->n_devices = i;
}

static void read_lists(struct rd *r, const cJSON *root, struct summary *s)
{
	const cJSON *a, *it;
	uint32_t i;

	a = arr(r, root, "families");
	s->families = pg_xcalloc(count(a) + 1, sizeof(*s->families));
	i = 0;
	cJSON_ArrayForEach (it, a) {
		struct sum_family *f = &s->families[i++];
		f->family = str(r, it, "family", 1);
		f->category = str(r, it, "category", 0);
		f->count_per_step = num(r, it, "count_per_step", 0);
		f->us_per_step = num(r, it, "us_per_step", 0);
		f->share = num(r, it, "share", 0);
		f->count_total = num(r, it, "count_total", 0);
		f->us_total = num(r, it, "us_total", 0);
	}
	s->n_families = i;

	a = arr(r, root, "ops");
	s->ops = pg_xcalloc(count(a) + 1, sizeof(*s->ops));
	i = 0;
	cJSON_ArrayForEach (it, a) {
		struct sum_op *o = &s->ops[i++];
		o->name = str(r, it, "name", 1);
		o->family = str(r, it, "family", 0);
		o->category = str(r, it, "category", 0);
		o->count_per_step = num(r, it, "count_per_step", 0);
		o->self_us_per_step = num(r, it, "self_us_per_step", 0);
		o->total_us_per_step = num(r, it, "total_us_per_step", 0);
		o->count_total = num(r, it, "count_total", 0);
		o->self_us_total = num(r, it, "self_us_total", 0);
		o->total_us_total = num(r, it, "total_us_total", 0);
		const cJSON *ex = arr(r, it, "examples"), *e;
		int k = 0;
		cJSON_ArrayForEach (e, ex)
			if (k < 3 && cJSON_IsString(e))
				o->examples[k++] = pg_xstrdup(e->valuestring);
	}
	s->n_ops = i;

	a = arr(r, root, "collectives");
	s->collectives = pg_xcalloc(count(a) + 1, sizeof(*s->collectives));
	i = 0;
	cJSON_ArrayForEach (it, a) {
		struct sum_collective *c = &s->collectives[i++];
		c->kind = str(r, it, "kind", 1);
		c->count_per_step = num(r, it, "count_per_step", 0);
		c->us_per_step = num(r, it, "us_per_step", 0);
		c->bytes_per_step = num(r, it, "bytes_per_step", -1);
		c->algbw_gbps = num(r, it, "algbw_gbps", -1);
		c->busbw_gbps = num(r, it, "busbw_gbps", -1);
		c->capture_count_per_device = num(r, it, "capture_count_per_device", 0);
		c->capture_us_per_device = num(r, it, "capture_us_per_device", 0);
		c->count_total = num(r, it, "count_total", 0);
		c->us_total = num(r, it, "us_total", 0);
		c->bytes_total = num(r, it, "bytes_total", -1);
		c->sized = c->bytes_total >= 0;
		if (!c->sized)
			c->bytes_total = 0;
		c->group_size = U32(r, it, "group_size", 0);
		c->capture_count_total = num(r, it, "capture_count_total", 0);
		c->capture_us_total = num(r, it, "capture_us_total", 0);
		c->capture_bytes_total = num(r, it, "capture_bytes_total", -1);
		c->capture_sized = c->capture_bytes_total >= 0;
		if (!c->capture_sized)
			c->capture_bytes_total = 0;
	}
	s->n_collectives = i;

	a = arr(r, root, "gaps");
	s->gaps = pg_xcalloc(count(a) + 1, sizeof(*s->gaps));
	i = 0;
	cJSON_ArrayForEach (it, a) {
		struct sum_gap *g = &s->gaps[i++];
		g->op = str(r, it, "op", 1);
		g->marker = str(r, it, "marker", 0);
		g->count_per_step = num(r, it, "count_per_step", 0);
		g->us_per_step = num(r, it, "us_per_step", 0);
		g->max_us = num(r, it, "max_us", 0);
		g->count_total = num(r, it, "count_total", 0);
		g->us_total = num(r, it, "us_total", 0);
	}
	s->n_gaps = i;

	a = arr(r, root, "regions");
	s->regions = pg_xcalloc(count(a) + 1, sizeof(*s->regions));
	i = 0;
	cJSON_ArrayForEach (it, a) {
		struct sum_region *g = &s->regions[i++];
		g->path = str(r, it, "path", 1);
		g->depth = U32(r, it, "depth", 0);
		g->count_per_step = num(r, it, "count_per_step", 0);
		g->inclusive_us_per_step = num(r, it, "inclusive_us_per_step", 0);
		g->exclusive_us_per_step = num(r, it, "exclusive_us_per_step", 0);
		g->count_total = num(r, it, "count_total", 0);
		g->inclusive_us_total = num(r, it, "inclusive_us_total", 0);
		g->exclusive_us_total = num(r, it, "exclusive_us_total", 0);
	}
	s->n_regions = i;

	const cJSON *tp = obj(r, root, "throughput", 0);
	s->tflops_per_device = tp ? num(r, tp, "tflops_per_device", -1) : -1;
	s->flops_total = tp ? num(r, tp, "flops_total", -1) : -1;
	s->has_flops = s->flops_total >= 0;
	if (!s->has_flops)
		s->flops_total = 0;
	const cJSON *basis = obj(r, root, "per_step_basis", 1);
	if (basis) {
		s->basis_devices = U32(r, basis, "devices", 0);
		s->basis_steady_steps = U32(r, basis, "steady_steps", 0);
	}

	a = arr(r, root, "candidates");
	s->candidates = pg_xcalloc(count(a) + 1, sizeof(*s->candidates));
	i = 0;
	cJSON_ArrayForEach (it, a) {
		struct sum_candidate *c = &s->candidates[i++];
		c->id = str(r, it, "id", 1);
		c->title = str(r, it, "title", 0);
		c->evidence = str(r, it, "evidence", 0);
	}
	s->n_candidates = i;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf;

	if (!f) {
		pg_error_set(PG_EIO, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
		fclose(f);
		pg_error_set(PG_EIO, "cannot read '%s': is a directory", path);
		return NULL;
	}
	if ((uint64_t)st.st_size > MAX_SUMMARY_BYTES) {
		fclose(f);
		pg_error_set(PG_ELIMIT, "cannot read summary '%s': larger than %u MiB", path,
			     MAX_SUMMARY_BYTES >> 20);
		return NULL;
	}
	buf = pg_xmalloc((size_t)st.st_size + 1);
	*len = fread(buf, 1, (size_t)st.st_size, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

int summary_read_json(const char *path, struct summary *s)
{
	size_t len = 0;
	char *text;
	int rc;

	summary_init(s);
	text = slurp(path, &len);
	if (!text)
		return PG_EIO;
	rc = summary_parse_json(text, len, path, s);
	free(text);
	return rc;
}

int summary_parse_json(const char *text, size_t len, const char *path, struct summary *s)
{
	struct rd r = {path, 0};
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
			summary_free(s);
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
	read_source_identity(&r, root, s);
	const cJSON *q = obj(&r, root, "quality", 0), *w, *devs = arr(&r, root, "devices");
	const cJSON *warnings = q ? arr(&r, q, "warnings") : NULL;
	cJSON_ArrayForEach (w, warnings) {
		char *code = str(&r, w, "code", 1), *msg = str(&r, w, "message", 0);
		if (code)
			summary_add_warning(s, code, "%s", msg ? msg : "");
		free(code);
		free(msg);
	}
	read_devices(&r, devs, s);
	read_steps(&r, root, s, s->n_devices);
	const cJSON *bd = obj(&r, root, "breakdown", 0);
	if (bd) {
		read_view(&r, obj(&r, bd, "mean", 0), &s->mean);
		read_view(&r, obj(&r, bd, "worst", 0), &s->worst);
		s->worst_device = str(&r, bd, "worst_device", 0);
	}
	read_lists(&r, root, s);
	cJSON_Delete(root);
	if (r.bad) {
		summary_free(s);
		return PG_EFORMAT;
	}
	return 0;
}
