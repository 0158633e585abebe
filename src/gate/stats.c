/*
 * Statistics on step samples: a one-sided Mann-Whitney U test (does the
 * candidate run slower?) and a bootstrap interval of the median ratio. Both
 * are deterministic: the exact U distribution is counted, and the bootstrap
 * draws from a fixed-seed generator, so a verdict never flips between runs.
 */
#include "gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double gate_median(const double *x, uint32_t n)
{
	double *c, m;

	if (n == 0)
		return NAN;
	c = pg_xmalloc(n * sizeof(double));
	memcpy(c, x, n * sizeof(double));
	qsort(c, n, sizeof(double), pg_cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

double gate_robust_sd(const double *x, uint32_t n)
{
	double m, *d, sd;

	if (n < 2)
		return NAN;
	m = gate_median(x, n);
	d = pg_xmalloc(n * sizeof(double));
	for (uint32_t i = 0; i < n; i++)
		d[i] = fabs(x[i] - m);
	sd = 1.4826 * gate_median(d, n);
	free(d);
	return sd;
}

double gate_norm_upper(double z)
{
	return 0.5 * erfc(z / sqrt(2.0));
}

/* Bisection on the tail: 100 halvings of [-40, 40] are exact to double precision. */
double gate_norm_quantile_upper(double p)
{
	double lo = -40, hi = 40;

	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;
		if (gate_norm_upper(mid) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* The exact upper tail P(U >= u) for samples of n and m without ties: the
 * number of orderings giving each U, counted by where the largest value sits
 * (a b beats all n a's, an a beats nothing). */
static double mwu_exact_upper(uint32_t n, uint32_t m, double u)
{
	uint32_t umax = n * m;
	size_t plane = (size_t)(umax + 1);
	double *c = pg_xcalloc((size_t)(n + 1) * (m + 1) * plane, sizeof(double));
	double total = 0, tail = 0;

#define C(i, j, k) c[(((size_t)(i) * (m + 1)) + (j)) * plane + (k)]
	for (uint32_t i = 0; i <= n; i++)
		for (uint32_t j = 0; j <= m; j++) {
			if (i == 0 || j == 0) {
				C(i, j, 0) = 1;
				continue;
			}
			for (uint32_t k = 0; k <= i * j; k++)
				C(i, j, k) = C(i - 1, j, k) + (k >= i ? C(i, j - 1, k - i) : 0);
		}
	for (uint32_t k = 0; k <= umax; k++) {
		total += C(n, m, k);
		if ((double)k >= u - 1e-9)
			tail += C(n, m, k);
	}
#undef C
	free(c);
	return tail / total;
}

struct ranked {
	double v;
	int b;
};

static int cmp_ranked(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;
	return (a->v > b->v) - (a->v < b->v);
}

double gate_mwu_p_greater(const double *a, uint32_t n, const double *b, uint32_t m)
{
	uint32_t N = n + m, i = 0;
	struct ranked *r;
	double rank_sum_b = 0, ties = 0, u, mu, sigma, z, p;
	int has_ties = 0;

	if (n == 0 || m == 0)
		return 1;
	r = pg_xmalloc(N * sizeof(*r));
	for (uint32_t k = 0; k < n; k++)
		r[k] = (struct ranked){a[k], 0};
	for (uint32_t k = 0; k < m; k++)
		r[n + k] = (struct ranked){b[k], 1};
	qsort(r, N, sizeof(*r), cmp_ranked);
	while (i < N) {
		uint32_t j = i;
		while (j + 1 < N && r[j + 1].v == r[i].v)
			j++;
		double t = j - i + 1, mid = (i + j) / 2.0 + 1;
		for (uint32_t k = i; k <= j; k++)
			if (r[k].b)
				rank_sum_b += mid;
		if (t > 1) {
			ties += t * t * t - t;
			has_ties = 1;
		}
		i = j + 1;
	}
	free(r);
	u = rank_sum_b - (double)m * (m + 1) / 2;
	if (!has_ties && (uint64_t)n * m <= 2500 && N <= 120)
		return mwu_exact_upper(n, m, u);
	mu = (double)n * m / 2;
	sigma = sqrt((double)n * m / 12.0 * ((N + 1) - ties / ((double)N * (N - 1))));
	if (sigma <= 0)
		return 1;
	z = (u - mu - 0.5) / sigma;
	p = 0.5 * erfc(z / sqrt(2.0));
	return p < 0 ? 0 : p > 1 ? 1 : p;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The k-th smallest of x[0..n) (reorders x: smaller ones before k). */
static double select_kth(double *x, uint32_t n, uint32_t k)
{
	int64_t lo = 0, hi = (int64_t)n - 1;

	while (lo < hi) {
		double pivot = x[lo + (hi - lo) / 2];
		int64_t i = lo, j = hi;
		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				double t = x[i];
				x[i++] = x[j];
				x[j--] = t;
			}
		}
		if ((int64_t)k <= j)
			hi = j;
		else if ((int64_t)k >= i)
			lo = i;
		else
			break;
	}
	return x[k];
}

static double resampled_median(const double *x, uint32_t n, double *scratch, uint64_t *seed)
{
	for (uint32_t i = 0; i < n; i++)
		scratch[i] = x[splitmix64(seed) % n];
	if (n % 2)
		return select_kth(scratch, n, n / 2);
	double hi = select_kth(scratch, n, n / 2);
	double lo = select_kth(scratch, n / 2, n / 2 - 1); /* the lower half is below hi */
	return (lo + hi) / 2;
}

void gate_bootstrap_median_ratio(const double *a, uint32_t n, const double *b, uint32_t m,
				 double conf, uint32_t iters, double *lo, double *hi)
{
	uint64_t seed = 0x70726f6667617465ULL; /* "profgate" */
	double *scratch, *ratios;
	uint32_t k = 0;

	*lo = *hi = NAN;
	if (n == 0 || m == 0 || iters == 0)
		return;
	scratch = pg_xmalloc((n > m ? n : m) * sizeof(double));
	ratios = pg_xmalloc(iters * sizeof(double));
	for (uint32_t it = 0; it < iters; it++) {
		double ma = resampled_median(a, n, scratch, &seed);
		double mb = resampled_median(b, m, scratch, &seed);
		if (ma > 0)
			ratios[k++] = mb / ma - 1;
	}
	if (k > 0) {
		double tail = (1 - conf) / 2;
		qsort(ratios, k, sizeof(double), pg_cmp_double);
		*lo = ratios[(uint32_t)floor(tail * (k - 1))];
		*hi = ratios[(uint32_t)ceil((1 - tail) * (k - 1))];
	}
	free(scratch);
	free(ratios);
}
