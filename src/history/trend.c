/*
 * Trends: per series and metric, the values of the history over time, their
 * change points and the nightly consecutive-violation rule. The change-point
 * math is pure functions on arrays (tested on their own); the rest groups
 * records into series and applies the thresholds.
 *
 * How change points are found. A split of a series is scored by the
 * standardized Mann-Whitney rank sum of the points before it (ranks, not
 * values: one outlier run cannot make or hide a change; the sd is the
 * tie-corrected one, as records keep 3 or 4 decimals and ties are common),
 * and the best split is the one furthest from what exchangeable points would
 * give. Its p-value is that of the maximum over every allowed split, so the
 * scan over split points is part of the test (no hidden multiplicity) and the
 * output is the same on every run:
 *   - under 48 points, a permutation test: the share of fixed-seed shuffles
 *     whose best split scores at least as high, exact for any noise (without
 *     ties the null depends on the length alone, drawn once per length and
 *     shared by every metric, segment and series; tied points shuffle their
 *     own ranks, at most 47 of them);
 *   - from 48 points, the tail of the maximum of a standardized Brownian
 *     bridge seen at the splits (max_z_p: Siegmund's approximation with the
 *     discreteness correction, and splits whose rank sum cannot reach the
 *     observed value left out). It costs a pass over the splits, so a metric
 *     costs its ranking, O(n log n), whatever its ties and level. On flat
 *     series of 48 to 2,000 points with none to heavy ties it holds its level
 *     (false alarms at 0.05 / 0.01 / 0.001 measured by tests/tools/trend_sim.c
 *     at 0.037-0.045 / 0.005-0.009 / 0.0001-0.0021 of 10,000 series each:
 *     at the level within sampling error, on the safe side at short lengths), and
 *     finds a clean step as early as the permutation test did, give or take
 *     a record (docs/history.md "Trends").
 * Binary segmentation (as E-divisive) then looks inside each side of an
 * accepted split; a part is tested only after its parent split was accepted.
 * Across the metrics of a series, those with a change are chosen by
 * Benjamini-Hochberg over their first splits' p-values (the k smallest, for
 * the largest k whose k-th is at most k alpha / metrics tested: the false
 * discovery rate is held at alpha), and the splits inside them are tested at
 * the level that chose them (k alpha / metrics tested). A change point is
 * reported only when its size reaches the metric's warn limit, so noise in
 * many small metrics does not show up as change points. A change needs
 * min_segment points after it to be seen: the nightly rule covers the newest
 * records.
 */
#include "history.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../gate/gate.h"

#define SEED_BASE	0x70726f667472656eULL /* "proftren" */
#define PERM_MIN	999
#define PERM_MAX	199999
#define DEFAULT_ALPHA	0.01
#define DEFAULT_WINDOW	HISTORY_WINDOW_DEFAULT
#define DEFAULT_MIN_SEG 3
#define EXACT_BELOW	48   /* lengths under it take the permutation test */
#define INFO_MIN_CHANGE 0.01 /* relative, for metrics no rule judges */

static const char *const default_kinds[] = {"main", "nightly", NULL};

/* ---- ranks and the split scan ---- */

struct ranked {
	double v;
	uint32_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Mid-ranks (1-based; ties share their mean rank). Returns the sum over groups
 * of tied values of tau^3 - tau (tau: the group's size), 0 without ties. */
static double ranks_of(const double *x, uint32_t n, double *rank)
{
	struct ranked *r = pg_xcalloc(n + 1, sizeof(*r));
	uint32_t i = 0;
	double ties = 0;

	for (uint32_t k = 0; k < n; k++)
		r[k] = (struct ranked){x[k], k};
	qsort(r, n, sizeof(*r), cmp_ranked);
	while (i < n) {
		uint32_t j = i;
		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		for (uint32_t k = i; k <= j; k++)
			rank[r[k].i] = (i + j) / 2.0 + 1;
		ties += ((double)(j - i + 1) * (j - i + 1) - 1) * (j - i + 1);
		i = j + 1;
	}
	free(r);
	return ties;
}

/*
 * What the scan of a length needs besides the ranks, made once per length and
 * shared by every shuffle of it: per split t, t times the mean rank and the
 * rank sum's sd (the same doubles a scan would compute, so the statistics are
 * bit for bit the same), and for the shuffle the divisors' reciprocals. A
 * permutation test scans one length thousands of times, and the square root
 * and the 64-bit division per point were most of its cost.
 */
struct scan_len {
	uint32_t n, L;
	double *mean_t, *sd_t; /* [t]: t * mean rank; sqrt(var of the sum of t ranks) */
#ifdef __SIZEOF_INT128__
	__extension__ unsigned __int128 *inv; /* [d]: 2^128 / d rounded up, d in 2..n */
#endif
};

static void scan_len_init(struct scan_len *k, uint32_t n, uint32_t L, int shuffled)
{
	double mean_rank = (n + 1) / 2.0;

	k->n = n;
	k->L = L;
	k->mean_t = pg_xcalloc((size_t)n + 1, sizeof(double));
	k->sd_t = pg_xcalloc((size_t)n + 1, sizeof(double));
	for (uint32_t t = 1; t <= n; t++) {
		double var = (double)t * (n - t) * (n + 1) / 12.0;
		k->mean_t[t] = t * mean_rank;
		k->sd_t[t] = sqrt(var);
	}
#ifdef __SIZEOF_INT128__
	k->inv = shuffled ? pg_xcalloc((size_t)n + 1, sizeof(*k->inv)) : NULL;
	for (uint32_t d = 2; shuffled && d <= n; d++)
		k->inv[d] = ~(__extension__(unsigned __int128) 0) / d + 1;
#endif
}

static void scan_len_release(struct scan_len *k)
{
	free(k->mean_t);
	free(k->sd_t);
#ifdef __SIZEOF_INT128__
	free(k->inv);
#endif
}

/* The largest |z| of the rank sum before a split, over the allowed splits. */
static double scan_ranks(const double *rank, const struct scan_len *k, uint32_t *at)
{
	double sum = 0, best = 0;
	uint32_t n = k->n, min_seg = k->L;

	*at = 0;
	for (uint32_t t = 1; t + min_seg <= n; t++) {
		sum += rank[t - 1];
		if (t < min_seg)
			continue;
		double z = fabs(sum - k->mean_t[t]) / k->sd_t[t];
		if (z > best * (1 + 1e-12) + 1e-12) {
			best = z;
			*at = t;
		}
	}
	return best;
}

/* The rank sums' sd with ties over the sd without (the tie-corrected variance
 * of the Mann-Whitney sum is the untied one times 1 - ties / (n^3 - n)); 0
 * when every value is equal. */
static double tie_factor(double ties, uint32_t n)
{
	double share = 1 - ties / ((double)n * n * n - n);

	return share > 0 ? sqrt(share) : 0;
}

double history_split_scan(const double *x, uint32_t n, uint32_t min_segment, uint32_t *at)
{
	uint32_t L = min_segment ? min_segment : DEFAULT_MIN_SEG;
	struct scan_len k;
	double *rank, z, c;

	*at = 0;
	if (n < 2 * L)
		return 0;
	rank = pg_xcalloc(n, sizeof(double));
	c = tie_factor(ranks_of(x, n, rank), n);
	scan_len_init(&k, n, L, 0);
	z = scan_ranks(rank, &k, at);
	scan_len_release(&k);
	free(rank);
	if (c == 0)
		*at = 0;
	return c > 0 ? z / c : 0;
}

/* ---- the p-value of a long series: the tail of the scan's maximum ---- */

static double norm_pdf(double z)
{
	return exp(-z * z / 2) / sqrt(2 * M_PI);
}

static double norm_cdf(double z)
{
	return erfc(-z / M_SQRT2) / 2;
}

/* Siegmund's correction of a continuous crossing rate for a process seen at
 * discrete points (Siegmund and Yakir's approximation of nu). */
static double siegmund_nu(double x)
{
	double h = x / 2;

	if (x < 1e-9)
		return 1;
	return (2 / x) * (norm_cdf(h) - 0.5) / (h * norm_cdf(h) + norm_pdf(h));
}

/*
 * P(max over splits t in [L, n - L] of |z_t| >= b) for exchangeable points,
 * where z_t is the (tie-corrected) standardized rank sum of the first t: the
 * z_t are a standardized Brownian bridge at t/n, whose correlation between
 * neighbouring splits falls by n / (2 t (n - t)) per point, so the
 * probability is b phi(b) times the sum over splits of n / (t (n - t))
 * nu(b sqrt(n / (t (n - t)))), two-sided (James, James and Siegmund 1987;
 * Siegmund 1988). A split whose rank sum cannot reach b (the t highest ranks
 * give |z_t| at most sqrt(3 t (n - t) / (n + 1)) before the tie correction;
 * b_untied is b before it) adds nothing: near the ends, where the normal
 * would overstate the tail most, that is most of them. Never 0, at most 1.
 */
static double max_z_p(double b, double b_untied, uint32_t n, uint32_t L)
{
	double sum = 0, p;

	for (uint32_t t = L; t + L <= n; t++) {
		double w = (double)n / ((double)t * (n - t));
		if (sqrt(3.0 * t * (n - t) / (n + 1.0)) < b_untied * (1 - 1e-9))
			continue;
		sum += w * siegmund_nu(b * sqrt(w));
	}
	p = b * norm_pdf(b) * sum;
	return p >= 1 ? 1 : p > DBL_MIN ? p : DBL_MIN;
}

/* ---- the permutation test ---- */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* splitmix64(seed) % d, without a 64-bit division where the compiler has
 * 128-bit integers: Lemire's direct remainder (Lemire, Kaser, Kurz, "Faster
 * remainder by direct computation", 2019), exact for every 64-bit numerator
 * with a 128-bit inverse. */
static uint32_t draw_below(uint64_t *seed, const struct scan_len *k, uint32_t d)
{
	uint64_t a = splitmix64(seed);
#ifdef __SIZEOF_INT128__
	__extension__ typedef unsigned __int128 u128;
	u128 low = k->inv[d] * a;
	u128 bottom = ((u128)(uint64_t)low * d) >> 64, top = (u128)(uint64_t)(low >> 64) * d;

	return (uint32_t)((bottom + top) >> 64);
#else
	return (uint32_t)(a % d);
#endif
}

/* Fisher-Yates over v[0..k->n). */
static void shuffle(double *v, const struct scan_len *k, uint64_t *seed)
{
	for (uint32_t i = k->n - 1; i > 0; i--) {
		uint32_t j = draw_below(seed, k, i + 1);
		double t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/* Enough shuffles that a p at the level is resolved ten times over. */
static uint32_t permutations_for(double alpha)
{
	double r = ceil(10.0 / alpha) - 1;

	return r < PERM_MIN ? PERM_MIN : r > PERM_MAX ? PERM_MAX : (uint32_t)r;
}

static int at_least(double stat, double observed)
{
	return stat >= observed * (1 - 1e-12);
}

/* Shuffle the ranks `total` times, stopping once p cannot come down to
 * give_up_alpha; p = (1 + as extreme) / (1 + shuffles). */
static double permute(double *rank, const struct scan_len *len, double observed, uint32_t total,
		      double give_up_alpha, uint64_t seed)
{
	double give_up = give_up_alpha * (total + 1.0);
	uint32_t k = 0, exceed = 0, at;

	while (k < total && exceed < give_up) {
		shuffle(rank, len, &seed);
		exceed += at_least(scan_ranks(rank, len, &at), observed);
		k++;
	}
	return (exceed + 1.0) / (k + 1.0);
}

double history_split_p(const double *x, uint32_t n, uint32_t min_segment, double alpha,
		       uint64_t seed)
{
	uint32_t L = min_segment ? min_segment : DEFAULT_MIN_SEG, at;
	int exact = n < EXACT_BELOW;
	struct scan_len k;
	double *rank, observed, c, p = 1;

	if (n < 2 * L)
		return 1;
	rank = pg_xcalloc(n, sizeof(double));
	c = tie_factor(ranks_of(x, n, rank), n);
	scan_len_init(&k, n, L, exact);
	observed = scan_ranks(rank, &k, &at);
	if (observed > 0 && c > 0) /* else every value is equal: nothing to find */
		p = exact ? permute(rank, &k, observed, permutations_for(alpha), alpha, seed)
			  : max_z_p(observed / c, observed, n, L);
	scan_len_release(&k);
	free(rank);
	return p;
}

/*
 * Without ties the ranks are a permutation of 1..n, so the null distribution
 * of the best split depends on n alone: it is drawn once per length (fixed
 * seed) and shared by every metric and segment of that length, and by every
 * series of a trend. Ranks with ties are shuffled themselves. Only lengths
 * under EXACT_BELOW come here.
 */
struct null_table {
	uint32_t perms;
	double *stat; /* sorted */
};

/* One length's scan constants and null tables (one per number of shuffles). */
struct len_entry {
	struct scan_len k;
	struct null_table *t;
	uint32_t n_t;
};

/* What a trend computes once per length and reuses: by_n[n], made on first use. */
struct cp_cache {
	uint32_t L; /* every context using it has this L and one seed */
	struct len_entry **by_n;
	uint32_t cap;
};

struct cp_ctx {
	uint32_t L, perms;
	uint64_t seed;
	double alpha; /* the level of a segment's test */
	struct cp_cache *cache;
};

static void cache_init(struct cp_cache *c, uint32_t L)
{
	memset(c, 0, sizeof(*c));
	c->L = L;
}

static struct len_entry *len_for(struct cp_cache *c, uint32_t n)
{
	if (n >= c->cap) {
		uint32_t cap = n + 1 > 2 * c->cap ? n + 1 : 2 * c->cap;
		c->by_n = pg_xrealloc(c->by_n, cap * sizeof(*c->by_n));
		memset(c->by_n + c->cap, 0, (cap - c->cap) * sizeof(*c->by_n));
		c->cap = cap;
	}
	if (!c->by_n[n]) {
		c->by_n[n] = pg_xcalloc(1, sizeof(struct len_entry));
		scan_len_init(&c->by_n[n]->k, n, c->L, 1);
	}
	return c->by_n[n];
}

static void cache_release(struct cp_cache *c)
{
	for (uint32_t n = 0; n < c->cap; n++) {
		struct len_entry *e = c->by_n[n];
		if (!e)
			continue;
		for (uint32_t i = 0; i < e->n_t; i++)
			free(e->t[i].stat);
		free(e->t);
		scan_len_release(&e->k);
		free(e);
	}
	free(c->by_n);
}

static const struct null_table *null_for(struct cp_ctx *c, struct len_entry *e)
{
	struct null_table *t;
	uint32_t n = e->k.n;
	uint64_t seed = c->seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ULL);
	double *rank;
	uint32_t at;

	for (uint32_t i = 0; i < e->n_t; i++)
		if (e->t[i].perms == c->perms)
			return &e->t[i];
	e->t = pg_xrealloc(e->t, (e->n_t + 1) * sizeof(*e->t));
	t = &e->t[e->n_t++];
	t->perms = c->perms;
	t->stat = pg_xcalloc(c->perms, sizeof(double));
	rank = pg_xcalloc(n, sizeof(double));
	for (uint32_t i = 0; i < n; i++)
		rank[i] = i + 1;
	for (uint32_t k = 0; k < c->perms; k++) {
		shuffle(rank, &e->k, &seed);
		t->stat[k] = scan_ranks(rank, &e->k, &at);
	}
	qsort(t->stat, c->perms, sizeof(double), pg_cmp_double);
	free(rank);
	return t;
}

static double p_from_table(const struct null_table *t, uint32_t perms, double observed)
{
	uint32_t lo = 0, hi = perms;

	while (lo < hi) { /* the first null statistic at least as extreme */
		uint32_t mid = lo + (hi - lo) / 2;
		if (at_least(t->stat[mid], observed))
			hi = mid;
		else
			lo = mid + 1;
	}
	return (perms - lo + 1.0) / (perms + 1.0);
}

/* The sum of absolute deviations of x[lo..hi) from their median. */
static double abs_dev(const double *x, uint32_t lo, uint32_t hi)
{
	double m = gate_median(x + lo, hi - lo), sum = 0;

	for (uint32_t i = lo; i < hi; i++)
		sum += fabs(x[i] - m);
	return sum;
}

/* How far from the rank statistic's split the values may move it. */
#define LOCATE_REACH 4

/* Where a change the rank test found happened: of the splits within
 * LOCATE_REACH of the rank statistic's (at), both segments at least L long,
 * the one whose segments deviate least from their own medians (absolute
 * deviations: one wild record does not move it); at itself unless another is
 * clearly better. The rank statistic is the test, not the location: for a step away from
 * the middle of a series its largest |z| is often a record before the step
 * (the sd of a rank sum shrinks toward the ends faster than the sum does),
 * and a user would bisect the wrong commit. */
static uint32_t locate(const double *x, uint32_t n, uint32_t L, uint32_t at)
{
	uint32_t lo = at > L + LOCATE_REACH ? at - LOCATE_REACH : L, best_t = at;
	double best = abs_dev(x, 0, at) + abs_dev(x, at, n);

	for (uint32_t t = lo; t <= at + LOCATE_REACH && t + L <= n; t++) {
		double cost;
		if (t == at)
			continue;
		cost = abs_dev(x, 0, t) + abs_dev(x, t, n);
		if (cost < best * (1 - 1e-9)) {
			best = cost;
			best_t = t;
		}
	}
	return best_t;
}

/* The best split of x[0..n) and its p (1 when there is none): a short series
 * by its permutation test, a long one by the tail of the scan's maximum; the
 * split's place from the values near it (locate). */
static double split(struct cp_ctx *c, const double *x, uint32_t n, double give_up_alpha,
		    uint32_t *at)
{
	double *rank, observed, tie, p = 1;

	*at = 0;
	if (n < 2 * c->L)
		return 1;
	rank = pg_xcalloc(n, sizeof(double));
	tie = tie_factor(ranks_of(x, n, rank), n);
	if (n < EXACT_BELOW) {
		struct len_entry *e = len_for(c->cache, n);
		observed = scan_ranks(rank, &e->k, at);
		if (observed > 0 && tie == 1)
			p = p_from_table(null_for(c, e), c->perms, observed);
		else if (observed > 0)
			p = permute(rank, &e->k, observed, c->perms, give_up_alpha,
				    c->seed ^ ((uint64_t)n << 32));
	} else {
		struct scan_len k;
		scan_len_init(&k, n, c->L, 0);
		observed = scan_ranks(rank, &k, at);
		if (observed > 0 && tie > 0)
			p = max_z_p(observed / tie, observed, n, c->L);
		scan_len_release(&k);
	}
	free(rank);
	if (p < 1 && *at)
		*at = locate(x, n, c->L, *at);
	return p;
}

/* ---- binary segmentation ---- */

struct cps {
	struct history_cp *v;
	uint32_t n;
};

static void segment(struct cp_ctx *c, const double *x, uint32_t lo, uint32_t hi, struct cps *out)
{
	uint32_t at;
	double p = split(c, x + lo, hi - lo, c->alpha, &at);

	if (p > c->alpha)
		return;
	out->v[out->n++] = (struct history_cp){lo + at, NAN, NAN, p};
	segment(c, x, lo, lo + at, out);
	segment(c, x, lo + at, hi, out);
}

static int cmp_cp(const void *a, const void *b)
{
	const struct history_cp *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

static double median_range(const double *x, uint32_t lo, uint32_t hi)
{
	return gate_median(x + lo, hi - lo);
}

/* In index order; each change point's segments run to its neighbours. */
static void finish_cps(const double *x, uint32_t n, struct cps *c)
{
	if (c->n > 1)
		qsort(c->v, c->n, sizeof(*c->v), cmp_cp);
	for (uint32_t i = 0; i < c->n; i++) {
		uint32_t lo = i ? c->v[i - 1].index : 0, hi = i + 1 < c->n ? c->v[i + 1].index : n;
		c->v[i].before = median_range(x, lo, c->v[i].index);
		c->v[i].after = median_range(x, c->v[i].index, hi);
	}
}

uint32_t history_change_points(const double *x, uint32_t n, const struct history_cp_opts *o,
			       struct history_cp *out)
{
	uint32_t L = o->min_segment ? o->min_segment : DEFAULT_MIN_SEG;
	struct cp_cache cache;
	struct cp_ctx c = {L, permutations_for(o->alpha), o->seed, o->alpha, &cache};
	struct cps found = {out, 0};

	cache_init(&cache, L);
	segment(&c, x, 0, n, &found);
	finish_cps(x, n, &found);
	cache_release(&cache);
	return found.n;
}

/* ---- series and metrics ---- */

static int kind_in(const char *kind, const char *const *kinds)
{
	for (; *kinds; kinds++)
		if (strcmp(kind, *kinds) == 0)
			return 1;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct history_record *x = *(const struct history_record *const *)a;
	const struct history_record *y = *(const struct history_record *const *)b;
	int c = strcmp(x->series, y->series);

	if (!c)
		c = strcmp(x->time, y->time);
	return c ? c : (x > y) - (x < y); /* one second: the list's (append) order */
}

static double value_of(const struct history_record *r, const char *name)
{
	uint32_t lo = 0, hi = r->n_metrics;

	while (lo < hi) { /* a record's metrics are sorted by name */
		uint32_t mid = lo + (hi - lo) / 2;
		int d = strcmp(r->metrics[mid].name, name);
		if (d == 0)
			return r->metrics[mid].value;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NAN;
}

/* 1 when records a and b hold the same metric names (most records of a series
 * do: their names need collecting once). */
static int same_names(const struct history_record *a, const struct history_record *b)
{
	if (a->n_metrics != b->n_metrics)
		return 0;
	for (uint32_t k = 0; k < a->n_metrics; k++)
		if (strcmp(a->metrics[k].name, b->metrics[k].name) != 0)
			return 0;
	return 1;
}

/* The metric names of a series passing the glob, each once, sorted. */
static const char **metric_names(const struct history_trend_series *s, const char *glob,
				 uint32_t *n_out)
{
	size_t total = 0;
	uint32_t n = 0, w = 0;
	const char **v;

	for (uint32_t i = 0; i < s->n; i++)
		if (i == 0 || !same_names(s->r[i], s->r[i - 1]))
			total += s->r[i]->n_metrics;
	v = pg_xcalloc(total + 1, sizeof(*v));
	for (uint32_t i = 0; i < s->n; i++) {
		if (i > 0 && same_names(s->r[i], s->r[i - 1]))
			continue;
		for (uint32_t k = 0; k < s->r[i]->n_metrics; k++)
			if (!glob || gate_glob_match(glob, s->r[i]->metrics[k].name))
				v[n++] = s->r[i]->metrics[k].name;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), pg_cmp_str);
	for (uint32_t i = 0; i < n; i++)
		if (w == 0 || strcmp(v[w - 1], v[i]) != 0)
			v[w++] = v[i];
	*n_out = w;
	return v;
}

/* ---- the nightly rule ---- */

static int judged(const struct gate_rule *r)
{
	return r && r->direction != GATE_INFO;
}

/* The noise a nightly value is judged against: the gate's model (noise.c)
 * for one run against the median of a window of runs. */
struct nightly_noise {
	double sd; /* of the value's difference from the window's median */
	double z;  /* the z a violation needs: the gate's level for the metric */
};

/* How far v is past base in the rule's worse direction, beyond the noise:
 * 0 none, 1 past the warn limit (or the fail limit when the rule has no
 * warn), 2 past fail. */
static int violation(const struct gate_rule *r, double v, double base,
		     const struct nightly_noise *nz)
{
	double worse = r->direction == GATE_LOWER_IS_BETTER ? v - base : base - v;
	double rel = base != 0 ? worse / fabs(base) : (worse > 0 ? INFINITY : 0);
	const struct gate_limit *warn =
	    r->warn.has_relative || r->warn.has_absolute ? &r->warn : &r->fail;

	if (!(gate_z(worse, nz->sd) >= nz->z))
		return 0;
	if (gate_limit_reaches(&r->fail, worse, rel))
		return 2;
	return gate_limit_reaches(warn, worse, rel);
}

/* The sd of a value's difference from the window pool[from, to) (median: its
 * median, which the caller has): the window's spread between runs, never under
 * the rule's prior (step_us: the record's steady median step, for the prior's
 * share of the step), over one run and the window's median (the gate's noise
 * model for a history window). */
static double nightly_sd(const struct history_trend_metric *m, const double *pool, uint32_t from,
			 uint32_t to, double median, double step_us)
{
	const double *g[1] = {pool + from};
	uint32_t n = to - from;
	double est = gate_noise_pooled_sd(g, &n, 1);
	const char *from_what;
	double sd = gate_noise_run_sd(m->rule, est, median, isfinite(step_us) ? step_us : 0,
				      "history", &from_what);

	return sd * sqrt(1 + gate_noise_median_var(n));
}

static void add_run(struct history_trend_metric *m, const struct history_trend_run *run, uint32_t k)
{
	if (run->length < k)
		return;
	m->runs = pg_xrealloc(m->runs, (m->n_runs + 1) * sizeof(*m->runs));
	m->runs[m->n_runs++] = *run;
}

/* Judge each nightly value against the median of up to `window` earlier
 * main/nightly values that did not violate, beyond noise at level alpha
 * (step: each record's steady median step); collect runs of K or more. */
static void nightly_rule(const struct history_trend_series *s, struct history_trend_metric *m,
			 uint32_t window, uint32_t k, double alpha, const double *step)
{
	double z = gate_norm_quantile_upper(alpha);
	double *pool = pg_xcalloc(s->n + 1, sizeof(double));
	struct history_trend_run run = {0, 0, 0, 0, 0};
	uint32_t n_pool = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		const char *kind = s->r[i]->kind;
		int nightly = strcmp(kind, "nightly") == 0, v = 0;
		if (!isnan(m->value[i]) && n_pool > 0) {
			uint32_t from = n_pool > window ? n_pool - window : 0;
			double median = median_range(pool, from, n_pool);
			struct nightly_noise nz = {
			    nightly_sd(m, pool, from, n_pool, median, step[i]), z};
			v = violation(m->rule, m->value[i], median, &nz);
			if (nightly) {
				m->n_judged++;
				if (!v) {
					add_run(m, &run, k);
					run.length = 0;
				} else {
					if (run.length++ == 0) {
						run.first = i;
						run.reached_fail = 0;
					}
					run.last = i;
					run.reached_fail |= v == 2;
				}
			}
		}
		if (!isnan(m->value[i]) && !v && (nightly || strcmp(kind, "main") == 0))
			pool[n_pool++] = m->value[i];
	}
	run.ongoing = run.length > 0;
	add_run(m, &run, k);
	m->flagged = m->n_runs > 0 && m->runs[m->n_runs - 1].ongoing;
	free(pool);
}

/* ---- change points across the metrics of a series ---- */

/* A change point is worth reporting when it reaches the warn limit (every
 * limit the rule gives), or moves 1% for a metric no rule judges. */
static int big_enough(const struct gate_rule *r, const struct history_cp *c)
{
	double d = fabs(c->after - c->before);
	double rel = c->before != 0 ? d / fabs(c->before) : (d > 0 ? INFINITY : 0);
	const struct gate_limit *l;

	if (!judged(r))
		return rel >= INFO_MIN_CHANGE - 1e-12;
	l = r->warn.has_relative || r->warn.has_absolute ? &r->warn : &r->fail;
	return gate_limit_reaches(l, d, rel);
}

/* One metric's values without gaps, and its best split. */
struct first {
	double *x;
	uint32_t *rec; /* the record index of each value */
	uint32_t n, at;
	double p;
};

static void first_split(struct cp_ctx *c, const struct history_trend_metric *m, uint32_t n,
			struct first *f)
{
	f->x = pg_xcalloc(n + 1, sizeof(double));
	f->rec = pg_xcalloc(n + 1, sizeof(uint32_t));
	f->n = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!isnan(m->value[i])) {
			f->rec[f->n] = i;
			f->x[f->n++] = m->value[i];
		}
	f->p = m->tested ? split(c, f->x, f->n, c->alpha, &f->at) : 1;
}

/* Benjamini-Hochberg at alpha over the first-level p-values: the number of
 * metrics with a change (the level below which a p counts is k alpha / m). */
static uint32_t discoveries(const struct first *f, uint32_t n_m, uint32_t m, double alpha)
{
	double *p = pg_xcalloc(n_m + 1, sizeof(double));
	uint32_t n = 0, k = 0;

	for (uint32_t i = 0; i < n_m; i++)
		if (f[i].p < 1)
			p[n++] = f[i].p;
	qsort(p, n, sizeof(double), pg_cmp_double);
	for (uint32_t i = 0; i < n; i++)
		if (p[i] <= (i + 1) * alpha / m)
			k = i + 1;
	free(p);
	return k;
}

/* The metric's change points below the level, past its magnitude. */
static void metric_cps(struct cp_ctx *c, const struct first *f, struct history_trend_metric *m)
{
	struct cps found = {pg_xcalloc(f->n + 1, sizeof(struct history_cp)), 0};

	found.v[found.n++] = (struct history_cp){f->at, NAN, NAN, f->p};
	segment(c, f->x, 0, f->at, &found);
	segment(c, f->x, f->at, f->n, &found);
	finish_cps(f->x, f->n, &found);
	m->cp = pg_xcalloc(found.n + 1, sizeof(*m->cp));
	for (uint32_t i = 0; i < found.n; i++)
		if (big_enough(m->rule, &found.v[i])) {
			m->cp[m->n_cp] = found.v[i];
			m->cp[m->n_cp++].index = f->rec[found.v[i].index];
		}
	free(found.v);
}

static void series_cps(struct history_trend_series *s, const struct history_trend_opts *o,
		       struct cp_cache *cache)
{
	uint32_t m = s->n_tested ? s->n_tested : 1;
	struct cp_ctx c = {o->min_segment, permutations_for(o->alpha / m), SEED_BASE, o->alpha,
			   cache};
	struct first *f = pg_xcalloc(s->n_m + 1, sizeof(*f));

	struct cp_ctx sub;

	for (uint32_t i = 0; i < s->n_m; i++)
		first_split(&c, &s->m[i], s->n, &f[i]);
	s->n_changed = discoveries(f, s->n_m, m, o->alpha);
	/* inside the changed metrics, at the level that chose them (fewer shuffles resolve it) */
	sub = (struct cp_ctx){c.L, 0, SEED_BASE, s->n_changed * o->alpha / m, cache};
	sub.perms = permutations_for(sub.alpha > 0 ? sub.alpha : o->alpha);
	for (uint32_t i = 0; i < s->n_m; i++) {
		if (s->n_changed && f[i].p <= sub.alpha)
			metric_cps(&sub, &f[i], &s->m[i]);
		free(f[i].x);
		free(f[i].rec);
	}
	free(f);
}

static void build_metric(const struct history_trend_series *s, const struct history_trend *t,
			 struct history_trend_metric *m, const char *name, uint32_t m_parts,
			 const double *step)
{
	memset(m, 0, sizeof(*m));
	m->name = pg_xstrdup(name);
	m->unit = summary_metric_unit(name);
	m->decimals = summary_metric_decimals(name);
	m->rule = t->o.th ? gate_rule_for(t->o.th, name) : NULL;
	m->value = pg_xcalloc(s->n + 1, sizeof(double));
	for (uint32_t i = 0; i < s->n; i++) {
		m->value[i] = value_of(s->r[i], name);
		if (!isfinite(m->value[i]))
			m->value[i] = NAN;
		else
			m->n_values++;
	}
	m->tested = m->n_values >= 2 * t->o.min_segment;
	if (judged(m->rule))
		nightly_rule(s, m, t->o.window, t->consecutive,
			     gate_level(t->o.th, m->rule, name, m_parts), step);
}

static void build_series(struct history_trend_series *s, const struct history_trend *t,
			 struct cp_cache *cache)
{
	uint32_t n_names;
	const char **names = metric_names(s, t->o.metric, &n_names);
	uint32_t m_parts = 0, n_all;
	const char **all = metric_names(s, NULL, &n_all);
	double *step = pg_xcalloc(s->n + 1, sizeof(double));

	/* the parts judged beside each other share the level, as in the gate
	 * (all of the series', whatever --metric shows) */
	for (uint32_t i = 0; t->o.th && i < n_all; i++)
		m_parts += gate_metric_is_part(all[i]) && judged(gate_rule_for(t->o.th, all[i]));
	free(all);
	/* each record's step once, for every metric's prior share of the step */
	for (uint32_t i = 0; i < s->n; i++)
		step[i] = value_of(s->r[i], "step.median_us");
	s->m = pg_xcalloc(n_names + 1, sizeof(*s->m));
	for (uint32_t i = 0; i < n_names; i++) {
		build_metric(s, t, &s->m[i], names[i], m_parts, step);
		s->n_tested += s->m[i].tested;
		s->n_flagged += s->m[i].flagged;
	}
	s->n_m = n_names;
	series_cps(s, &t->o, cache);
	free(names);
	free(step);
}

static void defaults(struct history_trend *t, const struct history_trend_opts *o)
{
	t->o = *o;
	if (!t->o.kinds)
		t->o.kinds = default_kinds;
	if (!t->o.window)
		t->o.window = DEFAULT_WINDOW;
	if (!(t->o.alpha > 0))
		t->o.alpha = DEFAULT_ALPHA;
	if (!t->o.min_segment)
		t->o.min_segment = DEFAULT_MIN_SEG;
	t->consecutive = o->th && o->th->consecutive_violations ? o->th->consecutive_violations : 2;
}

/* One series on a pool thread, with that thread's cache (its scratch, zeroed
 * until the thread's first series). The null tables are a function of the
 * length, the shuffles and the seed, so which thread made them does not
 * change a bit of the output. */
static void build_job(void *ctx, uint32_t job, void *scratch)
{
	struct history_trend *t = ctx;
	struct cp_cache *cache = scratch;

	if (!cache->L)
		cache_init(cache, t->o.min_segment);
	build_series(&t->s[job], t, cache);
}

static void cache_scratch_release(void *scratch)
{
	cache_release(scratch);
}

void history_trend_build(const struct history_list *l, const struct history_trend_opts *o,
			 struct history_trend *t)
{
	const struct history_record **r = pg_xcalloc(l->n + 1, sizeof(*r));
	struct pg_pool_jobs jobs;
	uint32_t n = 0;

	memset(t, 0, sizeof(*t));
	defaults(t, o);
	for (uint32_t i = 0; i < l->n; i++)
		if (kind_in(l->r[i].kind, t->o.kinds))
			r[n++] = &l->r[i];
	if (n > 1)
		qsort(r, n, sizeof(*r), cmp_rec);
	t->s = pg_xcalloc(n + 1, sizeof(*t->s));
	for (uint32_t i = 0; i < n;) {
		struct history_trend_series *s = &t->s[t->n++];
		uint32_t j = i;
		while (j < n && strcmp(r[j]->series, r[i]->series) == 0)
			j++;
		s->series = r[i]->series;
		s->label = r[j - 1]->label;
		s->n = j - i;
		s->r = pg_xcalloc(s->n, sizeof(*s->r));
		memcpy(s->r, r + i, s->n * sizeof(*s->r));
		i = j;
	}
	jobs = (struct pg_pool_jobs){
	    build_job, t, t->n, NULL, sizeof(struct cp_cache), cache_scratch_release};
	pg_pool_run(&jobs, t->o.threads > 1 ? (int)t->o.threads : 1);
	free(r);
}

double history_cp_confidence(const struct history_trend_series *s, const struct history_cp *c)
{
	double p = c->p_value * (s->n_tested ? s->n_tested : 1) / (s->n_changed ? s->n_changed : 1);

	return p >= 1 ? 0 : 1 - p;
}

void history_trend_release(struct history_trend *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		struct history_trend_series *s = &t->s[i];
		for (uint32_t k = 0; k < s->n_m; k++) {
			free(s->m[k].name);
			free(s->m[k].value);
			free(s->m[k].cp);
			free(s->m[k].runs);
		}
		free(s->m);
		free(s->r);
	}
	free(t->s);
	memset(t, 0, sizeof(*t));
}
