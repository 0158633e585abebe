/*
 * Idle gaps before ops: the device's idle time inside steady windows, charged
 * to the op that ends each gap, or past marker ops (iota, constant,
 * copy-start, ...) to the real op after them.
 *
 * How it works: the split pass (breakdown.c) notes each gap on its device as
 * it meets it (az_note_gap); az_gaps then sums the devices' notes in device
 * order, so the result is what one pass over all devices in order would give,
 * whichever threads ran the splits.
 */
#include "internal.h"

#include <stdlib.h>

#include "../summary/summary.h"

/*
 * A gap of ns before busy unit u of dv (next: the units after it), noted for
 * the op it belongs to: the op of u's record, or when that is a marker (iota,
 * constant, copy-start, ...), the first real op after it, looking at most 8
 * units ahead and never across a second gap. slot[op] indexes dv->gaps.
 */
void az_note_gap(const struct az *z, struct dev *dv, const struct own *u, struct units next,
		 int64_t ns, uint32_t *slot)
{
	uint32_t payload = dv->a[u->act].op, mk = payload;
	struct own b;

	if (z->op_marker[mk]) {
		int64_t chain = u->e;
		for (uint32_t j = 0; j < 8 && units_next(dv, &next, &b); j++) {
			if (b.s > chain)
				break;
			if (!z->op_marker[dv->a[b.act].op]) {
				payload = dv->a[b.act].op;
				break;
			}
			chain = b.e > chain ? b.e : chain;
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
 * Idle before ops: each device's gaps were noted per op by its split pass
 * (az_device_splits); here they are summed in device order. The marker of an op
 * is the last marker op other than itself that ended one of its gaps, else
 * the op itself, as one pass over all devices in order would leave it.
 */
void az_gaps(struct az *z)
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
