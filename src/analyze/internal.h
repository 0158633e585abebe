/*
 * The analysis's private declarations, shared by the files of
 * src/analyze/ that make a summary (summarize.c runs them; analyze.h is the
 * public API). The working state of one summary is struct az: the trace, the
 * devices with their records (struct dev, struct act), the ops, the filed
 * event lists and the steps. The small helpers called per event or per
 * record (event reads, list growth, the classification cache) are static
 * inline here, so each file's inner loops keep them inlined.
 */
#ifndef PG_ANALYZE_INTERNAL_H
#define PG_ANALYZE_INTERNAL_H

#include "analyze.h"

struct summary;

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

/* A piece of an enclosing record's own time: the part of its interval no child
 * covers. Busy time like a leaf's, of the record's category. */
struct own {
	int64_t s, e;
	uint32_t act; /* index into the device's records */
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
	struct own *own; /* enclosing records' own time, by start, then event */
	uint32_t n_own, cap_own;
	int64_t lo, hi; /* earliest start and latest end of its activity */
	struct ann *ann;
	uint32_t n_ann;
	struct spans steps;	/* this device's step work, as the source found it */
	struct spans tiles;	/* per step with work: .step its index in the step table,
				 * [s, e) its first work to the next step's; by start */
	int64_t *win_s, *win_e; /* steady windows, sorted */
	uint32_t n_win;
	uint32_t n_pending;   /* records whose op az_resolve_ops makes (op UINT32_MAX) */
	struct gapnote *gaps; /* by first appearance */
	uint32_t n_gaps, cap_gaps;
};

/* An op: a canonical name and one family, so that its time is counted under
 * the family it is listed with. A record whose arguments give its name another
 * family than the name gives alone belongs to the op "<name> [<family>]". */
struct opinfo {
	char *name;
	uint8_t fam;
	uint32_t base; /* the plain op of the name (itself when plain) */
	char *examples[3];
};

/* What a track's events are filed for (bits). */
enum {
	ROLE_ACT = 1,	   /* activity of a selected device */
	ROLE_ANN = 2,	   /* any track of a selected device: GPU user annotations */
	ROLE_STEPS = 4,	   /* a Steps line of a selected device */
	ROLE_HOST = 8,	   /* a host thread: step markers and correlated launches */
	ROLE_MODULES = 16, /* XLA Modules */
	ROLE_HVIEW = 32,   /* a host thread of the host view (host.c) */
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
	struct idxv first;  /* (name, event) pairs: a name's first activity event */
	struct idxv *hview; /* per host view thread (az.hview_of): its complete events */
	uint32_t n_hview;
};

/* A host step marker: ProfilerStep#N, or an annotation with a step number. */
struct hostmark {
	uint32_t file, track;
	int64_t step, s, e;
};

struct filing;
struct hoststeps;
struct hview;

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
	struct pg_u64map op_qual;     /* plain op << 8 | family -> its qualified op */
	/* filing */
	uint8_t *role;	      /* per track */
	uint32_t *track_dev;  /* per track: index of its selected device, or UINT32_MAX */
	uint32_t *track_file; /* per track: the file of its device, UINT32_MAX without one */
	uint8_t *name_flags;  /* per name: NAME_* */
	uint8_t *aset_flags;  /* per argument set: ASET_* */
	uint32_t *hview_of;   /* per track: its list in f.hview, or UINT32_MAX */
	struct filed f;
	struct filing *parts;	/* the filing pass, while it runs */
	struct hoststeps *host; /* host markers and correlations, prepared for one kind */
	/* steps */
	int64_t *step_ids;
	uint32_t n_step_ids;
	int has_steps;
	int steps_done;	     /* made beside the devices, when they were not needed */
	int host_basis;	     /* no device work: the host markers are the steps */
	struct hostmark *hm; /* the markers the steps came from, sorted by file and start */
	uint32_t n_hm;
	struct hview *hv; /* the host view while it is made (host.c) */
	/* arg keys */
	trace_str k_hlo_op, k_hlo_cat, k_coll, k_in, k_out, k_group, k_dtype, k_tf_op, k_name,
	    k_step_num, k_r, k_flops, k_group_id, k_long_name, k_train;
};

static inline void *grow(void *p, uint32_t n, uint32_t *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	return pg_xrealloc(p, (size_t)*cap * size);
}

static inline void idxv_push(struct idxv *l, uint32_t x)
{
	if (l->n == l->cap)
		l->v = grow(l->v, l->n, &l->cap, sizeof(uint32_t));
	l->v[l->n++] = x;
}

/* Reads of events by index, a storage run at a time: lists in event order read
 * their events nearly sequentially. */
struct evcur {
	const struct trace *t;
	const struct trace_event *run;
	uint64_t lo, hi;
};

static inline const struct trace_event *ev_at(struct evcur *c, uint64_t i)
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

static inline void ev_prefetch(const struct evcur *c, uint64_t i)
{
	if (i >= c->lo && i < c->hi)
		__builtin_prefetch(&c->run[i - c->lo]);
}

static inline const char *arg(const struct az *z, const struct trace_event *e, trace_str key)
{
	trace_str v = key ? trace_arg_get(z->t, e->args, key) : 0;
	return v ? trace_str_get(z->t, v) : NULL;
}

/* Correlation ids are per file (per process): the key tells files apart. The
 * file goes above bit 32, where CUPTI's 32-bit ids never reach, so that every
 * file of a capture (thousands of ranks) has keys of its own. */
static inline uint64_t corr_key(uint64_t corr, uint32_t file)
{
	return corr ^ ((uint64_t)file << 32);
}

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

#define MAX_THREADS 4

/* A worker's own scratch, made on first use. */
struct scratch {
	struct clscache cc; /* by_name is NULL until used */
	uint32_t *slot;	    /* per track, all UINT32_MAX between uses */
	uint32_t *ops;	    /* per op, all UINT32_MAX between uses */
};

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

/* A step source's host markers, sorted, and the correlation map to them. */
struct hoststeps {
	int kind; /* MARK_*, or -1 when nothing is prepared */
	struct hostmark *hm;
	uint32_t n;
	struct corrmap cm;
};

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

struct region_acc {
	char *path;
	uint32_t depth;
	double count, incl, excl;
};

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

/* Regions: each steady record's self time added along the chain of its scope. */
struct regsum {
	struct region_acc *r;
	uint32_t n, cap;
	struct pg_u64map idx;
	struct pg_buf path;
	struct chains ch;
	uint32_t *by_args;	  /* the chain per argument set: one lookup per record */
	uint32_t *by_ann;	  /* the chain per annotation of the current device */
	struct pg_u64map by_name; /* the chain (or none) per name of a record with no scope */
};

/*
 * A device's busy time as units in time order: its leaves whole and its
 * enclosing records' own-time pieces, merged by (start, event). Every instant
 * a record of a track covers is in exactly one unit of that track, so a
 * kernel nested in another counts once and its parent loses nothing.
 */
struct units {
	uint32_t l, p; /* next leaf, next own piece */
};

static inline int units_next(const struct dev *d, struct units *c, struct own *u)
{
	if (c->l < d->n_leaves) {
		uint32_t i = d->leaves[c->l];
		const struct act *a = &d->a[i];
		if (c->p >= d->n_own || a->s < d->own[c->p].s ||
		    (a->s == d->own[c->p].s && a->ev < d->a[d->own[c->p].act].ev)) {
			*u = (struct own){a->s, a->e, i};
			c->l++;
			return 1;
		}
	}
	if (c->p < d->n_own) {
		*u = d->own[c->p++];
		return 1;
	}
	return 0;
}

/* ---- the stages, by file ---- */

/* jobs.c: jobs 0..n-1 on up to MAX_THREADS threads, each with its scratch */
void az_run_jobs(struct az *z, uint32_t n,
		 void (*fn)(struct az *z, uint32_t job, struct scratch *sc));
struct clscache *az_scratch_cc(struct scratch *sc, const struct trace *t);
uint32_t *az_scratch_slot(struct scratch *sc, const struct trace *t);
uint32_t *az_scratch_ops(struct scratch *sc, uint32_t n_ops);

/* ops.c */
void az_clscache_init(struct clscache *cc, const struct trace *t);
void az_clscache_release(struct clscache *cc);
void az_classify_slow(const struct az *z, struct clscache *cc, const struct trace_event *e,
		      uint8_t *cat, uint8_t *fam);
void az_make_ops(struct az *z, struct clscache *cc);
/* A record's op from its family, when it exists already (UINT32_MAX if not);
 * read-only, so device jobs may call it side by side. */
uint32_t az_record_op(const struct az *z, const struct trace_event *e, uint8_t fam);
/* Make the ops the device jobs left pending, in device and record order, and
 * the marker flags of all ops. Serial, after the device jobs. */
void az_resolve_ops(struct az *z);
void az_totals(struct az *z);

/* filing.c */
void az_plan_filing(struct az *z);
void az_file_events(struct az *z);
void az_filed_release(struct filed *f, uint32_t n_devs);

/* devices.c */
void az_build_device(struct az *z, uint32_t di, struct scratch *sc);
const struct ann *az_annotation_at(const struct dev *d, int64_t t);

/* steps.c */
void az_host_prepare(const struct az *z, int kind, struct hoststeps *h);
void az_host_release(struct hoststeps *h);
void az_steps(struct az *z);
void az_step_table(struct az *z);
/* Index of step in the summary's step table, or UINT32_MAX. */
uint32_t az_step_index(const struct az *z, int64_t step);
/* The host view (host.c): host.* from the host threads' events, in parts
 * (az_host_collect after the filing pass); az_host_sort and az_host_thread
 * jobs run side by side. */
void az_host_collect(struct az *z);
void az_host_sort(struct az *z, uint32_t k);
void az_host_begin(struct az *z);
uint32_t az_host_jobs(const struct az *z);
void az_host_thread(struct az *z, uint32_t k);
void az_host_end(struct az *z);
uint32_t az_count_le(const int64_t *v, uint32_t n, int64_t x);
void az_steady_device(struct az *z, uint32_t d, struct scratch *sc);

/* breakdown.c */
void az_device_splits(struct az *z, uint32_t d, struct scratch *sc);

/* gaps.c */
void az_note_gap(const struct az *z, struct dev *dv, const struct own *u, struct units next,
		 int64_t ns, uint32_t *slot);
void az_gaps(struct az *z);
/* memory.c: memory.devices[] from the trace's allocator samples */
void az_memory(struct az *z);

/* hlo.c */
double az_hlo_collective(const char *text, uint32_t *group);

/* collectives.c */
void az_asetcache_init(struct asetcache *c, const struct trace *t);
void az_asetcache_release(struct asetcache *c);
int az_flops_of(const struct az *z, struct asetcache *c, const struct trace_event *e, double *out);
int az_collective_size_cached(const struct az *z, struct asetcache *c, const struct trace_event *e,
			      uint8_t fam, double *bytes, uint32_t *group);

/* regions.c */
void az_regsum_init(struct regsum *rs, const struct az *z);
void az_regsum_device(struct regsum *rs, const struct dev *dv);
void az_regsum_add(struct regsum *rs, const struct az *z, uint32_t d, const struct act *a,
		   const struct trace_event *e);
void az_regsum_finish(struct regsum *rs, struct summary *s);

/* Hot: classified per record, the cache answers nearly always. */
static inline void classify(const struct az *z, struct clscache *cc, const struct trace_event *e,
			    uint8_t *cat, uint8_t *fam)
{
	struct cls *c = &cc->by_name[e->name];

	if (c->c == 0xff || c->args != e->args || c->cat != e->cat) {
		az_classify_slow(z, cc, e, &c->c, &c->f);
		c->args = e->args;
		c->cat = e->cat;
	}
	*cat = c->c;
	*fam = c->f;
}

#endif
