/*
 * trend_sim [REPS [MAX_BEFORE]] | trend_sim REPS - N UNIT: the simulation behind docs/history.md
 * "Trends" (run by hand, not by a test): the change-point test of src/history/trend.c on generated
 * series, with a fixed-seed generator.
 *
 * 1. False alarms: flat series (Gaussian noise, rounded to a unit that makes ties as records do:
 *    none, about 1,000 distinct values, 20 and 5), REPS of each length (default 4000; 0 skips this
 * part); the share whose history_split_p() is at most 0.05, 0.01 and 0.001. A test that holds its
 * level shows about the level or less.
 * 2. Detection delay: B flat records (noise 0.5%, 3 decimals) then a clean +5% step; the fewest
 *    records after the step at which history_change_points() at 0.01 reports it (within one
 *    record), the median and largest over 5 seeds, "-" when not within 40
 *    (steps after at most MAX_BEFORE records, default 1000).
 * With N and UNIT, only false alarms of that length and rounding, at 0.01, 0.001, 0.0002 and
 * 0.0001.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../src/history/history.h"

static uint64_t rng = 0x73696d756c617465ULL;

static double uniform(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static double rounded(double v, double unit)
{
	return unit > 0 ? round(v / unit) * unit : v;
}

static void false_alarms(uint32_t reps)
{
	static const uint32_t lengths[] = {48, 60, 100, 200, 400, 1000, 2000};
	/* noise sd 1: unit 0 no ties, 0.006 about 1,000 distinct values, 0.3 about 20, 1.2 about 5
	 */
	static const double units[] = {0, 0.006, 0.3, 1.2};
	static const double alphas[] = {0.05, 0.01, 0.001};

	printf("false alarms: share of %u flat series with p <= 0.05 / 0.01 / 0.001\n", reps);
	printf("%6s %8s %8s %8s %8s\n", "n", "unit", "0.05", "0.01", "0.001");
	for (size_t li = 0; li < sizeof(lengths) / sizeof(*lengths); li++) {
		uint32_t n = lengths[li];
		double *x = malloc(n * sizeof(double));
		for (size_t ui = 0; ui < sizeof(units) / sizeof(*units); ui++) {
			uint32_t hit[3] = {0, 0, 0};
			for (uint32_t r = 0; r < reps; r++) {
				double p;
				for (uint32_t i = 0; i < n; i++)
					x[i] = rounded(100 + gauss(), units[ui]);
				p = history_split_p(x, n, 3, 0.001, r + 1);
				for (int a = 0; a < 3; a++)
					hit[a] += p <= alphas[a];
			}
			printf("%6u %8g %8.4f %8.4f %8.4f\n", n, units[ui], (double)hit[0] / reps,
			       (double)hit[1] / reps, (double)hit[2] / reps);
		}
		free(x);
	}
}

/* The fewest records after a +5% step at `before` that report it, 0 when not within 40. */
static uint32_t delay(uint32_t before)
{
	double x[1100];
	struct history_cp cp[1100];
	struct history_cp_opts o = {3, 0.01, 42};

	for (uint32_t i = 0; i < before + 40; i++)
		x[i] = rounded((i < before ? 100 : 105) * (1 + 0.005 * gauss()), 0.001);
	for (uint32_t after = 1; after <= 40; after++) {
		uint32_t n = history_change_points(x, before + after, &o, cp);
		for (uint32_t k = 0; k < n; k++)
			if (cp[k].index + 1 >= before && cp[k].index <= before + 1)
				return after;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void delays(uint32_t max_before)
{
	static const uint32_t befores[] = {3,  4,  5,  10, 15,	20,  30,  40,
					   43, 44, 50, 60, 100, 200, 400, 1000};

	printf(
	    "\ndetection: records after a clean +5%% step (noise 0.5%%) until reported at 0.01\n");
	printf("%6s %7s %5s\n", "before", "median", "max");
	for (size_t bi = 0; bi < sizeof(befores) / sizeof(*befores) && befores[bi] <= max_before;
	     bi++) {
		uint32_t d[5], missed = 0;
		for (int s = 0; s < 5; s++) {
			d[s] = delay(befores[bi]);
			missed += d[s] == 0;
			if (!d[s])
				d[s] = 99;
		}
		qsort(d, 5, sizeof(*d), cmp_u32);
		if (missed)
			printf("%6u %7u %5s\n", befores[bi], d[2], "-");
		else
			printf("%6u %7u %5u\n", befores[bi], d[2], d[4]);
	}
}

/* One length and rounding, to smaller levels (more REPS). */
static void false_alarms_at(uint32_t reps, uint32_t n, double unit)
{
	static const double alphas[] = {0.01, 0.001, 0.0002, 0.0001};
	double *x = malloc(n * sizeof(double));
	uint32_t hit[4] = {0, 0, 0, 0};

	for (uint32_t r = 0; r < reps; r++) {
		double p;
		for (uint32_t i = 0; i < n; i++)
			x[i] = rounded(100 + gauss(), unit);
		p = history_split_p(x, n, 3, 0.0001, r + 1);
		for (int a = 0; a < 4; a++)
			hit[a] += p <= alphas[a];
	}
	printf("n %u, unit %g, %u series: p <= 0.01 %.5f, 0.001 %.5f, 0.0002 %.5f, 0.0001 %.5f\n",
	       n, unit, reps, (double)hit[0] / reps, (double)hit[1] / reps, (double)hit[2] / reps,
	       (double)hit[3] / reps);
	free(x);
}

int main(int argc, char **argv)
{
	uint32_t reps = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 4000;

	if (argc > 4) {
		false_alarms_at(reps, (uint32_t)strtoul(argv[3], NULL, 10), strtod(argv[4], NULL));
		return 0;
	}

	if (reps)
		false_alarms(reps);
	delays(argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1000);
	return 0;
}
