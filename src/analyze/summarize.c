/*
 * trace model -> summary: devices and their activity, steps, the exposed-time
 * breakdown, ops, families, collectives, gaps, regions, quality, identity and
 * candidates. Pure: reads the model, writes the summary, no I/O.
 *
 * How it works: one pass over the events files each one the summary needs by
 * purpose: per accelerator device its activity (kernels, copies and sets on
 * device streams; XLA Ops on TPU) and its GPU annotations, and the step
 * sources (Steps lines, host markers and the launches that carry correlations,
 * XLA Modules). The pass runs as two halves on two threads whose lists are
 * joined in order, so every list is what a single pass would make. Activity
 * becomes compact records with a category and family from the rules table
 * (cached per name). Nesting per track gives each record its self time and a
 * leaf flag; only leaves enter the time split, so a "while" op never hides the
 * all-reduce inside it. Steps come from the best source the profile has and
 * give every device a list of step windows; the steady windows bound the
 * per-step numbers. docs/summary.md states every definition.
 */
#include "analyze.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../summary/summary.h"

/* One unit of device activity; there are millions, so it stays at 40 bytes. */
struct act {
	int64_t s, e;
	int64_t self; /* ns */
	uint32_t ev;  /* event index */
	uint32_t track;
	uint32_t op; /* canonical op index */
	uint8_t cat; /* enum analyze_category */
	uint8_t fam; /* enum analyze_family */
	uint8_t leaf;
	uint8_t steady; /* starts inside a steady window of its device */
};

/* A leaf in time order (start, then event index), the order gaps and the split walk. */
struct leafkey {
	int64_t s;
	uint32_t ev;
	uint32_t idx; /* into dev.a */
};

struct span {
	int64_t step;
	int64_t s, e;
};

struct spans {
	struct span *v;
	uint32_t n, cap;
};

/* A GPU user annotation (Kineto record_function on the device): a region. */
struct ann {
	int64_t s, e;
	trace_str name;
	int32_t parent; /* enclosing annotation, or -1 */
	char *path;	/* "outer/inner", names with #N folded */
};

/* Event indices (or other 32-bit ids), in event order. */
struct idxv {
	uint32_t *v;
	uint32_t n, cap;
};

struct dev {
	uint32_t tdev; /* trace device */
	uint32_t file;
	struct act *a; /* by track, start, end descending, event */
	uint32_t n;
	struct leafkey *leaves;
	uint32_t n_leaves;
	int64_t lo, hi; /* earliest start and latest end of its activity */
	struct ann *ann;
	uint32_t n_ann;
	struct spans steps;	/* this device's step windows */
	int64_t *win_s, *win_e; /* steady windows, sorted */
	uint32_t n_win;
};

struct opinfo {
	char *name;
	uint8_t fam, cat;
	char *examples[3];
	double count, self_ns, total_ns;
	uint8_t marker;
};

/* What a track's events are filed for (bits). */
enum {
	ROLE_ACT = 1,	   /* activity of a selected device */
	ROLE_ANN = 2,	   /* any track of a selected device: GPU user annotations */
	ROLE_STEPS = 4,	   /* a Steps line of a selected device */
	ROLE_HOST = 8,	   /* a host thread: step markers and correlated launches */
	ROLE_MODULES = 16, /* XLA Modules */
};

/* What makes a host event a step marker, known once per name and argument set. */
enum { NAME_PROFILER_STEP = 1 };
enum { ASET_STEP_NUM = 1, ASET_R = 2 };

enum { MARK_ANNOTATION, MARK_PROFILER_STEP, MARK_KINDS };

/* The events the summary reads, filed by purpose; every list is in event order. */
struct filed {
	struct idxv *act, *ann; /* per selected device */
	struct idxv steps, modules, corr;
	struct idxv mark[MARK_KINDS];
	struct idxv first; /* (name, event) pairs: a name's first activity event */
};

struct az {
	const struct trace *t;
	const struct analyze_options *o;
	struct summary *s;
	struct dev *devs;
	uint32_t n_devs;
	struct opinfo *ops;
	uint32_t n_ops, cap_ops;
	uint32_t *op_of_name;	      /* name id -> op index, UINT32_MAX before its first event */
	struct pg_u64map op_by_canon; /* hash of canonical text -> op index (+ check) */
	/* filing */
	uint8_t *role;	     /* per track */
	uint32_t *track_dev; /* per track: index of its selected device, or UINT32_MAX */
	uint8_t *name_flags; /* per name: NAME_* */
	uint8_t *aset_flags; /* per argument set: ASET_* */
	struct filed f;
	/* steps */
	int64_t *step_ids;
	uint32_t n_step_ids;
	int has_steps;
	/* arg keys */
	trace_str k_hlo_op, k_hlo_cat, k_coll, k_in, k_out, k_group, k_dtype, k_tf_op, k_name,
	    k_step_num, k_r, k_flops, k_group_id, k_long_name, k_train;
};

static void *grow(void *p, uint32_t n, uint32_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	return pg_xrealloc(p, (size_t)*cap * size);
}

static void idxv_push(struct idxv *l, uint32_t x)
{
	if (l->n == l->cap)
		l->v = grow(l->v, l->n, &l->cap, sizeof(uint32_t));
	l->v[l->n++] = x;
}

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

/* Reads of events by index, a storage run at a time: lists in event order read
 * their events nearly sequentially. */
struct evcur {
	const struct trace *t;
	const struct trace_event *run;
	uint64_t lo, hi;
};

static const struct trace_event *ev_at(struct evcur *c, uint64_t i)
{
	if (i < c->lo || i >= c->hi) {
		uint64_t n;
		c->run = trace_event_run(c->t, i, &n);
		c->lo = i;
		c->hi = i + n;
	}
	return &c->run[i - c->lo];
}

static const char *arg(const struct az *z, const struct trace_event *e, trace_str key)
{
	trace_str v = key ? trace_arg_get(z->t, e->args, key) : 0;
	return v ? trace_str_get(z->t, v) : NULL;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return 0;
	v = strtoll(s, &end, 10);
	if (*end)
		return 0;
	*out = v;
	return 1;
}

/* ---- canonical names ---- */

/* Fold compile-specific suffixes: "fusion.123" -> "fusion", "loop_add_fusion_2"
 * -> "loop_add_fusion", "triton_poi_fused_add_0" -> "triton_poi_fused_add". */
static char *canonical(const char *name)
{
	size_t n = strlen(name), end = n;

	while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9')
		end--;
	if (end < n && end > 0 && (name[end - 1] == '.' || name[end - 1] == '_'))
		return pg_xstrndup(name, end - 1);
	return pg_xstrdup(name);
}

static int is_marker_op(const char *canon)
{
	static const char *m[] = {"iota",      "constant", "bitcast",  "get-tuple-element",
				  "parameter", "tuple",	   "after-all"};
	for (size_t i = 0; i < PG_ARRAY_LEN(m); i++)
		if (strcmp(canon, m[i]) == 0)
			return 1;
	return strncmp(canon, "copy-start", 10) == 0 || strncmp(canon, "copy-done", 9) == 0;
}

static uint32_t op_for(struct az *z, const struct trace_event *e, uint8_t cat, uint8_t fam)
{
	uint32_t i = z->op_of_name[e->name];

	if (i != UINT32_MAX)
		return i;
	const char *raw = trace_str_get(z->t, e->name);
	char *c = canonical(raw[0] ? raw : "(unnamed)");
	uint64_t h = pg_hash(c, strlen(c));
	uint32_t j = pg_u64map_get(&z->op_by_canon, h);
	while (j != UINT32_MAX && strcmp(z->ops[j].name, c) != 0)
		j = pg_u64map_get(&z->op_by_canon, ++h); /* probe on a rare collision */
	if (j == UINT32_MAX) {
		z->ops = grow(z->ops, z->n_ops, &z->cap_ops, sizeof(*z->ops));
		j = z->n_ops++;
		memset(&z->ops[j], 0, sizeof(z->ops[j]));
		z->ops[j].name = c;
		z->ops[j].fam = fam;
		z->ops[j].cat = cat;
		z->ops[j].marker = (uint8_t)is_marker_op(c);
		pg_u64map_put(&z->op_by_canon, h, j);
	} else {
		free(c);
	}
	struct opinfo *o = &z->ops[j];
	for (int k = 0; k < 3; k++) {
		if (o->examples[k] && strcmp(o->examples[k], raw) == 0)
			break;
		if (!o->examples[k]) {
			o->examples[k] = pg_xstrdup(raw);
			break;
		}
	}
	z->op_of_name[e->name] = j;
	return j;
}

/* ---- classification with a cache ---- */

/* The answer for the last argument set and category met per name (an op's events
 * nearly always share both), then per (name, argument set). One per thread. */
struct cls {
	uint32_t args;
	uint16_t cat;
	uint8_t c, f; /* c is 0xff while empty */
};

struct clscache {
	struct cls *by_name;
	struct pg_u64map by_pair; /* (name << 32 | args) -> cat << 16 | fam << 8 | c */
};

static void clscache_init(struct clscache *cc, const struct trace *t)
{
	cc->by_name = pg_xmalloc((t->n_strs + 1) * sizeof(*cc->by_name));
	memset(cc->by_name, 0xff, (t->n_strs + 1) * sizeof(*cc->by_name));
	memset(&cc->by_pair, 0, sizeof(cc->by_pair));
}

static void clscache_release(struct clscache *cc)
{
	free(cc->by_name);
	pg_u64map_release(&cc->by_pair);
}

static void classify_slow(const struct az *z, struct clscache *cc, const struct trace_event *e,
			  uint8_t *cat, uint8_t *fam)
{
	uint64_t key = ((uint64_t)e->name << 32) | e->args;
	uint32_t c = pg_u64map_get(&cc->by_pair, key);
	struct analyze_event_facts f;
	enum analyze_category ac;
	enum analyze_family af;

	if (c != UINT32_MAX && (c >> 16) == e->cat) {
		*cat = (uint8_t)(c & 0xff);
		*fam = (uint8_t)((c >> 8) & 0xff);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.name = trace_str_get(z->t, e->name);
	f.name_len = trace_str_len(z->t, e->name);
	f.cat = e->cat ? trace_str_get(z->t, z->t->cats[e->cat].name) : NULL;
	f.hlo_op = arg(z, e, z->k_hlo_op);
	f.hlo_category = arg(z, e, z->k_hlo_cat);
	f.collective_name = arg(z, e, z->k_coll);
	analyze_classify(&f, &ac, &af);
	*cat = (uint8_t)ac;
	*fam = (uint8_t)af;
	pg_u64map_put(&cc->by_pair, key, ((uint32_t)e->cat << 16) | ((uint32_t)af << 8) | ac);
}

static void classify(const struct az *z, struct clscache *cc, const struct trace_event *e,
		     uint8_t *cat, uint8_t *fam)
{
	struct cls *c = &cc->by_name[e->name];

	if (c->c == 0xff || c->args != e->args || c->cat != e->cat) {
		classify_slow(z, cc, e, &c->c, &c->f);
		c->args = e->args;
		c->cat = e->cat;
	}
	*cat = c->c;
	*fam = c->f;
}

/* ---- filing the events ---- */

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
		if (nm[0] == 'P' && strncmp(nm, "ProfilerStep#", 13) == 0 &&
		    parse_i64(nm + 13, &step)) {
			z->name_flags[i] = NAME_PROFILER_STEP;
			any = 1;
		}
	}
	for (uint32_t i = 1; i < t->n_argsets && z->k_step_num; i++) {
		trace_str v = trace_arg_get(t, i, z->k_step_num);
		if (!v || !parse_i64(trace_str_get(t, v), &step))
			continue;
		z->aset_flags[i] = ASET_STEP_NUM;
		if (z->k_r && trace_arg_get(t, i, z->k_r))
			z->aset_flags[i] |= ASET_R;
		any = 1;
	}
	return any;
}

/* The devices with activity, in track order, and what each track's events are for. */
static void plan_filing(struct az *z)
{
	const struct trace *t = z->t;
	uint8_t *has_streams = pg_xcalloc(t->n_devices + 1, 1);
	uint32_t *dev_slot = pg_xmalloc((t->n_devices + 1) * sizeof(uint32_t));
	/* without a marker anywhere, host threads hold nothing the summary reads */
	int host = marker_facts(z);

	z->role = pg_xcalloc(t->n_tracks + 1, 1);
	z->track_dev = pg_xmalloc((t->n_tracks + 1) * sizeof(uint32_t));
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

static void file_event(struct filing *w, const struct trace_event *e, uint32_t i)
{
	const struct az *z = w->z;
	uint8_t r = z->role[e->track];

	if (!r)
		return;
	if ((r & ROLE_HOST) &&
	    (e->flags & (TRACE_EV_HAS_CORR | TRACE_EV_FLOW)) == TRACE_EV_HAS_CORR)
		idxv_push(&w->f.corr, i);
	if (e->ph != 'X')
		return;
	if (r & ROLE_ANN) {
		uint32_t d = z->track_dev[e->track];
		/* Kineto puts GPU user annotations on the stream: they span work, are not work */
		if (z->t->cats[e->cat].class_mask & TRACE_CATCLASS_DEVICE_ANN) {
			idxv_push(&w->f.ann[d], i);
		} else if ((r & ROLE_ACT) && !(e->flags & TRACE_EV_AGGREGATE)) {
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

static void *file_part(void *arg)
{
	struct filing *w = arg;
	uint64_t i = w->from;

	while (i < w->to) {
		uint64_t n;
		const struct trace_event *run = trace_event_run(w->z->t, i, &n);
		if (n > w->to - i)
			n = w->to - i;
		for (uint64_t k = 0; k < n; k++)
			file_event(w, &run[k], (uint32_t)(i + k));
		i += n;
	}
	return NULL;
}

#define FILING_PARTS	2
#define FILING_THREADED (1u << 18) /* events: below this a thread costs more than it saves */

/* The one pass over all events. */
static void file_events(struct az *z)
{
	struct filing w[FILING_PARTS];
	pthread_t th[FILING_PARTS];
	int started[FILING_PARTS];
	uint64_t n = z->t->n_events;

	for (int p = 0; p < FILING_PARTS; p++) {
		memset(&w[p], 0, sizeof(w[p]));
		w[p].z = z;
		w[p].from = n * (uint64_t)p / FILING_PARTS;
		w[p].to = n * (uint64_t)(p + 1) / FILING_PARTS;
		w[p].f.act = pg_xcalloc(z->n_devs + 1, sizeof(struct idxv));
		w[p].f.ann = pg_xcalloc(z->n_devs + 1, sizeof(struct idxv));
		w[p].seen = pg_xcalloc(z->t->n_strs + 1, 1);
		started[p] = 0;
	}
	for (int p = 1; p < FILING_PARTS && n >= FILING_THREADED; p++)
		started[p] = pthread_create(&th[p], NULL, file_part, &w[p]) == 0;
	file_part(&w[0]);
	for (int p = 1; p < FILING_PARTS; p++) {
		if (started[p])
			pthread_join(th[p], NULL);
		else
			file_part(&w[p]);
	}
	/* joined in order, the lists are what one pass from the first event would make */
	z->f = w[0].f;
	for (int p = 1; p < FILING_PARTS; p++) {
		struct filed *f = &w[p].f;
		for (uint32_t d = 0; d < z->n_devs; d++) {
			idxv_join(&z->f.act[d], &f->act[d]);
			idxv_join(&z->f.ann[d], &f->ann[d]);
		}
		idxv_join(&z->f.steps, &f->steps);
		idxv_join(&z->f.modules, &f->modules);
		idxv_join(&z->f.corr, &f->corr);
		for (int k = 0; k < MARK_KINDS; k++)
			idxv_join(&z->f.mark[k], &f->mark[k]);
		idxv_join(&z->f.first, &f->first);
		free(f->act);
		free(f->ann);
	}
	for (int p = 0; p < FILING_PARTS; p++)
		free(w[p].seen);
}

static void filed_release(struct filed *f, uint32_t n_devs)
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
	memset(f, 0, sizeof(*f));
}

/* Ops in the order their names first appear, as one pass in event order creates them. */
static void make_ops(struct az *z, struct clscache *cc)
{
	z->op_of_name = pg_xmalloc((z->t->n_strs + 1) * sizeof(uint32_t));
	memset(z->op_of_name, 0xff, (z->t->n_strs + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k + 1 < z->f.first.n; k += 2) {
		if (z->op_of_name[z->f.first.v[k]] != UINT32_MAX)
			continue;
		const struct trace_event *e = trace_event_at(z->t, z->f.first.v[k + 1]);
		uint8_t cat, fam;
		classify(z, cc, e, &cat, &fam);
		op_for(z, e, cat, fam);
	}
}

/* ---- devices and activity ---- */

static int cmp_act_track(const void *a, const void *b)
{
	const struct act *x = a, *y = b;
	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Sort one track's records. They nearly always come in time order but for a
 * few neighbours swapped (an XLA op that starts just before the one listed
 * ahead of it), so an insertion sort is linear here; past a budget of moves it
 * hands over to qsort. The order is total (the event index breaks ties), so
 * either gives the same result.
 */
static void sort_acts(struct act *v, uint32_t n)
{
	uint64_t budget = 8 * (uint64_t)n + 1024;

	for (uint32_t i = 1; i < n; i++) {
		if (cmp_act_track(&v[i - 1], &v[i]) <= 0)
			continue;
		struct act x = v[i];
		uint32_t j = i;
		while (j > 0 && cmp_act_track(&v[j - 1], &x) > 0) {
			v[j] = v[j - 1];
			j--;
			if (--budget == 0) {
				v[j] = x;
				qsort(v, n, sizeof(*v), cmp_act_track);
				return;
			}
		}
		v[j] = x;
	}
}

/*
 * Order a device's activity by (track, start, end descending). One stream is
 * common and is sorted in place; else a stable bucket pass by track (linear),
 * then each track sorted.  slot[track] is UINT32_MAX for every track on entry
 * and on return.
 */
static void order_by_track(struct dev *d, uint32_t *slot)
{
	uint32_t *tracks = NULL, *count = NULL, n_tr = 0, cap_tr = 0, cap_count = 0, i;

	for (i = 1; i < d->n && d->a[i].track == d->a[0].track; i++)
		;
	if (i >= d->n) {
		sort_acts(d->a, d->n);
		return;
	}
	for (i = 0; i < d->n; i++) {
		uint32_t tr = d->a[i].track;
		if (slot[tr] == UINT32_MAX) {
			tracks = grow(tracks, n_tr, &cap_tr, sizeof(uint32_t));
			count = grow(count, n_tr, &cap_count, sizeof(uint32_t));
			tracks[n_tr] = tr;
			count[n_tr] = 0;
			slot[tr] = n_tr++;
		}
		count[slot[tr]]++;
	}
	/* buckets in track-id order, as cmp_act_track orders tracks */
	uint32_t *sorted = pg_xmalloc(n_tr * sizeof(uint32_t));
	uint32_t *first = pg_xmalloc(n_tr * sizeof(uint32_t));
	memcpy(sorted, tracks, n_tr * sizeof(uint32_t));
	qsort(sorted, n_tr, sizeof(uint32_t), cmp_u32);
	for (uint32_t r = 0, at = 0; r < n_tr; r++) {
		first[slot[sorted[r]]] = at;
		at += count[slot[sorted[r]]];
	}
	struct act *out = pg_xmalloc((d->n + 1) * sizeof(*out));
	for (i = 0; i < d->n; i++)
		out[first[slot[d->a[i].track]]++] = d->a[i];
	for (uint32_t k = 0; k < n_tr; k++) {
		sort_acts(out + first[k] - count[k], count[k]);
		slot[tracks[k]] = UINT32_MAX;
	}
	free(d->a);
	d->a = out;
	free(first);
	free(sorted);
	free(tracks);
	free(count);
}

/* Nesting per track: self time and leaf flags. Partial overlaps are siblings. */
static void nest(struct dev *d)
{
	uint32_t *stack = pg_xmalloc((d->n + 1) * sizeof(uint32_t));
	uint32_t sp = 0;

	for (uint32_t i = 0; i < d->n; i++) {
		struct act *a = &d->a[i];
		a->self = a->e - a->s;
		a->leaf = 1;
		while (sp > 0) {
			struct act *top = &d->a[stack[sp - 1]];
			if (top->track != a->track || a->s >= top->e || a->e > top->e)
				sp--;
			else
				break;
		}
		if (sp > 0) {
			struct act *p = &d->a[stack[sp - 1]];
			p->leaf = 0;
			p->self -= a->e - a->s;
			if (p->self < 0)
				p->self = 0;
		}
		stack[sp++] = i;
	}
	free(stack);
}

static int key_before(const struct leafkey *x, const struct leafkey *y)
{
	return x->s < y->s || (x->s == y->s && x->ev < y->ev);
}

/*
 * Leaves by (start, event): a natural merge sort. Each track's leaves are
 * nearly always in that order already, so the runs are the tracks and the
 * sort is a merge of a few of them (none for one stream).
 */
static void sort_leaves(struct leafkey *v, uint32_t n)
{
	uint32_t *bound = NULL, nb = 0, cap = 0;

	bound = grow(bound, nb, &cap, sizeof(uint32_t));
	bound[nb++] = 0;
	for (uint32_t i = 1; i < n; i++)
		if (key_before(&v[i], &v[i - 1])) {
			bound = grow(bound, nb, &cap, sizeof(uint32_t));
			bound[nb++] = i;
		}
	bound = grow(bound, nb, &cap, sizeof(uint32_t));
	bound[nb++] = n;
	struct leafkey *tmp = nb > 2 ? pg_xmalloc((size_t)n * sizeof(*tmp)) : NULL;
	struct leafkey *src = v, *dst = tmp;
	while (nb > 2) {
		uint32_t out = 0;
		for (uint32_t r = 0; r + 1 < nb; r += 2) {
			uint32_t a = bound[r], am = bound[r + 1];
			uint32_t b = am, bm = r + 2 < nb ? bound[r + 2] : am, o = a;
			while (a < am && b < bm)
				dst[o++] = key_before(&src[b], &src[a]) ? src[b++] : src[a++];
			while (a < am)
				dst[o++] = src[a++];
			while (b < bm)
				dst[o++] = src[b++];
			bound[out++] = bound[r];
		}
		bound[out++] = n;
		nb = out;
		struct leafkey *x = src;
		src = dst;
		dst = x;
	}
	if (src != v)
		memcpy(v, src, (size_t)n * sizeof(*v));
	free(tmp);
	free(bound);
}

static void order_leaves(struct dev *d)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < d->n; k++)
		n += d->a[k].leaf;
	d->leaves = pg_xmalloc((n + 1) * sizeof(*d->leaves));
	d->n_leaves = n;
	n = 0;
	for (uint32_t k = 0; k < d->n; k++)
		if (d->a[k].leaf)
			d->leaves[n++] = (struct leafkey){d->a[k].s, d->a[k].ev, k};
	sort_leaves(d->leaves, n);
}

static int cmp_ann(const void *a, const void *b)
{
	const struct ann *x = a, *y = b;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* "ProfilerStep#7" -> "ProfilerStep#": one region, not one per step. */
static void fold_name(struct pg_buf *b, const char *name)
{
	size_t n = strlen(name), end = n;
	while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9')
		end--;
	if (end < n && end > 0 && name[end - 1] == '#')
		n = end;
	for (size_t i = 0; i < n; i++)
		pg_buf_addc(b, name[i] == '/' ? '|' : name[i]);
}

/* Nest a device's annotations by containment and give each its path. */
static void annotation_paths(const struct az *z, struct dev *d)
{
	int32_t *stack;
	uint32_t sp = 0;
	struct pg_buf b = PG_BUF_INIT;

	if (!d->n_ann)
		return;
	qsort(d->ann, d->n_ann, sizeof(*d->ann), cmp_ann);
	stack = pg_xmalloc(d->n_ann * sizeof(int32_t));
	for (uint32_t i = 0; i < d->n_ann; i++) {
		struct ann *a = &d->ann[i];
		while (sp > 0 &&
		       (a->s >= d->ann[stack[sp - 1]].e || a->e > d->ann[stack[sp - 1]].e))
			sp--;
		a->parent = sp > 0 ? stack[sp - 1] : -1;
		pg_buf_reset(&b);
		if (a->parent >= 0) {
			pg_buf_adds(&b, d->ann[a->parent].path);
			pg_buf_addc(&b, '/');
		}
		fold_name(&b, trace_str_get(z->t, a->name));
		a->path = pg_xstrdup(b.ptr);
		stack[sp++] = (int32_t)i;
	}
	free(stack);
	pg_buf_release(&b);
}

/* The deepest annotation of d holding time t, or NULL. */
static const struct ann *annotation_at(const struct dev *d, int64_t t)
{
	uint32_t lo = 0, hi = d->n_ann;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (d->ann[mid].s <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int32_t i = (int32_t)lo - 1; i >= 0; i = d->ann[i].parent)
		if (t < d->ann[i].e)
			return &d->ann[i];
	return NULL;
}

/* A thread's own scratch for device work. */
struct devscratch {
	struct clscache cc;
	uint32_t *slot; /* per track */
};

/* Device d's activity records, nested and ordered, and its annotations. */
static void build_device(const struct az *z, uint32_t di, struct devscratch *sc)
{
	const struct trace *t = z->t;
	struct dev *d = &z->devs[di];
	const struct idxv *evs = &z->f.act[di], *anns = &z->f.ann[di];
	struct evcur cur = {t, NULL, 0, 0};

	d->n = evs->n;
	d->a = pg_xmalloc((d->n + 1) * sizeof(*d->a));
	d->lo = INT64_MAX;
	d->hi = INT64_MIN;
	for (uint32_t k = 0; k < evs->n; k++) {
		const struct trace_event *e = ev_at(&cur, evs->v[k]);
		struct act *a = &d->a[k];
		memset(a, 0, sizeof(*a));
		a->s = e->ts_ns;
		a->e = e->ts_ns + e->dur_ns;
		a->ev = evs->v[k];
		a->track = e->track;
		classify(z, &sc->cc, e, &a->cat, &a->fam);
		a->op = z->op_of_name[e->name];
		d->lo = a->s < d->lo ? a->s : d->lo;
		d->hi = a->e > d->hi ? a->e : d->hi;
	}
	order_by_track(d, sc->slot);
	nest(d);
	order_leaves(d);
	d->ann = pg_xmalloc((anns->n + 1) * sizeof(*d->ann));
	d->n_ann = anns->n;
	for (uint32_t k = 0; k < anns->n; k++) {
		const struct trace_event *e = ev_at(&cur, anns->v[k]);
		d->ann[k] = (struct ann){e->ts_ns, e->ts_ns + e->dur_ns, e->name, -1, NULL};
	}
	annotation_paths(z, d);
}

/* Devices are independent: threads take the next one until none is left. */
struct devpool {
	const struct az *z;
	void (*fn)(const struct az *z, uint32_t d, struct devscratch *sc);
	uint32_t next;
	pthread_mutex_t mu;
};

static void *devpool_worker(void *arg)
{
	struct devpool *p = arg;
	struct devscratch sc;

	clscache_init(&sc.cc, p->z->t);
	sc.slot = pg_xmalloc((p->z->t->n_tracks + 1) * sizeof(uint32_t));
	memset(sc.slot, 0xff, (p->z->t->n_tracks + 1) * sizeof(uint32_t));
	for (;;) {
		pthread_mutex_lock(&p->mu);
		uint32_t d = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (d >= p->z->n_devs)
			break;
		p->fn(p->z, d, &sc);
	}
	clscache_release(&sc.cc);
	free(sc.slot);
	return NULL;
}

#define DEV_THREADS 2

/* fn for every device, on up to DEV_THREADS threads. */
static void each_device(const struct az *z,
			void (*fn)(const struct az *z, uint32_t d, struct devscratch *sc))
{
	struct devpool p = {z, fn, 0, PTHREAD_MUTEX_INITIALIZER};
	pthread_t th[DEV_THREADS];
	int n_th = 0;

	for (int i = 1; i < DEV_THREADS && (uint32_t)i < z->n_devs; i++)
		if (pthread_create(&th[n_th], NULL, devpool_worker, &p) == 0)
			n_th++;
	devpool_worker(&p);
	for (int i = 0; i < n_th; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p.mu);
}

static void collect_devices(struct az *z)
{
	struct clscache cc;

	plan_filing(z);
	file_events(z);
	clscache_init(&cc, z->t);
	make_ops(z, &cc);
	clscache_release(&cc);
	each_device(z, build_device);
}

/* ---- steps ---- */

static void spans_add(struct spans *sp, int64_t step, int64_t s, int64_t e)
{
	sp->v = grow(sp->v, sp->n, &sp->cap, sizeof(*sp->v));
	sp->v[sp->n++] = (struct span){step, s, e};
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* Steps lines (TPU, TensorFlow GPU): each device's own step events. */
static int steps_from_lines(struct az *z)
{
	const struct trace *t = z->t;

	for (uint32_t k = 0; k < z->f.steps.n; k++) {
		const struct trace_event *e = trace_event_at(t, z->f.steps.v[k]);
		struct dev *dv = &z->devs[z->track_dev[e->track]];
		int64_t step;
		if (!parse_i64(trace_str_get(t, e->name), &step) &&
		    !parse_i64(arg(z, e, z->k_group_id), &step))
			step = dv->steps.n;
		spans_add(&dv->steps, step, e->ts_ns, e->ts_ns + e->dur_ns);
	}
	return z->f.steps.n > 0;
}

struct hostmark {
	uint32_t file;
	int64_t step, s, e;
};

static int cmp_hostmark(const void *a, const void *b)
{
	const struct hostmark *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

/*
 * Correlation key -> marker. Correlation ids come from one counter that CPU
 * ops, launches and flows share (about one in eight is a launch's), so when
 * the keys span at most 12 times their number they index a plain array (no
 * larger than the hash map would be), else a hash map. A later put for a key
 * replaces an earlier one either way.
 */
struct corrmap {
	uint32_t *dense; /* [key - lo], UINT32_MAX when absent */
	uint64_t lo, span;
	struct pg_u64map map;
};

static void corrmap_init(struct corrmap *m, const struct az *z)
{
	const struct trace *t = z->t;
	struct evcur cur = {t, NULL, 0, 0};
	uint64_t lo = UINT64_MAX, hi = 0;

	memset(m, 0, sizeof(*m));
	for (uint32_t k = 0; k < z->f.corr.n; k++) {
		const struct trace_event *e = ev_at(&cur, z->f.corr.v[k]);
		uint64_t key =
		    e->corr ^ ((uint64_t)t->devices[t->tracks[e->track].device].file << 56);
		lo = key < lo ? key : lo;
		hi = key > hi ? key : hi;
	}
	if (z->f.corr.n == 0 || hi - lo >= 12 * (uint64_t)z->f.corr.n + 65536)
		return;
	m->lo = lo;
	m->span = hi - lo + 1;
	m->dense = pg_xmalloc(m->span * sizeof(uint32_t));
	memset(m->dense, 0xff, m->span * sizeof(uint32_t));
}

static void corrmap_put(struct corrmap *m, uint64_t key, uint32_t v)
{
	if (m->dense)
		m->dense[key - m->lo] = v;
	else
		pg_u64map_put(&m->map, key, v);
}

static uint32_t corrmap_get(const struct corrmap *m, uint64_t key)
{
	if (!m->dense)
		return pg_u64map_get(&m->map, key);
	return key - m->lo < m->span ? m->dense[key - m->lo] : UINT32_MAX;
}

static void corrmap_release(struct corrmap *m)
{
	free(m->dense);
	pg_u64map_release(&m->map);
}

/*
 * Host step markers (Kineto ProfilerStep#N, JAX StepTraceAnnotation) map device
 * work to steps through correlations: a kernel belongs to the step whose host
 * span holds the launch that has its correlation id.
 */
static int steps_from_host(struct az *z, int kind, struct hostmark **hm_out, uint32_t *n_hm_out)
{
	const struct trace *t = z->t;
	const struct idxv *marks = &z->f.mark[kind];
	struct hostmark *hm = NULL;
	uint32_t n = 0;

	if (marks->n == 0)
		return 0;
	hm = pg_xmalloc(marks->n * sizeof(*hm));
	for (uint32_t k = 0; k < marks->n; k++) {
		const struct trace_event *e = trace_event_at(t, marks->v[k]);
		const struct trace_track *tr = &t->tracks[e->track];
		int64_t step = 0;
		/* the filing pass let only parsable markers through */
		if (kind == MARK_PROFILER_STEP)
			parse_i64(trace_str_get(t, e->name) + 13, &step);
		else
			parse_i64(arg(z, e, z->k_step_num), &step);
		hm[n++] = (struct hostmark){t->devices[tr->device].file, step, e->ts_ns,
					    e->ts_ns + e->dur_ns};
	}
	qsort(hm, n, sizeof(*hm), cmp_hostmark);
	/* correlation -> step, from host launches inside a step's span */
	struct corrmap cm;
	corrmap_init(&cm, z);
	struct evcur cur = {t, NULL, 0, 0};
	for (uint32_t k = 0; k < z->f.corr.n; k++) {
		const struct trace_event *e = ev_at(&cur, z->f.corr.v[k]);
		uint32_t file = t->devices[t->tracks[e->track].device].file;
		/* binary search the file's markers for the one holding ts */
		uint32_t lo = 0, hi = n;
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (hm[mid].file < file || (hm[mid].file == file && hm[mid].s <= e->ts_ns))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0 || hm[lo - 1].file != file || e->ts_ns >= hm[lo - 1].e)
			continue;
		corrmap_put(&cm, e->corr ^ ((uint64_t)file << 56), lo - 1);
	}
	int any = 0;
	for (uint32_t d = 0; d < z->n_devs; d++) {
		struct dev *dv = &z->devs[d];
		/* per marker: min start and max end of the device work it launched */
		int64_t *ms = pg_xmalloc(n * sizeof(int64_t)),
			*me = pg_xmalloc(n * sizeof(int64_t));
		for (uint32_t k = 0; k < n; k++) {
			ms[k] = INT64_MAX;
			me[k] = INT64_MIN;
		}
		for (uint32_t k = 0; k < dv->n; k++) {
			const struct trace_event *e = ev_at(&cur, dv->a[k].ev);
			if (!(e->flags & TRACE_EV_HAS_CORR))
				continue;
			uint32_t m = corrmap_get(&cm, e->corr ^ ((uint64_t)dv->file << 56));
			if (m == UINT32_MAX)
				continue;
			if (dv->a[k].s < ms[m])
				ms[m] = dv->a[k].s;
			if (dv->a[k].e > me[m])
				me[m] = dv->a[k].e;
		}
		for (uint32_t k = 0; k < n; k++)
			if (hm[k].file == dv->file && ms[k] <= me[k]) {
				spans_add(&dv->steps, hm[k].step, ms[k], me[k]);
				any = 1;
			}
		free(ms);
		free(me);
	}
	corrmap_release(&cm);
	*hm_out = hm;
	*n_hm_out = n;
	return any;
}

/* No marker: executions of the dominant module on XLA Modules lines. */
static int steps_from_modules(struct az *z)
{
	const struct trace *t = z->t;
	const struct idxv *mods = &z->f.modules;
	struct pg_u64map total = {0};
	double *sum = NULL;
	uint32_t n = 0, cap = 0;
	trace_str *names = NULL;
	uint32_t ncap = 0;
	struct evcur cur = {t, NULL, 0, 0};

	for (uint32_t i = 0; i < mods->n; i++) {
		const struct trace_event *e = ev_at(&cur, mods->v[i]);
		uint32_t k = pg_u64map_get(&total, e->name);
		if (k == UINT32_MAX) {
			sum = grow(sum, n, &cap, sizeof(double));
			names = grow(names, n, &ncap, sizeof(trace_str));
			k = n++;
			sum[k] = 0;
			names[k] = e->name;
			pg_u64map_put(&total, e->name, k);
		}
		sum[k] += (double)e->dur_ns;
	}
	int any = 0;
	if (n > 0) {
		uint32_t best = 0;
		for (uint32_t k = 1; k < n; k++)
			if (sum[k] > sum[best] ||
			    (sum[k] == sum[best] &&
			     strcmp(trace_str_get(t, names[k]), trace_str_get(t, names[best])) < 0))
				best = k;
		for (uint32_t i = 0; i < mods->n; i++) {
			const struct trace_event *e = ev_at(&cur, mods->v[i]);
			uint32_t d = z->track_dev[e->track];
			if (e->name != names[best] || d == UINT32_MAX)
				continue;
			spans_add(&z->devs[d].steps, 0, e->ts_ns, e->ts_ns + e->dur_ns);
			any = 1;
		}
		/* a step is the period from one execution to the next, so work of other
		 * modules in between (an all-reduce module, say) belongs to it; the last
		 * execution ends its own step */
		for (uint32_t d = 0; d < z->n_devs; d++) {
			struct spans *sp = &z->devs[d].steps;
			if (sp->n)
				qsort(sp->v, sp->n, sizeof(*sp->v), cmp_span);
			for (uint32_t k = 0; k < sp->n; k++) {
				sp->v[k].step = k;
				if (k + 1 < sp->n && sp->v[k + 1].s > sp->v[k].e)
					sp->v[k].e = sp->v[k + 1].s;
			}
		}
	}
	pg_u64map_release(&total);
	free(sum);
	free(names);
	return any;
}
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Index of step in the sorted unique ids, or UINT32_MAX. */
static uint32_t step_index(const int64_t *ids, uint32_t n, int64_t step)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (ids[mid] < step)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[lo] == step ? lo : UINT32_MAX;
}

static void build_step_table(struct az *z, const struct hostmark *hm, uint32_t n_hm)
{
	struct summary *s = z->s;
	int64_t *ids = NULL;
	uint32_t n = 0, cap = 0;

	for (uint32_t d = 0; d < z->n_devs; d++)
		for (uint32_t k = 0; k < z->devs[d].steps.n; k++) {
			ids = grow(ids, n, &cap, sizeof(int64_t));
			ids[n++] = z->devs[d].steps.v[k].step;
		}
	if (n)
		qsort(ids, n, sizeof(int64_t), cmp_i64);
	uint32_t u = 0;
	for (uint32_t i = 0; i < n; i++)
		if (u == 0 || ids[u - 1] != ids[i])
			ids[u++] = ids[i];
	z->step_ids = ids;
	z->n_step_ids = u;
	s->steps = pg_xcalloc(u + 1, sizeof(*s->steps));
	s->n_steps = u;
	for (uint32_t i = 0; i < u; i++) {
		s->steps[i].step = ids[i];
		s->steps[i].host_us = -1;
		s->steps[i].device_us = pg_xmalloc((z->n_devs + 1) * sizeof(double));
		for (uint32_t d = 0; d < z->n_devs; d++)
			s->steps[i].device_us[d] = -1;
	}
	/* each span and host marker finds its step by binary search: thousands of
	 * steps on many devices must not cost steps x spans */
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct spans *sp = &z->devs[d].steps;
		for (uint32_t k = 0; k < sp->n; k++) {
			uint32_t i = step_index(ids, u, sp->v[k].step);
			double us = (double)(sp->v[k].e - sp->v[k].s) / 1000.0;
			if (i != UINT32_MAX && us > s->steps[i].device_us[d])
				s->steps[i].device_us[d] = us;
		}
	}
	for (uint32_t i = 0; i < u; i++)
		for (uint32_t d = 0; d < z->n_devs; d++)
			if (s->steps[i].device_us[d] > s->steps[i].us)
				s->steps[i].us = s->steps[i].device_us[d];
	for (uint32_t k = 0; k < n_hm; k++) {
		uint32_t i = step_index(ids, u, hm[k].step);
		double us = (double)(hm[k].e - hm[k].s) / 1000.0;
		if (i != UINT32_MAX && us > s->steps[i].host_us)
			s->steps[i].host_us = us;
	}
}

/* How many of the sorted v[0..n) are <= x. */
static uint32_t count_le(const int64_t *v, uint32_t n, int64_t x)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Each record's steady flag: whether it starts inside a steady window. A track's
 * records come by start, so the window is found by walking on, not by a search. */
static void mark_steady(struct dev *dv)
{
	uint32_t lo = 0, track = UINT32_MAX;
	int64_t prev = INT64_MIN;

	for (uint32_t k = 0; k < dv->n; k++) {
		struct act *a = &dv->a[k];
		if (a->track != track || a->s < prev) {
			lo = count_le(dv->win_s, dv->n_win, a->s);
			track = a->track;
		}
		while (lo < dv->n_win && dv->win_s[lo] <= a->s)
			lo++;
		prev = a->s;
		a->steady = lo > 0 && a->s < dv->win_e[lo - 1];
	}
}

/* Steady windows per device: its spans of the steady steps, sorted, merged. */
static void steady_windows(struct az *z)
{
	struct summary *s = z->s;

	for (uint32_t d = 0; d < z->n_devs; d++) {
		struct dev *dv = &z->devs[d];
		struct span *w = pg_xmalloc((dv->steps.n + 1) * sizeof(*w));
		uint32_t n = 0;
		for (uint32_t k = 0; k < dv->steps.n; k++) {
			uint32_t i = step_index(z->step_ids, z->n_step_ids, dv->steps.v[k].step);
			if (i != UINT32_MAX && s->steps[i].steady)
				w[n++] = dv->steps.v[k];
		}
		if (n)
			qsort(w, n, sizeof(*w), cmp_span);
		dv->win_s = pg_xmalloc((n + 1) * sizeof(int64_t));
		dv->win_e = pg_xmalloc((n + 1) * sizeof(int64_t));
		dv->n_win = 0;
		for (uint32_t k = 0; k < n; k++) {
			if (dv->n_win && w[k].s <= dv->win_e[dv->n_win - 1]) {
				if (w[k].e > dv->win_e[dv->n_win - 1])
					dv->win_e[dv->n_win - 1] = w[k].e;
				continue;
			}
			dv->win_s[dv->n_win] = w[k].s;
			dv->win_e[dv->n_win++] = w[k].e;
		}
		free(w);
		/* without steps, the whole capture is the window */
		if (!z->has_steps && dv->n) {
			dv->win_s[0] = dv->lo;
			dv->win_e[0] = dv->hi;
			dv->n_win = 1;
		}
		mark_steady(dv);
	}
}

/* ---- the time split ---- */

/*
 * The measures of the union of compute, of communication and of memory
 * intervals and of their combinations, from intervals that arrive in order of
 * start. Nothing that starts later can cover time before the latest start, so
 * the time up to it is settled and counted as it is passed: each category
 * needs only the furthest end seen. Integer ns, so the result is exact.
 */
struct sweep {
	int64_t t;	/* time counted up to */
	int64_t end[3]; /* per category (compute, communication, memory): furthest end */
	int64_t busy, comp, ecomm, emem, comm, mem;
};

static void sweep_to(struct sweep *w, int64_t to)
{
	while (w->t < to) {
		int64_t next = to;
		int on[3];
		for (int c = 0; c < 3; c++) {
			on[c] = w->end[c] > w->t;
			if (on[c] && w->end[c] < next)
				next = w->end[c];
		}
		if (!on[0] && !on[1] && !on[2]) {
			w->t = to;
			break;
		}
		int64_t len = next - w->t;
		w->busy += len;
		if (on[0])
			w->comp += len;
		else if (on[1])
			w->ecomm += len;
		else if (on[2])
			w->emem += len;
		if (on[1])
			w->comm += len;
		if (on[2])
			w->mem += len;
		w->t = next;
	}
}

/*
 * Exposed-time decomposition of a device over windows [ws, we): compute first,
 * then communication not under compute, then memory not under either, then
 * idle. Integer ns throughout, so the parts sum exactly to the wall time.
 */
static void split(const struct dev *dv, const int64_t *ws, const int64_t *we, uint32_t nw,
		  struct sum_split *out)
{
	struct sweep w = {INT64_MIN, {INT64_MIN, INT64_MIN, INT64_MIN}, 0, 0, 0, 0, 0, 0};
	int64_t wall = 0, ksum = 0;
	uint32_t lo = 0;

	for (uint32_t k = 0; k < nw; k++)
		wall += we[k] - ws[k];
	for (uint32_t k = 0; k < dv->n_leaves; k++) {
		const struct act *a = &dv->a[dv->leaves[k].idx];
		/* the windows starting at or before it; leaves come by start */
		while (lo < nw && ws[lo] <= a->s)
			lo++;
		/* clip to the window holding its start (windows do not overlap) */
		int64_t s0 = a->s, e0 = a->e;
		if (lo == 0 || s0 >= we[lo - 1]) {
			/* starts before a window: clip to the next one it reaches */
			if (lo >= nw || e0 <= ws[lo])
				continue;
			s0 = ws[lo];
			e0 = e0 < we[lo] ? e0 : we[lo];
		} else {
			e0 = e0 < we[lo - 1] ? e0 : we[lo - 1];
		}
		if (e0 <= s0)
			continue;
		ksum += e0 - s0;
		int c = a->cat == ANALYZE_CAT_COMMUNICATION ? 1
			: a->cat == ANALYZE_CAT_MEMORY	    ? 2
							    : 0;
		/* clipping keeps the order: a start before a window moves to its start */
		sweep_to(&w, s0);
		if (e0 > w.end[c])
			w.end[c] = e0;
	}
	sweep_to(&w, INT64_MAX);
	out->wall_us = (double)wall / 1000.0;
	out->busy_us = (double)w.busy / 1000.0;
	out->idle_us = (double)(wall - w.busy) / 1000.0;
	out->compute_us = (double)w.comp / 1000.0;
	out->exposed_comm_us = (double)w.ecomm / 1000.0;
	out->exposed_memcpy_us = (double)w.emem / 1000.0;
	out->comm_us = (double)w.comm / 1000.0;
	out->memcpy_us = (double)w.mem / 1000.0;
	out->kernel_sum_us = (double)ksum / 1000.0;
}

/* Each device's split over the whole capture and over its steady windows. */
static void breakdowns(struct az *z)
{
	struct summary *s = z->s;

	for (uint32_t d = 0; d < z->n_devs; d++) {
		struct dev *dv = &z->devs[d];
		if (dv->n)
			split(dv, &dv->lo, &dv->hi, 1, &s->devices[d].all);
		split(dv, dv->win_s, dv->win_e, dv->n_win, &s->devices[d].steady);
	}
}

/* ---- ops, families, collectives, gaps, regions ---- */

static double dtype_bytes(const char *d)
{
	static const struct {
		const char *n;
		double b;
	} t[] = {{"Float", 4}, {"Int", 4},  {"Long", 8},	  {"BFloat16", 2},
		 {"Bool", 1},  {"Byte", 1}, {"Double", 8},	  {"Half", 2},
		 {"Short", 2}, {"Char", 1}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}};
	for (size_t i = 0; d && i < PG_ARRAY_LEN(t); i++)
		if (strcmp(d, t[i].n) == 0)
			return t[i].b;
	return 0;
}

static double hlo_dtype_bytes(const char *t, size_t n)
{
	static const struct {
		const char *name;
		double bytes;
	} tab[] = {{"pred", 1}, {"s8", 1},  {"u8", 1},	  {"s16", 2},  {"u16", 2}, {"f16", 2},
		   {"bf16", 2}, {"s32", 4}, {"u32", 4},	  {"f32", 4},  {"s64", 8}, {"u64", 8},
		   {"f64", 8},	{"c64", 8}, {"c128", 16}, {"s4", 0.5}, {"u4", 0.5}};
	for (size_t i = 0; i < PG_ARRAY_LEN(tab); i++)
		if (strlen(tab[i].name) == n && memcmp(tab[i].name, t, n) == 0)
			return tab[i].bytes;
	if (n >= 2 && t[0] == 'f' && t[1] == '8') /* f8e4m3fn, f8e5m2, ... */
		return 1;
	return 0;
}

/*
 * Bytes and group size of an HLO collective from its text ("%all-reduce =
 * f32[5,1024]{1,0} all-reduce(...), replica_groups=[4,2]<=[2,4]T(1,0)"):
 * the output shapes (a tuple's summed) and the replica group size, from the
 * iota form [groups,size] or the first explicit {a,b,...} group. 0 when the
 * text says nothing.
 */
static double hlo_collective(const char *text, uint32_t *group)
{
	const char *eq = text ? strstr(text, " = ") : NULL, *p;
	double total = 0;

	*group = 0;
	if (!eq)
		return 0;
	p = eq + 3;
	const char *op_end = p;
	/* shapes run until the opcode: the first '(' after the result types */
	int depth = 0;
	for (; *op_end; op_end++) {
		if (*op_end == '(' && depth == 0 && op_end > p && op_end[-1] != ' ')
			break;
		if (*op_end == '(' && op_end == p)
			depth++;
	}
	for (const char *q = p; q < op_end; q++) {
		if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
			continue;
		const char *t = q;
		while (q < op_end && ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
			q++;
		if (q >= op_end || *q != '[')
			continue;
		double bytes = hlo_dtype_bytes(t, (size_t)(q - t)), elems = 1;
		q++;
		while (q < op_end && *q != ']') {
			char *end;
			long v = strtol(q, &end, 10);
			if (end == q)
				break;
			elems *= (double)v;
			q = end;
			if (*q == ',')
				q++;
		}
		total += bytes * elems;
	}
	const char *rg = strstr(op_end, "replica_groups=");
	if (rg) {
		rg += 15;
		if (*rg == '[') { /* iota: [groups,size]<=... */
			const char *comma = strchr(rg, ',');
			if (comma)
				*group = (uint32_t)strtoul(comma + 1, NULL, 10);
		} else if (rg[0] == '{' && rg[1] == '{') {
			uint32_t n = 1;
			for (const char *q = rg + 2; *q && *q != '}'; q++)
				n += *q == ',';
			*group = n;
		}
	}
	return total;
}

/* Bytes a collective moves and its group size: Kineto NCCL args (In/Out msg
 * nelems x dtype, Group size), else the HLO text of an XLA op. 0 when unknown. */
static int collective_size(const struct az *z, const struct trace_event *e, uint8_t fam,
			   double *bytes_out, uint32_t *group_out)
{
	const char *in = arg(z, e, z->k_in), *outn = arg(z, e, z->k_out);
	const char *ne = fam == ANALYZE_FAM_ALL_GATHER ? outn : in;
	double dbytes = dtype_bytes(arg(z, e, z->k_dtype));

	*bytes_out = 0;
	*group_out = 0;
	if (ne && dbytes > 0) {
		const char *gs = arg(z, e, z->k_group);
		long n = gs ? strtol(gs, NULL, 10) : 0;
		*bytes_out = strtod(ne, NULL) * dbytes;
		*group_out = n > 0 ? (uint32_t)n : 0;
		return 1;
	}
	const char *hlo = arg(z, e, z->k_long_name);
	if (!hlo)
		return 0;
	double b = hlo_collective(hlo, group_out);
	if (b <= 0)
		return 0;
	/* reduce-scatter moves its input: group-size times its output */
	if (fam == ANALYZE_FAM_REDUCE_SCATTER && *group_out > 0)
		b *= *group_out;
	*bytes_out = b;
	return 1;
}

/* Totals over activity starting in steady windows (exact: integer ns summed
 * in doubles, written as us with three decimals). */

/* What the totals read from an event's arguments, worked out once per argument
 * set: string lookups and number parsing per event were most of their cost. */
struct asetcache {
	uint8_t *state; /* ASC_* bits */
	double *flops;
	double *bytes; /* collective size for the family in fam */
	uint32_t *group;
	uint8_t *fam;
};

enum { ASC_FLOPS_KNOWN = 1, ASC_HAS_FLOPS = 2, ASC_COLL_KNOWN = 4, ASC_SIZED = 8 };

static void asetcache_init(struct asetcache *c, const struct trace *t)
{
	size_t n = (size_t)t->n_argsets + 1;

	c->state = pg_xcalloc(n, 1);
	c->flops = pg_xmalloc(n * sizeof(double));
	c->bytes = pg_xmalloc(n * sizeof(double));
	c->group = pg_xmalloc(n * sizeof(uint32_t));
	c->fam = pg_xmalloc(n);
}

static void asetcache_release(struct asetcache *c)
{
	free(c->state);
	free(c->flops);
	free(c->bytes);
	free(c->group);
	free(c->fam);
}

/* The event's "flops" argument as a number; 0 when it has none. */
static int flops_of(const struct az *z, struct asetcache *c, const struct trace_event *e,
		    double *out)
{
	uint32_t i = e->args;

	if (!(c->state[i] & ASC_FLOPS_KNOWN)) {
		const char *fl = arg(z, e, z->k_flops);
		c->state[i] |= ASC_FLOPS_KNOWN | (fl ? ASC_HAS_FLOPS : 0);
		c->flops[i] = fl ? strtod(fl, NULL) : 0;
	}
	*out = c->flops[i];
	return (c->state[i] & ASC_HAS_FLOPS) != 0;
}

static int collective_size_cached(const struct az *z, struct asetcache *c,
				  const struct trace_event *e, uint8_t fam, double *bytes,
				  uint32_t *group)
{
	uint32_t i = e->args;

	if (!(c->state[i] & ASC_COLL_KNOWN) || c->fam[i] != fam) {
		int sized = collective_size(z, e, fam, &c->bytes[i], &c->group[i]);
		c->state[i] = (uint8_t)((c->state[i] & ~ASC_SIZED) | ASC_COLL_KNOWN |
					(sized ? ASC_SIZED : 0));
		c->fam[i] = fam;
	}
	*bytes = c->bytes[i];
	*group = c->group[i];
	return (c->state[i] & ASC_SIZED) != 0;
}

/* Totals over activity starting in steady windows (exact: integer ns summed
 * in doubles, written as us with three decimals). */
static void ops_and_families(struct az *z)
{
	struct summary *s = z->s;
	double fam_self[ANALYZE_FAM_COUNT] = {0}, fam_count[ANALYZE_FAM_COUNT] = {0};
	struct {
		double count, ns, bytes, cap_count, cap_ns, cap_bytes;
		uint32_t group;
		int sized, cap_sized;
	} coll[ANALYZE_FAM_COUNT];
	struct asetcache ac;
	struct evcur cur = {z->t, NULL, 0, 0};

	memset(coll, 0, sizeof(coll));
	asetcache_init(&ac, z->t);
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct dev *dv = &z->devs[d];
		for (uint32_t k = 0; k < dv->n; k++) {
			const struct act *a = &dv->a[k];
			const struct trace_event *e = NULL;
			if (a->cat == ANALYZE_CAT_COMMUNICATION && a->leaf) {
				double b = 0;
				uint32_t g = 0;
				coll[a->fam].cap_count += 1;
				coll[a->fam].cap_ns += (double)(a->e - a->s);
				e = ev_at(&cur, a->ev);
				if (collective_size_cached(z, &ac, e, a->fam, &b, &g)) {
					coll[a->fam].cap_bytes += b;
					coll[a->fam].cap_sized = 1;
					if (g > coll[a->fam].group)
						coll[a->fam].group = g;
				}
			}
			if (!a->steady)
				continue;
			struct opinfo *o = &z->ops[a->op];
			o->count += 1;
			o->self_ns += (double)a->self;
			o->total_ns += (double)(a->e - a->s);
			fam_self[a->fam] += (double)a->self;
			fam_count[a->fam] += 1;
			if (!e)
				e = ev_at(&cur, a->ev);
			double fl;
			if (flops_of(z, &ac, e, &fl)) {
				s->flops_total += fl;
				s->has_flops = 1;
			}
			if (a->cat != ANALYZE_CAT_COMMUNICATION || !a->leaf)
				continue;
			coll[a->fam].count += 1;
			coll[a->fam].ns += (double)(a->e - a->s);
			double b = 0;
			uint32_t g = 0;
			if (collective_size_cached(z, &ac, e, a->fam, &b, &g)) {
				coll[a->fam].bytes += b;
				if (g > coll[a->fam].group)
					coll[a->fam].group = g;
				coll[a->fam].sized = 1;
			}
		}
	}
	asetcache_release(&ac);
	s->ops = pg_xcalloc(z->n_ops + 1, sizeof(*s->ops));
	for (uint32_t i = 0; i < z->n_ops; i++) {
		struct opinfo *o = &z->ops[i];
		if (o->count == 0)
			continue;
		struct sum_op *x = &s->ops[s->n_ops++];
		x->name = pg_xstrdup(o->name);
		x->family = pg_xstrdup(analyze_family_name(o->fam));
		x->category = pg_xstrdup(analyze_category_name(o->cat));
		for (int k = 0; k < 3; k++)
			x->examples[k] = o->examples[k] ? pg_xstrdup(o->examples[k]) : NULL;
		x->count_total = o->count;
		x->self_us_total = o->self_ns / 1000.0;
		x->total_us_total = o->total_ns / 1000.0;
	}
	s->families = pg_xcalloc(ANALYZE_FAM_COUNT, sizeof(*s->families));
	for (int f = 0; f < ANALYZE_FAM_COUNT; f++) {
		if (fam_count[f] == 0)
			continue;
		struct sum_family *x = &s->families[s->n_families++];
		x->family = pg_xstrdup(analyze_family_name((enum analyze_family)f));
		enum analyze_category c = ANALYZE_CAT_COMPUTE;
		if (f >= ANALYZE_FAM_ALL_REDUCE && f <= ANALYZE_FAM_COLLECTIVE_OTHER)
			c = ANALYZE_CAT_COMMUNICATION;
		else if (f == ANALYZE_FAM_MEMCPY || f == ANALYZE_FAM_MEMSET)
			c = ANALYZE_CAT_MEMORY;
		x->category = pg_xstrdup(analyze_category_name(c));
		x->count_total = fam_count[f];
		x->us_total = fam_self[f] / 1000.0;
	}
	s->collectives = pg_xcalloc(ANALYZE_FAM_COUNT, sizeof(*s->collectives));
	for (int f = ANALYZE_FAM_ALL_REDUCE; f <= ANALYZE_FAM_COLLECTIVE_OTHER; f++) {
		if (coll[f].cap_count == 0)
			continue;
		struct sum_collective *c = &s->collectives[s->n_collectives++];
		c->kind = pg_xstrdup(f == ANALYZE_FAM_COLLECTIVE_OTHER
					 ? "other"
					 : analyze_family_name((enum analyze_family)f));
		c->count_total = coll[f].count;
		c->us_total = coll[f].ns / 1000.0;
		c->bytes_total = coll[f].bytes;
		c->group_size = coll[f].group;
		c->sized = coll[f].sized;
		c->capture_count_total = coll[f].cap_count;
		c->capture_bytes_total = coll[f].cap_bytes;
		c->capture_sized = coll[f].cap_sized;
		c->capture_us_total = coll[f].cap_ns / 1000.0;
	}
}

/*
 * Idle before ops: gaps in a device's activity across all its streams (a comm
 * stream waiting while compute runs is not idle), inside steady windows. When the op that
 * ends the gap is a marker (iota, constant, copy-start, ...), the gap belongs
 * to the first real op after it, looking at most 8 ops ahead and never across
 * a second gap.
 */
static void gaps(struct az *z)
{
	struct summary *s = z->s;
	double *cnt = pg_xcalloc(z->n_ops + 1, sizeof(double));
	double *tot = pg_xcalloc(z->n_ops + 1, sizeof(double));
	double *mx = pg_xcalloc(z->n_ops + 1, sizeof(double));
	uint32_t *marker = pg_xmalloc((z->n_ops + 1) * sizeof(uint32_t));

	for (uint32_t i = 0; i <= z->n_ops; i++)
		marker[i] = UINT32_MAX;
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct dev *dv = &z->devs[d];
		const struct leafkey *lv = dv->leaves;
		uint32_t n = dv->n_leaves;
		int64_t prev_end = INT64_MIN;
		for (uint32_t k = 0; k < n; k++) {
			const struct act *a = &dv->a[lv[k].idx];
			if (prev_end != INT64_MIN && a->s > prev_end && a->steady) {
				int64_t gap = a->s - prev_end;
				uint32_t payload = a->op, mk = a->op;
				if (z->ops[mk].marker) {
					int64_t chain = a->e;
					for (uint32_t j = k + 1; j < n && j <= k + 8; j++) {
						const struct act *b = &dv->a[lv[j].idx];
						if (b->s > chain)
							break;
						if (!z->ops[b->op].marker) {
							payload = b->op;
							break;
						}
						chain = b->e > chain ? b->e : chain;
					}
				}
				cnt[payload] += 1;
				tot[payload] += (double)gap;
				if ((double)gap > mx[payload])
					mx[payload] = (double)gap;
				if (marker[payload] == UINT32_MAX || mk != payload)
					marker[payload] = mk;
			}
			if (a->e > prev_end)
				prev_end = a->e;
		}
	}
	s->gaps = pg_xcalloc(z->n_ops + 1, sizeof(*s->gaps));
	for (uint32_t i = 0; i < z->n_ops; i++) {
		if (cnt[i] == 0)
			continue;
		struct sum_gap *g = &s->gaps[s->n_gaps++];
		g->op = pg_xstrdup(z->ops[i].name);
		g->marker = pg_xstrdup(z->ops[marker[i]].name);
		g->count_total = cnt[i];
		g->us_total = tot[i] / 1000.0;
		g->max_us = mx[i] / 1000.0;
	}
	free(cnt);
	free(tot);
	free(mx);
	free(marker);
}

/* ---- regions from scope paths (tf_op, name) ---- */

struct region_acc {
	char *path;
	uint32_t depth;
	double count, incl, excl;
};

static int wrapper(const char *seg, size_t n)
{
	static const char *w[] = {"jit",  "jvp",	"transpose", "vmap",
				  "pjit", "named_call", "remat",     "checkpoint"};
	for (size_t i = 0; i < PG_ARRAY_LEN(w); i++)
		if (strlen(w[i]) == n && memcmp(seg, w[i], n) == 0)
			return 1;
	return 0;
}

/* "transpose(jvp(Transformer))" -> "Transformer"; bare wrappers -> "". */
static void unwrap(const char *seg, size_t n, const char **out, size_t *out_n)
{
	for (;;) {
		const char *p = memchr(seg, '(', n);
		if (!p || seg[n - 1] != ')' || !wrapper(seg, (size_t)(p - seg)))
			break;
		n = n - (size_t)(p - seg) - 2;
		seg = p + 1;
	}
	if (wrapper(seg, n))
		n = 0;
	*out = seg;
	*out_n = n;
}

static int skip_segment(const char *seg, size_t n)
{
	static const char *exact[] = {"xla",  "XlaModule", "pallas_call", "shard_map",
				      "call", "execute",   "launch"};
	for (size_t i = 0; i < PG_ARRAY_LEN(exact); i++)
		if (strlen(exact[i]) == n && memcmp(seg, exact[i], n) == 0)
			return 1;
	return n == 0;
}

/*
 * The regions a scope string stands for, found once per distinct scope: every
 * op of a scope adds its self time to the same chain of prefixes, so parsing
 * per event (lookups, splitting, hashing each prefix) would be wasted work.
 * Chain entries are region indices; the top bit marks the one that takes the
 * exclusive time.
 */
struct chains {
	struct pg_u64map by_key;
	uint32_t *off, *len;
	uint32_t n, cap;
	uint32_t *ent;
	uint32_t n_ent, cap_ent;
};

static uint32_t chain_for(struct chains *c, uint64_t key, const char *scope, struct region_acc **r,
			  uint32_t *n, uint32_t *cap, struct pg_u64map *idx, struct pg_buf *path)
{
	uint32_t ci = pg_u64map_get(&c->by_key, key);

	if (ci != UINT32_MAX)
		return ci;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->off = pg_xrealloc(c->off, c->cap * sizeof(uint32_t));
		c->len = pg_xrealloc(c->len, c->cap * sizeof(uint32_t));
	}
	ci = c->n++;
	c->off[ci] = c->n_ent;
	pg_buf_reset(path);
	uint32_t depth = 0;
	const char *p = scope;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		const char *seg;
		size_t sn;
		unwrap(p, len, &seg, &sn);
		while (sn > 0 && seg[sn - 1] == ':')
			sn--;
		if (!skip_segment(seg, sn)) {
			if (path->len)
				pg_buf_adds(path, "/");
			pg_buf_add(path, seg, sn);
			depth++;
			uint64_t h = pg_hash(path->ptr, path->len);
			uint32_t i = pg_u64map_get(idx, h);
			while (i != UINT32_MAX && strcmp((*r)[i].path, path->ptr) != 0)
				i = pg_u64map_get(idx, ++h);
			if (i == UINT32_MAX) {
				*r = grow(*r, *n, cap, sizeof(**r));
				i = (*n)++;
				(*r)[i] =
				    (struct region_acc){pg_xstrdup(path->ptr), depth, 0, 0, 0};
				pg_u64map_put(idx, h, i);
			}
			c->ent = grow(c->ent, c->n_ent, &c->cap_ent, sizeof(uint32_t));
			c->ent[c->n_ent++] = i | ((!slash || !slash[1]) ? 0x80000000u : 0);
		}
		if (!slash)
			break;
		p = slash + 1;
	}
	c->len[ci] = c->n_ent - c->off[ci];
	pg_u64map_put(&c->by_key, key, ci);
	return ci;
}

/* An event's scope from its arguments: tf_op, or for XLA GPU kernels (tf_op
 * "XlaModule:") the name stat; 0 when they give none. */
static trace_str scope_arg(const struct az *z, const struct trace_event *e)
{
	trace_str sid = z->k_tf_op && e->args ? trace_arg_get(z->t, e->args, z->k_tf_op) : 0;
	const char *scope = sid ? trace_str_get(z->t, sid) : NULL;

	if (!scope || strncmp(scope, "XlaModule", 9) == 0) {
		sid = z->k_name && e->args ? trace_arg_get(z->t, e->args, z->k_name) : 0;
		scope = sid ? trace_str_get(z->t, sid) : NULL;
	}
	return scope && *scope ? sid : 0;
}

#define NO_CHAIN (UINT32_MAX - 1)

static void regions(struct az *z)
{
	struct summary *s = z->s;
	struct region_acc *r = NULL;
	uint32_t n = 0, cap = 0;
	struct pg_u64map idx = {0};
	struct pg_buf path = PG_BUF_INIT;
	struct chains ch;
	struct evcur cur = {z->t, NULL, 0, 0};
	/* the chain per argument set (and per annotation below): one lookup per event */
	uint32_t *by_args = pg_xmalloc(((size_t)z->t->n_argsets + 1) * sizeof(uint32_t));

	memset(&ch, 0, sizeof(ch));
	memset(by_args, 0xff, ((size_t)z->t->n_argsets + 1) * sizeof(uint32_t));
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct dev *dv = &z->devs[d];
		uint32_t *by_ann = pg_xmalloc((dv->n_ann + 1) * sizeof(uint32_t));
		memset(by_ann, 0xff, (dv->n_ann + 1) * sizeof(uint32_t));
		for (uint32_t k = 0; k < dv->n; k++) {
			const struct act *a = &dv->a[k];
			if (!a->steady)
				continue;
			const struct trace_event *e = ev_at(&cur, a->ev);
			uint32_t ci = by_args[e->args];
			if (ci == UINT32_MAX) {
				trace_str sid = scope_arg(z, e);
				ci = sid ? chain_for(&ch, sid, trace_str_get(z->t, sid), &r, &n,
						     &cap, &idx, &path)
					 : NO_CHAIN;
				by_args[e->args] = ci;
			}
			if (ci == NO_CHAIN) {
				/* Kineto: the GPU user annotation around the kernel */
				const struct ann *an = dv->n_ann ? annotation_at(dv, a->s) : NULL;
				if (!an || !*an->path)
					continue;
				uint32_t ai = (uint32_t)(an - dv->ann);
				if (by_ann[ai] == UINT32_MAX)
					by_ann[ai] = chain_for(
					    &ch, (1ULL << 62) | ((uint64_t)d << 32) | (uint64_t)ai,
					    an->path, &r, &n, &cap, &idx, &path);
				ci = by_ann[ai];
			}
			for (uint32_t q = 0; q < ch.len[ci]; q++) {
				uint32_t en = ch.ent[ch.off[ci] + q], i = en & 0x7fffffffu;
				r[i].count += 1;
				r[i].incl += (double)a->self;
				if (en & 0x80000000u)
					r[i].excl += (double)a->self;
			}
		}
		free(by_ann);
	}
	free(by_args);
	s->regions = pg_xcalloc(n + 1, sizeof(*s->regions));
	for (uint32_t i = 0; i < n; i++) {
		struct sum_region *x = &s->regions[s->n_regions++];
		x->path = r[i].path;
		x->depth = r[i].depth;
		x->count_total = r[i].count;
		x->inclusive_us_total = r[i].incl / 1000.0;
		x->exclusive_us_total = r[i].excl / 1000.0;
	}
	free(r);
	pg_u64map_release(&idx);
	pg_u64map_release(&ch.by_key);
	free(ch.off);
	free(ch.len);
	free(ch.ent);
	pg_buf_release(&path);
}

/* ---- identity, quality, candidates ---- */

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
	s->basis = pg_xstrdup("profgate.timeline/1");
	for (uint32_t i = 0; i < z->o->n_labels; i++) {
		s->labels = pg_xrealloc(s->labels, (s->n_labels + 1) * sizeof(char *));
		s->labels[s->n_labels++] = pg_xstrdup(z->o->labels[i]);
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
		free(dv->steps.v);
		free(dv->win_s);
		free(dv->win_e);
	}
	filed_release(&z->f, z->n_devs);
	free(z->devs);
	for (uint32_t i = 0; i < z->n_ops; i++) {
		free(z->ops[i].name);
		for (int k = 0; k < 3; k++)
			free(z->ops[i].examples[k]);
	}
	free(z->ops);
	free(z->op_of_name);
	free(z->step_ids);
	free(z->role);
	free(z->track_dev);
	free(z->name_flags);
	free(z->aset_flags);
	pg_u64map_release(&z->op_by_canon);
}

int analyze_summarize(const struct trace *t, const struct analyze_options *o, struct summary *s)
{
	struct az z;
	struct hostmark *hm = NULL;
	uint32_t n_hm = 0;
	const char *src = "none";

	memset(&z, 0, sizeof(z));
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
	z.k_step_num = trace_str_find(t, "step_num");
	z.k_r = trace_str_find(t, "_r");
	z.k_flops = trace_str_find(t, "flops");
	z.k_group_id = trace_str_find(t, "group_id");
	z.k_long_name = trace_str_find(t, "long_name");
	z.k_train = trace_str_find(t, "train");

	collect_devices(&z);
	identity_and_files(&z);
	if (steps_from_lines(&z))
		src = "steps-line";
	else if (steps_from_host(&z, 0, &hm, &n_hm))
		src = "step-annotation";
	else if ((free(hm), hm = NULL, n_hm = 0,
		  steps_from_host(&z, MARK_PROFILER_STEP, &hm, &n_hm)))
		src = "profiler-step";
	else if ((free(hm), hm = NULL, n_hm = 0, steps_from_modules(&z)))
		src = "module-period";
	z.has_steps = strcmp(src, "none") != 0;
	s->steps_source = pg_xstrdup(src);
	s->step_source = pg_xstrdup(src);
	build_step_table(&z, hm, n_hm);
	free(hm);
	summary_choose_warmup(s, o->warmup);
	uint32_t steady = 0;
	for (uint32_t i = 0; i < s->n_steps; i++)
		steady += s->steps[i].steady;
	steady_windows(&z);
	breakdowns(&z);
	ops_and_families(&z);
	gaps(&z);
	regions(&z);
	quality(&z);
	s->basis_devices = z.n_devs;
	s->basis_steady_steps = steady;
	summary_finalize(s);

	release(&z);
	return 0;
}
