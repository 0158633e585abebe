/*
 * The Chrome JSON reader on more than one core: while the parser works
 * through one chunk of the stream, workers read the events of the chunks
 * after it (rd_in_ahead_start), and the parser takes their events in order
 * when it gets there, finishing each as if it had read it (cj_finish_event).
 * A trace's time is nearly all in reading events (keys, strings, numbers);
 * finishing them (interning, tracks, pairing B/E) stays on the parser's one
 * thread, so the trace is built in file order exactly as without workers.
 *
 * How a worker finds events in a chunk it enters blind: an element of the
 * event array starts at '{' after ',' (white space between, a '"' after),
 * and the worker reads events from the first such place for as long as they
 * parse and are followed by ','. A run of events ends where the chunk does or
 * where one fails, and the worker tries again after it, so a chunk's result
 * is a list of runs, each with its start in the chunk. The guess can be wrong
 * (",{\"" inside a string or an args array), so nothing is believed until the
 * parser, reading on its own, stands at an event's start exactly where a run
 * begins: from there the run's events are what it would have read, since
 * reading an event depends on nothing before it. Where no run fits, the
 * parser reads on by itself; the event that crosses into a chunk is always
 * its own. An event a worker could not finish (cut by the chunk's end, or bad)
 * is read again by the parser, so every error and its byte offset are the
 * parser's.
 *
 * A record is the event's fixed fields, its args (read_kept_arg() indices)
 * and its texts, packed 8-byte aligned in one buffer per chunk; its end
 * offset puts the parser's position where reading the event would have left
 * it, so an error cj_finish_event() gives names the same byte.
 */
#include "chrome_json.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A run: events read one after another from start, in recs from at. */
struct cj_run {
	uint32_t start; /* offset in the chunk of the first event's '{' */
	uint32_t n;	/* events */
	size_t at;	/* offset in recs of the first record */
};

struct cj_scan {
	struct cj_run *runs;
	uint32_t n_runs, cap_runs;
	struct pg_buf recs;
	struct cj_scan *next; /* in the spares */
};

/* Released scans kept for the next chunks: a chunk's records are most of a
 * megabyte, and fresh pages for every chunk cost the kernel's zeroing. */
struct cj_spares {
	pthread_mutex_t mu;
	struct cj_scan *list;
};

enum { REC_TS = 1, REC_DUR = 2, REC_ID = 4, REC_CORR = 8 };
enum { T_NAME, T_CAT, T_PID, T_TID, T_ID, T_VALS, T_COUNT };

struct cj_rec {
	int64_t ts, dur;
	uint64_t corr;
	uint32_t end; /* offset in the chunk just past the event's '}' */
	uint32_t len[T_COUNT];
	uint8_t ph, bits, n_args, table_keys;
	/* then n_args struct argval, then the T_COUNT texts; padded to 8 */
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t rec_size(const struct cj_rec *r)
{
	size_t n = sizeof(*r) + r->n_args * sizeof(struct argval);

	for (int i = 0; i < T_COUNT; i++)
		n += r->len[i] + 1;
	return pad8(n);
}

/* ---- on a worker ---- */

int cj_record(struct cj *c)
{
	struct cj_scan *sc = c->rec;
	const struct pg_buf *txt[T_COUNT] = {&c->name, &c->cat,	   &c->pid,
					     &c->tid,  &c->idtext, &c->vals};
	struct cj_rec r;

	memset(&r, 0, sizeof(r));
	r.ts = c->ts;
	r.dur = c->dur;
	r.corr = c->corr;
	r.end = c->rec_base + (uint32_t)rd_in_offset(c->in);
	r.ph = (uint8_t)c->ph;
	r.bits = (uint8_t)((c->has_ts ? REC_TS : 0) | (c->has_dur ? REC_DUR : 0) |
			   (c->has_id ? REC_ID : 0) | (c->has_corr ? REC_CORR : 0));
	r.n_args = (uint8_t)c->n_args;
	r.table_keys = (uint8_t)c->table_keys;
	for (int i = 0; i < T_COUNT; i++) {
		if (txt[i]->len > UINT32_MAX)
			return PG_EFORMAT; /* the parser reads it itself */
		r.len[i] = (uint32_t)txt[i]->len;
	}
	size_t size = rec_size(&r), at = sc->recs.len;
	if (at + size + 1 > sc->recs.cap)
		pg_buf_grow(&sc->recs, size);
	char *p = sc->recs.ptr + at;
	memcpy(p, &r, sizeof(r));
	p += sizeof(r);
	memcpy(p, c->args, r.n_args * sizeof(struct argval));
	p += r.n_args * sizeof(struct argval);
	for (int i = 0; i < T_COUNT; i++) {
		memcpy(p, txt[i]->ptr, r.len[i]);
		p[r.len[i]] = '\0';
		p += r.len[i] + 1;
	}
	sc->recs.len = at + size;
	sc->runs[sc->n_runs - 1].n++;
	return 0;
}

/* The offset of the next place at or after `from` where an event may start:
 * a '{' after ',' and white space, followed by white space and '"'. */
static size_t next_start(const unsigned char *p, size_t len, size_t from)
{
	for (size_t i = from; i < len; i++) {
		const unsigned char *q = memchr(p + i, ',', len - i);
		if (!q)
			return len;
		size_t j = (size_t)(q - p) + 1;
		while (j < len && is_ws(p[j]))
			j++;
		if (j < len && p[j] == '{') {
			size_t k = j + 1;
			while (k < len && is_ws(p[k]))
				k++;
			if (k < len && p[k] == '"')
				return j;
		}
		i = (size_t)(q - p);
	}
	return len;
}

struct cj_worker {
	struct cj c;
	int ready;
};

static void worker_init(struct cj_worker *w, const struct cj *parser)
{
	struct cj *c = &w->c;

	memset(c, 0, sizeof(*c));
	c->path = parser->path;
	cj_event_bufs_init(c);
	w->ready = 1;
}

static void worker_release(void *arg)
{
	struct cj_worker *w = arg;

	if (w->ready)
		cj_event_bufs_release(&w->c);
}

static void scan_free(struct cj_scan *sc)
{
	free(sc->runs);
	pg_buf_release(&sc->recs);
	free(sc);
}

static void scan_release(void *ctx, void *result)
{
	struct cj_spares *sp = ((struct cj *)ctx)->spares;
	struct cj_scan *sc = result;

	pthread_mutex_lock(&sp->mu);
	sc->next = sp->list;
	sp->list = sc;
	pthread_mutex_unlock(&sp->mu);
}

static struct cj_scan *scan_new(struct cj_spares *sp)
{
	struct cj_scan *sc;

	pthread_mutex_lock(&sp->mu);
	if ((sc = sp->list) != NULL)
		sp->list = sc->next;
	pthread_mutex_unlock(&sp->mu);
	if (!sc) {
		sc = pg_xcalloc(1, sizeof(*sc));
		pg_buf_init(&sc->recs);
	}
	sc->n_runs = 0;
	sc->recs.len = 0;
	return sc;
}

/* One run from start: events while they parse and a ',' follows. Returns
 * where the worker stopped, and sets *last at the chunk's end. A ']' ends a
 * run but not the scan: the run may have been a guess inside an args array. */
static size_t scan_run(struct cj *c, struct cj_scan *sc, const unsigned char *chunk, size_t len,
		       size_t start, int *last)
{
	struct rd_in in;
	size_t stop;

	if (sc->n_runs == sc->cap_runs) {
		sc->cap_runs = sc->cap_runs ? 2 * sc->cap_runs : 4;
		sc->runs = pg_xrealloc(sc->runs, sc->cap_runs * sizeof(*sc->runs));
	}
	sc->runs[sc->n_runs++] = (struct cj_run){(uint32_t)start, 0, sc->recs.len};
	if (rd_in_open_mem(&in, chunk + start, len - start, 0))
		return len;
	c->in = &in;
	c->rec = sc;
	c->rec_base = (uint32_t)start;
	for (;;) {
		c->table_keys = 0;
		if (cj_parse_event(c))
			break;
		if (skip_ws(c) != ',')
			break;
		in.p++;
	}
	stop = start + rd_in_offset(&in);
	*last = stop >= len;
	rd_in_close(&in);
	c->in = NULL;
	if (sc->runs[sc->n_runs - 1].n == 0)
		sc->n_runs--;
	return stop;
}

static void *scan_chunk(void *ctx, void *worker, const unsigned char *chunk, size_t len)
{
	struct cj_worker *w = worker;
	struct cj_scan *sc = scan_new(((struct cj *)ctx)->spares);
	size_t at = 0;
	int last = 0;

	if (len > UINT32_MAX) /* offsets are 32-bit; chunks are a few MiB */
		len = UINT32_MAX;
	if (!w->ready)
		worker_init(w, ctx);
	while (!last && (at = next_start(chunk, len, at)) < len) {
		size_t stop = scan_run(&w->c, sc, chunk, len, at, &last);
		at = stop > at ? stop : at + 1;
	}
	if (sc->n_runs == 0) {
		scan_release(ctx, sc);
		return NULL;
	}
	return sc;
}

/* ---- on the parser ---- */

void cj_ahead_start(struct cj *c)
{
	c->ahead = (struct rd_ahead){scan_chunk, scan_release, c, sizeof(struct cj_worker),
				     worker_release};
	c->scan_chunk = UINT64_MAX;
	c->spares = pg_xcalloc(1, sizeof(*c->spares));
	pthread_mutex_init(&c->spares->mu, NULL);
	c->ahead_on = rd_in_ahead_start(c->in, &c->ahead, 0);
}

void cj_ahead_stop(struct cj *c)
{
	if (c->ahead_on)
		rd_in_ahead_stop(c->in); /* every scan is back among the spares */
	c->ahead_on = 0;
	c->scan = NULL;
	if (!c->spares)
		return;
	while (c->spares->list) {
		struct cj_scan *sc = c->spares->list;
		c->spares->list = sc->next;
		scan_free(sc);
	}
	pthread_mutex_destroy(&c->spares->mu);
	free(c->spares);
	c->spares = NULL;
}

/* Record r into c's per-event fields, as reading the event would have left
 * them: the texts are the record's own (cj_finish_event only reads them). */
static void load(struct cj *c, const struct cj_rec *r)
{
	struct pg_buf *txt[T_COUNT] = {&c->name, &c->cat, &c->pid, &c->tid, &c->idtext, &c->vals};
	char *p = (char *)(uintptr_t)(r + 1);

	c->ph = r->ph;
	c->ts = r->ts;
	c->dur = r->dur;
	c->corr = r->corr;
	c->has_ts = !!(r->bits & REC_TS);
	c->has_dur = !!(r->bits & REC_DUR);
	c->has_id = !!(r->bits & REC_ID);
	c->has_corr = !!(r->bits & REC_CORR);
	c->table_keys |= r->table_keys;
	c->n_args = r->n_args;
	memcpy(c->args, p, r->n_args * sizeof(struct argval));
	p += r->n_args * sizeof(struct argval);
	for (int i = 0; i < T_COUNT; i++) {
		txt[i]->ptr = p;
		txt[i]->len = r->len[i];
		txt[i]->cap = r->len[i] + 1;
		p += r->len[i] + 1;
	}
}

int cj_ahead_take(struct cj *c)
{
	struct rd_in *in = c->in;

	if (skip_ws(c) < 0 || c->index == 0)
		return 0;
	if (in->chunk_off != c->scan_chunk) {
		c->scan_chunk = in->chunk_off;
		c->scan = rd_in_ahead_result(in);
		c->scan_run = 0;
	}
	const struct cj_scan *sc = c->scan;
	if (!sc)
		return 0;
	uint32_t here = (uint32_t)(in->p - in->chunk);
	while (c->scan_run < sc->n_runs && sc->runs[c->scan_run].start < here)
		c->scan_run++;
	if (c->scan_run == sc->n_runs || sc->runs[c->scan_run].start != here)
		return 0;
	const struct cj_run *run = &sc->runs[c->scan_run++];
	const char *p = sc->recs.ptr + run->at;
	/* the parser's own buffers stand aside while the records stand in */
	struct pg_buf own[T_COUNT] = {c->name, c->cat, c->pid, c->tid, c->idtext, c->vals};
	int rc = 0;
	for (uint32_t i = 0; i < run->n && !rc; i++) {
		const struct cj_rec *r = (const struct cj_rec *)(const void *)p;
		load(c, r);
		in->p = in->chunk + r->end;
		if ((rc = cj_finish_event(c)) == 0)
			c->index++;
		p += rec_size(r);
	}
	c->name = own[T_NAME];
	c->cat = own[T_CAT];
	c->pid = own[T_PID];
	c->tid = own[T_TID];
	c->idtext = own[T_ID];
	c->vals = own[T_VALS];
	if (rc)
		return PG_EFORMAT;
	c->t->files[c->file].entries_ahead += run->n;
	return (int)run->n;
}
