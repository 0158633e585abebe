/*
 * Steps: where each step's work is on each device (its span) from the best
 * source the profile has, the step table with each device's step time, and
 * the steady windows that bound every per-step number.
 *
 * Sources, in order: Steps lines (TPU, TensorFlow GPU); host step markers
 * (JAX StepTraceAnnotation, then Kineto ProfilerStep#N), which reach device
 * work through correlation ids, since a kernel belongs to the step whose
 * host span holds its launch; and with no marker, the executions of the
 * dominant module on XLA Modules lines. Host markers need no device records,
 * so they are prepared beside the devices (az_host_prepare). Correlations go
 * through a plain array when the ids are dense and a hash map otherwise
 * (struct corrmap). Step ids are merged from sorted runs, and each span finds
 * its step by a search that tries the last answer first: thousands of steps
 * on many devices must not cost steps x spans.
 *
 * A step's time on a device is not its span: the steps tile the device's
 * timeline, each from its first work to the next step's (tile_device), so
 * pipelined steps, whose spans overlap, never add up to more than the
 * capture. Those tiles are also the steady windows. A Steps line is the
 * exception: the profiler's own step events are the steps, each as long as
 * its event on that device, and an event under which the device ran nothing
 * (captures whose step events lie apart from the device's ops) has no time
 * there: a null, never a 0 that would count as a steady step.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../summary/summary.h"

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

static int cmp_hostmark(const void *a, const void *b)
{
	const struct hostmark *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

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

void az_host_release(struct hoststeps *h)
{
	free(h->hm);
	corrmap_release(&h->cm);
	memset(h, 0, sizeof(*h));
	h->kind = -1;
}

/* The markers of one kind and, from host launches inside a marker's span,
 * correlation -> marker. Needs no device, so it can run beside them. */
void az_host_prepare(const struct az *z, int kind, struct hoststeps *h)
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
		hm[n++] = (struct hostmark){t->devices[tr->device].file, e->track, step, e->ts_ns,
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
		az_host_release(h);
		az_host_prepare(z, kind, h);
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
	az_host_release(h);
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
		/* the executions number the steps in order; the step time runs on to
		 * the next execution as every source's does (tile_device), so the work
		 * of other modules in between (an all-reduce module, say) belongs to it */
		for (uint32_t d = 0; d < z->n_devs; d++) {
			struct spans *sp = &z->devs[d].steps;
			sort_spans(sp->v, sp->n);
			for (uint32_t k = 0; k < sp->n; k++)
				sp->v[k].step = k;
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

uint32_t az_step_index(const struct az *z, int64_t step)
{
	return step_index(z->step_ids, z->n_step_ids, step);
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

/* Ascending; step ids are mostly one run per device. */
#define I64_BEFORE(ctx, x, y) ((void)(ctx), (x) < (y))
PG_SORT_RUNS(sort_i64, int64_t, const void *, I64_BEFORE)

/* x within [lo, hi]; lo when hi < lo. */
static int64_t clamp_ns(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? (hi > lo ? hi : lo) : x;
}

static int cmp_span_step(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* Whether device dv ran anything in [s, e): the first of its leaves (by
 * start) that starts at or after e, and the latest end among those before it
 * (end_max, the running maximum of the leaves' ends). */
static int has_work(const struct dev *dv, const int64_t *end_max, int64_t s, int64_t e)
{
	uint32_t lo = 0, hi = dv->n_leaves;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (dv->a[dv->leaves[mid]].s < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && end_max[lo - 1] > s;
}

/*
 * A Steps line's step times: each step's own event on the device (several
 * merged), when the device ran something inside it; else the step has no
 * time there (device_us stays null) and no tile, and *n_empty counts it.
 */
static void steps_line_device(struct az *z, uint32_t d, struct span *w, uint32_t m,
			      int64_t *span_ns, uint32_t *n_empty)
{
	struct dev *dv = &z->devs[d];
	struct sum_step *st = z->s->steps;
	int64_t *end_max = pg_xmalloc((dv->n_leaves + 1) * sizeof(int64_t));
	uint32_t kept = 0;

	for (uint32_t j = 0; j < dv->n_leaves; j++) {
		const struct act *a = &dv->a[dv->leaves[j]];
		int64_t end = a->e > a->s ? a->e : INT64_MIN; /* an instant is no work */
		end_max[j] = j && end_max[j - 1] > end ? end_max[j - 1] : end;
	}
	for (uint32_t k = 0; k < m; k++) {
		uint32_t i = (uint32_t)w[k].step;
		if (w[k].e - w[k].s > span_ns[i])
			span_ns[i] = w[k].e - w[k].s;
		if (w[k].e <= w[k].s || !has_work(dv, end_max, w[k].s, w[k].e)) {
			(*n_empty)++;
			continue;
		}
		st[i].device_us[d] = (double)(w[k].e - w[k].s) / 1000.0;
		w[kept++] = w[k];
	}
	free(end_max);
	dv->tiles = (struct spans){w, kept, m + 1};
}

/*
 * A device's step times, so that its steps tile its timeline: a step runs from
 * its first device work to the next step's first work, and the last step to
 * the end of the steps' work. With pipelined steps (a step's kernels start
 * before the previous step's have all ended) the spans overlap and sum to more
 * than the capture; the tiles never do. A step the device has no work for
 * leaves a hole: the step before it then ends at its own last work, or at the
 * next step's start when that comes first, rather than taking in the missing
 * step's time. Fills dv->tiles (step = table index) and, per step, the
 * device's time in device_us[d] and the largest span in span_ns[i].
 */
static void tile_device(struct az *z, uint32_t d, int64_t *span_ns, uint32_t *n_empty)
{
	struct dev *dv = &z->devs[d];
	struct sum_step *st = z->s->steps;
	struct span *w = pg_xmalloc((dv->steps.n + 1) * sizeof(*w));
	uint32_t n = 0, at = 0;

	for (uint32_t k = 0; k < dv->steps.n; k++) {
		uint32_t i = step_index_near(z->step_ids, z->n_step_ids, dv->steps.v[k].step, &at);
		if (i != UINT32_MAX)
			w[n++] = (struct span){i, dv->steps.v[k].s, dv->steps.v[k].e};
	}
	/* one window per step: a step can have several spans (one per marker) */
	for (uint32_t k = 1; k < n; k++)
		if (cmp_span_step(&w[k - 1], &w[k]) > 0) {
			qsort(w, n, sizeof(*w), cmp_span_step);
			break;
		}
	uint32_t m = 0;
	int64_t last_e = INT64_MIN;
	for (uint32_t k = 0; k < n; k++) {
		if (m && w[m - 1].step == w[k].step) {
			if (w[k].e > w[m - 1].e)
				w[m - 1].e = w[k].e;
		} else {
			w[m++] = w[k];
		}
		if (w[k].e > last_e)
			last_e = w[k].e;
	}
	sort_spans(w, m);
	if (z->f.steps.n) { /* the steps come from Steps lines */
		steps_line_device(z, d, w, m, span_ns, n_empty);
		return;
	}
	/* a source's own step events (Steps, XLA Modules) can reach past the
	 * device's first and last activity, which bound its capture */
	int64_t lo = dv->n ? dv->lo : INT64_MIN, hi = dv->n ? dv->hi : INT64_MAX;
	for (uint32_t k = 0; k < m; k++) {
		uint32_t i = (uint32_t)w[k].step;
		int64_t end = last_e;
		if (k + 1 < m) {
			end = w[k + 1].s;
			if (w[k + 1].step != w[k].step + 1 && w[k].e < end)
				end = w[k].e;
		}
		if (w[k].e - w[k].s > span_ns[i])
			span_ns[i] = w[k].e - w[k].s;
		w[k].s = clamp_ns(w[k].s, lo, hi);
		w[k].e = clamp_ns(end, w[k].s, hi);
		st[i].device_us[d] = (double)(w[k].e - w[k].s) / 1000.0;
	}
	dv->tiles = (struct spans){w, m, n + 1};
}

/* The Steps events under which a device ran nothing, said: the steps with no
 * work on any device (no time, not steady) by id, and how many more lack it
 * on some devices only. */
static void no_device_work(struct summary *s, const int64_t *span_ns, uint32_t n_empty)
{
	struct pg_buf ids = PG_BUF_INIT;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->n_steps; i++) {
		if (span_ns[i] < 0 || s->steps[i].us >= 0)
			continue;
		if (n < 8)
			pg_buf_addf(&ids, "%s%lld", n ? ", " : "", (long long)s->steps[i].step);
		n++;
	}
	if (n > 8)
		pg_buf_addf(&ids, ", ... (%u in all)", n);
	if (n)
		summary_add_warning(s, "steps-no-device-work",
				    "%u step%s of the Steps line%s no device work under %s event "
				    "(step%s %s): no time, not steady%s",
				    n, n == 1 ? "" : "s", n == 1 ? " has" : " have",
				    n == 1 ? "its" : "their", n == 1 ? "" : "s", ids.ptr,
				    n_empty > n ? "; some other steps lack it on some devices"
						: "");
	else
		summary_add_warning(s, "steps-no-device-work",
				    "%u Steps event%s on some devices hold%s no device work there: "
				    "those devices have no time for %s steps",
				    n_empty, n_empty == 1 ? "" : "s", n_empty == 1 ? "s" : "",
				    n_empty == 1 ? "that step" : "those");
	pg_buf_release(&ids);
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
	/* every host marker is a step, with device work or not: a step the
	 * profiler stopped in is listed (without a time), not dropped */
	for (uint32_t k = 0; k < n_hm; k++) {
		ids = grow(ids, n, &cap, sizeof(int64_t));
		ids[n++] = hm[k].step;
	}
	sort_i64(ids, n, NULL);
	uint32_t u = 0;
	for (uint32_t i = 0; i < n; i++)
		if (u == 0 || ids[u - 1] != ids[i])
			ids[u++] = ids[i];
	z->step_ids = ids;
	z->n_step_ids = u;
	s->steps = pg_xcalloc(u + 1, sizeof(*s->steps));
	s->n_steps = u;
	int64_t *span_ns = pg_xmalloc((u + 1) * sizeof(int64_t));
	for (uint32_t i = 0; i < u; i++) {
		s->steps[i].step = ids[i];
		s->steps[i].us = -1;
		s->steps[i].span_us = -1;
		s->steps[i].host_us = -1;
		s->steps[i].device_us = pg_xmalloc((z->n_devs + 1) * sizeof(double));
		for (uint32_t d = 0; d < z->n_devs; d++)
			s->steps[i].device_us[d] = -1;
		span_ns[i] = -1;
	}
	/* each span and host marker finds its step by a search: thousands of
	 * steps on many devices must not cost steps x spans */
	uint32_t n_empty = 0;
	for (uint32_t d = 0; d < z->n_devs; d++)
		tile_device(z, d, span_ns, &n_empty);
	for (uint32_t i = 0; i < u; i++) {
		for (uint32_t d = 0; d < z->n_devs; d++)
			if (s->steps[i].device_us[d] > s->steps[i].us)
				s->steps[i].us = s->steps[i].device_us[d];
		if (span_ns[i] >= 0)
			s->steps[i].span_us = (double)span_ns[i] / 1000.0;
	}
	if (n_empty)
		no_device_work(s, span_ns, n_empty);
	free(span_ns);
	for (uint32_t k = 0; k < n_hm; k++) {
		uint32_t i = step_index(ids, u, hm[k].step);
		double us = (double)(hm[k].e - hm[k].s) / 1000.0;
		if (i != UINT32_MAX && us > s->steps[i].host_us)
			s->steps[i].host_us = us;
	}
	/* host steps: the marker is the step, its span its time */
	for (uint32_t i = 0; z->host_basis && i < u; i++)
		s->steps[i].us = s->steps[i].span_us = s->steps[i].host_us;
}

/*
 * No device work at all (a CPU-only run): the host step markers are the steps,
 * each as long as its marker (the longest, where several processes mark one
 * step). The summary's basis says so (SUMMARY_BASIS_HOST).
 */
static int steps_from_host_only(struct az *z, int kind, struct hostmark **hm_out, uint32_t *n_out)
{
	struct hoststeps h;

	if (z->n_devs || z->f.mark[kind].n == 0)
		return 0;
	memset(&h, 0, sizeof(h));
	az_host_prepare(z, kind, &h);
	*hm_out = h.hm;
	*n_out = h.n;
	h.hm = NULL;
	az_host_release(&h);
	z->host_basis = *n_out > 0;
	return z->host_basis;
}

/* Markers that gave no step say so, so the summary never claims there are
 * none: host markers only make steps by holding the launches of device work
 * (or, without any device work, by themselves). */
static void unusable_markers(struct az *z)
{
	static const char *const what[MARK_KINDS] = {"step annotation", "ProfilerStep#"};

	for (int k = 0; k < MARK_KINDS; k++)
		if (z->f.mark[k].n)
			summary_add_warning(z->s, "steps-unusable",
					    "%u %s marker%s, but no device work was launched "
					    "inside any of them (no correlation links the "
					    "two): per-step numbers are over the whole "
					    "capture",
					    z->f.mark[k].n, what[k],
					    z->f.mark[k].n == 1 ? "" : "s");
}

/* The steps from the best source the profile has, their table and the warm-up. */
void az_steps(struct az *z)
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
	else if (steps_from_host_only(z, MARK_ANNOTATION, &hm, &n_hm))
		src = "step-annotation";
	else if ((free(hm), hm = NULL, n_hm = 0,
		  steps_from_host_only(z, MARK_PROFILER_STEP, &hm, &n_hm)))
		src = "profiler-step";
	else
		(free(hm), hm = NULL, n_hm = 0);
	z->has_steps = strcmp(src, "none") != 0;
	if (!z->has_steps)
		unusable_markers(z);
	s->steps_source = pg_xstrdup(src);
	s->step_source = pg_xstrdup(src);
	/* the step table reads the markers, and the host view again (host.c) */
	z->hm = hm;
	z->n_hm = n_hm;
	z->steps_done = 1;
}

/* The step table and the warm-up, once the steps are found and the devices
 * built (their step times are clipped to their activity). */
void az_step_table(struct az *z)
{
	build_step_table(z, z->hm, z->n_hm);
	summary_choose_warmup(z->s, z->o->warmup);
}

/* How many of the sorted v[0..n) are <= x. */
uint32_t az_count_le(const int64_t *v, uint32_t n, int64_t x)
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

/* Steady windows of a device: its step tiles of the steady steps, merged
 * where they touch. The tiles come by start and do not overlap. */
void az_steady_device(struct az *z, uint32_t d, struct scratch *sc)
{
	const struct summary *s = z->s;
	struct dev *dv = &z->devs[d];
	const struct spans *tl = &dv->tiles;
	(void)sc;

	dv->win_s = pg_xmalloc((tl->n + 1) * sizeof(int64_t));
	dv->win_e = pg_xmalloc((tl->n + 1) * sizeof(int64_t));
	dv->n_win = 0;
	for (uint32_t k = 0; k < tl->n; k++) {
		const struct span *w = &tl->v[k];
		if (!s->steps[w->step].steady || w->e <= w->s)
			continue;
		if (dv->n_win && w->s <= dv->win_e[dv->n_win - 1]) {
			if (w->e > dv->win_e[dv->n_win - 1])
				dv->win_e[dv->n_win - 1] = w->e;
			continue;
		}
		dv->win_s[dv->n_win] = w->s;
		dv->win_e[dv->n_win++] = w->e;
	}
	/* without steps, the whole capture is the window */
	if (!z->has_steps && dv->n) {
		dv->win_s[0] = dv->lo;
		dv->win_e[0] = dv->hi;
		dv->n_win = 1;
	}
}
