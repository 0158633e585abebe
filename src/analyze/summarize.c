/*
 * trace model -> summary: devices and their activity, steps, the exposed-time
 * breakdown, ops, families, collectives, gaps, regions, quality, identity and
 * candidates. Pure: reads the model, writes the summary, no I/O.
 *
 * How it works: one pass over the events files each one the summary needs by
 * purpose: per accelerator device its activity (kernels, copies and sets on
 * device streams; XLA Ops on TPU) and its GPU annotations, and the step
 * sources (Steps lines, host markers and the launches that carry correlations,
 * XLA Modules). Each device's activity then becomes compact records with a
 * category and family from the rules table (cached per name), ordered by
 * track. Nesting per track gives each record its self time and a leaf flag;
 * only leaves enter the time split, so a "while" op never hides the all-reduce
 * inside it. Steps come from the best source the profile has and give every
 * device a list of step windows; the steady windows bound the per-step
 * numbers. One pass over each device's leaves in time order makes its splits
 * and gaps; one pass over all records in device order makes the op, family,
 * collective and region totals. docs/summary.md states every definition.
 *
 * The stages run as jobs on a thread per core (run_jobs): parts of the event
 * range, devices, and the passes above side by side. Every job writes only
 * its own device or its own part of the summary, and lists made in parts are
 * joined in order, so the bytes never depend on timing or the thread count.
 */
#include "analyze.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* A device's idle gaps before one op (see note_gap). */
struct gapnote {
	uint32_t op;
	uint32_t marker; /* the last marker op other than op that ended one, or UINT32_MAX */
	double count, ns, max_ns;
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
	uint32_t *leaves; /* indices into a: its leaves by start, then event */
	uint32_t n_leaves;
	int64_t lo, hi; /* earliest start and latest end of its activity */
	struct ann *ann;
	uint32_t n_ann;
	struct spans steps;	/* this device's step windows */
	int64_t *win_s, *win_e; /* steady windows, sorted */
	uint32_t n_win;
	struct gapnote *gaps; /* by first appearance */
	uint32_t n_gaps, cap_gaps;
};

struct opinfo {
	char *name;
	uint8_t fam, cat;
	char *examples[3];
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
	uint64_t corr_lo, corr_hi; /* range of the correlation keys in corr */
	struct idxv mark[MARK_KINDS];
	struct idxv first; /* (name, event) pairs: a name's first activity event */
};

struct filing;
struct hoststeps;

struct az {
	const struct trace *t;
	const struct analyze_options *o;
	struct summary *s;
	struct dev *devs;
	uint32_t n_devs;
	struct opinfo *ops;
	uint32_t n_ops, cap_ops;
	uint32_t *op_of_name;	      /* name id -> op index, UINT32_MAX before its first event */
	uint8_t *op_marker;	      /* per op: is_marker_op() */
	struct pg_u64map op_by_canon; /* hash of canonical text -> op index (+ check) */
	/* filing */
	uint8_t *role;	      /* per track */
	uint32_t *track_dev;  /* per track: index of its selected device, or UINT32_MAX */
	uint32_t *track_file; /* per track: the file of its device, UINT32_MAX without one */
	uint8_t *name_flags;  /* per name: NAME_* */
	uint8_t *aset_flags;  /* per argument set: ASET_* */
	struct filed f;
	struct filing *parts;	/* the filing pass, while it runs */
	struct hoststeps *host; /* host markers and correlations, prepared for one kind */
	/* steps */
	int64_t *step_ids;
	uint32_t n_step_ids;
	int has_steps;
	int steps_done; /* made beside the devices, when they were not needed */
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

/*
 * Arrays of a device's records: tens of MB each, written once from start to
 * end. In 4 KiB pages the page faults cost about as much as the writing; the
 * kernel may back them with huge pages instead when asked (transparent huge
 * pages in "madvise" mode). Freed with free().
 */
#define HUGE_PAGE (2u << 20)

static void *big_alloc(size_t n)
{
	void *p;

	if (n < 2 * (size_t)HUGE_PAGE)
		return pg_xmalloc(n);
	n = (n + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	if (posix_memalign(&p, HUGE_PAGE, n) != 0)
		return pg_xmalloc(n);
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE);
#endif
	return p;
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

/* Ask for event i ahead of its use when it is in the current run: a GPU's
 * events lie scattered among a host's, and reading them waited on memory. */
#define PREFETCH_AHEAD 16

static void ev_prefetch(const struct evcur *c, uint64_t i)
{
	if (i >= c->lo && i < c->hi)
		__builtin_prefetch(&c->run[i - c->lo]);
}

static const char *arg(const struct az *z, const struct trace_event *e, trace_str key)
{
	trace_str v = key ? trace_arg_get(z->t, e->args, key) : 0;
	return v ? trace_str_get(z->t, v) : NULL;
}

/* Correlation ids are per file (per process): the key tells files apart. */
static uint64_t corr_key(uint64_t corr, uint32_t file)
{
	return corr ^ ((uint64_t)file << 56);
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

/* ---- work on threads ---- */

#define MAX_THREADS 4

/* A worker's own scratch, made on first use. */
struct scratch {
	struct clscache cc; /* by_name is NULL until used */
	uint32_t *slot;	    /* per track, all UINT32_MAX between uses */
	uint32_t *ops;	    /* per op, all UINT32_MAX between uses */
};

static struct clscache *scratch_cc(struct scratch *sc, const struct trace *t)
{
	if (!sc->cc.by_name)
		clscache_init(&sc->cc, t);
	return &sc->cc;
}

static uint32_t *scratch_slot(struct scratch *sc, const struct trace *t)
{
	if (!sc->slot) {
		sc->slot = pg_xmalloc((t->n_tracks + 1) * sizeof(uint32_t));
		memset(sc->slot, 0xff, (t->n_tracks + 1) * sizeof(uint32_t));
	}
	return sc->slot;
}

static uint32_t *scratch_ops(struct scratch *sc, uint32_t n_ops)
{
	if (!sc->ops) {
		sc->ops = pg_xmalloc(((size_t)n_ops + 1) * sizeof(uint32_t));
		memset(sc->ops, 0xff, ((size_t)n_ops + 1) * sizeof(uint32_t));
	}
	return sc->ops;
}

struct jobs {
	struct az *z;
	void (*fn)(struct az *z, uint32_t job, struct scratch *sc);
	uint32_t n, next;
	pthread_mutex_t mu;
};

static void *jobs_worker(void *arg)
{
	struct jobs *j = arg;
	struct scratch sc;

	memset(&sc, 0, sizeof(sc));
	for (;;) {
		pthread_mutex_lock(&j->mu);
		uint32_t i = j->next < j->n ? j->next++ : j->n;
		pthread_mutex_unlock(&j->mu);
		if (i >= j->n)
			break;
		j->fn(j->z, i, &sc);
	}
	if (sc.cc.by_name)
		clscache_release(&sc.cc);
	free(sc.slot);
	free(sc.ops);
	return NULL;
}

/*
 * Jobs 0..n-1, taken in order by up to one thread per core. Every job writes
 * only what is its own (a device, one list of the summary), so the result
 * never depends on which thread ran which job, or on how many there were.
 */
static void run_jobs(struct az *z, uint32_t n,
		     void (*fn)(struct az *z, uint32_t job, struct scratch *sc))
{
	struct jobs j = {z, fn, n, 0, PTHREAD_MUTEX_INITIALIZER};
	pthread_t th[MAX_THREADS];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t want = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (uint32_t)cores;
	uint32_t n_th = 0;

	for (uint32_t i = 1; i < want && i < n; i++)
		if (pthread_create(&th[n_th], NULL, jobs_worker, &j) == 0)
			n_th++;
	jobs_worker(&j);
	for (uint32_t i = 0; i < n_th; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.mu);
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
	    (e->flags & (TRACE_EV_HAS_CORR | TRACE_EV_FLOW)) == TRACE_EV_HAS_CORR) {
		uint64_t key = corr_key(e->corr, z->track_file[e->track]);
		idxv_push(&w->f.corr, i);
		w->f.corr_lo = key < w->f.corr_lo ? key : w->f.corr_lo;
		w->f.corr_hi = key > w->f.corr_hi ? key : w->f.corr_hi;
	}
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

static void file_part(struct az *z, uint32_t p, struct scratch *sc)
{
	struct filing *w = &z->parts[p];
	const uint8_t *role = z->role;
	uint64_t i = w->from;

	/* most events are nobody's (a host's, without step markers): skip them
	 * with the least work */
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
static void file_events(struct az *z)
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
		w->seen = pg_xcalloc(z->t->n_strs + 1, 1);
		w->f.corr_lo = UINT64_MAX;
	}
	run_jobs(z, np, file_part);
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
		free(f->act);
		free(f->ann);
	}
	for (uint32_t p = 0; p < np; p++)
		free(z->parts[p].seen);
	free(z->parts);
	z->parts = NULL;
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
	/* read by the split jobs while the totals job writes its sums: the padding
	 * keeps what is allocated next off its cache lines */
	z->op_marker = pg_xmalloc(z->n_ops + 64);
	for (uint32_t i = 0; i < z->n_ops; i++)
		z->op_marker[i] = (uint8_t)is_marker_op(z->ops[i].name);
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

/* Where x goes in v[0..i), sorted, whose last record sorts after x: the first
 * record after x, found by galloping back from the end. */
static uint32_t gallop_back(const struct act *v, uint32_t i, const struct act *x)
{
	uint32_t hi = i - 1, step = 1, lo = 0;

	for (;;) {
		if (hi < step)
			break;
		if (cmp_act_track(&v[hi - step], x) < 0) {
			lo = hi - step + 1;
			break;
		}
		hi -= step;
		step *= 2;
	}
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (cmp_act_track(&v[m], x) > 0)
			hi = m;
		else
			lo = m + 1;
	}
	return lo;
}

/*
 * Sort one track's records. They come as ascending runs that reach back into
 * the records before them only a little (an XLA op listed after one it starts
 * before; Kineto buffers flushed out of order): each run is merged into the
 * sorted prefix from where its first record belongs, moving only that tail.
 * Past a budget of moves, qsort takes over. The order is total (the event
 * index breaks ties), so either gives the same result.
 */
static void sort_acts(struct act *v, uint32_t n)
{
	uint64_t budget = 4 * (uint64_t)n + 4096;
	struct act *tmp = NULL;
	uint32_t cap = 0, i = 1;

	while (i < n) {
		if (cmp_act_track(&v[i - 1], &v[i]) <= 0) {
			i++;
			continue;
		}
		uint32_t j = i + 1;
		while (j < n && cmp_act_track(&v[j - 1], &v[j]) <= 0)
			j++;
		uint32_t p = gallop_back(v, i, &v[i]), t = i - p;
		if (t > budget) {
			qsort(v, n, sizeof(*v), cmp_act_track);
			break;
		}
		budget -= t;
		if (t > cap) {
			cap = t;
			free(tmp);
			tmp = pg_xmalloc((size_t)cap * sizeof(*tmp));
		}
		/* v[p..i) waits in tmp; writes never pass the run's unread records */
		memcpy(tmp, v + p, (size_t)t * sizeof(*tmp));
		uint32_t a = 0, b = i, w = p;
		while (a < t && b < j)
			v[w++] = cmp_act_track(&v[b], &tmp[a]) < 0 ? v[b++] : tmp[a++];
		while (a < t)
			v[w++] = tmp[a++];
		i = j;
	}
	free(tmp);
}

/*
 * Order a device's activity by (track, start, end descending), when it is not
 * already. One stream is common and is sorted in place; else a stable bucket
 * pass by track (linear), then each track sorted. slot[track] is UINT32_MAX
 * for every track on entry and on return.
 */
static void order_by_track(struct dev *d, int one_track, uint32_t *slot)
{
	uint32_t *tracks = NULL, *count = NULL, n_tr = 0, cap_tr = 0, cap_count = 0, i;

	if (one_track) {
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
	struct act *out = big_alloc((d->n + 1) * sizeof(*out));
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

static int leaf_before(const struct act *a, uint32_t x, uint32_t y)
{
	return a[x].s < a[y].s || (a[x].s == a[y].s && a[x].ev < a[y].ev);
}

/*
 * Nesting per track: self time and leaf flags. Partial overlaps are siblings.
 * A record's first child, if any, comes right after it, so its leaf flag is
 * final one step later: the leaves are listed on the way, in track order.
 * Returns whether that is their order by (start, event) too.
 */
static int nest(struct dev *d)
{
	int ordered = 1;
	uint32_t *stack = pg_xmalloc((d->n + 1) * sizeof(uint32_t));
	uint32_t sp = 0, nl = 0;

	d->leaves = big_alloc((d->n + 1) * sizeof(uint32_t));
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
		if (i > 0 && d->a[i - 1].leaf) {
			if (nl > 0 && leaf_before(d->a, i - 1, d->leaves[nl - 1]))
				ordered = 0;
			d->leaves[nl++] = i - 1;
		}
		stack[sp++] = i;
	}
	if (d->n > 0) {
		if (nl > 0 && leaf_before(d->a, d->n - 1, d->leaves[nl - 1]))
			ordered = 0;
		d->leaves[nl++] = d->n - 1;
	}
	d->n_leaves = nl;
	free(stack);
	return ordered;
}

/*
 * Leaves by (start, event): a natural merge sort. Each track's leaves are
 * nearly always in that order already, so the runs are the tracks and the
 * sort is a merge of a few of them (nothing to do for one stream).
 */
static void order_leaves(struct dev *d)
{
	const struct act *a = d->a;
	uint32_t *v = d->leaves, n = d->n_leaves, *bound = NULL, nb = 0, cap = 0;

	bound = grow(bound, nb, &cap, sizeof(uint32_t));
	bound[nb++] = 0;
	for (uint32_t i = 1; i < n; i++)
		if (leaf_before(a, v[i], v[i - 1])) {
			bound = grow(bound, nb, &cap, sizeof(uint32_t));
			bound[nb++] = i;
		}
	bound = grow(bound, nb, &cap, sizeof(uint32_t));
	bound[nb++] = n;
	uint32_t *tmp = nb > 2 ? pg_xmalloc((size_t)n * sizeof(uint32_t)) : NULL;
	uint32_t *src = v, *dst = tmp;
	while (nb > 2) {
		uint32_t out = 0;
		for (uint32_t r = 0; r + 1 < nb; r += 2) {
			uint32_t x = bound[r], xm = bound[r + 1];
			uint32_t y = xm, ym = r + 2 < nb ? bound[r + 2] : xm, o = x;
			while (x < xm && y < ym)
				dst[o++] = leaf_before(a, src[y], src[x]) ? src[y++] : src[x++];
			while (x < xm)
				dst[o++] = src[x++];
			while (y < ym)
				dst[o++] = src[y++];
			bound[out++] = bound[r];
		}
		bound[out++] = n;
		nb = out;
		uint32_t *sw = src;
		src = dst;
		dst = sw;
	}
	if (src != v)
		memcpy(v, src, (size_t)n * sizeof(uint32_t));
	free(tmp);
	free(bound);
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

/* Device d's activity records, nested and ordered, its leaves in time order and
 * its annotations. */
static void build_device(struct az *z, uint32_t di, struct scratch *sc)
{
	const struct trace *t = z->t;
	struct dev *d = &z->devs[di];
	struct idxv *evs = &z->f.act[di], *anns = &z->f.ann[di];
	struct clscache *cc = scratch_cc(sc, t);
	struct evcur cur = {t, NULL, 0, 0};

	d->n = evs->n;
	d->a = big_alloc((d->n + 1) * sizeof(*d->a));
	int ordered = 1, one_track = 1; /* by track, start, end descending: the common case */
	d->lo = INT64_MAX;
	d->hi = INT64_MIN;
	for (uint32_t k = 0; k < evs->n; k++) {
		const struct trace_event *e = ev_at(&cur, evs->v[k]);
		struct act *a = &d->a[k];
		if (k + PREFETCH_AHEAD < evs->n)
			ev_prefetch(&cur, evs->v[k + PREFETCH_AHEAD]);
		memset(a, 0, sizeof(*a));
		a->s = e->ts_ns;
		a->e = e->ts_ns + e->dur_ns;
		a->ev = evs->v[k];
		a->track = e->track;
		classify(z, cc, e, &a->cat, &a->fam);
		a->op = z->op_of_name[e->name];
		d->lo = a->s < d->lo ? a->s : d->lo;
		d->hi = a->e > d->hi ? a->e : d->hi;
		if (k > 0 && ordered && cmp_act_track(a - 1, a) > 0)
			ordered = 0;
		one_track &= a->track == d->a[0].track;
	}
	free(evs->v);
	memset(evs, 0, sizeof(*evs));
	if (!ordered)
		order_by_track(d, one_track, scratch_slot(sc, t));
	if (!nest(d))
		order_leaves(d);
	d->ann = pg_xmalloc((anns->n + 1) * sizeof(*d->ann));
	d->n_ann = anns->n;
	for (uint32_t k = 0; k < anns->n; k++) {
		const struct trace_event *e = ev_at(&cur, anns->v[k]);
		d->ann[k] = (struct ann){e->ts_ns, e->ts_ns + e->dur_ns, e->name, -1, NULL};
	}
	free(anns->v);
	memset(anns, 0, sizeof(*anns));
	annotation_paths(z, d);
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

/* qsort (a stable merge sort in glibc) leaves sorted input as it is, and spans
 * nearly always come sorted: check first. */
static void sort_spans(struct span *v, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (cmp_span(&v[i - 1], &v[i]) > 0) {
			qsort(v, n, sizeof(*v), cmp_span);
			return;
		}
}

/* Steps lines (TPU, TensorFlow GPU): each device's own step events. */
static int steps_from_lines(struct az *z)
{
	const struct trace *t = z->t;

	for (uint32_t k = 0; k < z->f.steps.n; k++) {
		const struct trace_event *e = trace_event_at(t, z->f.steps.v[k]);
		struct dev *dv = &z->devs[z->track_dev[e->track]];
		int64_t step;
		if (!analyze_parse_id(trace_str_get(t, e->name), &step) &&
		    !analyze_parse_id(arg(z, e, z->k_group_id), &step))
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

static void corrmap_init(struct corrmap *m, const struct filed *fd)
{
	memset(m, 0, sizeof(*m));
	if (fd->corr.n == 0 || fd->corr_hi - fd->corr_lo >= 12 * (uint64_t)fd->corr.n + 65536)
		return;
	m->lo = fd->corr_lo;
	m->span = fd->corr_hi - fd->corr_lo + 1;
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

/* Whether marker m sorts at or before (file, ts). */
static int mark_le(const struct hostmark *m, uint32_t file, int64_t ts)
{
	return m->file < file || (m->file == file && m->s <= ts);
}

/* A step source's host markers, sorted, and the correlation map to them. */
struct hoststeps {
	int kind; /* MARK_*, or -1 when nothing is prepared */
	struct hostmark *hm;
	uint32_t n;
	struct corrmap cm;
};

static void host_release(struct hoststeps *h)
{
	free(h->hm);
	corrmap_release(&h->cm);
	memset(h, 0, sizeof(*h));
	h->kind = -1;
}

/* The markers of one kind and, from host launches inside a marker's span,
 * correlation -> marker. Needs no device, so it can run beside them. */
static void host_prepare(const struct az *z, int kind, struct hoststeps *h)
{
	const struct trace *t = z->t;
	const struct idxv *marks = &z->f.mark[kind];
	struct hostmark *hm = pg_xmalloc((marks->n + 1) * sizeof(*hm));
	uint32_t n = 0;

	for (uint32_t k = 0; k < marks->n; k++) {
		const struct trace_event *e = trace_event_at(t, marks->v[k]);
		const struct trace_track *tr = &t->tracks[e->track];
		int64_t step = 0;
		/* the filing pass let only parsable markers through */
		if (kind == MARK_PROFILER_STEP)
			analyze_parse_id(trace_str_get(t, e->name) + TRACE_MARK_PROFILER_STEP_LEN,
					 &step);
		else
			analyze_parse_id(arg(z, e, z->k_step_num), &step);
		hm[n++] = (struct hostmark){t->devices[tr->device].file, step, e->ts_ns,
					    e->ts_ns + e->dur_ns};
	}
	qsort(hm, n, sizeof(*hm), cmp_hostmark);
	corrmap_init(&h->cm, &z->f);
	struct evcur cur = {t, NULL, 0, 0};
	uint32_t lo = 0;
	for (uint32_t k = 0; k < z->f.corr.n; k++) {
		const struct trace_event *e = ev_at(&cur, z->f.corr.v[k]);
		uint32_t file = z->track_file[e->track];
		if (k + PREFETCH_AHEAD < z->f.corr.n)
			ev_prefetch(&cur, z->f.corr.v[k + PREFETCH_AHEAD]);
		/* the markers up to the one holding ts: launches come nearly in time
		 * order, so the last answer is tried before a binary search */
		if (!(lo > 0 && lo <= n && mark_le(&hm[lo - 1], file, e->ts_ns) &&
		      (lo == n || !mark_le(&hm[lo], file, e->ts_ns)))) {
			uint32_t hi = n;
			lo = 0;
			while (lo < hi) {
				uint32_t mid = (lo + hi) / 2;
				if (mark_le(&hm[mid], file, e->ts_ns))
					lo = mid + 1;
				else
					hi = mid;
			}
		}
		if (lo == 0 || hm[lo - 1].file != file || e->ts_ns >= hm[lo - 1].e)
			continue;
		corrmap_put(&h->cm, corr_key(e->corr, file), lo - 1);
	}
	h->kind = kind;
	h->hm = hm;
	h->n = n;
}

/*
 * Host step markers (Kineto ProfilerStep#N, JAX StepTraceAnnotation) map device
 * work to steps through correlations: a kernel belongs to the step whose host
 * span holds the launch that has its correlation id. The markers go to the
 * caller.
 */
static int steps_from_host(struct az *z, int kind, struct hostmark **hm_out, uint32_t *n_hm_out)
{
	const struct trace *t = z->t;
	struct hoststeps *h = z->host;

	if (z->f.mark[kind].n == 0)
		return 0;
	if (h->kind != kind) {
		host_release(h);
		host_prepare(z, kind, h);
	}
	const struct hostmark *hm = h->hm;
	uint32_t n = h->n;
	struct evcur cur = {t, NULL, 0, 0};
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
			uint32_t m = corrmap_get(&h->cm, corr_key(e->corr, dv->file));
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
	*hm_out = h->hm;
	*n_hm_out = n;
	h->hm = NULL;
	host_release(h);
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
			sort_spans(sp->v, sp->n);
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

/* The same, trying *at and the next first: a device's spans mostly come in step
 * order. */
static uint32_t step_index_near(const int64_t *ids, uint32_t n, int64_t step, uint32_t *at)
{
	uint32_t i = *at;

	if (i < n && ids[i] == step)
		return i;
	if (i + 1 < n && ids[i + 1] == step)
		i++;
	else
		i = step_index(ids, n, step);
	if (i != UINT32_MAX)
		*at = i;
	return i;
}

/* Ascending, by merging the ascending runs it has: step ids are mostly
 * one run per device. */
static void sort_i64(int64_t *v, uint32_t n)
{
	uint32_t *bound = NULL, nb = 0, cap = 0;

	bound = grow(bound, nb, &cap, sizeof(uint32_t));
	bound[nb++] = 0;
	for (uint32_t i = 1; i < n; i++)
		if (v[i] < v[i - 1]) {
			bound = grow(bound, nb, &cap, sizeof(uint32_t));
			bound[nb++] = i;
		}
	bound = grow(bound, nb, &cap, sizeof(uint32_t));
	bound[nb++] = n;
	int64_t *tmp = nb > 2 ? pg_xmalloc((size_t)n * sizeof(int64_t)) : NULL;
	int64_t *src = v, *dst = tmp;
	while (nb > 2) {
		uint32_t out = 0;
		for (uint32_t r = 0; r + 1 < nb; r += 2) {
			uint32_t x = bound[r], xm = bound[r + 1];
			uint32_t y = xm, ym = r + 2 < nb ? bound[r + 2] : xm, o = x;
			while (x < xm && y < ym)
				dst[o++] = src[y] < src[x] ? src[y++] : src[x++];
			while (x < xm)
				dst[o++] = src[x++];
			while (y < ym)
				dst[o++] = src[y++];
			bound[out++] = bound[r];
		}
		bound[out++] = n;
		nb = out;
		int64_t *sw = src;
		src = dst;
		dst = sw;
	}
	if (src != v)
		memcpy(v, src, (size_t)n * sizeof(int64_t));
	free(tmp);
	free(bound);
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
	sort_i64(ids, n);
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
	/* each span and host marker finds its step by a search: thousands of
	 * steps on many devices must not cost steps x spans */
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct spans *sp = &z->devs[d].steps;
		uint32_t at = 0;
		for (uint32_t k = 0; k < sp->n; k++) {
			uint32_t i = step_index_near(ids, u, sp->v[k].step, &at);
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

/* The steps from the best source the profile has, their table and the warm-up. */
static void steps(struct az *z)
{
	struct summary *s = z->s;
	struct hostmark *hm = NULL;
	uint32_t n_hm = 0;
	const char *src = "none";

	if (steps_from_lines(z))
		src = "steps-line";
	else if (steps_from_host(z, MARK_ANNOTATION, &hm, &n_hm))
		src = "step-annotation";
	else if ((free(hm), hm = NULL, n_hm = 0,
		  steps_from_host(z, MARK_PROFILER_STEP, &hm, &n_hm)))
		src = "profiler-step";
	else if ((free(hm), hm = NULL, n_hm = 0, steps_from_modules(z)))
		src = "module-period";
	z->has_steps = strcmp(src, "none") != 0;
	s->steps_source = pg_xstrdup(src);
	s->step_source = pg_xstrdup(src);
	build_step_table(z, hm, n_hm);
	free(hm);
	summary_choose_warmup(s, z->o->warmup);
	z->steps_done = 1;
}

/* ---- collecting ---- */

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

/* Device i's records; beside them (job n_devs), either the host markers'
 * correlations or, when the step source needs no device records, the steps. */
static void collect_job(struct az *z, uint32_t i, struct scratch *sc)
{
	if (i < z->n_devs)
		build_device(z, i, sc);
	else if (z->host->kind >= 0)
		host_prepare(z, z->host->kind, z->host);
	else
		steps(z);
}

static void collect_devices(struct az *z)
{
	struct clscache cc;
	int kind;

	plan_filing(z);
	file_events(z);
	clscache_init(&cc, z->t);
	make_ops(z, &cc);
	clscache_release(&cc);
	kind = first_host_kind(z);
	z->host->kind = kind;
	run_jobs(z, z->n_devs + 1, collect_job);
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

/* Steady windows of a device: its spans of the steady steps, sorted, merged. */
static void steady_device(struct az *z, uint32_t d, struct scratch *sc)
{
	const struct summary *s = z->s;
	struct dev *dv = &z->devs[d];
	struct span *w = pg_xmalloc((dv->steps.n + 1) * sizeof(*w));
	uint32_t n = 0, at = 0;

	for (uint32_t k = 0; k < dv->steps.n; k++) {
		uint32_t i = step_index_near(z->step_ids, z->n_step_ids, dv->steps.v[k].step, &at);
		if (i != UINT32_MAX && s->steps[i].steady)
			w[n++] = dv->steps.v[k];
	}
	sort_spans(w, n);
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
}

/* ---- the time split ---- */

/*
 * The measures of the unions of compute, of communication and of memory
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

#define SWEEP_INIT                                                                                 \
	{                                                                                          \
		INT64_MIN, {INT64_MIN, INT64_MIN, INT64_MIN}, 0, 0, 0, 0, 0, 0                     \
	}

/* Count [t, to). Every interval seen started at or before t, so what each
 * category covers of it is a prefix, up to its furthest end. */
static inline void sweep_to(struct sweep *w, int64_t to)
{
	int64_t l[3];

	if (w->t >= to)
		return;
	for (int c = 0; c < 3; c++)
		l[c] = w->end[c] > w->t ? (w->end[c] < to ? w->end[c] : to) - w->t : 0;
	int64_t l01 = l[0] > l[1] ? l[0] : l[1], any = l01 > l[2] ? l01 : l[2];
	w->busy += any;
	w->comp += l[0];
	w->ecomm += l[1] > l[0] ? l[1] - l[0] : 0;
	w->emem += l[2] > l01 ? l[2] - l01 : 0;
	w->comm += l[1];
	w->mem += l[2];
	w->t = to;
}

/* Interval [s, e) of category c; s is at or after every earlier start. */
static inline void sweep_add(struct sweep *w, int64_t s, int64_t e, int c)
{
	sweep_to(w, s);
	if (e > w->end[c])
		w->end[c] = e;
}

static void sweep_result(struct sweep *w, int64_t wall, int64_t ksum, struct sum_split *out)
{
	sweep_to(w, INT64_MAX);
	out->wall_us = (double)wall / 1000.0;
	out->busy_us = (double)w->busy / 1000.0;
	out->idle_us = (double)(wall - w->busy) / 1000.0;
	out->compute_us = (double)w->comp / 1000.0;
	out->exposed_comm_us = (double)w->ecomm / 1000.0;
	out->exposed_memcpy_us = (double)w->emem / 1000.0;
	out->comm_us = (double)w->comm / 1000.0;
	out->memcpy_us = (double)w->mem / 1000.0;
	out->kernel_sum_us = (double)ksum / 1000.0;
}

/*
 * A gap of ns before leaf k of dv (in time order), noted for the op it belongs
 * to: the op that ends it, or when that is a marker (iota, constant,
 * copy-start, ...), the first real op after it, looking at most 8 ops ahead
 * and never across a second gap. slot[op] indexes dv->gaps.
 */
static void note_gap(const struct az *z, struct dev *dv, uint32_t k, int64_t ns, uint32_t *slot)
{
	const uint32_t *lv = dv->leaves;
	const struct act *a = &dv->a[lv[k]];
	uint32_t payload = a->op, mk = a->op;

	if (z->op_marker[mk]) {
		int64_t chain = a->e;
		for (uint32_t j = k + 1; j < dv->n_leaves && j <= k + 8; j++) {
			const struct act *b = &dv->a[lv[j]];
			if (b->s > chain)
				break;
			if (!z->op_marker[b->op]) {
				payload = b->op;
				break;
			}
			chain = b->e > chain ? b->e : chain;
		}
	}
	if (slot[payload] == UINT32_MAX) {
		dv->gaps = grow(dv->gaps, dv->n_gaps, &dv->cap_gaps, sizeof(*dv->gaps));
		dv->gaps[dv->n_gaps] = (struct gapnote){payload, UINT32_MAX, 0, 0, 0};
		slot[payload] = dv->n_gaps++;
	}
	struct gapnote *g = &dv->gaps[slot[payload]];
	g->count += 1;
	g->ns += (double)ns;
	if ((double)ns > g->max_ns)
		g->max_ns = (double)ns;
	if (mk != payload)
		g->marker = mk;
}

/*
 * One pass over a device's leaves in time order for its exposed-time
 * decompositions, over the whole capture and over its steady windows (compute
 * first, then communication not under compute, then memory not under either,
 * then idle; integer ns, so the parts sum exactly to the wall time), and for
 * its idle gaps inside steady windows (across all its streams: a comm stream
 * waiting while compute runs is not idle).
 */
static void device_splits(struct az *z, uint32_t d, struct scratch *sc)
{
	struct dev *dv = &z->devs[d];
	const int64_t *ws = dv->win_s, *we = dv->win_e;
	uint32_t nw = dv->n_win, lo = 0, *slot = scratch_ops(sc, z->n_ops);
	struct sweep all = SWEEP_INIT, st = SWEEP_INIT;
	int64_t wall = 0, ksum_all = 0, ksum = 0, prev_end = INT64_MIN;

	for (uint32_t k = 0; k < nw; k++)
		wall += we[k] - ws[k];
	for (uint32_t k = 0; k < dv->n_leaves; k++) {
		const struct act *a = &dv->a[dv->leaves[k]];
		int c = a->cat == ANALYZE_CAT_COMMUNICATION ? 1
			: a->cat == ANALYZE_CAT_MEMORY	    ? 2
							    : 0;
		/* the capture is one window from the first start to the last end */
		if (a->e > a->s) {
			ksum_all += a->e - a->s;
			sweep_add(&all, a->s, a->e, c);
		}
		/* the windows starting at or before it; leaves come by start */
		while (lo < nw && ws[lo] <= a->s)
			lo++;
		if (prev_end != INT64_MIN && a->s > prev_end && lo > 0 && a->s < we[lo - 1])
			note_gap(z, dv, k, a->s - prev_end, slot);
		if (a->e > prev_end)
			prev_end = a->e;
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
		/* clipping keeps the order: a start before a window moves to its start */
		sweep_add(&st, s0, e0, c);
	}
	for (uint32_t k = 0; k < dv->n_gaps; k++)
		slot[dv->gaps[k].op] = UINT32_MAX;
	if (dv->n)
		sweep_result(&all, dv->hi - dv->lo, ksum_all, &z->s->devices[d].all);
	sweep_result(&st, wall, ksum, &z->s->devices[d].steady);
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

/* The event's "flops" argument as a number; 0 when it has none. Only a number
 * from 0 to 1e30 counts: a negative, NaN or huge one would make a total the
 * summary cannot hold (it is written as null and read back as none). */
static int flops_of(const struct az *z, struct asetcache *c, const struct trace_event *e,
		    double *out)
{
	uint32_t i = e->args;

	if (!(c->state[i] & ASC_FLOPS_KNOWN)) {
		const char *fl = arg(z, e, z->k_flops);
		char *end = NULL;
		double v = fl ? strtod(fl, &end) : 0;
		int ok = fl && end != fl && v >= 0 && v <= 1e30;
		c->state[i] |= ASC_FLOPS_KNOWN | (ok ? ASC_HAS_FLOPS : 0);
		c->flops[i] = ok ? v : 0;
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

/* Ops, families and collectives over the activity starting in steady windows
 * (exact: integer ns summed in doubles, written as us with three decimals). */
struct opsum {
	double *count, *self_ns, *total_ns; /* per op */
	double fam_self[ANALYZE_FAM_COUNT], fam_count[ANALYZE_FAM_COUNT];
	struct {
		double count, ns, bytes, cap_count, cap_ns, cap_bytes;
		uint32_t group;
		int sized, cap_sized;
	} coll[ANALYZE_FAM_COUNT];
	struct asetcache ac;
};

/* A communication leaf anywhere in the capture. */
static void opsum_capture(struct opsum *os, const struct az *z, const struct act *a,
			  const struct trace_event *e)
{
	double b = 0;
	uint32_t g = 0;

	os->coll[a->fam].cap_count += 1;
	os->coll[a->fam].cap_ns += (double)(a->e - a->s);
	if (collective_size_cached(z, &os->ac, e, a->fam, &b, &g)) {
		os->coll[a->fam].cap_bytes += b;
		os->coll[a->fam].cap_sized = 1;
		if (g > os->coll[a->fam].group)
			os->coll[a->fam].group = g;
	}
}

/* A record starting in a steady window. */
static void opsum_add(struct opsum *os, struct az *z, const struct act *a,
		      const struct trace_event *e)
{
	struct summary *s = z->s;
	double fl;

	os->count[a->op] += 1;
	os->self_ns[a->op] += (double)a->self;
	os->total_ns[a->op] += (double)(a->e - a->s);
	os->fam_self[a->fam] += (double)a->self;
	os->fam_count[a->fam] += 1;
	if (flops_of(z, &os->ac, e, &fl)) {
		s->flops_total += fl;
		s->has_flops = 1;
	}
	if (a->cat != ANALYZE_CAT_COMMUNICATION || !a->leaf)
		return;
	os->coll[a->fam].count += 1;
	os->coll[a->fam].ns += (double)(a->e - a->s);
	double b = 0;
	uint32_t g = 0;
	if (collective_size_cached(z, &os->ac, e, a->fam, &b, &g)) {
		os->coll[a->fam].bytes += b;
		if (g > os->coll[a->fam].group)
			os->coll[a->fam].group = g;
		os->coll[a->fam].sized = 1;
	}
}

static void opsum_finish(struct opsum *os, struct az *z)
{
	struct summary *s = z->s;

	s->ops = pg_xcalloc(z->n_ops + 1, sizeof(*s->ops));
	for (uint32_t i = 0; i < z->n_ops; i++) {
		struct opinfo *o = &z->ops[i];
		if (os->count[i] == 0)
			continue;
		struct sum_op *x = &s->ops[s->n_ops++];
		x->name = pg_xstrdup(o->name);
		x->family = pg_xstrdup(analyze_family_name(o->fam));
		x->category = pg_xstrdup(analyze_category_name(o->cat));
		for (int k = 0; k < 3; k++)
			x->examples[k] = o->examples[k] ? pg_xstrdup(o->examples[k]) : NULL;
		x->count_total = os->count[i];
		x->self_us_total = os->self_ns[i] / 1000.0;
		x->total_us_total = os->total_ns[i] / 1000.0;
	}
	s->families = pg_xcalloc(ANALYZE_FAM_COUNT, sizeof(*s->families));
	for (int f = 0; f < ANALYZE_FAM_COUNT; f++) {
		if (os->fam_count[f] == 0)
			continue;
		struct sum_family *x = &s->families[s->n_families++];
		x->family = pg_xstrdup(analyze_family_name((enum analyze_family)f));
		enum analyze_category c = ANALYZE_CAT_COMPUTE;
		if (f >= ANALYZE_FAM_ALL_REDUCE && f <= ANALYZE_FAM_COLLECTIVE_OTHER)
			c = ANALYZE_CAT_COMMUNICATION;
		else if (f == ANALYZE_FAM_MEMCPY || f == ANALYZE_FAM_MEMSET)
			c = ANALYZE_CAT_MEMORY;
		x->category = pg_xstrdup(analyze_category_name(c));
		x->count_total = os->fam_count[f];
		x->us_total = os->fam_self[f] / 1000.0;
	}
	s->collectives = pg_xcalloc(ANALYZE_FAM_COUNT, sizeof(*s->collectives));
	for (int f = ANALYZE_FAM_ALL_REDUCE; f <= ANALYZE_FAM_COLLECTIVE_OTHER; f++) {
		if (os->coll[f].cap_count == 0)
			continue;
		struct sum_collective *c = &s->collectives[s->n_collectives++];
		c->kind = pg_xstrdup(f == ANALYZE_FAM_COLLECTIVE_OTHER
					 ? "other"
					 : analyze_family_name((enum analyze_family)f));
		c->count_total = os->coll[f].count;
		c->us_total = os->coll[f].ns / 1000.0;
		c->bytes_total = os->coll[f].bytes;
		c->group_size = os->coll[f].group;
		c->sized = os->coll[f].sized;
		c->capture_count_total = os->coll[f].cap_count;
		c->capture_bytes_total = os->coll[f].cap_bytes;
		c->capture_sized = os->coll[f].cap_sized;
		c->capture_us_total = os->coll[f].cap_ns / 1000.0;
	}
	asetcache_release(&os->ac);
	free(os->count);
	free(os->self_ns);
	free(os->total_ns);
}

/*
 * Idle before ops: each device's gaps were noted per op by its split pass
 * (device_splits); here they are summed in device order. The marker of an op
 * is the last marker op other than itself that ended one of its gaps, else
 * the op itself, as one pass over all devices in order would leave it.
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
		for (uint32_t k = 0; k < dv->n_gaps; k++) {
			const struct gapnote *g = &dv->gaps[k];
			cnt[g->op] += g->count;
			tot[g->op] += g->ns;
			if (g->max_ns > mx[g->op])
				mx[g->op] = g->max_ns;
			if (g->marker != UINT32_MAX)
				marker[g->op] = g->marker;
			else if (marker[g->op] == UINT32_MAX)
				marker[g->op] = g->op;
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

/* Regions: each steady record's self time added along the chain of its scope. */
struct regsum {
	struct region_acc *r;
	uint32_t n, cap;
	struct pg_u64map idx;
	struct pg_buf path;
	struct chains ch;
	uint32_t *by_args; /* the chain per argument set: one lookup per record */
	uint32_t *by_ann;  /* the chain per annotation of the current device */
};

static void regsum_init(struct regsum *rs, const struct az *z)
{
	memset(rs, 0, sizeof(*rs));
	rs->path = (struct pg_buf)PG_BUF_INIT;
	rs->by_args = pg_xmalloc(((size_t)z->t->n_argsets + 1) * sizeof(uint32_t));
	memset(rs->by_args, 0xff, ((size_t)z->t->n_argsets + 1) * sizeof(uint32_t));
}

static void regsum_device(struct regsum *rs, const struct dev *dv)
{
	free(rs->by_ann);
	rs->by_ann = pg_xmalloc((dv->n_ann + 1) * sizeof(uint32_t));
	memset(rs->by_ann, 0xff, (dv->n_ann + 1) * sizeof(uint32_t));
}

static void regsum_add(struct regsum *rs, const struct az *z, uint32_t d, const struct act *a,
		       const struct trace_event *e)
{
	const struct dev *dv = &z->devs[d];
	uint32_t ci = rs->by_args[e->args];

	if (ci == UINT32_MAX) {
		trace_str sid = scope_arg(z, e);
		ci = sid ? chain_for(&rs->ch, sid, trace_str_get(z->t, sid), &rs->r, &rs->n,
				     &rs->cap, &rs->idx, &rs->path)
			 : NO_CHAIN;
		rs->by_args[e->args] = ci;
	}
	if (ci == NO_CHAIN) {
		/* Kineto: the GPU user annotation around the kernel */
		const struct ann *an = dv->n_ann ? annotation_at(dv, a->s) : NULL;
		if (!an || !*an->path)
			return;
		uint32_t ai = (uint32_t)(an - dv->ann);
		if (rs->by_ann[ai] == UINT32_MAX)
			rs->by_ann[ai] =
			    chain_for(&rs->ch, (1ULL << 62) | ((uint64_t)d << 32) | (uint64_t)ai,
				      an->path, &rs->r, &rs->n, &rs->cap, &rs->idx, &rs->path);
		ci = rs->by_ann[ai];
	}
	for (uint32_t q = 0; q < rs->ch.len[ci]; q++) {
		uint32_t en = rs->ch.ent[rs->ch.off[ci] + q], i = en & 0x7fffffffu;
		rs->r[i].count += 1;
		rs->r[i].incl += (double)a->self;
		if (en & 0x80000000u)
			rs->r[i].excl += (double)a->self;
	}
}

static void regsum_finish(struct regsum *rs, struct summary *s)
{
	s->regions = pg_xcalloc(rs->n + 1, sizeof(*s->regions));
	for (uint32_t i = 0; i < rs->n; i++) {
		struct sum_region *x = &s->regions[s->n_regions++];
		x->path = rs->r[i].path;
		x->depth = rs->r[i].depth;
		x->count_total = rs->r[i].count;
		x->inclusive_us_total = rs->r[i].incl / 1000.0;
		x->exclusive_us_total = rs->r[i].excl / 1000.0;
	}
	free(rs->r);
	free(rs->by_args);
	free(rs->by_ann);
	pg_u64map_release(&rs->idx);
	pg_u64map_release(&rs->ch.by_key);
	free(rs->ch.off);
	free(rs->ch.len);
	free(rs->ch.ent);
	pg_buf_release(&rs->path);
}

/* ---- the totals ---- */

/*
 * Ops, families, collectives and regions in one pass over every device's
 * records, in device order (the flops total is a sum of parsed doubles: its
 * order is kept). Steady flags are set on the way: a track's records come by
 * start, so each finds its window by walking on.
 */
static void totals(struct az *z)
{
	struct opsum os;
	struct regsum rs;
	struct evcur cur = {z->t, NULL, 0, 0};

	memset(&os, 0, sizeof(os));
	asetcache_init(&os.ac, z->t);
	os.count = pg_xcalloc(z->n_ops + 1, sizeof(double));
	os.self_ns = pg_xcalloc(z->n_ops + 1, sizeof(double));
	os.total_ns = pg_xcalloc(z->n_ops + 1, sizeof(double));
	regsum_init(&rs, z);
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct dev *dv = &z->devs[d];
		uint32_t lo = 0, track = UINT32_MAX;
		int64_t prev = INT64_MIN;
		regsum_device(&rs, dv);
		for (uint32_t k = 0; k < dv->n; k++) {
			const struct act *a = &dv->a[k];
			const struct trace_event *e = NULL;
			if (a->track != track || a->s < prev) {
				lo = count_le(dv->win_s, dv->n_win, a->s);
				track = a->track;
			}
			while (lo < dv->n_win && dv->win_s[lo] <= a->s)
				lo++;
			prev = a->s;
			int steady = lo > 0 && a->s < dv->win_e[lo - 1];
			if (a->cat == ANALYZE_CAT_COMMUNICATION && a->leaf) {
				e = ev_at(&cur, a->ev);
				opsum_capture(&os, z, a, e);
			}
			if (!steady)
				continue;
			if (!e)
				e = ev_at(&cur, a->ev);
			opsum_add(&os, z, a, e);
			regsum_add(&rs, z, d, a, e);
		}
	}
	opsum_finish(&os, z);
	regsum_finish(&rs, z->s);
}

enum { JOB_TOTALS, JOB_SPLITS };

/* The totals pass beside each device's split; the long serial one goes first. */
static void totals_job(struct az *z, uint32_t i, struct scratch *sc)
{
	if (i == JOB_TOTALS)
		totals(z);
	else
		device_splits(z, i - JOB_SPLITS, sc);
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
		free(dv->gaps);
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
	free(z->op_marker);
	free(z->step_ids);
	free(z->role);
	free(z->track_dev);
	free(z->track_file);
	free(z->name_flags);
	free(z->aset_flags);
	pg_u64map_release(&z->op_by_canon);
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
	if (!z.steps_done)
		steps(&z);
	uint32_t steady = 0;
	for (uint32_t i = 0; i < s->n_steps; i++)
		steady += s->steps[i].steady;
	host_release(&host);
	run_jobs(&z, z.n_devs, steady_device);
	run_jobs(&z, JOB_SPLITS + z.n_devs, totals_job);
	gaps(&z);
	quality(&z);
	s->basis_devices = z.n_devs;
	s->basis_steady_steps = steady;
	summary_finalize(s);

	release(&z);
	return 0;
}
