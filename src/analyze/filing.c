/*
 * Event filing: the one pass over all events that sorts out the few the
 * summary reads. It decides first, per track, what the track's events are for
 * (plan_filing: activity and annotations of an accelerator device, a Steps
 * line, a host thread with step markers and correlated launches, a host
 * thread of the host view, XLA Modules), and which devices have activity at
 * all.
 *
 * How it works: the event range is cut into parts of FILING_PART events, each
 * filed on a thread into lists of event indices (struct filed); the parts'
 * lists are then joined in order, which gives exactly what one pass from the
 * first event would. The events of tracks nobody reads (the profiler's own
 * spans, tracks of no known device) cost the inner loop one byte test each.
 * A host thread's complete events are listed for the host view here too, so
 * no later pass reads every event again. Whether a name or an argument set
 * makes a host event a step marker is decided once per name and set
 * (marker_facts), not per event.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* dst += src; src is emptied. */
static void idxv_join(struct idxv *dst, struct idxv *src)
{
	if (!dst->n) {
		free(dst->v);
		*dst = *src;
	} else if (src->n) {
		if (dst->n + src->n > dst->cap) {
			dst->cap = dst->n + src->n;
			dst->v = pg_xrealloc(dst->v, (size_t)dst->cap * sizeof(uint32_t));
		}
		memcpy(dst->v + dst->n, src->v, (size_t)src->n * sizeof(uint32_t));
		dst->n += src->n;
		free(src->v);
	} else {
		free(src->v);
	}
	memset(src, 0, sizeof(*src));
}

static int activity_track(const struct trace *t, const struct trace_track *tr, int has_streams)
{
	if (tr->kind == TRACE_TRACK_STREAM)
		return 1;
	/* TPU: the XLA Ops line (Async XLA Ops spans in-flight transfers, not work) */
	return !has_streams && tr->kind == TRACE_TRACK_DEVICE_OPS &&
	       strcmp(trace_str_get(t, tr->name), "XLA Ops") == 0;
}

/* Names and argument sets that make a host event a step marker, tested once each
 * instead of once per event. Returns whether there is any. */
static int marker_facts(struct az *z)
{
	const struct trace *t = z->t;
	int64_t step;
	int any = 0;

	z->name_flags = pg_xcalloc(t->n_strs + 1, 1);
	z->aset_flags = pg_xcalloc(t->n_argsets + 1, 1);
	for (uint32_t i = 0; i < t->n_strs; i++) {
		const char *nm = trace_str_get(t, i);
		if (nm[0] == 'P' && trace_is_marker_name(nm, strlen(nm)) &&
		    analyze_parse_id(nm + TRACE_MARK_PROFILER_STEP_LEN, &step)) {
			z->name_flags[i] = NAME_PROFILER_STEP;
			any = 1;
		}
	}
	for (uint32_t i = 1; i < t->n_argsets && z->k_step_num; i++) {
		trace_str v = trace_arg_get(t, i, z->k_step_num);
		if (!v || !analyze_parse_id(trace_str_get(t, v), &step))
			continue;
		z->aset_flags[i] = ASET_STEP_NUM;
		if (z->k_r && trace_arg_get(t, i, z->k_r))
			z->aset_flags[i] |= ASET_R;
		any = 1;
	}
	return any;
}

/* Kineto's "Spans" process: the profiler's own span over the capture, no
 * thread of the program. */
static int is_profiler_span(const struct trace *t, const struct trace_track *tr)
{
	return strcmp(trace_str_get(t, tr->pid), "Spans") == 0;
}

/* The host threads whose complete events the host view reads (host.c), each
 * its list in f.hview, in track order. */
static void plan_host_view(struct az *z)
{
	const struct trace *t = z->t;

	z->hview_of = pg_xmalloc((t->n_tracks + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < t->n_tracks; i++) {
		const struct trace_track *tr = &t->tracks[i];
		z->hview_of[i] = UINT32_MAX;
		if (tr->kind != TRACE_TRACK_HOST_THREAD || tr->device == UINT32_MAX ||
		    !tr->n_events || is_profiler_span(t, tr))
			continue;
		z->hview_of[i] = z->f.n_hview++;
		z->role[i] |= ROLE_HVIEW;
	}
}

/* The devices with activity, in track order, and what each track's events are for. */
void az_plan_filing(struct az *z)
{
	const struct trace *t = z->t;
	uint8_t *has_streams = pg_xcalloc(t->n_devices + 1, 1);
	uint32_t *dev_slot = pg_xmalloc((t->n_devices + 1) * sizeof(uint32_t));
	/* without a marker anywhere, host threads hold nothing the summary reads */
	int host = marker_facts(z);

	z->role = pg_xcalloc(t->n_tracks + 1, 1);
	z->track_dev = pg_xmalloc((t->n_tracks + 1) * sizeof(uint32_t));
	z->track_file = pg_xmalloc((t->n_tracks + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < t->n_tracks; i++)
		if (t->tracks[i].kind == TRACE_TRACK_STREAM && t->tracks[i].device != UINT32_MAX)
			has_streams[t->tracks[i].device] = 1;
	memset(dev_slot, 0xff, (t->n_devices + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < t->n_tracks; i++) {
		const struct trace_track *tr = &t->tracks[i];
		if (tr->device == UINT32_MAX || !tr->n_events)
			continue;
		const struct trace_device *td = &t->devices[tr->device];
		if (td->kind == TRACE_DEV_CPU || !activity_track(t, tr, has_streams[tr->device]))
			continue;
		if (dev_slot[tr->device] == UINT32_MAX) {
			dev_slot[tr->device] = z->n_devs;
			z->devs = pg_xrealloc(z->devs, (z->n_devs + 1) * sizeof(*z->devs));
			memset(&z->devs[z->n_devs], 0, sizeof(*z->devs));
			z->devs[z->n_devs].tdev = tr->device;
			z->devs[z->n_devs].file = td->file;
			z->n_devs++;
		}
		z->role[i] = ROLE_ACT;
	}
	for (uint32_t i = 0; i < t->n_tracks; i++) {
		const struct trace_track *tr = &t->tracks[i];
		z->track_dev[i] = UINT32_MAX;
		z->track_file[i] =
		    tr->device != UINT32_MAX ? t->devices[tr->device].file : UINT32_MAX;
		if (tr->device != UINT32_MAX && dev_slot[tr->device] != UINT32_MAX) {
			z->track_dev[i] = dev_slot[tr->device];
			z->role[i] |= ROLE_ANN;
			if (tr->kind == TRACE_TRACK_STEPS)
				z->role[i] |= ROLE_STEPS;
		}
		if (host && tr->kind == TRACE_TRACK_HOST_THREAD && tr->device != UINT32_MAX)
			z->role[i] |= ROLE_HOST;
		if (tr->kind == TRACE_TRACK_MODULES)
			z->role[i] |= ROLE_MODULES;
	}
	plan_host_view(z);
	free(has_streams);
	free(dev_slot);
}

/* One part of the filing pass: events [from, to). */
struct filing {
	const struct az *z;
	uint64_t from, to;
	struct filed f;
	uint8_t *seen; /* per name: met as activity in this part */
};

/* A host step marker by its name or its arguments. */
static int is_marker(const struct az *z, const struct trace_event *e)
{
	return (z->name_flags[e->name] & NAME_PROFILER_STEP) ||
	       (z->aset_flags[e->args] & ASET_STEP_NUM);
}

static void file_event(struct filing *w, const struct trace_event *e, uint32_t i)
{
	const struct az *z = w->z;
	uint8_t r = z->role[e->track];

	if (!r)
		return;
	if ((r & ROLE_HOST) && (e->flags & TRACE_EV_HAS_CORR)) {
		uint64_t key = corr_key(e->corr, z->track_file[e->track]);
		idxv_push(&w->f.corr, i);
		w->f.corr_lo = key < w->f.corr_lo ? key : w->f.corr_lo;
		w->f.corr_hi = key > w->f.corr_hi ? key : w->f.corr_hi;
	}
	if (e->ph != 'X')
		return;
	if ((r & ROLE_HVIEW) && e->dur_ns >= 0 &&
	    !(e->flags & (TRACE_EV_INSTANT | TRACE_EV_AGGREGATE)) && !is_marker(z, e))
		idxv_push(&w->f.hview[z->hview_of[e->track]], i);
	if (r & ROLE_ANN) {
		uint32_t d = z->track_dev[e->track];
		/* Kineto puts GPU user annotations on the stream: they span work, are not
		 * work; nor are the host's events it puts there (cuda_sync waits) */
		uint32_t cls = z->t->cats[e->cat].class_mask;
		if (cls & TRACE_CATCLASS_DEVICE_ANN) {
			idxv_push(&w->f.ann[d], i);
		} else if ((r & ROLE_ACT) && !(e->flags & TRACE_EV_AGGREGATE) &&
			   !(cls & TRACE_CATCLASS_HOST)) {
			idxv_push(&w->f.act[d], i);
			if (!w->seen[e->name]) {
				w->seen[e->name] = 1;
				idxv_push(&w->f.first, e->name);
				idxv_push(&w->f.first, i);
			}
		}
	}
	if ((r & ROLE_STEPS) && !(e->flags & TRACE_EV_AGGREGATE))
		idxv_push(&w->f.steps, i);
	if (r & ROLE_MODULES)
		idxv_push(&w->f.modules, i);
	if (r & ROLE_HOST) {
		uint8_t af = z->aset_flags[e->args];
		if ((af & ASET_STEP_NUM) &&
		    ((af & ASET_R) || (z->k_train && e->name == z->k_train)))
			idxv_push(&w->f.mark[MARK_ANNOTATION], i);
		if (z->name_flags[e->name] & NAME_PROFILER_STEP)
			idxv_push(&w->f.mark[MARK_PROFILER_STEP], i);
	}
}

static void file_part(struct az *z, uint32_t p, struct scratch *sc)
{
	struct filing *w = &z->parts[p];
	const uint8_t *role = z->role;
	uint64_t i = w->from;

	/* the events of tracks nobody reads are skipped with the least work */
	while (i < w->to) {
		uint64_t n;
		const struct trace_event *run = trace_event_run(z->t, i, &n);
		if (n > w->to - i)
			n = w->to - i;
		for (uint64_t k = 0; k < n; k++)
			if (role[run[k].track])
				file_event(w, &run[k], (uint32_t)(i + k));
		i += n;
	}
}

#define FILING_PART (1u << 21) /* events: smaller parts cost more in threads than they save */

/* The one pass over all events, in parts of the event range on threads. */
void az_file_events(struct az *z)
{
	uint64_t n = z->t->n_events;
	uint32_t np = (uint32_t)(n / FILING_PART) + 1;

	np = np > MAX_THREADS ? MAX_THREADS : np;
	z->parts = pg_xcalloc(np, sizeof(*z->parts));
	for (uint32_t p = 0; p < np; p++) {
		struct filing *w = &z->parts[p];
		w->z = z;
		w->from = n * p / np;
		w->to = n * (p + 1) / np;
		w->f.act = pg_xcalloc(z->n_devs + 1, sizeof(struct idxv));
		w->f.ann = pg_xcalloc(z->n_devs + 1, sizeof(struct idxv));
		w->f.hview = pg_xcalloc(z->f.n_hview + 1, sizeof(struct idxv));
		w->f.n_hview = z->f.n_hview;
		w->seen = pg_xcalloc(z->t->n_strs + 1, 1);
		w->f.corr_lo = UINT64_MAX;
	}
	az_run_jobs(z, np, file_part);
	/* joined in order, the lists are what one pass from the first event would make */
	z->f = z->parts[0].f;
	for (uint32_t p = 1; p < np; p++) {
		struct filed *f = &z->parts[p].f;
		for (uint32_t d = 0; d < z->n_devs; d++) {
			idxv_join(&z->f.act[d], &f->act[d]);
			idxv_join(&z->f.ann[d], &f->ann[d]);
		}
		idxv_join(&z->f.steps, &f->steps);
		idxv_join(&z->f.modules, &f->modules);
		idxv_join(&z->f.corr, &f->corr);
		z->f.corr_lo = f->corr_lo < z->f.corr_lo ? f->corr_lo : z->f.corr_lo;
		z->f.corr_hi = f->corr_hi > z->f.corr_hi ? f->corr_hi : z->f.corr_hi;
		for (int k = 0; k < MARK_KINDS; k++)
			idxv_join(&z->f.mark[k], &f->mark[k]);
		idxv_join(&z->f.first, &f->first);
		for (uint32_t k = 0; k < z->f.n_hview; k++)
			idxv_join(&z->f.hview[k], &f->hview[k]);
		free(f->act);
		free(f->ann);
		free(f->hview);
	}
	for (uint32_t p = 0; p < np; p++)
		free(z->parts[p].seen);
	free(z->parts);
	z->parts = NULL;
}

void az_filed_release(struct filed *f, uint32_t n_devs)
{
	for (uint32_t d = 0; d < n_devs && f->act; d++) {
		free(f->act[d].v);
		free(f->ann[d].v);
	}
	free(f->act);
	free(f->ann);
	free(f->steps.v);
	free(f->modules.v);
	free(f->corr.v);
	for (int k = 0; k < MARK_KINDS; k++)
		free(f->mark[k].v);
	free(f->first.v);
	for (uint32_t k = 0; k < f->n_hview && f->hview; k++)
		free(f->hview[k].v);
	free(f->hview);
	memset(f, 0, sizeof(*f));
}
