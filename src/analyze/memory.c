/*
 * Memory: the allocators' peaks (memory.devices[]) from the samples the
 * readers kept (struct trace_mem: Kineto's "[memory]" events, XPlane's
 * allocator events).
 *
 * How it works: one pass over the samples keeps, per allocator (the device
 * type and index the profiler names, whatever file or rank it came from, so
 * that ranks' cuda:0 meet as merge meets them), the largest Total Allocated
 * and Total Reserved, over the whole capture and over the steady steps. A
 * sample is in a steady step when it falls in one of its file's steady
 * windows: the host step markers of the steady steps (the allocator runs on
 * the host, ahead of the kernels), else the file's devices' steady windows;
 * without steps the capture is the window, as for every per-step number.
 * summary_finalize takes the accelerators' maximum for memory.*.
 */
#include "internal.h"

#include "../summary/summary.h"

#include <stdlib.h>

struct win {
	int64_t *s, *e; /* disjoint, by start */
	uint32_t n, cap;
};

struct peak {
	int32_t type, id;
	double alloc, resv, steady_alloc, steady_resv, samples;
};

static void win_add(struct win *w, int64_t s, int64_t e)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->s = pg_xrealloc(w->s, w->cap * sizeof(int64_t));
		w->e = pg_xrealloc(w->e, w->cap * sizeof(int64_t));
	}
	w->s[w->n] = s;
	w->e[w->n++] = e;
}

/* Sort and join a file's windows, so that a binary search finds a time's. */
static int cmp_win(const void *pa, const void *pb)
{
	const int64_t *a = pa, *b = pb;
	return (a[0] > b[0]) - (a[0] < b[0]);
}

static void win_normalize(struct win *w)
{
	int64_t *pairs = pg_xmalloc(((size_t)w->n + 1) * 2 * sizeof(int64_t));
	uint32_t m = 0;

	for (uint32_t k = 0; k < w->n; k++) {
		pairs[2 * k] = w->s[k];
		pairs[2 * k + 1] = w->e[k];
	}
	qsort(pairs, w->n, 2 * sizeof(int64_t), cmp_win);
	for (uint32_t k = 0; k < w->n; k++) {
		if (m && pairs[2 * k] <= w->e[m - 1]) {
			if (pairs[2 * k + 1] > w->e[m - 1])
				w->e[m - 1] = pairs[2 * k + 1];
			continue;
		}
		w->s[m] = pairs[2 * k];
		w->e[m++] = pairs[2 * k + 1];
	}
	w->n = m;
	free(pairs);
}

static int win_holds(const struct win *w, int64_t ts)
{
	uint32_t k = az_count_le(w->s, w->n, ts);
	return k > 0 && ts <= w->e[k - 1];
}

/* Each file's steady windows (see the top of the file); NULL when the
 * profile has steps and none is steady anywhere. */
static struct win *steady_windows(const struct az *z)
{
	uint32_t nf = z->t->n_files;
	struct win *w = pg_xcalloc(nf + 1, sizeof(*w));

	for (uint32_t k = 0; k < z->n_hm; k++) {
		const struct hostmark *m = &z->hm[k];
		uint32_t i = az_step_index(z, m->step);
		if (i != UINT32_MAX && z->s->steps[i].steady && m->file < nf && m->e > m->s)
			win_add(&w[m->file], m->s, m->e);
	}
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct dev *dv = &z->devs[d];
		if (dv->file >= nf || z->n_hm)
			continue;
		for (uint32_t k = 0; k < dv->n_win; k++)
			win_add(&w[dv->file], dv->win_s[k], dv->win_e[k]);
	}
	for (uint32_t f = 0; f < nf; f++)
		win_normalize(&w[f]);
	return w;
}

static struct peak *peak_of(struct peak **v, uint32_t *n, uint32_t *cap, int32_t type, int32_t id)
{
	for (uint32_t i = 0; i < *n; i++)
		if ((*v)[i].type == type && (*v)[i].id == id)
			return &(*v)[i];
	*v = grow(*v, *n, cap, sizeof(**v));
	(*v)[*n] = (struct peak){type, id, -1, -1, -1, -1, 0};
	return &(*v)[(*n)++];
}

static void lift(double *at, int64_t v)
{
	if (v >= 0 && (double)v > *at)
		*at = (double)v;
}

/* c10's device type names, as torch.device writes them ("cuda:0"). */
static const char *type_name(int32_t type)
{
	switch (type) {
	case TRACE_MEM_CPU: return "cpu";
	case TRACE_MEM_CUDA: return "cuda";
	case TRACE_MEM_HIP: return "hip";
	case TRACE_MEM_XLA: return "xla";
	case 12: return "xpu";
	case 13: return "mps";
	case 19: return "mtia";
	case 20: return "privateuseone";
	default: return NULL;
	}
}

static char *device_name(int32_t type, int32_t id)
{
	const char *n = type_name(type);

	if (type == TRACE_MEM_CPU)
		return pg_xstrdup("cpu");
	if (!n)
		return id >= 0 ? pg_xasprintf("type%d:%d", type, id) : pg_xasprintf("type%d", type);
	return id >= 0 ? pg_xasprintf("%s:%d", n, id) : pg_xstrdup(n);
}

void az_memory(struct az *z)
{
	const struct trace *t = z->t;
	struct summary *s = z->s;
	struct peak *v = NULL;
	uint32_t n = 0, cap = 0;
	struct win *w;

	if (t->n_mem == 0)
		return;
	w = z->has_steps ? steady_windows(z) : NULL;
	for (uint64_t i = 0; i < t->n_mem; i++) {
		const struct trace_mem *m = &t->mem[i];
		struct peak *p = peak_of(&v, &n, &cap, m->device_type, m->device_id);
		p->samples++;
		lift(&p->alloc, m->allocated_bytes);
		lift(&p->resv, m->reserved_bytes);
		if (w && (m->file >= t->n_files || !win_holds(&w[m->file], m->ts_ns)))
			continue;
		lift(&p->steady_alloc, m->allocated_bytes);
		lift(&p->steady_resv, m->reserved_bytes);
	}
	s->memory.devices = pg_xcalloc(n + 1, sizeof(*s->memory.devices));
	s->memory.n_devices = n;
	for (uint32_t i = 0; i < n; i++) {
		struct sum_memory_device *o = &s->memory.devices[i];
		o->device = device_name(v[i].type, v[i].id);
		o->kind = pg_xstrdup(v[i].type == TRACE_MEM_CPU ? "cpu" : "accelerator");
		o->peak_allocated_bytes = v[i].alloc;
		o->peak_reserved_bytes = v[i].resv;
		o->steady_peak_allocated_bytes = v[i].steady_alloc;
		o->steady_peak_reserved_bytes = v[i].steady_resv;
		o->samples_total = v[i].samples;
	}
	for (uint32_t f = 0; w && f < t->n_files; f++) {
		free(w[f].s);
		free(w[f].e);
	}
	free(w);
	free(v);
}
