/*
 * The host view (host.* of the summary): what the host threads did in the
 * steady steps. Every trace gets it beside the device view; a trace with no
 * device work at all (a CPU-only run) is judged on it, its steps being the
 * host step markers (steps.c, basis profgate.host/1).
 *
 * The window. With host step markers (ProfilerStep#N, step annotations) the
 * host view covers the spans of the steady steps' markers, per file: the
 * marker's thread is the step thread, and its wall time is the steps' spans.
 * Without markers it covers the whole capture ("capture"), with no step
 * thread and so no wall, busy or idle time. An XPlane capture with a line
 * besides its host threads and no step marker in its metadata has no host
 * view (collect).
 *
 * How it works. The filing pass lists, per host thread, its complete events
 * (filing.c): marker events themselves are left out, so the work inside a
 * step is the thread's top level. Per thread the events are sorted by start
 * (longer first on ties) and nested with a stack, which gives each its self
 * time (its span less its direct children's, clipped to it). An event counts
 * when it starts inside a window of its file:
 * - Python frames (Kineto's python_function) add to python_us and are not
 *   ops, so the framework ops stand apart from the interpreter;
 * - every other event is an op by its name, with a family from the host rules
 *   (analyze_classify_host: matmul for aten::mm/addmm/linear, data loading
 *   for enumerate(DataLoader)#..., autograd, optimizer, copy, ...), and
 *   runtime launch calls also add to launch_us;
 * - a thread's busy time is the union of its top-level events, clipped to the
 *   windows (nested events never overlap their parent, so the union is a sum).
 * Totals are exact nanoseconds written as microseconds; summary_finalize makes
 * the per-step numbers (totals / (steady steps x step threads)), sorts the
 * lists and adds the host-bound finding, so merge gives the same numbers.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../summary/summary.h"

/* One complete host event of one thread while it is open: on the nesting
 * stack from its start until the first event that starts at or after its
 * end, when its children are all known. */
struct hev {
	int64_t s, e;
	int64_t child; /* ns of direct children, clipped to this event */
	uint32_t lo;   /* windows of its file starting at or before s */
	uint32_t op;   /* its op in the thread's ops, or UINT32_MAX */
	uint8_t top;   /* no enclosing event on the thread */
	uint8_t count; /* starts inside a window */
	uint8_t python;
};

struct hop {
	trace_str name;
	uint8_t fam, launch;
	double count, self_ns, total_ns;
};

/* The steady windows of one file, sorted and disjoint; or one step thread's
 * steady step spans, sorted. */
struct hwin {
	int64_t *s, *e;
	uint32_t n, cap_s, cap_e;
};

struct hthread {
	uint32_t track, file;
	struct idxv ev;	   /* its events' indices, in event order */
	int step;	   /* holds its file's step markers */
	struct hwin spans; /* a step thread's steady steps, by start */
	double fastest_ns; /* its steps with every top-level op at its fastest (fastest()) */
	double busy_ns, count;
	double fam_ns[ANALYZE_FAM_COUNT];
	/* what account() found, joined in thread order by join_threads */
	struct pg_u64map op_at; /* name -> index into ops */
	struct hop *ops;
	uint32_t n_ops, cap_ops;
	double python_ns, launch_ns;
};

struct hview {
	struct az *z;
	struct hthread *th;
	uint32_t n_th;	     /* threads to account: 0 when none has an event */
	uint32_t n_th_alloc; /* threads made (to free) */
	uint32_t *slot;	     /* per track: its index in th, or UINT32_MAX */
	struct hwin *win;    /* per file */
	int capture;	     /* no markers: every event counts */
	uint32_t *op_of;     /* name -> index into ops, UINT32_MAX before its first event */
	struct hop *ops;
	uint32_t n_ops, cap_ops;
	double wall_ns, busy_ns, python_ns, launch_ns, fastest_ns;
	uint32_t step_threads;
};

/* Per host thread, its complete events' indices (markers left out), as the
 * filing pass listed them (filing.c, f.hview): the lists of the threads the
 * view reads are taken over, in track order. Only indices are kept for all
 * threads at once; a thread's events are read when it is accounted.
 *
 * The threads of a file the XPlane reader set aside are left out
 * (trace_file.host_threads_aside: a line besides host threads, no step marker
 * named in the metadata). summarize does not decode them (read.h
 * host_markers_only: on a TPU capture they are most of the file), so whether
 * it had would change nothing: the view is the same however the file was
 * read. */
static void collect(struct hview *h)
{
	struct az *z = h->z;
	const struct trace *t = z->t;
	uint32_t *slot = pg_xmalloc((t->n_tracks + 1) * sizeof(uint32_t));

	for (uint32_t i = 0; i < t->n_tracks; i++) {
		uint32_t k = z->hview_of[i];
		slot[i] = UINT32_MAX;
		if (k == UINT32_MAX ||
		    t->files[t->devices[t->tracks[i].device].file].host_threads_aside)
			continue;
		slot[i] = h->n_th;
		h->th = pg_xrealloc(h->th, (h->n_th + 1) * sizeof(*h->th));
		memset(&h->th[h->n_th], 0, sizeof(*h->th));
		h->th[h->n_th].track = i;
		h->th[h->n_th].file = t->devices[t->tracks[i].device].file;
		h->th[h->n_th].ev = z->f.hview[k];
		memset(&z->f.hview[k], 0, sizeof(z->f.hview[k]));
		h->n_th++;
		h->n_th_alloc = h->n_th;
	}
	h->slot = slot;
}

/* Event x before event y on a thread: by start, the longer first, then by
 * name (the order account() nests them in: a parent before what it holds). */
static inline int event_before(const struct trace *t, uint32_t x, uint32_t y)
{
	const struct trace_event *a = trace_event_at(t, x), *b = trace_event_at(t, y);

	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns;
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns;
	return a->name < b->name;
}

/* A thread's events come in a few sorted runs (Kineto writes each kind of
 * event in order): their indices are merged, not sorted from scratch (qsort
 * was a tenth of the summary's time on a large trace), and only then read,
 * so the sort moves 4 bytes an event, not a record. */
static inline void event_ahead(const struct trace *t, uint32_t x)
{
	__builtin_prefetch(trace_event_at(t, x));
}

PG_SORT_RUNS_AHEAD(sort_events, uint32_t, const struct trace *, event_before, event_ahead)

static void win_add(struct hwin *w, int64_t s, int64_t e)
{
	w->s = grow(w->s, w->n, &w->cap_s, sizeof(int64_t));
	w->e = grow(w->e, w->n, &w->cap_e, sizeof(int64_t));
	w->s[w->n] = s;
	w->e[w->n++] = e;
}

/* The steady steps' markers per file, merged into disjoint windows; the
 * markers' threads are the step threads, their spans the wall time. */
static void windows(struct hview *h)
{
	struct az *z = h->z;
	const struct summary *s = z->s;
	uint32_t n_files = z->t->n_files;

	h->win = pg_xcalloc(n_files + 1, sizeof(*h->win));
	h->capture = z->n_hm == 0;
	for (uint32_t k = 0; k < z->n_hm; k++) {
		const struct hostmark *m = &z->hm[k];
		uint32_t i = az_step_index(z, m->step);
		if (i == UINT32_MAX || !s->steps[i].steady || m->file >= n_files)
			continue;
		struct hwin *w = &h->win[m->file];
		/* markers come sorted by file and start */
		if (w->n && m->s <= w->e[w->n - 1]) {
			if (m->e > w->e[w->n - 1])
				w->e[w->n - 1] = m->e;
		} else {
			win_add(w, m->s, m->e);
		}
		uint32_t t = h->slot[m->track];
		if (t != UINT32_MAX)
			win_add(&h->th[t].spans, m->s, m->e);
		if (t != UINT32_MAX && !h->th[t].step) {
			h->th[t].step = 1;
			h->step_threads++;
		}
	}
	for (uint32_t f = 0; f < n_files; f++)
		for (uint32_t k = 0; k < h->win[f].n; k++)
			h->wall_ns += (double)(h->win[f].e[k] - h->win[f].s[k]);
}

/* How many of w's windows start at or before s, from *lo, the count for an
 * earlier start: a thread's events come by start, so the windows are walked
 * once per thread, not searched once per event. */
static void windows_from(const struct hwin *w, uint32_t *lo, int64_t s)
{
	while (*lo < w->n && w->s[*lo] <= s)
		(*lo)++;
}

/* Whether s, with lo windows starting at or before it, is inside one. */
static int in_window(const struct hwin *w, uint32_t lo, int64_t s)
{
	return lo > 0 && s < w->e[lo - 1];
}

/* Nanoseconds of [s, e) inside the windows w, lo of them starting at or
 * before s: from the last of those (the windows are disjoint and sorted) to
 * the first that starts at or after e. */
static int64_t in_windows(const struct hwin *w, uint32_t lo, int64_t s, int64_t e)
{
	int64_t sum = 0;

	for (uint32_t k = lo ? lo - 1 : 0; k < w->n && w->s[k] < e; k++) {
		int64_t a = s > w->s[k] ? s : w->s[k], b = e < w->e[k] ? e : w->e[k];
		if (b > a)
			sum += b - a;
	}
	return sum;
}

static const char *const launch_names[] = {"LaunchKernel", "GraphLaunch", "LaunchCooperative"};

static int is_launch(const char *name)
{
	for (size_t i = 0; i < PG_ARRAY_LEN(launch_names); i++)
		if (strstr(name, launch_names[i]))
			return 1;
	return 0;
}

/* Thread th's record of an op, made with its family on first use. */
static struct hop *thread_op(const struct hview *h, struct hthread *th, trace_str name,
			     uint16_t cat)
{
	const struct trace *t = h->z->t;
	uint32_t k = pg_u64map_get(&th->op_at, name);

	if (k == UINT32_MAX) {
		th->ops = grow(th->ops, th->n_ops, &th->cap_ops, sizeof(*th->ops));
		k = th->n_ops++;
		pg_u64map_put(&th->op_at, name, k);
		const char *nm = trace_str_get(t, name);
		th->ops[k] = (struct hop){name,
					  (uint8_t)analyze_classify_host(
					      nm, strlen(nm), trace_str_get(t, t->cats[cat].name)),
					  (uint8_t)is_launch(nm),
					  0,
					  0,
					  0};
	}
	return &th->ops[k];
}

/* One top-level op of a steady step: its position (its name, and how many ops
 * of that name came before it in the step) and how long it took. */
struct hpos {
	uint64_t key; /* name << 32 | occurrence in the step */
	int64_t dur;
};

static int cmp_hpos(const void *a, const void *b)
{
	const struct hpos *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->dur > y->dur) - (x->dur < y->dur);
}

/* The occurrence of name in step j: a count per name, reset when a step
 * other than the one it was counted in asks. */
struct occ {
	struct pg_u64map at; /* name -> slot */
	uint32_t *n, *step;  /* per slot: the count, and the step it counts (+1) */
	uint32_t n_slots, cap_n, cap_step;
};

static uint32_t occ_next(struct occ *o, trace_str name, uint32_t j)
{
	uint32_t k = pg_u64map_get(&o->at, name);

	if (k == UINT32_MAX) {
		o->n = grow(o->n, o->n_slots, &o->cap_n, sizeof(uint32_t));
		o->step = grow(o->step, o->n_slots, &o->cap_step, sizeof(uint32_t));
		k = o->n_slots++;
		o->step[k] = 0;
		pg_u64map_put(&o->at, name, k);
	}
	if (o->step[k] != j + 1) {
		o->step[k] = j + 1;
		o->n[k] = 0;
	}
	return o->n[k]++;
}

/*
 * A step thread's steady steps as they would have run with every top-level op
 * at its fastest (th->fastest_ns, a total over the steps): each position (the
 * third aten::addmm of a step) at the shortest time it took in any steady
 * step, and the time between the ops (the interpreter, the profiler) at the
 * least any step had. Top-level ops are the outermost events that are not
 * Python frames, so a trace recorded with stacks has the same ops as one
 * without. A co-tenant that shares the core preempts the op it lands in, and
 * slows every step a little, but seldom hits the same position in every step:
 * the fastest instances are the ones it spared, while a change to the code
 * slows every instance alike. The gate compares this with the median step
 * (docs/noise.md "Slowed from outside"). The thread's top-level ops are
 * handed over one by one as account() opens them (fastest_add).
 */
struct fast {
	const struct hwin *w; /* the thread's steady step spans */
	struct hpos *p;	      /* one per top-level op in a step */
	int64_t *covered;     /* per step: ns inside its top-level ops */
	int64_t end;	      /* end of the last top-level op seen */
	struct occ o;
	uint32_t np, j; /* j: the first step not ended before the op */
};

static void fastest_begin(struct fast *f, const struct hthread *th)
{
	memset(f, 0, sizeof(*f));
	f->w = &th->spans;
	f->p = pg_xmalloc(((size_t)th->ev.n + 1) * sizeof(*f->p));
	f->covered = pg_xcalloc(f->w->n + 1, sizeof(int64_t));
	f->end = INT64_MIN;
}

/* The next event of the thread by start (its end clipped to its parent). */
static void fastest_add(struct fast *f, const struct trace *t, const struct hev *x, trace_str name,
			uint16_t cat)
{
	const struct hwin *w = f->w;

	if ((t->cats[cat].class_mask & TRACE_CATCLASS_PYTHON) || x->s < f->end)
		return;
	f->end = x->e;
	while (f->j < w->n && w->e[f->j] <= x->s)
		f->j++;
	if (f->j == w->n || x->s < w->s[f->j])
		return;
	int64_t d = (x->e < w->e[f->j] ? x->e : w->e[f->j]) - x->s;
	f->p[f->np++] = (struct hpos){((uint64_t)name << 32) | occ_next(&f->o, name, f->j), d};
	f->covered[f->j] += d;
}

static void fastest_end(struct fast *f, struct hthread *th)
{
	const struct hwin *w = f->w;
	int64_t rest = INT64_MAX;

	for (uint32_t k = 0; k < w->n; k++)
		if (w->e[k] - w->s[k] - f->covered[k] < rest)
			rest = w->e[k] - w->s[k] - f->covered[k];
	qsort(f->p, f->np, sizeof(*f->p), cmp_hpos);
	th->fastest_ns = w->n ? (double)rest * w->n : 0;
	for (uint32_t a = 0, b; a < f->np; a = b) {
		for (b = a + 1; b < f->np && f->p[b].key == f->p[a].key; b++)
			;
		th->fastest_ns += (double)f->p[a].dur * (b - a);
	}
	pg_u64map_release(&f->o.at);
	free(f->o.n);
	free(f->o.step);
	free(f->covered);
	free(f->p);
}

/* An event whose children are all known: its time into the thread's busy
 * time, its op, family and the Python time. The sums are of whole
 * nanoseconds, exact in a double, so the order events close in does not
 * change them. */
static void account_closed(const struct hview *h, struct hthread *th, const struct hev *x)
{
	const struct hwin *w = &h->win[th->file];

	if (x->top)
		th->busy_ns +=
		    h->capture ? (double)(x->e - x->s) : (double)in_windows(w, x->lo, x->s, x->e);
	if (!x->count)
		return;
	double self = (double)(x->e - x->s - x->child);
	if (self < 0)
		self = 0;
	th->count++;
	if (x->python) {
		th->python_ns += self;
		return;
	}
	struct hop *o = &th->ops[x->op];
	o->count++;
	o->self_ns += self;
	o->total_ns += (double)(x->e - x->s);
	th->fam_ns[o->fam] += self;
	if (o->launch)
		th->launch_ns += self;
}

/*
 * One thread's events into its ops, families and busy time. Writes only th:
 * threads are accounted side by side (az_host_thread).
 *
 * The events come sorted by start, longer first (az_host_sort), and are
 * nested with a stack of the open ones: an event closes when the next one
 * starts at or after its end, and then its direct children's time is known.
 * So the thread's events are never held as records all at once, only as deep
 * as they nest. What depends on the order by start (the window cursor, an
 * op's first use, which fixes the order of th->ops, and the fastest step) is
 * done as an event opens.
 */
static void account(const struct hview *h, struct hthread *th)
{
	const struct trace *t = h->z->t;
	const struct hwin *w = &h->win[th->file];
	struct hev *stack = NULL;
	uint32_t depth = 0, cap = 0, lo = 0;
	int fast = th->step && h->z->n_devs == 0;
	struct fast f;

	if (fast)
		fastest_begin(&f, th);
	for (uint32_t i = 0; i < th->ev.n; i++) {
		const struct trace_event *e = trace_event_at(t, th->ev.v[i]);
		/* the thread's events are scattered among the others': each
		 * would be a cache miss (by start they jump between the runs,
		 * so not ev_prefetch, which stays in one storage run) */
		if (i + PREFETCH_AHEAD < th->ev.n)
			__builtin_prefetch(trace_event_at(t, th->ev.v[i + PREFETCH_AHEAD]));
		struct hev x = {.s = e->ts_ns, .e = e->ts_ns + e->dur_ns, .op = UINT32_MAX};

		while (depth && stack[depth - 1].e <= x.s)
			account_closed(h, th, &stack[--depth]);
		if (depth) {
			struct hev *p = &stack[depth - 1];
			/* a child that ends past its parent (whole-µs rounding in
			 * the legacy export) is cut to it: its overhang is no one's
			 * work */
			if (x.e > p->e)
				x.e = p->e;
			p->child += x.e - x.s;
		} else {
			x.top = 1;
		}
		windows_from(w, &lo, x.s);
		x.lo = lo;
		x.count = h->capture || in_window(w, lo, x.s);
		x.python = (t->cats[e->cat].class_mask & TRACE_CATCLASS_PYTHON) != 0;
		if (x.count && !x.python)
			x.op = (uint32_t)(thread_op(h, th, e->name, e->cat) - th->ops);
		if (fast)
			fastest_add(&f, t, &x, e->name, e->cat);
		stack = grow(stack, depth, &cap, sizeof(*stack));
		stack[depth++] = x;
	}
	while (depth)
		account_closed(h, th, &stack[--depth]);
	if (fast)
		fastest_end(&f, th);
	free(stack);
}

/* The threads' findings joined in thread order, so the totals do not depend
 * on which thread was accounted first. */
static void join_threads(struct hview *h)
{
	h->op_of = pg_xmalloc(((size_t)h->z->t->n_strs + 1) * sizeof(uint32_t));
	memset(h->op_of, 0xff, ((size_t)h->z->t->n_strs + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k < h->n_th; k++) {
		struct hthread *th = &h->th[k];
		if (th->step) {
			h->busy_ns += th->busy_ns;
			h->fastest_ns += th->fastest_ns;
		}
		h->python_ns += th->python_ns;
		h->launch_ns += th->launch_ns;
		for (uint32_t i = 0; i < th->n_ops; i++) {
			const struct hop *x = &th->ops[i];
			uint32_t g = h->op_of[x->name];
			if (g == UINT32_MAX) {
				h->ops = grow(h->ops, h->n_ops, &h->cap_ops, sizeof(*h->ops));
				g = h->n_ops++;
				h->op_of[x->name] = g;
				h->ops[g] = (struct hop){x->name, x->fam, x->launch, 0, 0, 0};
			}
			h->ops[g].count += x->count;
			h->ops[g].self_ns += x->self_ns;
			h->ops[g].total_ns += x->total_ns;
		}
	}
}

/* "step" for the marker threads; else what most of its time was. */
static const char *thread_role(const struct hthread *th)
{
	uint32_t best = ANALYZE_FAM_OTHER;
	double sum = 0;

	if (th->step)
		return "step";
	for (uint32_t f = 0; f < ANALYZE_FAM_COUNT; f++) {
		sum += th->fam_ns[f];
		if (th->fam_ns[f] > th->fam_ns[best])
			best = f;
	}
	if (sum > 0 && th->fam_ns[best] >= 0.5 * sum) {
		if (best == ANALYZE_FAM_DATA_LOADING)
			return "data-loader";
		if (best == ANALYZE_FAM_AUTOGRAD)
			return "autograd";
	}
	return "other";
}

/* As the trace names the thread, else by its id. Threads of one name in
 * several files are one record, as merge makes them: per step they are the
 * mean over the step threads. */
static char *thread_name(const struct hview *h, const struct hthread *th)
{
	const struct trace *t = h->z->t;
	const struct trace_track *tr = &t->tracks[th->track];
	const char *name = trace_str_get(t, tr->name);

	return *name ? pg_xstrdup(name) : pg_xasprintf("tid %s", trace_str_get(t, tr->tid));
}

static struct sum_thread *thread_record(struct sum_host *o, char *name, const char *role)
{
	for (uint32_t i = 0; i < o->n_threads; i++)
		if (strcmp(o->threads[i].name, name) == 0) {
			free(name);
			return &o->threads[i];
		}
	struct sum_thread *x = &o->threads[o->n_threads++];
	x->name = name;
	x->role = pg_xstrdup(role);
	return x;
}

static void to_summary(struct hview *h)
{
	struct sum_host *o = &h->z->s->host;
	double fam_ns[ANALYZE_FAM_COUNT] = {0}, fam_count[ANALYZE_FAM_COUNT] = {0};
	const struct trace *t = h->z->t;

	o->window = pg_xstrdup(h->capture ? "capture" : "steps");
	o->step_threads = h->step_threads;
	o->wall_us_total = h->wall_ns / 1000.0;
	o->busy_us_total = h->busy_ns / 1000.0;
	o->python_us_total = h->python_ns / 1000.0;
	o->launch_us_total = h->launch_ns / 1000.0;
	o->fastest_us_total = h->fastest_ns / 1000.0;
	o->ops = pg_xcalloc(h->n_ops + 1, sizeof(*o->ops));
	for (uint32_t k = 0; k < h->n_ops; k++) {
		const struct hop *x = &h->ops[k];
		struct sum_op *op = &o->ops[o->n_ops++];
		op->name = pg_xstrdup(trace_str_get(t, x->name));
		op->family = pg_xstrdup(analyze_family_name(x->fam));
		op->category = pg_xstrdup(analyze_category_name(ANALYZE_CAT_HOST));
		op->count_total = x->count;
		op->self_us_total = x->self_ns / 1000.0;
		op->total_us_total = x->total_ns / 1000.0;
		fam_ns[x->fam] += x->self_ns;
		fam_count[x->fam] += x->count;
	}
	o->families = pg_xcalloc(ANALYZE_FAM_COUNT + 1, sizeof(*o->families));
	for (uint32_t f = 0; f < ANALYZE_FAM_COUNT; f++) {
		if (fam_count[f] == 0)
			continue;
		struct sum_family *x = &o->families[o->n_families++];
		x->family = pg_xstrdup(analyze_family_name(f));
		x->category = pg_xstrdup(analyze_category_name(ANALYZE_CAT_HOST));
		x->count_total = fam_count[f];
		x->us_total = fam_ns[f] / 1000.0;
	}
	o->threads = pg_xcalloc(h->n_th + 1, sizeof(*o->threads));
	for (uint32_t k = 0; k < h->n_th; k++) {
		const struct hthread *th = &h->th[k];
		if (th->count == 0 && th->busy_ns == 0)
			continue;
		struct sum_thread *x = thread_record(o, thread_name(h, th), thread_role(th));
		x->busy_us_total += th->busy_ns / 1000.0;
		x->count_total += th->count;
	}
}

/*
 * The host view runs in parts so that its costly ones run beside other work:
 * az_host_collect takes the host threads' lists from the filing pass,
 * az_host_sort sorts one thread's (jobs beside the devices' records),
 * az_host_begin makes the windows (it needs the steady steps),
 * az_host_thread accounts one sorted thread (jobs beside the totals pass),
 * az_host_end joins them into host.* and frees everything.
 */
void az_host_collect(struct az *z)
{
	struct hview *h = pg_xcalloc(1, sizeof(*h));

	h->z = z;
	z->hv = h;
	collect(h);
}

void az_host_begin(struct az *z)
{
	struct hview *h = z->hv;
	uint64_t events = 0;

	for (uint32_t k = 0; k < h->n_th; k++)
		events += h->th[k].ev.n;
	if (events)
		windows(h);
	else
		h->n_th = 0; /* nothing to account; their lists are empty */
}

uint32_t az_host_jobs(const struct az *z)
{
	return z->hv ? z->hv->n_th : 0;
}

void az_host_sort(struct az *z, uint32_t k)
{
	struct hthread *th = &z->hv->th[k];

	sort_events(th->ev.v, th->ev.n, z->t);
}

void az_host_thread(struct az *z, uint32_t k)
{
	account(z->hv, &z->hv->th[k]);
}

void az_host_end(struct az *z)
{
	struct hview *h = z->hv;

	if (!h)
		return;
	if (h->n_th) {
		join_threads(h);
		to_summary(h);
	}
	for (uint32_t k = 0; k < h->n_th_alloc; k++) {
		free(h->th[k].ev.v);
		free(h->th[k].ops);
		free(h->th[k].spans.s);
		free(h->th[k].spans.e);
		pg_u64map_release(&h->th[k].op_at);
	}
	for (uint32_t f = 0; h->win && f < z->t->n_files; f++) {
		free(h->win[f].s);
		free(h->win[f].e);
	}
	free(h->win);
	free(h->slot);
	free(h->th);
	free(h->op_of);
	free(h->ops);
	free(h);
	z->hv = NULL;
}
