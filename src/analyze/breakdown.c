/*
 * The time split: per device, over the whole capture and over its steady
 * windows, the wall time cut into compute, communication not under compute,
 * memory not under either, and idle; and the idle gaps inside steady windows
 * (noted by gaps.c).
 *
 * How it works: one pass over the device's busy units in order of start: its
 * leaves whole and each enclosing record's own time (the parts of its
 * interval no child covers), each in its record's category, so an enclosing
 * op never hides the work inside it, loses none of its own time, and a kernel
 * nested in another counts once (struct units). A sweep keeps,
 * per category, the furthest end seen: nothing starting later can cover time
 * before the latest start, so time up to it is settled and counted as it is
 * passed. Integer ns throughout, so the parts sum exactly to the wall time.
 */
#include "internal.h"

#include "../summary/summary.h"

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
 * One pass over a device's busy units in time order for its exposed-time
 * decompositions, over the whole capture and over its steady windows (compute
 * first, then communication not under compute, then memory not under either,
 * then idle; integer ns, so the parts sum exactly to the wall time), and for
 * its idle gaps inside steady windows (across all its streams: a comm stream
 * waiting while compute runs is not idle).
 */
void az_device_splits(struct az *z, uint32_t d, struct scratch *sc)
{
	struct dev *dv = &z->devs[d];
	const int64_t *ws = dv->win_s, *we = dv->win_e;
	uint32_t nw = dv->n_win, lo = 0, *slot = az_scratch_ops(sc, z->n_ops);
	struct sweep all = SWEEP_INIT, st = SWEEP_INIT;
	int64_t wall = 0, ksum_all = 0, ksum = 0, prev_end = INT64_MIN;
	struct units cur = {0, 0};
	struct own u;

	for (uint32_t k = 0; k < nw; k++)
		wall += we[k] - ws[k];
	while (units_next(dv, &cur, &u)) {
		const struct act *a = &dv->a[u.act];
		int c = a->cat == ANALYZE_CAT_COMMUNICATION ? 1
			: a->cat == ANALYZE_CAT_MEMORY	    ? 2
							    : 0;
		/* the capture is one window from the first start to the last end */
		if (u.e > u.s) {
			ksum_all += u.e - u.s;
			sweep_add(&all, u.s, u.e, c);
		}
		/* the windows starting at or before it; units come by start */
		while (lo < nw && ws[lo] <= u.s)
			lo++;
		if (prev_end != INT64_MIN && u.s > prev_end && lo > 0 && u.s < we[lo - 1])
			az_note_gap(z, dv, &u, cur, u.s - prev_end, slot);
		if (u.e > prev_end)
			prev_end = u.e;
		/* clip to the window holding its start (windows do not overlap) */
		int64_t s0 = u.s, e0 = u.e;
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
