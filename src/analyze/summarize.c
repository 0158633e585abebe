/*
 * trace model -> summary: devices and their activity, steps, the exposed-time
 * breakdown, ops, families, collectives, gaps, regions, quality, identity and
 * candidates. Pure: reads the model, writes the summary, no I/O. This file
 * runs the stages in order and writes identity and quality; each stage lives
 * in its own file (internal.h lists them).
 *
 * How it works: one pass over the events files each one the summary needs by
 * purpose (filing.c): per accelerator device its activity (kernels, copies
 * and sets on device streams; XLA Ops on TPU) and its GPU annotations, and
 * the step sources (Steps lines, host markers and the launches that carry
 * correlations, XLA Modules). Each device's activity then becomes compact
 * records with a category and family from the rules table (cached per name,
 * ops.c), ordered by track (devices.c). Nesting per track gives each record
 * its self time and a leaf flag; the time split takes leaves whole and an
 * enclosing record's own time apart from its children's, so a "while" op
 * never hides the all-reduce inside it and a kernel nested in another counts
 * once. Steps come from the best
 * source the profile has and give every device a list of step windows; the
 * steady windows bound the per-step numbers (steps.c). One pass over each
 * device's busy units in time order makes its splits and gaps (breakdown.c,
 * gaps.c); one pass over all records in device order makes the op, family,
 * collective and region totals (ops.c, collectives.c, regions.c).
 * docs/summary.md states every definition.
 *
 * The stages run as jobs on a thread per core (az_run_jobs, jobs.c): parts of
 * the event range, devices, and the passes above side by side. Every job
 * writes only its own device or its own part of the summary, and lists made
 * in parts are joined in order, so the bytes never depend on timing or the
 * thread count.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../summary/summary.h"

/* The host markers the step sources try first, when no Steps line decides; -1 if none. */
static int first_host_kind(const struct az *z)
{
	if (z->f.steps.n)
		return -1;
	for (int k = 0; k < MARK_KINDS; k++)
		if (z->f.mark[k].n)
			return k;
	return -1;
}

/* Device i's records (job i: the longest jobs first); each host thread's
 * sort (job n_devs + k); and beside them (the last job), either the host
 * markers' correlations or, when the step source needs no device records,
 * the steps. */
static void collect_job(struct az *z, uint32_t i, struct scratch *sc)
{
	uint32_t sorts = az_host_jobs(z);

	if (i < z->n_devs)
		az_build_device(z, i, sc);
	else if (i < z->n_devs + sorts)
		az_host_sort(z, i - z->n_devs);
	else if (z->host->kind >= 0)
		az_host_prepare(z, z->host->kind, z->host);
	else
		az_steps(z);
}

static void collect_devices(struct az *z)
{
	struct clscache cc;
	int kind;

	az_plan_filing(z);
	az_file_events(z);
	az_host_collect(z);
	az_clscache_init(&cc, z->t);
	az_make_ops(z, &cc);
	az_clscache_release(&cc);
	kind = first_host_kind(z);
	z->host->kind = kind;
	az_run_jobs(z, z->n_devs + az_host_jobs(z) + 1, collect_job);
	az_resolve_ops(z);
}

enum { JOB_TOTALS, JOB_HOST };

/* The totals pass, the host threads and each device's split side by side; the
 * long serial totals pass goes first. They write apart: the device lists,
 * their own host thread, their own device's split. */
static void totals_job(struct az *z, uint32_t i, struct scratch *sc)
{
	uint32_t host = az_host_jobs(z);

	if (i == JOB_TOTALS)
		az_totals(z);
	else if (i < JOB_HOST + host)
		az_host_thread(z, i - JOB_HOST);
	else
		az_device_splits(z, i - JOB_HOST - host, sc);
}

static void identity_and_files(struct az *z)
{
	const struct trace *t = z->t;
	struct summary *s = z->s;
	uint32_t hosts = 0;

	s->profgate_version = pg_xstrdup(z->o->version ? z->o->version : "");
	s->files = pg_xcalloc(t->n_files + 1, sizeof(*s->files));
	s->n_files = t->n_files;
	for (uint32_t i = 0; i < t->n_files; i++) {
		const struct trace_file *f = &t->files[i];
		struct sum_file *o = &s->files[i];
		o->path = pg_xstrdup(f->path);
		o->sha256 = pg_xstrdup(f->sha256);
		o->bytes = f->bytes;
		o->events =
		    f->duplicate_of != UINT32_MAX ? t->files[f->duplicate_of].entries : f->entries;
		o->format = pg_xstrdup(trace_format_name(f->format));
		o->dialect = pg_xstrdup(trace_dialect_name(f->dialect));
		o->host = f->host ? pg_xstrdup(f->host) : NULL;
		o->rank = f->rank;
		int seen = 0;
		for (uint32_t k = 0; k < i && f->host; k++)
			if (t->files[k].host && strcmp(t->files[k].host, f->host) == 0)
				seen = 1;
		hosts += f->host && !seen;
		if (!s->framework && f->framework)
			s->framework = pg_xstrdup(f->framework);
		if (!s->framework_version && f->framework_version)
			s->framework_version = pg_xstrdup(f->framework_version);
		if (f->world_size > s->world_size)
			s->world_size = f->world_size;
	}
	/* Kineto files name no host: one file is one process, on some host */
	s->host_count = hosts ? hosts : (t->n_files ? 1 : 0);
	s->device_count = z->n_devs;
	s->devices = pg_xcalloc(z->n_devs + 1, sizeof(*s->devices));
	s->n_devices = z->n_devs;
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct trace_device *td = &t->devices[z->devs[d].tdev];
		const struct trace_file *f = &t->files[td->file];
		struct sum_device *o = &s->devices[d];
		const char *kind = trace_dev_kind_name(td->kind);
		o->file = td->file; /* the id is given by summary_finalize */
		o->kind = pg_xstrdup(kind);
		o->index = td->index;
		o->rank = td->rank >= 0 ? td->rank : f->rank;
		o->name = td->name ? pg_xstrdup(trace_str_get(t, td->name)) : NULL;
		o->host = f->host ? pg_xstrdup(f->host) : NULL;
	}
	s->basis = pg_xstrdup(SUMMARY_BASIS_TIMELINE);
	for (uint32_t i = 0; i < z->o->n_labels; i++) {
		s->labels = pg_xrealloc(s->labels, (s->n_labels + 1) * sizeof(char *));
		s->labels[s->n_labels++] = pg_xstrdup(z->o->labels[i]);
	}
}

/* Each file's own step markers, strongest first as az_steps tries them: a
 * Steps line, step annotations, ProfilerStep#, or "none". */
static void file_step_markers(struct az *z)
{
	const struct trace *t = z->t;
	static const char *const names[] = {"steps-line", "step-annotation", "profiler-step"};
	const struct idxv *lists[] = {&z->f.steps, &z->f.mark[MARK_ANNOTATION],
				      &z->f.mark[MARK_PROFILER_STEP]};

	for (uint32_t i = 0; i < z->s->n_files; i++)
		z->s->files[i].step_markers = "none";
	for (int k = (int)PG_ARRAY_LEN(lists) - 1; k >= 0; k--)
		for (uint32_t i = 0; i < lists[k]->n; i++) {
			uint32_t f = z->track_file[trace_event_at(t, lists[k]->v[i])->track];
			if (f < z->s->n_files)
				z->s->files[f].step_markers = names[k];
		}
}

/* Reader warnings, with the file they came from; finalize adds the derived ones. */
static void quality(struct az *z)
{
	const struct trace *t = z->t;

	for (uint32_t i = 0; i < t->n_warnings; i++)
		summary_add_warning(z->s, t->warnings[i].code, "%s: %s",
				    t->files[t->warnings[i].file].path, t->warnings[i].message);
}

void analyze_options_init(struct analyze_options *o)
{
	memset(o, 0, sizeof(*o));
	o->warmup = -1;
}

static void release(struct az *z)
{
	for (uint32_t d = 0; d < z->n_devs; d++) {
		struct dev *dv = &z->devs[d];
		for (uint32_t k = 0; k < dv->n_ann; k++)
			free(dv->ann[k].path);
		free(dv->ann);
		free(dv->a);
		free(dv->leaves);
		free(dv->own);
		free(dv->steps.v);
		free(dv->tiles.v);
		free(dv->win_s);
		free(dv->win_e);
		free(dv->gaps);
	}
	az_filed_release(&z->f, z->n_devs);
	free(z->devs);
	for (uint32_t i = 0; i < z->n_ops; i++) {
		free(z->ops[i].name);
		for (int k = 0; k < 3; k++)
			free(z->ops[i].examples[k]);
	}
	free(z->ops);
	free(z->op_of_name);
	free(z->op_marker);
	free(z->step_ids);
	free(z->hm);
	free(z->role);
	free(z->track_dev);
	free(z->track_file);
	free(z->name_flags);
	free(z->hview_of);
	free(z->aset_flags);
	pg_u64map_release(&z->op_by_canon);
	pg_u64map_release(&z->op_qual);
}

int analyze_summarize(const struct trace *t, const struct analyze_options *o, struct summary *s)
{
	struct az z;
	struct hoststeps host;

	memset(&z, 0, sizeof(z));
	memset(&host, 0, sizeof(host));
	host.kind = -1;
	z.t = t;
	z.o = o;
	z.s = s;
	z.k_hlo_op = trace_str_find(t, "hlo_op");
	z.k_hlo_cat = trace_str_find(t, "hlo_category");
	z.k_coll = trace_str_find(t, "Collective name");
	z.k_in = trace_str_find(t, "In msg nelems");
	z.k_out = trace_str_find(t, "Out msg nelems");
	z.k_group = trace_str_find(t, "Group size");
	z.k_dtype = trace_str_find(t, "dtype");
	z.k_tf_op = trace_str_find(t, "tf_op");
	z.k_name = trace_str_find(t, "name");
	z.k_step_num = trace_str_find(t, TRACE_MARK_STEP_NUM);
	z.k_r = trace_str_find(t, TRACE_MARK_R);
	z.k_flops = trace_str_find(t, "flops");
	z.k_group_id = trace_str_find(t, "group_id");
	z.k_long_name = trace_str_find(t, "long_name");
	z.k_train = trace_str_find(t, "train");

	z.host = &host;
	collect_devices(&z);
	identity_and_files(&z);
	file_step_markers(&z);
	if (!z.steps_done)
		az_steps(&z);
	az_step_table(&z);
	uint32_t steady = 0;
	for (uint32_t i = 0; i < s->n_steps; i++)
		steady += s->steps[i].steady;
	az_host_release(&host);
	az_run_jobs(&z, z.n_devs, az_steady_device);
	az_host_begin(&z);
	az_run_jobs(&z, JOB_HOST + az_host_jobs(&z) + z.n_devs, totals_job);
	az_host_end(&z);
	az_gaps(&z);
	az_memory(&z);
	if (z.host_basis) {
		free(s->basis);
		s->basis = pg_xstrdup(SUMMARY_BASIS_HOST);
	}
	quality(&z);
	s->basis_steady_steps = steady;
	summary_finalize(s);

	release(&z);
	return 0;
}
