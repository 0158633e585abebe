/*
 * Devices and their activity: each selected device's events become compact
 * records (struct act), ordered by (track, start, end descending), nested per
 * track for self time and leaf flags, its leaves listed in time order beside
 * the own time of the records that enclose others, and its GPU user
 * annotations nested into paths.
 *
 * How it works: records are made in event order, which is nearly always
 * their order already; when it is not, a stable bucket pass by track and a
 * run-merging sort per track fix it without a full qsort (sort_acts). Nesting
 * walks each track with a stack: a record's first child comes right after it,
 * so leaves are found on the way. The arrays are large and written once, so
 * they are asked for in huge pages (big_alloc).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
	qsort(sorted, n_tr, sizeof(uint32_t), pg_cmp_u32);
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

/* A record open on the nesting stack, and where its own time resumes: the
 * furthest end of its children so far (its start before the first). */
struct frame {
	uint32_t i;
	int64_t cur;
};

static void own_push(struct dev *d, int64_t s, int64_t e, uint32_t i)
{
	if (e <= s)
		return;
	d->own = grow(d->own, d->n_own, &d->cap_own, sizeof(*d->own));
	d->own[d->n_own++] = (struct own){s, e, i};
}

/* Close the top frame: an enclosing record's own time after its last child. */
static void frame_pop(struct dev *d, const struct frame *f)
{
	const struct act *p = &d->a[f->i];

	if (!p->leaf)
		own_push(d, f->cur, p->e, f->i);
}

/*
 * Nesting per track: self time and leaf flags. Partial overlaps are siblings.
 * A record's first child, if any, comes right after it, so its leaf flag is
 * final one step later: the leaves are listed on the way, in track order.
 * An enclosing record's own time (its interval less its children's) becomes
 * pieces in d->own, in no particular order. Returns whether the leaves are in
 * order by (start, event) too.
 */
static int nest(struct dev *d)
{
	int ordered = 1;
	struct frame *stack = NULL;
	uint32_t sp = 0, cap = 0, nl = 0;

	d->leaves = big_alloc((d->n + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < d->n; i++) {
		struct act *a = &d->a[i];
		a->self = a->e - a->s;
		a->leaf = 1;
		while (sp > 0) {
			struct act *top = &d->a[stack[sp - 1].i];
			if (top->track != a->track || a->s >= top->e || a->e > top->e)
				frame_pop(d, &stack[--sp]);
			else
				break;
		}
		if (sp > 0) {
			struct frame *f = &stack[sp - 1];
			struct act *p = &d->a[f->i];
			p->leaf = 0;
			p->self -= a->e - a->s;
			if (p->self < 0)
				p->self = 0;
			own_push(d, f->cur, a->s, f->i);
			if (a->e > f->cur)
				f->cur = a->e;
		}
		if (i > 0 && d->a[i - 1].leaf) {
			if (nl > 0 && leaf_before(d->a, i - 1, d->leaves[nl - 1]))
				ordered = 0;
			d->leaves[nl++] = i - 1;
		}
		stack = grow(stack, sp, &cap, sizeof(*stack));
		stack[sp++] = (struct frame){i, a->s};
	}
	while (sp > 0)
		frame_pop(d, &stack[--sp]);
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
PG_SORT_RUNS(sort_leaves, uint32_t, const struct act *, leaf_before)

static int own_before(const struct act *a, struct own x, struct own y)
{
	return x.s < y.s || (x.s == y.s && a[x.act].ev < a[y.act].ev);
}

/* Own-time pieces by (start, event), as the leaves. */
PG_SORT_RUNS(sort_own, struct own, const struct act *, own_before)

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
const struct ann *az_annotation_at(const struct dev *d, int64_t t)
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
void az_build_device(struct az *z, uint32_t di, struct scratch *sc)
{
	const struct trace *t = z->t;
	struct dev *d = &z->devs[di];
	struct idxv *evs = &z->f.act[di], *anns = &z->f.ann[di];
	struct clscache *cc = az_scratch_cc(sc, t);
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
		a->op = az_record_op(z, e, a->fam);
		d->n_pending += a->op == UINT32_MAX;
		d->lo = a->s < d->lo ? a->s : d->lo;
		d->hi = a->e > d->hi ? a->e : d->hi;
		if (k > 0 && ordered && cmp_act_track(a - 1, a) > 0)
			ordered = 0;
		one_track &= a->track == d->a[0].track;
	}
	free(evs->v);
	memset(evs, 0, sizeof(*evs));
	if (!ordered)
		order_by_track(d, one_track, az_scratch_slot(sc, t));
	if (!nest(d))
		sort_leaves(d->leaves, d->n_leaves, d->a);
	sort_own(d->own, d->n_own, d->a);
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
