/*
 * Merging summaries of the hosts or ranks of one capture (profgate merge):
 * files and devices are concatenated, steps are joined by step number, exact
 * totals are added, and summary_finalize derives the rest — the same code
 * path as summarize, so merging per-host summaries equals summarizing all
 * files at once whenever the hosts agree on the warm-up. Like summarize, it
 * refuses inputs that are not one capture: another basis or step source
 * always, another device model or framework unless allowed.
 */
#include "summary.h"

#include <stdlib.h>
#include <string.h>

static const char *const derived_codes[] = {"no-device-activity", "no-steps",	   "steps-missing",
					    "steps-cut",	  "ranks-missing", "warmup-differs",
					    "not-one-job"};

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

/* The first input's peak dtype, and a peak some input's --peak-tflops gave
 * (the first such); summary_finalize looks any other up in the table again. */
static void merge_peak(struct sum_rate *out, const struct sum_rate *in)
{
	int given = in->peak_source && strcmp(in->peak_source, SUMMARY_PEAK_GIVEN) == 0;

	if (!out->peak_dtype && in->peak_dtype)
		out->peak_dtype = pg_xstrdup(in->peak_dtype);
	if (!given || (out->peak_source && strcmp(out->peak_source, SUMMARY_PEAK_GIVEN) == 0))
		return;
	free(out->peak_source);
	out->peak_source = pg_xstrdup(SUMMARY_PEAK_GIVEN);
	out->peak_tflops_per_device = in->peak_tflops_per_device;
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
		qsort(ids, m, sizeof(int64_t), pg_cmp_i64);
	uint32_t u = 0;
	for (uint32_t i = 0; i < m; i++)
		if (u == 0 || ids[u - 1] != ids[i])
			ids[u++] = ids[i];
	out->steps = pg_xcalloc(u + 1, sizeof(*out->steps));
	out->n_steps = u;
	for (uint32_t k = 0; k < u; k++) {
		struct sum_step *st = &out->steps[k];
		st->step = ids[k];
		st->us = st->span_us = st->host_us = -1;
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
			if (src && src->span_us > st->span_us)
				st->span_us = src->span_us;
			d0 += in[i].n_devices;
		}
		/* host steps: the step is its longest marker, as summarize makes it */
		if (summary_host_basis(&in[0]))
			st->us = st->span_us = st->host_us;
	}
	free(ids);
}

#define AT(base, off, T)  ((T *)(void *)((char *)(base) + (off)))
#define CAT(base, off, T) ((const T *)(const void *)((const char *)(base) + (off)))

/* ops' examples: the first three distinct raw names. */
static void merge_examples(struct sum_op *x, const struct sum_op *o)
{
	for (int e = 0; e < 3 && o->examples[e]; e++) {
		int slot = -1;
		for (int q = 0; q < 3; q++) {
			if (x->examples[q] && strcmp(x->examples[q], o->examples[e]) == 0)
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

/* The first input's value, when dst was made for src's record. */
static void take_first(const struct sum_field *f, void *dst, const void *src)
{
	if (f->type == SUM_STR)
		*AT(dst, f->off, char *) = dup_or_null(*CAT(src, f->off, char *));
	else if (f->type == SUM_U32)
		*AT(dst, f->off, uint32_t) = *CAT(src, f->off, uint32_t);
}

static void add_up(const struct sum_field *f, void *dst, const void *src)
{
	if (f->type == SUM_U32) {
		*AT(dst, f->off, uint32_t) += *CAT(src, f->off, uint32_t);
		return;
	}
	*AT(dst, f->off, double) += *CAT(src, f->off, double);
	if (f->fmt == SUM_W_SIZED)
		*AT(dst, f->aux, int) |= *CAT(src, f->aux, int);
}

static void take_max(const struct sum_field *f, void *dst, const void *src)
{
	if (f->type == SUM_F64 && *CAT(src, f->off, double) > *CAT(dst, f->off, double))
		*AT(dst, f->off, double) = *CAT(src, f->off, double);
	else if (f->type == SUM_U32 && *CAT(src, f->off, uint32_t) > *CAT(dst, f->off, uint32_t))
		*AT(dst, f->off, uint32_t) = *CAT(src, f->off, uint32_t);
}

/* As summarize: the last value other than the record's key itself. */
static void take_last_not_key(const struct sum_field *f, const struct sum_field *key, void *dst,
			      const void *src)
{
	const char *v = *CAT(src, f->off, char *);
	char **d = AT(dst, f->off, char *);

	if (v && strcmp(v, *CAT(src, key->off, char *)) != 0) {
		free(*d);
		*d = pg_xstrdup(v);
	}
}

/* src's fields into dst by their merge rules; created: dst was just made. */
static void merge_record(const struct sum_shape *sh, void *dst, const void *src, int created)
{
	const struct sum_field *key = summary_shape_key(sh);

	for (uint32_t i = 0; i < sh->n; i++) {
		const struct sum_field *f = &sh->f[i];
		switch (f->merge) {
		case SUM_M_KEY:
		case SUM_M_FIRST:
			if (created)
				take_first(f, dst, src);
			break;
		case SUM_M_SUM: add_up(f, dst, src); break;
		case SUM_M_MAX: take_max(f, dst, src); break;
		case SUM_M_LAST_NOT_KEY:
			if (created)
				take_first(f, dst, src);
			take_last_not_key(f, key, dst, src);
			break;
		case SUM_M_UNION: merge_examples(dst, src); break;
		default: break;
		}
	}
}

/* Find-or-add by key. Linear is fine: lists are capped (ops at 5,001) and
 * merge runs once. A key index would matter only for thousands of inputs. */
static void merge_list(const struct sum_field *lf, size_t at, struct summary *out,
		       const struct summary *in, uint32_t n)
{
	const struct sum_shape *sh = lf->sub;
	const struct sum_field *key = summary_shape_key(sh);
	char **v = AT(out, at + lf->off, char *);
	uint32_t *m = AT(out, at + lf->n_off, uint32_t), cap = 0;

	for (uint32_t i = 0; i < n; i++) {
		const char *rec = *CAT(&in[i], at + lf->off, char *);
		uint32_t count = *CAT(&in[i], at + lf->n_off, uint32_t);
		for (uint32_t j = 0; j < count; j++, rec += sh->size) {
			const char *name = *CAT(rec, key->off, char *);
			uint32_t k = 0;
			while (k < *m &&
			       strcmp(*CAT(*v + (size_t)k * sh->size, key->off, char *), name) != 0)
				k++;
			int created = k == *m;
			if (created) {
				if (*m == cap) {
					cap = cap ? 2 * cap : 64;
					*v = pg_xrealloc(*v, cap * sh->size);
				}
				memset(*v + (size_t)k * sh->size, 0, sh->size);
				(*m)++;
			}
			merge_record(sh, *v + (size_t)k * sh->size, rec, created);
		}
	}
}

/* The lists whose records have a key, and the exact totals outside lists, in
 * the object at offset at of struct summary (shape sh; the root's objects
 * hold fields of struct summary itself) and the objects inside it. */
static void merge_shape(const struct sum_shape *sh, size_t at, int root, struct summary *out,
			const struct summary *in, uint32_t n)
{
	for (uint32_t i = 0; i < sh->n; i++) {
		const struct sum_field *f = &sh->f[i];
		if (f->type == SUM_LIST && summary_shape_key(f->sub))
			merge_list(f, at, out, in, n);
		else if (f->type == SUM_OBJ)
			merge_shape(f->sub, at + f->off, 0, out, in, n);
	}
	if (root)
		return;
	/* an object of its own (host) takes its first-input fields from the
	 * first input; one spread over struct summary's own fields (at 0) has
	 * them set by summary_merge_named */
	for (uint32_t k = 0; k < n; k++)
		merge_record(sh, (char *)out + at, (const char *)&in[k] + at, k == 0 && at != 0);
}

static void merge_lists(struct summary *out, const struct summary *in, uint32_t n)
{
	merge_shape(&summary_root, 0, 1, out, in, n);
}

/* Inputs of different device models or frameworks, unless allowed; a side
 * that does not say is no evidence. */
static int check_alike(const struct summary *in, uint32_t n, const char *const *names)
{
	for (uint32_t i = 1; i < n; i++) {
		const char *a = in[0].device_kind, *b = in[i].device_kind;
		if (a && b && strcmp(a, b) != 0)
			return pg_error_set(
			    PG_EUSAGE,
			    "merge: '%s' has device_kind '%s' but '%s' has '%s': not "
			    "one capture (--allow-mixed joins them anyway)",
			    names[0], a, names[i], b);
		a = in[0].framework;
		b = in[i].framework;
		if (a && b && strcmp(a, b) != 0)
			return pg_error_set(PG_EUSAGE,
					    "merge: '%s' has framework '%s' but '%s' has '%s': not "
					    "one capture (--allow-mixed joins them anyway)",
					    names[0], a, names[i], b);
	}
	return 0;
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
			const char *const *names, int allow_mixed)
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
	if (check_compatible(in, n, names) || (!allow_mixed && check_alike(in, n, names)))
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
		merge_peak(&out->rate, &s->rate);
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
	out->basis_steady_steps = steady;
	summary_finalize(out);
	return 0;
}

int summary_merge(struct summary *out, const struct summary *in, uint32_t n)
{
	const char **names = pg_xcalloc(n + 1, sizeof(char *));
	for (uint32_t i = 0; i < n; i++)
		names[i] = in[i].n_files ? in[i].files[0].path : "(summary)";
	int rc = summary_merge_named(out, in, n, names, 0);
	free(names);
	return rc;
}
