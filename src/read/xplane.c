/*
 * XPlane reader (.xplane.pb): JAX/XLA and TensorFlow, GPU and TPU.
 *
 * How it works: the file is mapped read-only and walked as protobuf wire
 * format without building the XSpace. A first pass over the XSpace records
 * each plane's byte range and the host names. Per plane, a scan records the
 * ranges of lines, event metadata, plane stats and stat metadata (serializers
 * write lines *before* the metadata they use, so lines must wait). Every line
 * is then walked on several threads, its events counted and skipped by length.
 * Then, plane by plane in file order, stat metadata, plane stats and event
 * metadata are decoded (event metadata with the protoc-c generated code: they
 * are few) and each line gets its track and its event slots. Finally all
 * events are decoded by hand, in runs of up to LINE_CHUNK, on several threads,
 * straight into the trace model. Pages of decoded runs are released, so memory
 * stays near the file size plus the events kept. Before that, the host lines
 * of planes whose metadata names allocator events are walked once for those
 * events alone (xp_memory_job, on several threads), so that they become memory samples even when
 * the rest of the host lines stays undecoded (drop_host_jobs).
 *
 * Conventions (docs: formats.md §1-3, §13): stats are matched by name through
 * stat_metadata, never by number; ref_value is the referenced metadata's
 * name; event stats win over metadata stats; device_offset_ps and
 * device_duration_ps (TPU) replace offset and duration; num_occurrences events
 * are counted but have no time; lines with the same id in a plane are one
 * track; timestamp_ns is taken as given (usually ns since profile start) and
 * the epoch comes from the Task Environment plane.
 *
 * This file is the walk: the XSpace, the planes, the lines and the decode
 * jobs on their threads. xplane_decode.c decodes metadata, plane stats and
 * events; xplane.h holds the shared state and the inline wire format.
 */
#include "xplane.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int xp_corrupt(struct xp *x, const uint8_t *at, const char *what)
{
	return pg_error_set(PG_EFORMAT, "cannot read '%s': corrupt XPlane: %s at byte %llu",
			    x->path, what, (unsigned long long)(at - x->base));
}

static void ranges_add(struct ranges *r, const struct pb *sub)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->v = pg_xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] = (struct range){sub->p, sub->end};
}

static void jobs_add(struct jobs *js, const struct job *j)
{
	if (js->n == js->cap) {
		js->cap = js->cap ? 2 * js->cap : 64;
		js->v = pg_xrealloc(js->v, js->cap * sizeof(*js->v));
	}
	js->v[js->n++] = *j;
}

/* ---- lines: counted on several threads, then tracks and jobs in order ---- */

static void xlines_add(struct xlines *xl, struct xp *x, const struct pb *sub)
{
	if (xl->n == xl->cap) {
		xl->cap = xl->cap ? 2 * xl->cap : 64;
		xl->v = pg_xrealloc(xl->v, xl->cap * sizeof(*xl->v));
	}
	struct xline *l = &xl->v[xl->n++];
	memset(l, 0, sizeof(*l));
	l->x = x;
	l->p = sub->p;
	l->end = sub->end;
}

static void xlines_free(struct xlines *xl)
{
	for (uint32_t i = 0; i < xl->n; i++) {
		free(xl->v[i].marks);
		free(xl->v[i].err);
	}
	free(xl->v);
}

/* Event n of a line starts at `at`: every LINE_CHUNK-th starts a job. */
static void mark_event(struct xline *l, uint64_t n, const uint8_t *at)
{
	if (n == 0 || n % LINE_CHUNK != 0)
		return;
	if (l->n_marks == l->cap_marks) {
		l->cap_marks = l->cap_marks ? 2 * l->cap_marks : 16;
		l->marks = pg_xrealloc(l->marks, l->cap_marks * sizeof(*l->marks));
	}
	l->marks[l->n_marks++] = at;
}

/* A line's header fields; its events are only counted. Lines of planes
 * with no device keep nothing but the count. */
static int count_line(struct xline *l)
{
	struct xp *x = l->x;
	struct pb b = {l->p, l->end}, sub, name = {NULL, NULL}, dname = {NULL, NULL};
	uint64_t k, v, n = 0;

	while (b.p < b.end) {
		const uint8_t *at = b.p;
		if (pb_varint(&b, &k))
			return xp_corrupt(x, b.p, "bad line field");
		if (k == PB_KEY(4, 2)) {
			/* an event: skipped by its length */
			if (pb_sub(&b, &sub))
				return xp_corrupt(x, b.p,
						  x->no_device ? "bad line field"
							       : "event past the end of its line");
			if (!x->no_device)
				mark_event(l, n, at);
			n++;
			continue;
		}
		uint32_t f = (uint32_t)(k >> 3);
		int wt = (int)(k & 7);
		if (f == 0 || f > 0x1fffffff)
			return xp_corrupt(x, b.p, "bad line field");
		if (x->no_device) {
			if (pb_skip(&b, wt))
				return xp_corrupt(x, b.p, "bad line field");
		} else if (wt == 0 && (f == 1 || f == 10 || f == 3 || f == 9)) {
			if (pb_varint(&b, &v))
				return xp_corrupt(x, b.p, "bad line varint");
			if (f == 1)
				l->id = (int64_t)v;
			else if (f == 3)
				l->ts_ns = (int64_t)v;
		} else if (wt == 2 && (f == 2 || f == 11)) {
			if (pb_sub(&b, f == 2 ? &name : &dname))
				return xp_corrupt(x, b.p, "line name past its end");
		} else if (pb_skip(&b, wt)) {
			return xp_corrupt(
			    x, b.p, f == 4 ? "event past the end of its line" : "bad line field");
		}
	}
	l->n_events = n;
	l->name = dname.p && dname.end > dname.p ? dname : name;
	return 0;
}

/* A pool thread's scratch: a buffer for decoding, made on first use. */
struct xscratch {
	struct pg_buf buf;
	size_t page; /* 0 until first use */
};

static struct xscratch *xscratch_get(void *scratch)
{
	struct xscratch *sc = scratch;

	if (!sc->page) {
		sc->buf = (struct pg_buf)PG_BUF_INIT;
		sc->page = (size_t)sysconf(_SC_PAGESIZE);
	}
	return sc;
}

static void xscratch_release(void *scratch)
{
	struct xscratch *sc = scratch;

	if (sc->page)
		pg_buf_release(&sc->buf);
}

struct sized {
	uint64_t size;
	uint32_t i;
};

static int cmp_sized(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->i < y->i ? -1 : 1;
}

/* Run items [0, n) on up to `threads` threads (this one included), largest
 * first by sizes[], or in order if sizes is NULL. */
static void pool_run(void *items, uint32_t n, const uint64_t *sizes, int threads,
		     void (*run)(void *, uint32_t, void *))
{
	struct pg_pool_jobs jobs = {run, items, n, NULL, sizeof(struct xscratch), xscratch_release};
	uint32_t *order = NULL;

	if (n && sizes) {
		struct sized *by = pg_xmalloc((n + 1) * sizeof(*by));
		order = pg_xmalloc((n + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < n; i++)
			by[i] = (struct sized){sizes[i], i};
		qsort(by, n, sizeof(*by), cmp_sized);
		for (uint32_t i = 0; i < n; i++)
			order[i] = by[i].i;
		free(by);
	}
	jobs.order = order;
	pg_pool_run(&jobs, threads > 16 ? 16 : threads);
	free(order);
}

static void count_one(void *items, uint32_t i, void *scratch)
{
	struct xline *l = &((struct xline *)items)[i];

	PG_UNUSED(scratch);
	if (count_line(l)) {
		l->rc = PG_EFORMAT;
		l->err = pg_xstrdup(pg_error_last());
	}
}

/* Count every line's events on `threads` threads (one for small files). */
static void count_lines(struct xlines *xl, int threads)
{
	uint64_t *sizes = pg_xmalloc((xl->n + 1) * sizeof(uint64_t)), total = 0;

	for (uint32_t i = 0; i < xl->n; i++) {
		sizes[i] = (uint64_t)(xl->v[i].end - xl->v[i].p);
		total += sizes[i];
	}
	pool_run(xl->v, xl->n, sizes, total >= (4u << 20) ? threads : 1, count_one);
	free(sizes);
}

/* A counted line's track and decode jobs, one per LINE_CHUNK events. */
static void line_jobs(struct xp *x, const struct xline *l, struct jobs *js)
{
	const char *nm = l->name.p ? (const char *)l->name.p : "";
	size_t nn = l->name.p ? (size_t)(l->name.end - l->name.p) : 0;
	struct job j;

	memset(&j, 0, sizeof(j));
	j.x = x;
	j.track = xp_line_track(x, l->id, nm, nn);
	j.ts_ns = l->ts_ns;
	j.steps_line = x->t->tracks[j.track].kind == TRACE_TRACK_STEPS;
	j.first_ns = INT64_MAX;
	j.last_ns = INT64_MIN;
	for (uint32_t k = 0; k <= l->n_marks; k++) {
		j.p = k ? l->marks[k - 1] : l->p;
		j.end = k < l->n_marks ? l->marks[k] : l->end;
		j.n_events = k < l->n_marks ? LINE_CHUNK : l->n_events - (uint64_t)k * LINE_CHUNK;
		jobs_add(js, &j);
	}
}

static void decode_one(void *items, uint32_t i, void *scratch)
{
	struct xscratch *sc = xscratch_get(scratch);

	xp_decode_job(&((struct job *)items)[i], &sc->buf, sc->page);
}

/* ---- planes ---- */

static void plane_reset(struct xp *x)
{
	free(x->stats);
	free(x->stats_sparse);
	pg_u64map_release(&x->stat_sparse);
	free(x->evm);
	free(x->evm_sparse_v);
	pg_u64map_release(&x->evm_sparse);
	free(x->margs);
	pg_u64map_release(&x->lines);
	free(x->plane_name);
	free(x->scan_err);
	x->stats = x->stats_sparse = NULL;
	x->evm = x->evm_sparse_v = NULL;
	x->margs = NULL;
	x->plane_name = x->scan_err = NULL;
	x->n_stats = x->n_stats_sparse = x->cap_stats_sparse = 0;
	x->n_evm = x->n_evm_sparse = x->cap_evm_sparse = 0;
	x->n_margs = x->cap_margs = 0;
	x->meta_r.n = x->stat_r.n = x->smeta_r.n = 0;
	x->n_lines = 0;
	x->plane_events = 0;
	x->device = UINT32_MAX;
}

static void add_plane_record(struct xp *x, uint32_t lines)
{
	struct trace_file *f = &x->t->files[x->file];

	f->planes = pg_xrealloc(f->planes, (f->n_planes + 1) * sizeof(*f->planes));
	f->planes[f->n_planes++] =
	    (struct trace_plane){pg_xstrdup(x->plane_name), x->plane_id, x->plane_events, lines};
}

/*
 * A plane's fields, without touching the trace model: the byte ranges of its
 * lines (added to the file's list), event metadata, stats and stat metadata.
 * On error the message is kept for plane_finish, which reports it in the order
 * a single pass would have met it; the scan of the file stops there.
 */
static int scan_plane(struct xp *x, const struct range *r, struct xlines *xl)
{
	struct pb b = {r->p, r->end}, sub;
	uint64_t k, v;

	x->first_line = xl->n;
	while (b.p < b.end) {
		if (pb_varint(&b, &k) || (k >> 3) == 0 || (k >> 3) > 0x1fffffff) {
			xp_corrupt(x, b.p, "bad plane field");
			goto fail;
		}
		uint32_t f = (uint32_t)(k >> 3);
		int wt = (int)(k & 7);
		if (f == 1 && wt == 0) {
			if (pb_varint(&b, &v)) {
				xp_corrupt(x, b.p, "bad plane id");
				goto fail;
			}
			x->plane_id = (int64_t)v;
		} else if (wt == 2 && f >= 2 && f <= 6) {
			if (pb_sub(&b, &sub)) {
				xp_corrupt(x, b.p, "length past the end of the plane");
				goto fail;
			}
			if (f == 2) {
				free(x->plane_name);
				x->plane_name =
				    pg_xstrndup((const char *)sub.p, (size_t)(sub.end - sub.p));
			} else if (f == 3) {
				xlines_add(xl, x, &sub);
			} else if (f == 4) {
				ranges_add(&x->meta_r, &sub);
			} else if (f == 5) {
				ranges_add(&x->smeta_r, &sub);
			} else {
				ranges_add(&x->stat_r, &sub);
			}
		} else if (pb_skip(&b, wt)) {
			xp_corrupt(x, b.p, "bad plane field");
			goto fail;
		}
	}
	if (!x->plane_name)
		x->plane_name = pg_xstrdup("");
	x->n_lines = xl->n - x->first_line;
	x->no_device = strcmp(x->plane_name, "/host:metadata") == 0 ||
		       strcmp(x->plane_name, "Task Environment") == 0;
	return 0;
fail:
	x->scan_err = pg_xstrdup(pg_error_last());
	x->n_lines = xl->n - x->first_line;
	return PG_EFORMAT;
}

/* The rest of a plane, in file order: stat metadata, device, plane stats,
 * event metadata, then its counted lines' tracks and decode jobs. */
static int plane_finish(struct xp *x, const struct xlines *xl, struct jobs *js)
{
	for (uint32_t i = 0; i < x->smeta_r.n; i++) {
		struct pb entry = {x->smeta_r.v[i].p, x->smeta_r.v[i].end};
		if (xp_decode_stat_metadata(x, &entry))
			return xp_corrupt(x, entry.p, "bad stat metadata");
	}
	if (x->scan_err)
		return pg_error_set(PG_EFORMAT, "%s", x->scan_err);
	const char *pn = x->plane_name;
	int is_meta = strcmp(pn, "/host:metadata") == 0;
	int is_task = strcmp(pn, "Task Environment") == 0;
	if (strncmp(pn, "/device:", 8) == 0)
		x->t->files[x->file].declared_devices++;
	if (!is_meta && !is_task)
		x->device = xp_plane_device(x, pn);
	if (xp_decode_plane_stats(x, is_task))
		return PG_EFORMAT;
	if (!is_meta) {
		for (uint32_t i = 0; i < x->meta_r.n; i++)
			if (xp_decode_event_metadata(x, &x->meta_r.v[i]))
				return PG_EFORMAT;
	}
	for (uint32_t i = 0; i < x->n_lines; i++) {
		const struct xline *l = &xl->v[x->first_line + i];
		if (l->rc)
			return pg_error_set(PG_EFORMAT, "%s", l->err);
		/* metadata planes carry no events; any are counted for the record */
		x->plane_events += l->n_events;
		x->t->files[x->file].entries += l->n_events;
		if (x->device != UINT32_MAX)
			line_jobs(x, l, js);
	}
	if (x->device != UINT32_MAX)
		x->t->devices[x->device].n_events += x->plane_events;
	add_plane_record(x, x->n_lines);
	return 0;
}

/* ---- the file ---- */

static void host_from_path(struct xp *x)
{
	struct trace_file *f = &x->t->files[x->file];
	const char *base = strrchr(x->path, '/');
	base = base ? base + 1 : x->path;
	const char *suf = strstr(base, ".xplane.pb");

	if (x->n_hostnames > 0) {
		f->host = pg_xstrdup(x->hostnames[0]);
		return;
	}
	f->host = pg_xstrndup(base, suf ? (size_t)(suf - base) : strlen(base));
}

/*
 * Decode every job's events into slots reserved in advance, on `threads`
 * threads; then fold the per-job counts into tracks and the file in line
 * order, so nothing depends on which thread ran what. Jobs are at most
 * LINE_CHUNK events, so taking them in file order leaves little imbalance at
 * the end, and the event memory fills (and the file's pages are released)
 * front to back instead of everywhere at once.
 */
static int run_jobs(struct xp *x, struct jobs *js, int threads)
{
	uint64_t total = 0, cap;

	for (uint32_t i = 0; i < js->n; i++)
		total += js->v[i].n_events;
	if (rd_max_events(x->path, &cap))
		return PG_EUSAGE;
	if (total > cap)
		return rd_too_many_events(x->path, cap);
	uint64_t first = trace_events_reserve(x->t, total);
	for (uint32_t i = 0; i < js->n; i++) {
		js->v[i].first = first;
		first += js->v[i].n_events;
	}
	pool_run(js->v, js->n, NULL, total >= 100000 ? threads : 1, decode_one);
	for (uint32_t i = 0; i < js->n; i++) {
		struct job *j = &js->v[i];
		if (j->rc) {
			pg_error_set(PG_EFORMAT, "%s", j->err);
			return PG_EFORMAT;
		}
		struct trace_track *tr = &x->t->tracks[j->track];
		tr->n_events += j->n_events;
		if (j->first_ns < tr->first_ns)
			tr->first_ns = j->first_ns;
		if (j->last_ns > tr->last_ns)
			tr->last_ns = j->last_ns;
		x->t->files[x->file].aggregate_events += j->n_aggregate;
	}
	return 0;
}

/*
 * A file whose planes name no step-marker stat or event, and that has a line
 * other than a host thread's, has nothing on its host threads that a summary
 * reads: the host view leaves them out (trace_file.host_threads_aside, read
 * by analyze/host.c, so that it is one rule however the file was read). A
 * file with no such line (a host-only capture, JAX on the CPU) keeps them:
 * they are all it has.
 */
static int host_threads_aside(const struct xp *x, struct xp **pcs, uint32_t n_pcs,
			      const struct jobs *js)
{
	for (uint32_t i = 0; i < n_pcs; i++)
		if (pcs[i]->marker_meta)
			return 0;
	for (uint32_t i = 0; i < js->n; i++)
		if (x->t->tracks[js->v[i].track].kind != TRACE_TRACK_HOST_THREAD)
			return 1;
	return 0;
}

/*
 * With host_markers_only, the host threads of a file whose threads are set
 * aside stay counted (and their framing checked by count_line) but
 * undecoded. On a TPU capture they are most of the file.
 */
static void drop_host_jobs(struct xp *x, struct jobs *js)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint32_t kept = 0;

	for (uint32_t i = 0; i < js->n; i++) {
		struct job *j = &js->v[i];
		if (x->t->tracks[j->track].kind != TRACE_TRACK_HOST_THREAD) {
			js->v[kept++] = *j;
			continue;
		}
		x->t->files[x->file].undecoded_events += j->n_events;
		xp_release_job_pages(j, page);
	}
	js->n = kept;
}

struct memjob {
	const struct job *j;
	struct xp_mems out;
	int rc;
	char *err;
};

static void memory_one(void *items, uint32_t i, void *scratch)
{
	struct memjob *m = &((struct memjob *)items)[i];

	(void)scratch;
	m->rc = xp_memory_job(m->j, &m->out);
	if (m->rc)
		m->err = pg_xstrdup(pg_error_last());
}

/* The allocator samples of the host lines of planes that name allocator
 * events, read (on several threads) before drop_host_jobs can leave their
 * events undecoded; they join the trace in job order, so in file order. */
static int memory_samples(struct xp *x, const struct jobs *js, int threads)
{
	struct memjob *v = NULL;
	uint32_t n = 0;
	uint64_t total = 0;
	int rc = 0;

	for (uint32_t i = 0; i < js->n; i++) {
		const struct job *j = &js->v[i];
		if (!j->x->memory_meta || x->t->tracks[j->track].kind != TRACE_TRACK_HOST_THREAD)
			continue;
		v = pg_xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = (struct memjob){j, {NULL, 0, 0}, 0, NULL};
		total += j->n_events;
	}
	if (n)
		pool_run(v, n, NULL, total >= 100000 ? threads : 1, memory_one);
	for (uint32_t i = 0; i < n; i++) {
		if (v[i].rc && !rc)
			rc = pg_error_set(PG_EFORMAT, "%s", v[i].err);
		for (uint32_t k = 0; !rc && k < v[i].out.n; k++)
			trace_mem_add(x->t, &v[i].out.v[k]);
		free(v[i].out.v);
		free(v[i].err);
	}
	free(v);
	return rc;
}

static void plane_ctx_free(struct xp *pc)
{
	plane_reset(pc);
	free(pc->meta_r.v);
	free(pc->stat_r.v);
	free(pc->smeta_r.v);
	pg_buf_release(&pc->scratch);
	free(pc);
}

/*
 * Planes are scanned for their parts, then every line is counted (on several
 * threads), then each plane is finished in file order -- the trace model sees
 * the same calls in the same order as one pass over the file would make --
 * and last all events are decoded at once.
 */
static int decode_space(struct xp *x, int threads)
{
	struct pb b = {x->base, x->base + x->size}, sub;
	struct ranges planes = {NULL, 0, 0};
	struct xlines xl = {NULL, 0, 0};
	struct jobs js = {NULL, 0, 0};
	struct xp **pcs = NULL;
	uint32_t n_pcs = 0;
	uint32_t f;
	int wt, rc = PG_EFORMAT;

	while (b.p < b.end) {
		if (pb_key(&b, &f, &wt)) {
			xp_corrupt(x, b.p, "bad field key");
			goto out;
		}
		if (wt == 2 && f >= 1 && f <= 4) {
			if (pb_sub(&b, &sub)) {
				xp_corrupt(x, b.p, "length past the end of the file");
				goto out;
			}
			if (f == 1) {
				ranges_add(&planes, &sub);
			} else if (f == 4) {
				x->hostnames = pg_xrealloc(x->hostnames,
							   (x->n_hostnames + 1) * sizeof(char *));
				x->hostnames[x->n_hostnames++] =
				    pg_xstrndup((const char *)sub.p, (size_t)(sub.end - sub.p));
			} else {
				/* profiler errors and warnings recorded in the file */
				trace_warn(x->t, x->file,
					   f == 2 ? "profiler-error" : "profiler-warning", "%.*s",
					   (int)(sub.end - sub.p > 300 ? 300 : sub.end - sub.p),
					   (const char *)sub.p);
			}
		} else if (pb_skip(&b, wt)) {
			xp_corrupt(x, b.p, "bad field");
			goto out;
		}
	}
	if (planes.n == 0) {
		pg_error_set(PG_EFORMAT, "cannot read '%s': not an XPlane: no planes in the file",
			     x->path);
		goto out;
	}
	host_from_path(x);
	/* every plane's metadata is kept alive until all lines are decoded */
	pcs = pg_xcalloc(planes.n, sizeof(*pcs));
	for (uint32_t i = 0; i < planes.n; i++) {
		struct xp *pc = pg_xcalloc(1, sizeof(*pc));
		pc->t = x->t;
		pc->file = x->file;
		pc->path = x->path;
		pc->base = x->base;
		pc->size = x->size;
		pc->release_pages = x->release_pages;
		pc->k_long_name = x->k_long_name;
		pc->lock = x->lock;
		pc->inflated_bytes = x->inflated_bytes;
		pc->inflate_over = x->inflate_over;
		pc->device = UINT32_MAX;
		pg_buf_init(&pc->scratch);
		pcs[n_pcs++] = pc;
		if (scan_plane(pc, &planes.v[i], &xl))
			break; /* reported by plane_finish, after the planes before it */
	}
	count_lines(&xl, threads);
	for (uint32_t i = 0; i < n_pcs; i++)
		if (plane_finish(pcs[i], &xl, &js))
			goto out;
	if (memory_samples(x, &js, threads))
		goto out;
	x->t->files[x->file].host_threads_aside = host_threads_aside(x, pcs, n_pcs, &js);
	if (x->t->host_markers_only && x->t->files[x->file].host_threads_aside)
		drop_host_jobs(x, &js);
	rc = run_jobs(x, &js, threads);
out:
	for (uint32_t i = 0; i < js.n; i++)
		free(js.v[i].err);
	free(js.v);
	xlines_free(&xl);
	for (uint32_t i = 0; i < n_pcs; i++)
		plane_ctx_free(pcs[i]);
	free(pcs);
	free(planes.v);
	return rc;
}

static const char *guess_framework(const struct trace *t, uint32_t file)
{
	for (uint32_t i = 0; i < t->n_tracks; i++) {
		const struct trace_track *tr = &t->tracks[i];
		if (tr->device == UINT32_MAX || t->devices[tr->device].file != file)
			continue;
		const char *n = trace_str_get(t, tr->name);
		/* JAX hosts have tf_pjrt_* threads too: look for TensorFlow's own */
		if (strncmp(n, "TensorFlow ", 11) == 0 || strncmp(n, "tf_Compute", 10) == 0 ||
		    strncmp(n, "tf_data", 7) == 0)
			return "tensorflow";
	}
	return "jax";
}

/* A varint at *p (below end): its value, and *p past it; 0 when cut. */
static int hlo_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t c = *(*p)++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 1;
	}
	return 0;
}

/* Whether the bytes are an HLO proto (XLA's compiled program), which
 * profilers write beside the XPlane (*.hlo_proto.pb): an HloProto's field 1
 * is an HloModuleProto, whose own field 1 is its name (a string); an
 * XSpace's field 1 is an XPlane, whose field 1 is a number (its id). An
 * HloModuleProto alone starts with its name and then its entry computation's
 * (field 2), where an XPlane's bytes are no name. Either would otherwise read
 * as a corrupt XPlane, or as an empty one (unknown fields are skipped). */
static int looks_like_hlo(const uint8_t *p, size_t size)
{
	const uint8_t *end = p + size, *q = p + 1;
	uint64_t len;

	if (size < 3 || p[0] != 0x0a || !hlo_varint(&q, end, &len) || len > (uint64_t)(end - q))
		return 0;
	if (len > 0 && q[0] == 0x0a)
		return 1; /* HloProto { hlo_module { name ... } } */
	for (uint64_t i = 0; i < len; i++)
		if (q[i] < 0x20 || q[i] > 0x7e)
			return 0;
	return len > 0 && q + len < end && q[len] == 0x12; /* name, then entry name */
}

/* Decode the XSpace in [base, base + size); path names the file in messages
 * and gives the host when the XSpace names none. */
static int read_xplane_bytes(struct trace *t, uint32_t file, const char *path, const uint8_t *base,
			     size_t size, int release_pages)
{
	pthread_mutex_t lock;
	uint64_t inflated_bytes = 0;
	int inflate_over = 0;
	struct xp x = {
	    .t = t,
	    .file = file,
	    .path = path,
	    .base = base,
	    .size = size,
	    .release_pages = release_pages,
	    .device = UINT32_MAX,
	    .k_long_name = trace_intern_cstr(t, "long_name"),
	    .scratch = PG_BUF_INIT,
	    .lock = &lock,
	    .inflated_bytes = &inflated_bytes,
	    .inflate_over = &inflate_over,
	};
	int rc;

	if (looks_like_hlo(base, size))
		return pg_error_set(
		    PG_EFORMAT,
		    "cannot read '%s': an HLO module proto (XLA's compiled program, "
		    "no timeline), not an XPlane profile: give the .xplane.pb the "
		    "profiler wrote beside it",
		    path);
	pthread_mutex_init(&lock, NULL);
	t->files[file].format = TRACE_FMT_XPLANE;
	t->files[file].dialect = TRACE_DIALECT_XPLANE;
	t->files[file].content_bytes = x.size;
	rc = decode_space(&x, t->decode_threads > 0 ? t->decode_threads : 1);
	if (!rc && inflate_over)
		rc = pg_error_set(
		    PG_ELIMIT,
		    inflate_over == XP_OVER_ONE
			? "cannot read '%s': a compressed stat string expands past "
			  "%u MiB (the cap of one string)"
			: "cannot read '%s': its compressed stat strings expand past "
			  "%u MiB in all (the cap of a file)",
		    path,
		    (inflate_over == XP_OVER_ONE ? RD_MAX_STRING_BYTES : RD_MAX_INFLATED_BYTES) >>
			20);
	if (!rc) {
		t->files[file].framework = pg_xstrdup(guess_framework(t, file));
		t->files[file].events_kept = 0;
		for (uint32_t i = 0; i < t->n_devices; i++)
			if (t->devices[i].file == file)
				t->files[file].events_kept += t->devices[i].n_events;
		t->files[file].events_kept -= t->files[file].aggregate_events;
	}
	pthread_mutex_destroy(&lock);
	for (uint32_t i = 0; i < x.n_hostnames; i++)
		free(x.hostnames[i]);
	free(x.hostnames);
	pg_buf_release(&x.scratch);
	return rc;
}

int read_xplane_mem(struct trace *t, uint32_t file, const void *data, size_t len)
{
	if (len == 0)
		return pg_error_set(PG_EFORMAT, "cannot read '%s': the file is empty",
				    t->files[file].path);
	return read_xplane_bytes(t, file, t->files[file].path, data, len, 0);
}

int read_xplane(struct trace *t, uint32_t file, const char *path)
{
	struct stat st;
	int fd, rc;
	void *map;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return pg_error_set(PG_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || st.st_size == 0) {
		close(fd);
		return pg_error_set(PG_EFORMAT, "cannot read '%s': the file is empty", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return pg_error_set(PG_EIO, "cannot map '%s': %s", path, strerror(errno));
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	rc = read_xplane_bytes(t, file, path, map, (size_t)st.st_size, 1);
	munmap(map, (size_t)st.st_size);
	return rc;
}
