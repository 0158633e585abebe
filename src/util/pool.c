/*
 * The one thread pool: jobs 0..n-1 run on a few threads, each job once, taken
 * by whichever thread is free next. Every thread profgate starts is started
 * here: the readers' decode passes and files read side by side, the analysis
 * stages, and the single helpers (a gzip inflater, a file hash) as a pool of
 * one job on one thread.
 *
 * How it works: a counter under a mutex hands out the next job, in the
 * caller's order (largest first, say) or in index order. Each thread has its
 * own scratch, zeroed before its first job and released after its last, so
 * jobs reuse buffers without sharing them. pg_pool_run counts the calling
 * thread as one of the threads and returns when every job is done.
 * pg_pool_start leaves the caller free while the jobs run: it may wait for
 * one job at a time (to merge results in job order as they come in) and
 * pg_pool_finish then joins. Which thread runs which job is never visible in
 * a result: callers give each job its own output.
 */
#include "util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct pg_pool {
	struct pg_pool_jobs j;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t next;
	uint8_t *done; /* per job, for pg_pool_wait; NULL when nobody waits */
	pthread_t *tid;
	int n_threads;
};

/* Take jobs until there are none left, with this thread's scratch. */
static void pool_work(struct pg_pool *p)
{
	void *scratch = p->j.scratch_size ? pg_xcalloc(1, p->j.scratch_size) : NULL;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		uint32_t k = p->next < p->j.n ? p->next++ : UINT32_MAX;
		pthread_mutex_unlock(&p->mu);
		if (k == UINT32_MAX)
			break;
		uint32_t i = p->j.order ? p->j.order[k] : k;
		p->j.run(p->j.ctx, i, scratch);
		if (p->done) {
			pthread_mutex_lock(&p->mu);
			p->done[i] = 1;
			pthread_cond_broadcast(&p->cv);
			pthread_mutex_unlock(&p->mu);
		}
	}
	if (scratch && p->j.scratch_release)
		p->j.scratch_release(scratch);
	free(scratch);
}

static void *pool_thread(void *arg)
{
	pool_work(arg);
	return NULL;
}

static struct pg_pool *pool_new(const struct pg_pool_jobs *jobs, int threads, int waitable)
{
	struct pg_pool *p = pg_xcalloc(1, sizeof(*p));

	p->j = *jobs;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (waitable)
		p->done = pg_xcalloc(jobs->n + 1, 1);
	if ((uint32_t)threads > jobs->n)
		threads = (int)jobs->n;
	p->tid = pg_xmalloc(((size_t)(threads > 0 ? threads : 0) + 1) * sizeof(pthread_t));
	for (int i = 0; i < threads; i++)
		if (pthread_create(&p->tid[p->n_threads], NULL, pool_thread, p) == 0)
			p->n_threads++;
	return p;
}

static void pool_free(struct pg_pool *p)
{
	for (int i = 0; i < p->n_threads; i++)
		pthread_join(p->tid[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->tid);
	free(p->done);
	free(p);
}

void pg_pool_run(const struct pg_pool_jobs *jobs, int threads)
{
	/* the others stop at one thread per job: this one takes a job too */
	uint32_t n = jobs->n ? jobs->n : 1;
	int extra = (threads < 1 ? 1 : (uint32_t)threads > n ? (int)n : threads) - 1;
	struct pg_pool *p = pool_new(jobs, extra, 0);

	pool_work(p);
	pool_free(p);
}

struct pg_pool *pg_pool_start(const struct pg_pool_jobs *jobs, int threads)
{
	struct pg_pool *p = pool_new(jobs, threads, 1);

	if (p->n_threads > 0)
		return p;
	pool_free(p);
	return NULL;
}

void pg_pool_wait(struct pg_pool *p, uint32_t job)
{
	pthread_mutex_lock(&p->mu);
	while (!p->done[job])
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void pg_pool_finish(struct pg_pool *p)
{
	pool_work(p);
	pool_free(p);
}
