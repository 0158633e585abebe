/*
 * Merging summaries of the hosts or ranks of one capture (profgate merge):
 * files and devices are concatenated, steps are joined by step number, exact
 * totals are added, and summary_finalize derives the rest — the same code
 * path as summarize, so merging per-host summaries equals summarizing all
 * files at once whenever the hosts agree on the warm-up.
 */
#include "summary.h"

#include <stdlib.h>
#include <string.h>

static const char *const derived_codes[] = {"no-device-activity", "no-steps", "steps-missing",
					    "ranks-missing", "warmup-differs"};

static int is_derived(const char *code)
{
	for (size_t i = 0; i < PG_ARRAY_LEN(derived_codes); i++)
		if (strcmp(code, derived_codes[i]) == 0)
			return 1;
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? pg_xstrdup(s) : NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void merge_steps(struct summary *out, const struct summary *in, uint32_t n)
{
	int64_t *ids = NULL;
	uint32_t m = 0;

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < in[i].n_steps; k++) {
			ids = pg_xrealloc(ids, (m + 1) * sizeof(int64_t));
			ids[m++] = in[i].steps[k].step;
		}
	if (m)
		qsort(ids, m, sizeof(int64_t), cmp_i64);
	uint32_t u = 0;
	for (uint32_t i = 0; i < m; i++)
		if (u == 0 || ids[u - 1] != ids[i])
			ids[u++] = ids[i];
	out->steps = pg_xcalloc(u + 1, sizeof(*out->steps));
	out->n_steps = u;
	for (uint32_t k = 0; k < u; k++) {
		struct sum_step *st = &out->steps[k];
		st->step = ids[k];
		st->host_us = -1;
		st->device_us = pg_xmalloc((out->n_devices + 1) * sizeof(double));
		uint32_t d0 = 0;
		for (uint32_t i = 0; i < n; i++) {
			const struct sum_step *src = NULL;
			for (uint32_t j = 0; j < in[i].n_steps; j++)
				if (in[i].steps[j].step == ids[k])
					src = &in[i].steps[j];
			for (uint32_t d = 0; d < in[i].n_devices; d++) {
				double v = src ? src->device_us[d] : -1;
				st->device_us[d0 + d] = v;
				if (v > st->us)
					st->us = v;
			}
			if (src && src->host_us > st->host_us)
				st->host_us = src->host_us;
			d0 += in[i].n_devices;
		}
	}
	free(ids);
}

/* Find-or-add by name in a small array; returns the index. Linear is fine:
 * lists are capped (ops at 5,001) and merge runs once. A name index would
 * matter only for thousands of inputs. */
#define FIND(arr, n, field, key, out)                                                              \
	do {                                                                                       \
		(out) = UINT32_MAX;                                                                \
		for (uint32_t q_ = 0; q_ < (n); q_++)                                              \
			if (strcmp((arr)[q_].field, (key)) == 0) {                                 \
				(out) = q_;                                                        \
				break;                                                             \
			}                                                                          \
	} while (0)

static void merge_lists(struct summary *out, const struct summary *in, uint32_t n)
{
	uint32_t cap_o = 0, cap_f = 0, cap_c = 0, cap_g = 0, cap_r = 0, k;

	for (uint32_t i = 0; i < n; i++) {
		const struct summary *s = &in[i];
		for (uint32_t j = 0; j < s->n_ops; j++) {
			const struct sum_op *o = &s->ops[j];
			FIND(out->ops, out->n_ops, name, o->name, k);
			if (k == UINT32_MAX) {
				if (out->n_ops == cap_o) {
					cap_o = cap_o ? 2 * cap_o : 64;
					out->ops = pg_xrealloc(out->ops, cap_o * sizeof(*out->ops));
				}
				k = out->n_ops++;
				memset(&out->ops[k], 0, sizeof(out->ops[k]));
				out->ops[k].name = pg_xstrdup(o->name);
				out->ops[k].family = dup_or_null(o->family);
				out->ops[k].category = dup_or_null(o->category);
			}
			struct sum_op *x = &out->ops[k];
			x->count_total += o->count_total;
			x->self_us_total += o->self_us_total;
			x->total_us_total += o->total_us_total;
			for (int e = 0; e < 3 && o->examples[e]; e++) {
				int slot = -1;
				for (int q = 0; q < 3; q++) {
					if (x->examples[q] &&
					    strcmp(x->examples[q], o->examples[e]) == 0)
						break;
					if (!x->examples[q]) {
						slot = q;
						break;
					}
				}
				if (slot >= 0)
					x->examples[slot] = pg_xstrdup(o->examples[e]);
			}
		}
		for (uint32_t j = 0; j < s->n_families; j++) {
			const struct sum_family *f = &s->families[j];
			FIND(out->families, out->n_families, family, f->family, k);
			if (k == UINT32_MAX) {
				if (out->n_families == cap_f) {
					cap_f = cap_f ? 2 * cap_f : 32;
					out->families = pg_xrealloc(out->families,
								    cap_f * sizeof(*out->families));
				}
				k = out->n_families++;
				memset(&out->families[k], 0, sizeof(out->families[k]));
				out->families[k].family = pg_xstrdup(f->family);
				out->families[k].category = dup_or_null(f->category);
			}
			out->families[k].count_total += f->count_total;
			out->families[k].us_total += f->us_total;
		}
		for (uint32_t j = 0; j < s->n_collectives; j++) {
			const struct sum_collective *c = &s->collectives[j];
			FIND(out->collectives, out->n_collectives, kind, c->kind, k);
			if (k == UINT32_MAX) {
				if (out->n_collectives == cap_c) {
					cap_c = cap_c ? 2 * cap_c : 16;
					out->collectives = pg_xrealloc(
					    out->collectives, cap_c * sizeof(*out->collectives));
				}
				k = out->n_collectives++;
				memset(&out->collectives[k], 0, sizeof(out->collectives[k]));
				out->collectives[k].kind = pg_xstrdup(c->kind);
			}
			struct sum_collective *x = &out->collectives[k];
			x->count_total += c->count_total;
			x->us_total += c->us_total;
			x->bytes_total += c->bytes_total;
			x->capture_count_total += c->capture_count_total;
			x->capture_us_total += c->capture_us_total;
			x->capture_bytes_total += c->capture_bytes_total;
			x->sized |= c->sized;
			x->capture_sized |= c->capture_sized;
			if (c->group_size > x->group_size)
				x->group_size = c->group_size;
		}
		for (uint32_t j = 0; j < s->n_gaps; j++) {
			const struct sum_gap *g = &s->gaps[j];
			FIND(out->gaps, out->n_gaps, op, g->op, k);
			if (k == UINT32_MAX) {
				if (out->n_gaps == cap_g) {
					cap_g = cap_g ? 2 * cap_g : 64;
					out->gaps =
					    pg_xrealloc(out->gaps, cap_g * sizeof(*out->gaps));
				}
				k = out->n_gaps++;
				memset(&out->gaps[k], 0, sizeof(out->gaps[k]));
				out->gaps[k].op = pg_xstrdup(g->op);
				out->gaps[k].marker = dup_or_null(g->marker);
			}
			struct sum_gap *x = &out->gaps[k];
			x->count_total += g->count_total;
			x->us_total += g->us_total;
			if (g->max_us > x->max_us)
				x->max_us = g->max_us;
			/* as summarize: the last marker other than the op itself */
			if (g->marker && strcmp(g->marker, g->op) != 0) {
				free(x->marker);
				x->marker = pg_xstrdup(g->marker);
			}
		}
		for (uint32_t j = 0; j < s->n_regions; j++) {
			const struct sum_region *r = &s->regions[j];
			FIND(out->regions, out->n_regions, path, r->path, k);
			if (k == UINT32_MAX) {
				if (out->n_regions == cap_r) {
					cap_r = cap_r ? 2 * cap_r : 64;
					out->regions = pg_xrealloc(out->regions,
								   cap_r * sizeof(*out->regions));
				}
				k = out->n_regions++;
				memset(&out->regions[k], 0, sizeof(out->regions[k]));
				out->regions[k].path = pg_xstrdup(r->path);
				out->regions[k].depth = r->depth;
			}
			out->regions[k].count_total += r->count_total;
			out->regions[k].inclusive_us_total += r->inclusive_us_total;
			out->regions[k].exclusive_us_total += r->exclusive_us_total;
		}
		out->flops_total += s->flops_total;
		out->has_flops |= s->has_flops;
	}
}

static int check_compatible(const struct summary *in, uint32_t n, const char *const *names)
{
	for (uint32_t i = 1; i < n; i++) {
		const char *a = in[0].basis ? in[0].basis : "", *b = in[i].basis ? in[i].basis : "";
		if (strcmp(a, b) != 0)
			return pg_error_set(
			    PG_EUSAGE,
			    "merge: '%s' has basis '%s' but '%s' has '%s': not one capture",
			    names[0], a, names[i], b);
		a = in[0].steps_source ? in[0].steps_source : "";
		b = in[i].steps_source ? in[i].steps_source : "";
		if (strcmp(a, b) != 0)
			return pg_error_set(
			    PG_EUSAGE,
			    "merge: '%s' has steps from '%s' but '%s' from '%s': not one "
			    "capture",
			    names[0], a, names[i], b);
	}
	return 0;
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The run identity survives a merge only when every input names the same one. */
static int same_run(const struct summary *in, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (!same_str(in[i].run.path, in[0].run.path) ||
		    !same_str(in[i].run.artifact, in[0].run.artifact))
			return 0;
	return 1;
}

int summary_merge_named(struct summary *out, const struct summary *in, uint32_t n,
			const char *const *names)
{
	summary_init(out);
	if (n == 0)
		return pg_error_set(PG_EUSAGE, "merge: no summaries given");
	for (uint32_t i = 0; i < n; i++)
		if (in[i].basis && strncmp(in[i].basis, "marin.", 6) == 0)
			return pg_error_set(
			    PG_EUSAGE,
			    "merge: '%s' is marin's profile_summary.v1, which has no "
			    "per-device data to merge; summarize the profiles instead",
			    names[i]);
	if (check_compatible(in, n, names))
		return PG_EUSAGE;
	out->profgate_version = dup_or_null(in[0].profgate_version);
	out->basis = dup_or_null(in[0].basis);
	out->steps_source = dup_or_null(in[0].steps_source);
	out->step_source = dup_or_null(in[0].step_source);
	if (same_run(in, n))
		summary_run_copy(&out->run, &in[0].run);
	uint32_t nf = 0, nd = 0;
	for (uint32_t i = 0; i < n; i++) {
		nf += in[i].n_files;
		nd += in[i].n_devices;
	}
	out->files = pg_xcalloc(nf + 1, sizeof(*out->files));
	out->devices = pg_xcalloc(nd + 1, sizeof(*out->devices));
	for (uint32_t i = 0; i < n; i++) {
		const struct summary *s = &in[i];
		uint32_t f0 = out->n_files;
		for (uint32_t k = 0; k < s->n_files; k++) {
			struct sum_file *f = &out->files[out->n_files++];
			*f = s->files[k];
			f->path = dup_or_null(f->path);
			f->sha256 = dup_or_null(f->sha256);
			f->format = dup_or_null(f->format);
			f->dialect = dup_or_null(f->dialect);
			f->host = dup_or_null(f->host);
		}
		for (uint32_t k = 0; k < s->n_devices; k++) {
			struct sum_device *d = &out->devices[out->n_devices++];
			*d = s->devices[k];
			d->id = NULL;
			d->kind = dup_or_null(d->kind);
			d->name = dup_or_null(d->name);
			d->host = dup_or_null(d->host);
			d->file += f0;
		}
		if (!out->framework && s->framework)
			out->framework = pg_xstrdup(s->framework);
		if (!out->framework_version && s->framework_version)
			out->framework_version = pg_xstrdup(s->framework_version);
		if (s->world_size > out->world_size)
			out->world_size = s->world_size;
		for (uint32_t k = 0; k < s->n_labels; k++) {
			const char *eq = strchr(s->labels[k], '=');
			size_t kl = eq ? (size_t)(eq - s->labels[k]) : strlen(s->labels[k]);
			int seen = 0;
			for (uint32_t q = 0; q < out->n_labels; q++)
				seen |= strncmp(out->labels[q], s->labels[k], kl) == 0 &&
					out->labels[q][kl] == '=';
			if (!seen) {
				out->labels =
				    pg_xrealloc(out->labels, (out->n_labels + 1) * sizeof(char *));
				out->labels[out->n_labels++] = pg_xstrdup(s->labels[k]);
			}
		}
		for (uint32_t k = 0; k < s->n_warnings; k++)
			if (!is_derived(s->warnings[k].code))
				summary_add_warning(out, s->warnings[k].code, "%s",
						    s->warnings[k].message);
	}
	uint32_t hosts = 0;
	for (uint32_t i = 0; i < out->n_files; i++) {
		int seen = 0;
		for (uint32_t k = 0; k < i && out->files[i].host; k++)
			seen |= out->files[k].host &&
				strcmp(out->files[k].host, out->files[i].host) == 0;
		hosts += out->files[i].host && !seen;
	}
	out->host_count = hosts ? hosts : (out->n_files ? 1 : 0);
	merge_steps(out, in, n);
	summary_choose_warmup(out, in[0].warmup_requested);
	uint32_t steady = 0;
	for (uint32_t k = 0; k < out->n_steps; k++)
		steady += out->steps[k].steady;
	int differs = 0;
	for (uint32_t i = 0; i < n; i++)
		differs |= in[i].warmup_requested != in[0].warmup_requested ||
			   in[i].basis_steady_steps != steady;
	if (differs)
		summary_add_warning(
		    out, "warmup-differs",
		    "the inputs chose their steady steps differently from the merged "
		    "step table; per-step numbers mix their windows (summarize the "
		    "files together, or pass the same --warmup everywhere)");
	merge_lists(out, in, n);
	out->basis_devices = out->n_devices;
	out->basis_steady_steps = steady;
	summary_finalize(out);
	return 0;
}

int summary_merge(struct summary *out, const struct summary *in, uint32_t n)
{
	const char **names = pg_xcalloc(n + 1, sizeof(char *));
	for (uint32_t i = 0; i < n; i++)
		names[i] = in[i].n_files ? in[i].files[0].path : "(summary)";
	int rc = summary_merge_named(out, in, n, names);
	free(names);
	return rc;
}
