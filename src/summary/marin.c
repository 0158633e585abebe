/*
 * Reading marin's profile_summary.v1 (the Python tool profgate replaces) as a
 * summary, for interoperability: its numbers are mapped onto profgate's fields
 * and its basis is recorded as "marin.profile_summary.v1/<duration_basis>", so
 * the gate never compares it silently against profgate's own basis.
 *
 * Mapping (docs/summary.md "marin's profile_summary.v1"): marin stores no
 * units (µs for its inputs); per-step numbers are its capture totals divided by
 * its steady step count (at least 1); its five-bucket breakdown maps compute to
 * compute, communication to exposed communication (marin cannot split exposed
 * from overlapped), stall to idle, and host+other to exposed memory copy is not
 * claimed — they stay out of the shares; step lists are not stored by marin, so
 * only the steady statistics exist.
 */
#include "summary.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double num(const cJSON *o, const char *k, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : def;
}

/* A count: marin's numbers are taken as they come, clamped into the field's
 * range (fractions dropped), so that no value makes the conversion undefined;
 * 64-bit counts stop at 2^53, what the summary's JSON holds exactly (a larger
 * one would not read back). */
static uint32_t count_u32(const cJSON *o, const char *k)
{
	double v = num(o, k, 0);
	return v < 1 ? 0 : v >= 4294967295.0 ? UINT32_MAX : (uint32_t)v;
}

static uint64_t count_u64(const cJSON *o, const char *k)
{
	double v = num(o, k, 0);
	return v < 1 ? 0 : v >= 9007199254740992.0 ? (uint64_t)1 << 53 : (uint64_t)v;
}

static char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? pg_xstrdup(v->valuestring) : NULL;
}

static uint32_t size_of(const cJSON *a)
{
	return cJSON_IsArray(a) ? (uint32_t)cJSON_GetArraySize(a) : 0;
}

/* root[key] when it is an array, else NULL: lists are sized by size_of(), and
 * cJSON_ArrayForEach walks an object's members too. */
static const cJSON *array(const cJSON *root, const char *key)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
	return cJSON_IsArray(a) ? a : NULL;
}

static const char *marin_family(const char *f)
{
	/* marin's semantic families to profgate's where they mean the same */
	if (!f)
		return "other";
	if (strncmp(f, "attention", 9) == 0)
		return "attention-fwd";
	if (strncmp(f, "optimizer", 9) == 0)
		return "optimizer";
	if (strcmp(f, "loss_xent") == 0)
		return "loss";
	if (strcmp(f, "norm_gating") == 0)
		return "norm";
	if (strcmp(f, "collective") == 0)
		return "collective-other";
	if (strcmp(f, "fusion") == 0)
		return "fusion";
	if (strcmp(f, "dense_mlp") == 0)
		return "matmul";
	return "other";
}

int summary_from_marin(const char *path, const cJSON *root, struct summary *s)
{
	const cJSON *it, *st = cJSON_GetObjectItemCaseSensitive(root, "step_time");
	const cJSON *steady =
	    st ? cJSON_GetObjectItemCaseSensitive(st, "steady_state_steps") : NULL;
	const cJSON *bd = cJSON_GetObjectItemCaseSensitive(root, "time_breakdown");
	const cJSON *ov = cJSON_GetObjectItemCaseSensitive(root, "trace_overview");
	const cJSON *rm = cJSON_GetObjectItemCaseSensitive(root, "run_metadata");
	const cJSON *pv = cJSON_GetObjectItemCaseSensitive(root, "trace_provenance");
	char basis[160];

	summary_init(s);
	if (!cJSON_IsObject(st) || !cJSON_IsObject(bd))
		return pg_error_set(
		    PG_EFORMAT,
		    "cannot read summary '%s': profile_summary.v1 without step_time or "
		    "time_breakdown",
		    path);
	snprintf(basis, sizeof(basis), "marin.profile_summary.v1/%.100s",
		 cJSON_IsString(cJSON_GetObjectItemCaseSensitive(bd, "duration_basis"))
		     ? cJSON_GetObjectItemCaseSensitive(bd, "duration_basis")->valuestring
		     : "unknown");
	s->basis = pg_xstrdup(basis);
	s->profgate_version = pg_xstrdup("marin");
	s->steps_source = pg_xstrdup("marin");
	s->step_source = pg_xstrdup("marin");
	s->warmup_requested = -1;
	s->warmup = count_u32(st, "warmup_steps_ignored");
	s->warmup_reason = pg_xstrdup("marin: steps numbered below warmup_steps are excluded");
	s->files = pg_xcalloc(1, sizeof(*s->files));
	s->n_files = 1;
	s->files[0].path = str(root, "source_path");
	if (!s->files[0].path)
		s->files[0].path = pg_xstrdup(path);
	s->files[0].sha256 = pv ? str(pv, "trace_sha256") : NULL;
	s->files[0].format = str(root, "source_format");
	s->files[0].dialect = pg_xstrdup("marin");
	s->files[0].rank = -1;
	s->files[0].events = ov ? count_u64(ov, "num_events_total") : 0;
	if (rm) {
		s->device_kind = str(rm, "hardware_type");
		s->device_count = count_u32(rm, "num_devices");
		s->host_count = count_u32(rm, "num_hosts");
		const char *keys[] = {"run_path", "run_id", "git_sha", "config_hash"};
		for (size_t i = 0; i < PG_ARRAY_LEN(keys); i++) {
			char *v = str(rm, keys[i]);
			if (!v)
				continue;
			size_t n = strlen(keys[i]) + strlen(v) + 2;
			char *kv = pg_xmalloc(n);
			snprintf(kv, n, "%s=%s", keys[i], v);
			s->labels = pg_xrealloc(s->labels, (s->n_labels + 1) * sizeof(char *));
			s->labels[s->n_labels++] = kv;
			free(v);
		}
	}
	if (cJSON_IsObject(steady) && count_u32(steady, "count") > 0) {
		s->steady.count = count_u32(steady, "count");
		s->steady.mean_us = num(steady, "mean", 0);
		s->steady.median_us = num(steady, "median", 0);
		s->steady.p90_us = num(steady, "p90", 0);
		s->steady.min_us = num(steady, "min", 0);
		s->steady.max_us = num(steady, "max", 0);
	}
	double steps = s->steady.count ? s->steady.count : 1;
	double total = num(bd, "total_duration", 0);
	if (total > 0) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(bd, "compute");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(bd, "communication");
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(bd, "stall");
		s->mean.compute_share = c ? num(c, "share_of_total", 0) : 0;
		s->mean.exposed_comm_share = m ? num(m, "share_of_total", 0) : 0;
		s->mean.idle_share = x ? num(x, "share_of_total", 0) : 0;
		s->worst = s->mean;
	}
	const cJSON *ops = array(root, "hot_ops");
	s->ops = pg_xcalloc(size_of(ops) + 1, sizeof(*s->ops));
	cJSON_ArrayForEach (it, ops) {
		struct sum_op *o = &s->ops[s->n_ops++];
		o->name = str(it, "canonical_name");
		if (!o->name)
			o->name = str(it, "name");
		if (!o->name)
			o->name = pg_xstrdup("(unnamed)");
		o->examples[0] = str(it, "name");
		char *cat = str(it, "category");
		o->category = pg_xstrdup(cat && strcmp(cat, "communication") == 0 ? "communication"
										  : "compute");
		o->family = pg_xstrdup(cat && strcmp(cat, "communication") == 0 ? "collective-other"
										: "other");
		free(cat);
		o->count_per_step = num(it, "count", 0) / steps;
		o->self_us_per_step = num(it, "exclusive_duration", 0) / steps;
		o->total_us_per_step = num(it, "total_duration", 0) / steps;
	}
	const cJSON *fams = array(root, "semantic_families");
	s->families = pg_xcalloc(size_of(fams) + 1, sizeof(*s->families));
	cJSON_ArrayForEach (it, fams) {
		struct sum_family *f = &s->families[s->n_families++];
		char *fam = str(it, "family");
		f->family = pg_xstrdup(marin_family(fam));
		free(fam);
		f->category = pg_xstrdup(
		    strcmp(f->family, "collective-other") == 0 ? "communication" : "compute");
		f->count_per_step = num(it, "count", 0) / steps;
		f->us_per_step = num(it, "exclusive_duration", 0) / steps;
		f->share = num(it, "share_of_total", 0);
	}
	const cJSON *coll = array(root, "communication_ops");
	s->collectives = pg_xcalloc(size_of(coll) + 1, sizeof(*s->collectives));
	cJSON_ArrayForEach (it, coll) {
		struct sum_collective *c = &s->collectives[s->n_collectives++];
		c->kind = str(it, "collective");
		if (!c->kind)
			c->kind = pg_xstrdup("other");
		c->count_per_step = num(it, "count", 0) / steps;
		c->us_per_step = num(it, "total_duration", 0) / steps;
		c->bytes_per_step = c->algbw_gbps = c->busbw_gbps = -1;
	}
	const cJSON *gaps = array(root, "gap_before_ops");
	s->gaps = pg_xcalloc(size_of(gaps) + 1, sizeof(*s->gaps));
	cJSON_ArrayForEach (it, gaps) {
		struct sum_gap *g = &s->gaps[s->n_gaps++];
		g->op = str(it, "payload_op");
		if (!g->op)
			g->op = str(it, "name");
		if (!g->op)
			g->op = pg_xstrdup("(unnamed)");
		g->marker = str(it, "marker_op");
		g->count_per_step = num(it, "count", 0) / steps;
		g->us_per_step = num(it, "total_gap_duration", 0) / steps;
		g->max_us = num(it, "max_gap_duration", 0);
	}
	const cJSON *regs = array(root, "hierarchical_regions");
	s->regions = pg_xcalloc(size_of(regs) + 1, sizeof(*s->regions));
	cJSON_ArrayForEach (it, regs) {
		struct sum_region *r = &s->regions[s->n_regions++];
		char *p = str(it, "path");
		/* marin joins segments with "=>"; profgate with "/" */
		struct pg_buf b = PG_BUF_INIT;
		for (const char *q = p ? p : ""; *q; q++) {
			if (q[0] == '=' && q[1] == '>') {
				pg_buf_addc(&b, '/');
				q++;
			} else {
				pg_buf_addc(&b, *q);
			}
		}
		free(p);
		r->path = pg_buf_detach(&b, NULL);
		r->depth = count_u32(it, "depth");
		r->count_per_step = num(it, "count", 0) / steps;
		r->inclusive_us_per_step = num(it, "inclusive_duration", 0) / steps;
		r->exclusive_us_per_step = num(it, "exclusive_duration", 0) / steps;
	}
	if (ov) {
		const cJSON *w = array(ov, "quality_warnings");
		cJSON_ArrayForEach (it, w)
			if (cJSON_IsString(it))
				summary_add_warning(s, "marin", "%s", it->valuestring);
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ov, "suspected_truncation")))
			summary_add_warning(s, "event-cap", "marin suspected truncation");
	}
	summary_add_warning(s, "marin-basis",
			    "read from marin's profile_summary.v1 (basis %s): no per-device data, "
			    "totals over the capture divided by %g steady steps",
			    basis, steps);
	s->tflops_per_device = -1;
	return 0;
}
