/*
 * The analysis's jobs on threads: az_run_jobs runs jobs 0..n-1 of a stage on
 * up to one thread per core (at most MAX_THREADS) through the shared pool
 * (src/util/pool.c), and gives each thread its own scratch.
 *
 * How it works: the scratch (a classification cache, a per-track and a
 * per-op slot table) is made on a thread's first use of each part and kept
 * for its later jobs, so a stage of many small jobs allocates once per
 * thread, not once per job; the slot tables are left all UINT32_MAX between
 * uses, so no job clears more than it touched.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct clscache *az_scratch_cc(struct scratch *sc, const struct trace *t)
{
	if (!sc->cc.by_name)
		az_clscache_init(&sc->cc, t);
	return &sc->cc;
}

uint32_t *az_scratch_slot(struct scratch *sc, const struct trace *t)
{
	if (!sc->slot) {
		sc->slot = pg_xmalloc((t->n_tracks + 1) * sizeof(uint32_t));
		memset(sc->slot, 0xff, (t->n_tracks + 1) * sizeof(uint32_t));
	}
	return sc->slot;
}

uint32_t *az_scratch_ops(struct scratch *sc, uint32_t n_ops)
{
	if (!sc->ops) {
		sc->ops = pg_xmalloc(((size_t)n_ops + 1) * sizeof(uint32_t));
		memset(sc->ops, 0xff, ((size_t)n_ops + 1) * sizeof(uint32_t));
	}
	return sc->ops;
}

struct jobs {
	struct az *z;
	void (*fn)(struct az *z, uint32_t job, struct scratch *sc);
};

static void jobs_one(void *ctx, uint32_t i, void *scratch)
{
	struct jobs *j = ctx;

	j->fn(j->z, i, scratch);
}

static void scratch_release(void *scratch)
{
	struct scratch *sc = scratch;

	if (sc->cc.by_name)
		az_clscache_release(&sc->cc);
	free(sc->slot);
	free(sc->ops);
}

/*
 * Jobs 0..n-1, taken in order by up to one thread per core. Every job writes
 * only what is its own (a device, one list of the summary), so the result
 * never depends on which thread ran which job, or on how many there were.
 */
void az_run_jobs(struct az *z, uint32_t n,
		 void (*fn)(struct az *z, uint32_t job, struct scratch *sc))
{
	struct jobs j = {z, fn};
	struct pg_pool_jobs pj = {jobs_one, &j, n, NULL, sizeof(struct scratch), scratch_release};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	uint32_t want = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (uint32_t)cores;

	pg_pool_run(&pj, (int)want);
}
