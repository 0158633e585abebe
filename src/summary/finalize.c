/*
 * The derived half of a summary: from raw parts (steps with per-device times
 * and steady flags, per-device splits, exact totals, reader warnings) to every
 * statistic, per-step number, share, bandwidth, sorted list, derived warning
 * and candidate. summarize and merge both end here, so a merge of per-host
 * summaries and a summary of all hosts at once give the same bytes.
 */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPS	 5000
#define MAX_LIST 500

/* Whether v's doubles order as their bit patterns do: finite, sign bit clear. */
static int bits_order(const double *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!isfinite(v[i]) || signbit(v[i]))
			return 0;
	return 1;
}

/*
 * Ascending. Step times are finite and not negative, and such doubles order as
 * their bit patterns do: a radix sort on those, as many 11-bit digits as the
 * values need, where qsort on tens of thousands of steps (twice per statistic)
 * cost more than the rest of finalising. Equal values have equal bits, so the
 * result is qsort's; anything else goes to qsort.
 */
static void sort_doubles(double *v, uint32_t n)
{
	uint64_t *key, *tmp, hi = 0;
	uint32_t count[2048];

	if (n < 64 || !bits_order(v, n)) {
		qsort(v, n, sizeof(double), pg_cmp_double);
		return;
	}
	key = pg_xmalloc((size_t)n * sizeof(uint64_t));
	tmp = pg_xmalloc((size_t)n * sizeof(uint64_t));
	memcpy(key, v, (size_t)n * sizeof(uint64_t));
	for (uint32_t i = 0; i < n; i++)
		hi |= key[i];
	uint64_t *src = key, *dst = tmp;
	for (int shift = 0; shift < 64 && (hi >> shift) != 0; shift += 11) {
		memset(count, 0, sizeof(count));
		for (uint32_t i = 0; i < n; i++)
			count[(src[i] >> shift) & 2047]++;
		for (uint32_t b = 0, sum = 0; b < 2048; b++) {
			uint32_t c = count[b];
			count[b] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 2047]++] = src[i];
		uint64_t *x = src;
		src = dst;
		dst = x;
	}
	memcpy(v, src, (size_t)n * sizeof(double));
	free(key);
	free(tmp);
}

/* Linear interpolation at position (n-1)q of sorted v. */
static double quantile(const double *v, uint32_t n, double q)
{
	if (n == 0)
		return 0;
	double pos = (n - 1) * q;
	uint32_t lo = (uint32_t)pos;
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (v[lo + 1] - v[lo]) * (pos - lo);
}

double summary_quantile(const double *sorted, uint32_t n, double q)
{
	return quantile(sorted, n, q);
}

static void stats_of(const double *vals, uint32_t n, struct sum_stats *st)
{
	double *v = pg_xmalloc((n + 1) * sizeof(double)), sum = 0;

	memset(st, 0, sizeof(*st));
	st->count = n;
	if (n == 0) {
		free(v);
		return;
	}
	memcpy(v, vals, n * sizeof(double));
	sort_doubles(v, n);
	for (uint32_t i = 0; i < n; i++)
		sum += v[i];
	st->mean_us = sum / n;
	st->median_us = quantile(v, n, 0.5);
	st->p90_us = quantile(v, n, 0.9);
	st->min_us = v[0];
	st->max_us = v[n - 1];
	for (uint32_t i = 0; i < n; i++)
		v[i] = fabs(v[i] - st->median_us);
	sort_doubles(v, n);
	st->mad_us = quantile(v, n, 0.5);
	free(v);
}

/*
 * Pipelined steps: when the timed steps' spans add up to more than
 * PIPELINED_SPAN_RATIO times their step times, each step's device work runs on
 * into the next step's, and the last timed step's tile holds the drain of the
 * steps before it (on the HTA rank0 trace 372 ms against a period of 216 ms).
 * Its time is real but no steady step looks like it, so it is not steady,
 * while two or more steady steps stay. The rule reads only the step table, so
 * merge applies it to merged steps alike. Returns the step's index, or n.
 */
#define PIPELINED_SPAN_RATIO 1.05
static uint32_t drain_step(const struct summary *s, uint32_t w, double *ratio)
{
	double spans = 0, times = 0;
	uint32_t last = s->n_steps, left = 0;

	for (uint32_t i = 0; i < s->n_steps; i++) {
		if (s->steps[i].us < 0 || s->steps[i].span_us < 0)
			continue;
		spans += s->steps[i].span_us;
		times += s->steps[i].us;
		last = i;
		left += i >= w;
	}
	if (last == s->n_steps || left < 3 || last < w || times <= 0 ||
	    spans <= PIPELINED_SPAN_RATIO * times)
		return s->n_steps;
	*ratio = spans / times;
	return last;
}

/*
 * Steps without a time (no device work: the profiler stopped in them) are
 * never steady and take no part in the rule; --warmup N still counts them by
 * position.
 */
void summary_choose_warmup(struct summary *s, int32_t requested)
{
	uint32_t n = s->n_steps, w = 0, timed = 0;
	char reason[384];

	for (uint32_t i = 0; i < n; i++)
		timed += s->steps[i].us >= 0;
	s->warmup_requested = requested;
	if (requested >= 0) {
		w = (uint32_t)requested < n ? (uint32_t)requested : n;
		snprintf(reason, sizeof(reason), "--warmup %d", requested);
	} else if (timed >= 3) {
		double *v = pg_xmalloc(n * sizeof(double));
		struct sum_stats st;
		uint32_t m = 0, left = timed;
		for (uint32_t i = 0; i < n; i++)
			if (s->steps[i].us >= 0)
				v[m++] = s->steps[i].us;
		stats_of(v, m, &st);
		double limit = st.median_us + fmax(0.5 * st.median_us, 5 * st.mad_us);
		/* leading outliers go, while two timed steps stay */
		for (uint32_t i = 0; i < n && left > 2; i++) {
			if (s->steps[i].us < 0)
				continue;
			if (s->steps[i].us <= limit)
				break;
			w = i + 1;
			left--;
		}
		free(v);
		if (w)
			snprintf(
			    reason, sizeof(reason),
			    "auto: the first %u step%s took more than %.3f us (median %.3f us)", w,
			    w == 1 ? "" : "s", limit, st.median_us);
		else
			snprintf(reason, sizeof(reason), "auto: no leading step stands out");
	} else {
		snprintf(reason, sizeof(reason), "auto: too few steps to tell warm-up apart");
	}
	double ratio = 0;
	uint32_t drain = drain_step(s, w, &ratio);
	if (drain < n) {
		size_t len = strlen(reason);
		snprintf(reason + len, sizeof(reason) - len,
			 "; pipelined steps (spans add up to %.2fx the step times): the last "
			 "step %lld holds the drain of the steps before it and is not steady",
			 ratio, (long long)s->steps[drain].step);
	}
	s->warmup = w;
	free(s->warmup_reason);
	s->warmup_reason = pg_xstrdup(reason);
	for (uint32_t i = 0; i < n; i++)
		s->steps[i].steady = i >= w && i != drain && s->steps[i].us >= 0;
}

/* Two-means on log step time; light/heavy only when clearly apart. */
static void step_classes(struct summary *s, const double *v, const int64_t *ids, uint32_t n)
{
	double *lg = NULL, lo_c = 0, hi_c = 0;
	uint8_t *heavy = NULL;
	int split = 0;

	if (n >= 6) {
		double mn = v[0], mx = v[0];
		for (uint32_t i = 1; i < n; i++) {
			mn = fmin(mn, v[i]);
			mx = fmax(mx, v[i]);
		}
		if (mn > 0 && mx / mn >= 1.25) {
			lg = pg_xmalloc(n * sizeof(double));
			heavy = pg_xcalloc(n, 1);
			for (uint32_t i = 0; i < n; i++)
				lg[i] = log(v[i]);
			lo_c = log(mn);
			hi_c = log(mx);
			for (int it = 0; it < 40; it++) {
				double sl = 0, sh = 0;
				uint32_t nl = 0, nh = 0;
				for (uint32_t i = 0; i < n; i++) {
					heavy[i] = fabs(lg[i] - hi_c) < fabs(lg[i] - lo_c);
					if (heavy[i]) {
						sh += lg[i];
						nh++;
					} else {
						sl += lg[i];
						nl++;
					}
				}
				double nlc = nl ? sl / nl : lo_c, nhc = nh ? sh / nh : hi_c;
				int done = fabs(nlc - lo_c) < 1e-9 && fabs(nhc - hi_c) < 1e-9;
				lo_c = nlc;
				hi_c = nhc;
				if (done)
					break;
			}
			uint32_t nh = 0;
			for (uint32_t i = 0; i < n; i++)
				nh += heavy[i];
			split = nh >= 2 && n - nh >= 2 && nh * 10 >= n && (n - nh) * 10 >= n &&
				exp(hi_c - lo_c) >= 1.5;
		}
	}
	int n_cls = split ? 2 : 1;
	s->classes = pg_xcalloc((size_t)n_cls, sizeof(*s->classes));
	s->n_classes = (uint32_t)n_cls;
	for (int c = 0; c < n_cls; c++) {
		struct sum_class *cl = &s->classes[c];
		double *cv = pg_xmalloc((n + 1) * sizeof(double));
		uint32_t cn = 0;
		for (uint32_t i = 0; i < n; i++)
			if (!split || heavy[i] == (uint8_t)c)
				cv[cn++] = v[i];
		struct sum_stats st;
		stats_of(cv, cn, &st);
		cl->name = pg_xstrdup(!split ? "typical" : c ? "heavy" : "light");
		cl->count = cn;
		cl->median_us = st.median_us;
		double best = -1;
		for (uint32_t i = 0; i < n; i++) {
			if (split && heavy[i] != (uint8_t)c)
				continue;
			double dlt = fabs(v[i] - st.median_us);
			if (best < 0 || dlt < best) {
				best = dlt;
				cl->representative_step = ids[i];
			}
		}
		if (split && c == 1 && cn >= 3) {
			/* most frequent difference > 1 between consecutive heavy steps */
			int64_t prev = -1, best_d = 0;
			int best_n = 0;
			int64_t *dv = pg_xmalloc(n * sizeof(int64_t));
			uint32_t nd = 0;
			for (uint32_t i = 0; i < n; i++)
				if (heavy[i]) {
					if (prev >= 0 && ids[i] - prev > 1)
						dv[nd++] = ids[i] - prev;
					prev = ids[i];
				}
			for (uint32_t i = 0; i < nd; i++) {
				int cnt = 0;
				for (uint32_t k = 0; k < nd; k++)
					cnt += dv[k] == dv[i];
				if (cnt > best_n || (cnt == best_n && dv[i] < best_d)) {
					best_n = cnt;
					best_d = dv[i];
				}
			}
			if (nd >= 2 && best_n >= 2)
				cl->periodicity = (int32_t)best_d;
			free(dv);
		}
		free(cv);
	}
	free(lg);
	free(heavy);
}

static void steady_part(struct summary *s)
{
	double *v = pg_xmalloc((s->n_steps + 1) * sizeof(double));
	int64_t *ids = pg_xmalloc((s->n_steps + 1) * sizeof(int64_t));
	uint32_t n = 0, *slow = pg_xcalloc(s->n_devices + 1, sizeof(uint32_t)), n_skew = 0;
	double skew = 0;

	for (uint32_t i = 0; i < s->n_steps; i++) {
		const struct sum_step *st = &s->steps[i];
		if (!st->steady)
			continue;
		v[n] = st->us;
		ids[n++] = st->step;
		double mn = -1, mx = -1;
		uint32_t arg_mx = 0, have = 0;
		for (uint32_t d = 0; d < s->n_devices; d++) {
			if (st->device_us[d] < 0)
				continue;
			have++;
			if (mn < 0 || st->device_us[d] < mn)
				mn = st->device_us[d];
			if (st->device_us[d] > mx) {
				mx = st->device_us[d];
				arg_mx = d;
			}
		}
		if (have >= 2) {
			skew += mx - mn;
			n_skew++;
			slow[arg_mx]++;
		}
	}
	stats_of(v, n, &s->steady);
	for (uint32_t i = 0; i < s->n_classes; i++)
		free(s->classes[i].name);
	free(s->classes);
	s->classes = NULL;
	step_classes(s, v, ids, n);
	s->skew_us = n_skew ? skew / n_skew : 0;
	free(s->slowest_device);
	s->slowest_device = NULL;
	if (n_skew) {
		uint32_t best = 0;
		for (uint32_t d = 1; d < s->n_devices; d++)
			if (slow[d] > slow[best])
				best = d;
		s->slowest_device = pg_xstrdup(s->devices[best].id);
	}
	free(v);
	free(ids);
	free(slow);
}

/* One device's split as shares of its steady wall; the device has a steady
 * window (wall > 0). The overlap is undefined (< 0) without communication. */
static void view_of(const struct sum_split *x, double steps, struct sum_breakdown_view *v)
{
	double w = x->wall_us;

	v->compute_share = x->compute_us / w;
	v->exposed_comm_share = x->exposed_comm_us / w;
	v->exposed_memcpy_share = x->exposed_memcpy_us / w;
	v->idle_share = x->idle_us / w;
	v->comm_overlap_share =
	    x->comm_us > 0 ? (x->comm_us - x->exposed_comm_us) / x->comm_us : -1;
	v->kernel_sum_minus_wall_us_per_step =
	    (x->kernel_sum_us - x->wall_us) / (steps > 0 ? steps : 1);
}

double summary_wait_share(const struct sum_split *x)
{
	double w = x->wall_us > 0 ? x->wall_us : 1;
	return x->idle_us / w + x->exposed_comm_us / w + x->exposed_memcpy_us / w;
}

/*
 * breakdown.mean: the mean over the devices with a steady window of their
 * shares, so the four parts sum to 1 as each device's do; a device without
 * one (no work in any steady step) has no split to average. The overlap is
 * the mean over those of them with communication. breakdown.worst: the device
 * with the largest idle plus exposed waits. Undefined (null) where nothing
 * is averaged.
 */
static void breakdown_part(struct summary *s)
{
	struct sum_breakdown_view sum = {0, 0, 0, 0, 0, 0};
	uint32_t n = 0, n_comm = 0;
	double worst = -1;

	summary_view_undefined(&s->mean);
	summary_view_undefined(&s->worst);
	free(s->worst_device);
	s->worst_device = NULL;
	for (uint32_t d = 0; d < s->n_devices; d++) {
		struct sum_breakdown_view v;
		if (!summary_device_steady(&s->devices[d]))
			continue;
		view_of(&s->devices[d].steady, s->basis_steady_steps, &v);
		n++;
		sum.compute_share += v.compute_share;
		sum.exposed_comm_share += v.exposed_comm_share;
		sum.exposed_memcpy_share += v.exposed_memcpy_share;
		sum.idle_share += v.idle_share;
		sum.kernel_sum_minus_wall_us_per_step += v.kernel_sum_minus_wall_us_per_step;
		if (v.comm_overlap_share >= 0) {
			sum.comm_overlap_share += v.comm_overlap_share;
			n_comm++;
		}
		double bad = summary_wait_share(&s->devices[d].steady);
		if (bad > worst) {
			worst = bad;
			s->worst = v;
			free(s->worst_device);
			s->worst_device = pg_xstrdup(s->devices[d].id);
		}
	}
	if (!n)
		return;
	s->mean.compute_share = sum.compute_share / n;
	s->mean.exposed_comm_share = sum.exposed_comm_share / n;
	s->mean.exposed_memcpy_share = sum.exposed_memcpy_share / n;
	s->mean.idle_share = sum.idle_share / n;
	s->mean.kernel_sum_minus_wall_us_per_step = sum.kernel_sum_minus_wall_us_per_step / n;
	if (n_comm)
		s->mean.comm_overlap_share = sum.comm_overlap_share / n_comm;
}

static int cmp_op(const void *a, const void *b)
{
	const struct sum_op *x = a, *y = b;
	if (x->self_us_total != y->self_us_total)
		return x->self_us_total > y->self_us_total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_family(const void *a, const void *b)
{
	const struct sum_family *x = a, *y = b;
	if (x->us_total != y->us_total)
		return x->us_total > y->us_total ? -1 : 1;
	return strcmp(x->family, y->family);
}

static int cmp_collective(const void *a, const void *b)
{
	return strcmp(((const struct sum_collective *)a)->kind,
		      ((const struct sum_collective *)b)->kind);
}

static int cmp_gap(const void *a, const void *b)
{
	const struct sum_gap *x = a, *y = b;
	if (x->us_total != y->us_total)
		return x->us_total > y->us_total ? -1 : 1;
	return strcmp(x->op, y->op);
}

static int cmp_region(const void *a, const void *b)
{
	const struct sum_region *x = a, *y = b;
	if (x->inclusive_us_total != y->inclusive_us_total)
		return x->inclusive_us_total > y->inclusive_us_total ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void free_op(struct sum_op *o)
{
	free(o->name);
	free(o->family);
	free(o->category);
	for (int k = 0; k < 3; k++)
		free(o->examples[k]);
}

/* Past MAX_OPS, the rest of the ops are one "(other ops)" row. */
static void cap_ops(struct summary *s)
{
	if (s->n_ops <= MAX_OPS + 1)
		return;
	struct sum_op *tail = &s->ops[MAX_OPS];
	double c = 0, se = 0, to = 0;
	for (uint32_t i = MAX_OPS; i < s->n_ops; i++) {
		c += s->ops[i].count_total;
		se += s->ops[i].self_us_total;
		to += s->ops[i].total_us_total;
		if (i > MAX_OPS)
			free_op(&s->ops[i]);
	}
	free_op(tail);
	memset(tail, 0, sizeof(*tail));
	tail->name = pg_xstrdup("(other ops)");
	tail->family = pg_xstrdup("other");
	tail->category = pg_xstrdup("compute");
	tail->count_total = c;
	tail->self_us_total = se;
	tail->total_us_total = to;
	s->n_ops = MAX_OPS + 1;
}

/* Totals are integer ns written as us with three decimals: round back to ns
 * first, so summarize and merge divide the very same number. */
static double per(double total_us, double norm)
{
	return (double)llround(total_us * 1000.0) / norm / 1000.0;
}

static void per_step_part(struct summary *s)
{
	double norm = (double)(s->basis_devices ? s->basis_devices : 1) *
		      (s->basis_steady_steps ? s->basis_steady_steps : 1);
	double step_us = s->steady.count ? s->steady.median_us : 0;

	if (s->n_ops)
		qsort(s->ops, s->n_ops, sizeof(*s->ops), cmp_op);
	cap_ops(s);
	for (uint32_t i = 0; i < s->n_ops; i++) {
		struct sum_op *o = &s->ops[i];
		o->count_per_step = o->count_total / norm;
		o->self_us_per_step = per(o->self_us_total, norm);
		o->total_us_per_step = per(o->total_us_total, norm);
	}
	if (s->n_families)
		qsort(s->families, s->n_families, sizeof(*s->families), cmp_family);
	for (uint32_t i = 0; i < s->n_families; i++) {
		struct sum_family *f = &s->families[i];
		f->count_per_step = f->count_total / norm;
		f->us_per_step = per(f->us_total, norm);
		f->share = step_us > 0 ? f->us_per_step / step_us : -1;
	}
	if (s->n_collectives)
		qsort(s->collectives, s->n_collectives, sizeof(*s->collectives), cmp_collective);
	/* over the capture every device with activity counts, steady or not */
	double devs = s->n_devices ? s->n_devices : 1;
	for (uint32_t i = 0; i < s->n_collectives; i++) {
		struct sum_collective *c = &s->collectives[i];
		c->count_per_step = c->count_total / norm;
		c->us_per_step = per(c->us_total, norm);
		/* bytes / us = MB/s; / 1000 = GB/s */
		c->bytes_per_step = c->sized ? c->bytes_total / norm : -1;
		/* bandwidth over the steady steps, or over the capture when the kind
		 * never runs in them (a setup all-reduce) */
		if (c->sized && c->us_total > 0)
			c->algbw_gbps = c->bytes_total / c->us_total / 1000;
		else if (c->capture_sized && c->capture_us_total > 0)
			c->algbw_gbps = c->capture_bytes_total / c->capture_us_total / 1000;
		else
			c->algbw_gbps = -1;
		/* bus bandwidth: 2(n-1)/n of algbw for all-reduce, (n-1)/n otherwise */
		double n = c->group_size, f = n > 0 ? (n - 1) / n : 0;
		if (strcmp(c->kind, "all-reduce") == 0)
			f *= 2;
		c->busbw_gbps = c->algbw_gbps >= 0 && n > 0 ? c->algbw_gbps * f : -1;
		c->capture_count_per_device = c->capture_count_total / devs;
		c->capture_us_per_device = per(c->capture_us_total, devs);
	}
	if (s->n_gaps)
		qsort(s->gaps, s->n_gaps, sizeof(*s->gaps), cmp_gap);
	for (uint32_t i = MAX_LIST; i < s->n_gaps; i++) {
		free(s->gaps[i].op);
		free(s->gaps[i].marker);
	}
	if (s->n_gaps > MAX_LIST)
		s->n_gaps = MAX_LIST;
	for (uint32_t i = 0; i < s->n_gaps; i++) {
		s->gaps[i].count_per_step = s->gaps[i].count_total / norm;
		s->gaps[i].us_per_step = per(s->gaps[i].us_total, norm);
	}
	if (s->n_regions)
		qsort(s->regions, s->n_regions, sizeof(*s->regions), cmp_region);
	for (uint32_t i = MAX_LIST; i < s->n_regions; i++)
		free(s->regions[i].path);
	if (s->n_regions > MAX_LIST)
		s->n_regions = MAX_LIST;
	for (uint32_t i = 0; i < s->n_regions; i++) {
		struct sum_region *r = &s->regions[i];
		r->count_per_step = r->count_total / norm;
		r->inclusive_us_per_step = per(r->inclusive_us_total, norm);
		r->exclusive_us_per_step = per(r->exclusive_us_total, norm);
	}
	s->tflops_per_device = -1;
	if (s->has_flops && s->n_devices) {
		double wall = 0;
		for (uint32_t d = 0; d < s->n_devices; d++)
			wall += s->devices[d].steady.wall_us;
		wall /= s->n_devices;
		if (wall > 0)
			s->tflops_per_device = s->flops_total / s->n_devices / (wall * 1e-6) / 1e12;
	}
}

static int has_warning(const struct summary *s, const char *code)
{
	for (uint32_t i = 0; i < s->n_warnings; i++)
		if (strcmp(s->warnings[i].code, code) == 0)
			return 1;
	return 0;
}

/* Steps listed without a time: a host marker no device work was launched in
 * (the profiler stopped before its kernels ran, when it is the last). */
static void cut_steps_warning(struct summary *s)
{
	struct pg_buf ids = PG_BUF_INIT;
	uint32_t n = 0, last = 0;

	if (has_warning(s, "steps-no-device-work")) /* a Steps line's: said there */
		return;
	for (uint32_t i = 0; i < s->n_steps; i++) {
		if (s->steps[i].us >= 0)
			continue;
		if (n < 5)
			pg_buf_addf(&ids, "%s%lld", n ? ", " : "", (long long)s->steps[i].step);
		n++;
		last = i + 1 == s->n_steps;
	}
	if (n)
		summary_add_warning(s, "steps-cut",
				    "%u step%s (%s%s) ha%s no device work%s: listed without a time "
				    "and not steady",
				    n, n == 1 ? "" : "s", ids.ptr, n > 5 ? ", ..." : "",
				    n == 1 ? "s" : "ve",
				    last && n == 1 ? " (the last: the profiler stopped before its "
						     "kernels ran)"
				    : last	   ? " (the last of them ends the capture: the "
						     "profiler stopped)"
						   : "");
	pg_buf_release(&ids);
}

/* Kineto files that cannot be one job: two claim one rank, or none has a rank
 * and each holds one GPU of one index (separate single-GPU runs, which a
 * distributed job's distributedInfo would tell apart). Said, not refused:
 * --allow-mixed and merge join what the user asks for. */
static void not_one_job_warning(struct summary *s)
{
	uint32_t kineto = 0, rankless = 0, one_gpu = 1, twice_a = 0, twice_b = 0;

	for (uint32_t i = 0; i < s->n_files; i++) {
		const struct sum_file *f = &s->files[i];
		uint32_t devs = 0;
		if (!f->dialect || strcmp(f->dialect, "kineto") != 0)
			return;
		kineto++;
		rankless += f->rank < 0;
		for (uint32_t k = 0; k < i && !twice_b; k++)
			if (f->rank >= 0 && s->files[k].rank == f->rank) {
				twice_a = k;
				twice_b = i;
			}
		for (uint32_t d = 0; d < s->n_devices; d++)
			if (s->devices[d].file == i) {
				devs++;
				one_gpu &= s->devices[d].index == s->devices[0].index;
			}
		one_gpu &= devs == 1;
	}
	if (kineto < 2)
		return;
	if (twice_b)
		summary_add_warning(
		    s, "not-one-job",
		    "'%s' and '%s' both claim rank %d: they are read as one job of "
		    "%u devices, but no job has one rank twice; if they are separate "
		    "runs, summarize each on its own",
		    s->files[twice_a].path, s->files[twice_b].path, s->files[twice_b].rank,
		    s->n_devices);
	else if (rankless == kineto && one_gpu)
		summary_add_warning(
		    s, "not-one-job",
		    "%u files, each one GPU of the same index and none with a rank "
		    "(no distributedInfo), are read as one job of %u devices; if they "
		    "are separate runs, summarize each on its own",
		    kineto, s->n_devices);
}

static void derived_warnings(struct summary *s)
{
	if (s->n_devices == 0 && summary_host_basis(s))
		summary_add_warning(s, "no-device-activity",
				    "no device kernels, copies or XLA ops: the steps, ops and "
				    "families are the host's (basis " SUMMARY_BASIS_HOST ")");
	else if (s->n_devices == 0)
		summary_add_warning(s, "no-device-activity",
				    "no device kernels, copies or XLA ops: breakdown, ops and "
				    "collectives are empty");
	if ((!s->steps_source || strcmp(s->steps_source, "none") == 0) &&
	    !has_warning(s, "steps-unusable"))
		summary_add_warning(
		    s, "no-steps",
		    "no step markers (Steps line, StepTraceAnnotation, ProfilerStep#, "
		    "XLA Modules): per-step numbers are over the whole capture, per "
		    "device");
	uint32_t missing = 0;
	for (uint32_t i = 0; i < s->n_steps; i++)
		for (uint32_t d = 0; s->steps[i].us >= 0 && d < s->n_devices; d++)
			if (s->steps[i].device_us[d] < 0) {
				missing++;
				break;
			}
	if (missing)
		summary_add_warning(s, "steps-missing",
				    "%u of %u steps are missing on at least one device", missing,
				    s->n_steps);
	cut_steps_warning(s);
	not_one_job_warning(s);
	if (s->world_size > 0) {
		uint32_t ranks = 0;
		for (uint32_t i = 0; i < s->n_files; i++) {
			int seen = 0;
			for (uint32_t k = 0; k < i; k++)
				seen |= s->files[k].rank == s->files[i].rank;
			ranks += s->files[i].rank >= 0 && !seen;
		}
		if (ranks > 0 && ranks < (uint32_t)s->world_size)
			summary_add_warning(
			    s, "ranks-missing",
			    "%u of %d ranks were profiled; the summary covers only those", ranks,
			    s->world_size);
	}
}

static void add_candidate(struct summary *s, const char *id, const char *title, const char *fmt,
			  ...) PG_PRINTF(4, 5);

static void add_candidate(struct summary *s, const char *id, const char *title, const char *fmt,
			  ...)
{
	va_list ap;
	char *ev;

	va_start(ap, fmt);
	ev = pg_xvasprintf(fmt, ap);
	va_end(ap);
	s->candidates = pg_xrealloc(s->candidates, (s->n_candidates + 1) * sizeof(*s->candidates));
	s->candidates[s->n_candidates++] =
	    (struct sum_candidate){pg_xstrdup(id), pg_xstrdup(title), ev};
}

/* Mean over the devices with a steady window of their busy time per steady
 * step; 0 without any. */
static double device_busy_per_step(const struct summary *s)
{
	double sum = 0;

	if (!s->basis_devices)
		return 0;
	for (uint32_t d = 0; d < s->n_devices; d++)
		sum += s->devices[d].steady.busy_us;
	return sum / s->basis_devices / (s->basis_steady_steps ? s->basis_steady_steps : 1);
}

#define HOST_BOUND_MIN_STEPS 3

static void candidates(struct summary *s)
{
	double step = s->steady.count ? s->steady.median_us : 0;

	if (s->mean.exposed_comm_share >= 0.10)
		add_candidate(s, "exposed-communication", "Overlap communication with compute",
			      "%.1f%% of device time is communication not hidden under compute; "
			      "%.1f%% of communication overlaps compute",
			      100 * s->mean.exposed_comm_share, 100 * s->mean.comm_overlap_share);
	if (s->mean.idle_share >= 0.15)
		add_candidate(s, "device-idle", "Find why the devices wait (host, input, launches)",
			      "devices are idle %.1f%% of the steady step time (worst: %s)",
			      100 * s->mean.idle_share, s->worst_device ? s->worst_device : "-");
	if (s->mean.exposed_memcpy_share >= 0.05)
		add_candidate(s, "exposed-memcpy", "Hide or remove memory copies",
			      "%.1f%% of device time is memory copies under no compute",
			      100 * s->mean.exposed_memcpy_share);
	if (s->n_ops && step > 0 && s->ops[0].self_us_per_step / step >= 0.25)
		add_candidate(s, "dominant-op", "Optimise the dominant op",
			      "%s takes %.1f%% of the step (%.3f us per step)", s->ops[0].name,
			      100 * s->ops[0].self_us_per_step / step, s->ops[0].self_us_per_step);
	if (s->n_gaps && step > 0 && s->gaps[0].us_per_step / step >= 0.05)
		add_candidate(s, "pre-op-gap", "Remove the wait before an op",
			      "devices idle %.3f us per step before %s (%.1f%% of the step)",
			      s->gaps[0].us_per_step, s->gaps[0].op,
			      100 * s->gaps[0].us_per_step / step);
	double dev_busy = device_busy_per_step(s);
	/* eager PyTorch keeps its step thread busy whatever the device does: what
	 * marks a host-bound step is launches that cost as much as the work, step
	 * after step. Only the steady steps tell that: without step markers the
	 * launch time is the capture's, where one cold-start launch (the driver
	 * loading modules: seconds) outweighs every other, and a step or two may
	 * still hold it */
	int steady_host = s->host.window && strcmp(s->host.window, "steps") == 0 &&
			  s->steady.count >= HOST_BOUND_MIN_STEPS;
	if (steady_host && s->mean.idle_share >= 0.15 && dev_busy > 0 &&
	    s->host.launch_us_per_step >= 0.5 * dev_busy)
		add_candidate(s, "host-bound", "Launch less from the host (fuse ops, CUDA graphs)",
			      "devices idle %.1f%% of the step while the host spends %.3f us per "
			      "step in launch calls, %.0f%% of the devices' %.3f us of work",
			      100 * s->mean.idle_share, s->host.launch_us_per_step,
			      100 * s->host.launch_us_per_step / dev_busy, dev_busy);
	/* a host profile has no device to wait: its step thread waits, between
	 * its ops (input, a lock, a sleep, Python the profiler did not trace) */
	if (steady_host && summary_host_basis(s) && s->host.busy_share >= 0 &&
	    1 - s->host.busy_share >= 0.15)
		add_candidate(
		    s, "host-idle", "Find why the step thread waits between its ops",
		    "the step thread is idle %.1f%% of its %.3f us wall per step (%.3f us "
		    "between its ops)",
		    100 * (1 - s->host.busy_share), s->host.wall_us_per_step,
		    s->host.idle_us_per_step);
	if (s->steady.count >= 4 && s->steady.median_us > 0 &&
	    s->steady.p90_us / s->steady.median_us >= 1.4)
		add_candidate(s, "step-jitter", "Make step time steady",
			      "p90 step %.3f us is %.2fx the median %.3f us", s->steady.p90_us,
			      s->steady.p90_us / s->steady.median_us, s->steady.median_us);
	if (step > 0 && s->skew_us / step >= 0.10 && s->slowest_device)
		add_candidate(s, "straggler", "Look at the slowest device",
			      "devices differ by %.3f us per step (%.1f%%); %s is most often the "
			      "slowest",
			      s->skew_us, 100 * s->skew_us / step, s->slowest_device);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct sum_thread *x = a, *y = b;
	if (x->busy_us_total != y->busy_us_total)
		return x->busy_us_total > y->busy_us_total ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The median host step (marker span) over the steady steps, or -1. */
static double host_step_median(const struct summary *s)
{
	double *v = pg_xmalloc((s->n_steps + 1) * sizeof(double)), med = -1;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->n_steps; i++)
		if (s->steps[i].steady && s->steps[i].host_us >= 0)
			v[n++] = s->steps[i].host_us;
	if (n) {
		sort_doubles(v, n);
		med = quantile(v, n, 0.5);
	}
	free(v);
	return med;
}

/* host.*: per-step numbers over the steady steps of each step thread, sorted
 * lists, shares of the step thread's wall time. Undefined numbers stay < 0
 * (null): no host events, or no step thread to have a wall. */
static void host_part(struct summary *s)
{
	struct sum_host *h = &s->host;
	double norm = (double)(s->basis_steady_steps ? s->basis_steady_steps : 1) *
		      (h->step_threads ? h->step_threads : 1);
	int have = h->window != NULL, walled = have && h->wall_us_total > 0;

	h->step_median_us = host_step_median(s);
	h->wall_us_per_step = walled ? per(h->wall_us_total, norm) : -1;
	h->busy_us_per_step = walled ? per(h->busy_us_total, norm) : -1;
	h->idle_us_per_step = walled ? per(h->wall_us_total - h->busy_us_total, norm) : -1;
	if (h->idle_us_per_step < 0 && walled)
		h->idle_us_per_step = 0;
	h->busy_share = walled ? h->busy_us_total / h->wall_us_total : -1;
	h->python_us_per_step = have ? per(h->python_us_total, norm) : -1;
	h->launch_us_per_step = have ? per(h->launch_us_total, norm) : -1;
	h->fastest_us_per_step = walled && summary_host_basis(s) && h->fastest_us_total > 0
				     ? per(h->fastest_us_total, norm)
				     : -1;
	if (h->n_ops)
		qsort(h->ops, h->n_ops, sizeof(*h->ops), cmp_op);
	for (uint32_t i = 0; i < h->n_ops; i++) {
		struct sum_op *o = &h->ops[i];
		o->count_per_step = o->count_total / norm;
		o->self_us_per_step = per(o->self_us_total, norm);
		o->total_us_per_step = per(o->total_us_total, norm);
	}
	if (h->n_families)
		qsort(h->families, h->n_families, sizeof(*h->families), cmp_family);
	for (uint32_t i = 0; i < h->n_families; i++) {
		struct sum_family *f = &h->families[i];
		f->count_per_step = f->count_total / norm;
		f->us_per_step = per(f->us_total, norm);
		f->share = walled ? f->us_per_step / h->wall_us_per_step : -1;
	}
	if (h->n_threads)
		qsort(h->threads, h->n_threads, sizeof(*h->threads), cmp_thread);
	for (uint32_t i = 0; i < h->n_threads; i++) {
		struct sum_thread *t = &h->threads[i];
		t->busy_us_per_step = per(t->busy_us_total, norm);
		t->count_per_step = t->count_total / norm;
	}
}

/* Device ids: gpu0 with one file; rank3/gpu3, <host>/gpu0 or file2/gpu0 with
 * several; "#n" where still not unique. */
static void device_ids(struct summary *s)
{
	for (uint32_t d = 0; d < s->n_devices; d++) {
		struct sum_device *o = &s->devices[d];
		char id[160];
		const char *kind = o->kind ? o->kind : "other";
		const char *host = o->file < s->n_files ? s->files[o->file].host : NULL;
		if (s->n_files > 1 && o->rank >= 0)
			snprintf(id, sizeof(id), "rank%d/%s%d", o->rank, kind, o->index);
		else if (s->n_files > 1 && host)
			snprintf(id, sizeof(id), "%s/%s%d", host, kind, o->index);
		else if (s->n_files > 1)
			snprintf(id, sizeof(id), "file%u/%s%d", o->file, kind, o->index);
		else
			snprintf(id, sizeof(id), "%s%d", kind, o->index);
		int dup = 0;
		for (uint32_t k = 0; k < d; k++)
			if (strncmp(s->devices[k].id, id, strlen(id)) == 0)
				dup++;
		if (dup) {
			size_t l = strlen(id);
			snprintf(id + l, sizeof(id) - l, "#%d", dup + 1);
		}
		free(o->id);
		o->id = pg_xstrdup(id);
	}
}

/* The per-device divisor of per-step numbers: the devices with a steady
 * window, as the totals hold only their work. A host profile has none. */
static void steady_devices(struct summary *s)
{
	uint32_t n = 0;

	for (uint32_t d = 0; d < s->n_devices; d++)
		n += summary_device_steady(&s->devices[d]) != 0;
	s->basis_devices = n;
}

/* The devices' models, each once in device order, joined by " + ": one name
 * for one capture, several only when unlike files were joined on purpose
 * (summarize --allow-mixed), so such a summary never matches a pure one. A
 * device of no known model counts as its kind ("gpu"). */
static char *device_models(const struct summary *s)
{
	struct pg_buf b = PG_BUF_INIT;

	for (uint32_t d = 0; d < s->n_devices; d++) {
		const char *m = s->devices[d].name ? s->devices[d].name : s->devices[d].kind;
		int seen = 0;
		for (uint32_t k = 0; k < d && !seen; k++) {
			const char *x =
			    s->devices[k].name ? s->devices[k].name : s->devices[k].kind;
			seen = x && m && strcmp(x, m) == 0;
		}
		if (seen || !m)
			continue;
		if (b.len)
			pg_buf_adds(&b, " + ");
		pg_buf_adds(&b, m);
	}
	return b.len ? pg_buf_detach(&b, NULL) : (pg_buf_release(&b), NULL);
}

/* "cuda:2" before "cuda:10": the name's prefix, then its number. */
static int cmp_memory_device(const void *pa, const void *pb)
{
	const char *a = ((const struct sum_memory_device *)pa)->device;
	const char *b = ((const struct sum_memory_device *)pb)->device;
	size_t na = strcspn(a, "0123456789"), nb = strcspn(b, "0123456789");
	int c = na == nb ? strncmp(a, b, na) : strcmp(a, b);

	if (c || na != nb)
		return c;
	long x = strtol(a + na, NULL, 10), y = strtol(b + nb, NULL, 10);
	return x != y ? (x > y) - (x < y) : strcmp(a, b);
}

/* memory.*: the largest of the accelerators' peaks; null without any. */
static void memory_part(struct summary *s)
{
	struct sum_memory *m = &s->memory;

	m->peak_allocated_bytes = m->peak_reserved_bytes = -1;
	m->steady_peak_allocated_bytes = m->steady_peak_reserved_bytes = -1;
	if (m->n_devices)
		qsort(m->devices, m->n_devices, sizeof(*m->devices), cmp_memory_device);
	for (uint32_t i = 0; i < m->n_devices; i++) {
		const struct sum_memory_device *d = &m->devices[i];
		if (d->kind && strcmp(d->kind, "cpu") == 0)
			continue;
		m->peak_allocated_bytes = fmax(m->peak_allocated_bytes, d->peak_allocated_bytes);
		m->peak_reserved_bytes = fmax(m->peak_reserved_bytes, d->peak_reserved_bytes);
		m->steady_peak_allocated_bytes =
		    fmax(m->steady_peak_allocated_bytes, d->steady_peak_allocated_bytes);
		m->steady_peak_reserved_bytes =
		    fmax(m->steady_peak_reserved_bytes, d->steady_peak_reserved_bytes);
	}
}

void summary_finalize(struct summary *s)
{
	device_ids(s);
	free(s->device_kind);
	s->device_kind = NULL;
	if (s->n_devices)
		s->device_kind = device_models(s);
	else if (summary_host_basis(s))
		s->device_kind = pg_xstrdup("cpu");
	s->steps_captured = s->n_steps;
	s->device_count = s->n_devices;
	steady_part(s);
	steady_devices(s);
	breakdown_part(s);
	per_step_part(s);
	host_part(s);
	memory_part(s);
	summary_rates(s);
	derived_warnings(s);
	for (uint32_t i = 0; i < s->n_candidates; i++) {
		free(s->candidates[i].id);
		free(s->candidates[i].title);
		free(s->candidates[i].evidence);
	}
	free(s->candidates);
	s->candidates = NULL;
	s->n_candidates = 0;
	candidates(s);
}
