/*
 * Statistics the noise model is made of: medians and a robust sd (1.4826 x
 * the median absolute deviation), the normal tail and its inverse for the
 * one-sided test, and a bootstrap of a quantile inside one run. Everything is
 * deterministic: the bootstrap draws from a fixed-seed generator, so a
 * verdict never flips between runs on the same inputs.
 */
#include "gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Windows this short (a history baseline's, the nightly rule's, a gate's runs)
 * are sorted in place on the stack: a median per judged record and metric is
 * most of a trend's test, and qsort's call and the copy's malloc were most of
 * a median's cost. Insertion sort keeps equal values in their order, as
 * glibc's merge sort does, so the two give the same median bit for bit (a NaN,
 * which orders with nothing, takes qsort's path). */
#define MEDIAN_SMALL 32

static double median_sorted(const double *c, uint32_t n)
{
	return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

/* 1 with the median in *m; 0 when x holds a NaN. */
static int median_small(const double *x, uint32_t n, double *m)
{
	double c[MEDIAN_SMALL];

	for (uint32_t i = 0; i < n; i++) {
		if (isnan(x[i]))
			return 0;
		uint32_t k = i;
		while (k > 0 && c[k - 1] > x[i]) {
			c[k] = c[k - 1];
			k--;
		}
		c[k] = x[i];
	}
	*m = median_sorted(c, n);
	return 1;
}

double gate_median(const double *x, uint32_t n)
{
	double *c, m;

	if (n == 0)
		return NAN;
	if (n <= MEDIAN_SMALL && median_small(x, n, &m))
		return m;
	c = pg_xmalloc(n * sizeof(double));
	memcpy(c, x, n * sizeof(double));
	qsort(c, n, sizeof(double), pg_cmp_double);
	m = median_sorted(c, n);
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
	sd = GATE_MAD_SD * gate_median(d, n);
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

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The quantile of sorted v as the summary defines it (linear between ranks). */
static double sorted_quantile(const double *v, uint32_t n, double q)
{
	double pos = (n - 1) * q;
	uint32_t lo = (uint32_t)pos;

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (v[lo + 1] - v[lo]) * (pos - lo);
}

double gate_quantile(const double *x, uint32_t n, double q)
{
	double *v, out;

	if (n == 0)
		return NAN;
	v = pg_xmalloc(n * sizeof(double));
	memcpy(v, x, n * sizeof(double));
	qsort(v, n, sizeof(double), pg_cmp_double);
	out = sorted_quantile(v, n, q);
	free(v);
	return out;
}

double gate_bootstrap_quantile_var(const double *x, uint32_t n, double q, uint32_t iters)
{
	uint64_t seed = 0x70726f6667617465ULL; /* "profgate" */
	double *scratch, sum = 0, sum2 = 0;

	if (n < 2 || iters < 2)
		return 0;
	scratch = pg_xmalloc(n * sizeof(double));
	for (uint32_t it = 0; it < iters; it++) {
		double v;
		for (uint32_t i = 0; i < n; i++)
			scratch[i] = x[splitmix64(&seed) % n];
		qsort(scratch, n, sizeof(double), pg_cmp_double);
		v = sorted_quantile(scratch, n, q);
		sum += v;
		sum2 += v * v;
	}
	free(scratch);
	return fmax(0, (sum2 - sum * sum / iters) / (iters - 1));
}
