/*
 * Byte sources for readers: a plain file served from a read-only mapping (or
 * read in 1 MiB chunks), bytes in memory, or a gzip file inflated into 1 MiB
 * buffers.
 *
 * Gzip: Intel's ISA-L inflates (isal_inflate, about ten times zlib's speed)
 * when the build has it (PG_ISAL, the Makefile's ISAL=1), zlib otherwise.
 * Concatenated members are followed and zero padding between them skipped; a
 * stream that stops before its trailer is marked truncated, not silently
 * accepted. The two builds give the same bytes and the same messages for every
 * file but one kind of corrupt one (below): ISA-L takes only members that start
 * with the gzip magic and set no reserved flag (ISA-L ignores those, zlib
 * refuses them), and when it cannot finish one (corrupt data, a bad trailer, a
 * cut file), zlib inflates that member again from its first byte, passes over
 * the bytes ISA-L already delivered, and what zlib makes and says from there
 * stands. The member's bytes not yet delivered are taken back first: on some
 * data zlib refuses (a match reaching before the member's start, a code set
 * zlib finds invalid) ISA-L makes bytes before it fails. Bytes of such a member
 * already handed to the parser, in an earlier 1 MiB chunk, stay: there the
 * builds fail alike (the file is corrupt) but may say so differently.
 * Everything else after a member (a zlib stream, garbage) goes to zlib as it
 * comes.
 *
 * Pipeline: when the file may use more than one thread, a worker inflates into
 * a ring of RING buffers ahead of the parser, so inflate and parse run on two
 * cores and memory stays bounded (the worker waits for a free buffer); with one
 * thread, each refill inflates the next buffer on the parser's own thread.
 *
 * Hashing (rd_in_open_hashing): a gzip file's SHA-256 is taken from the
 * compressed bytes as they are read for the inflater, while they are in the
 * cache, instead of by a second pass over the file. Only reads that continue
 * the bytes hashed so far are hashed (zlib reading a member again after ISA-L
 * gave up is not), and rd_in_sha256 hashes the rest of the file from where
 * that stopped, so the digest is the whole file's however the read ended.
 *
 * Look-ahead (rd_in_ahead_start): a reader may also have its chunks scanned
 * before it gets to them, by a pool of workers that take each chunk after the
 * first as the source makes it: ring buffers, windows of a mapped file, or of
 * memory. A chunk stays put while a worker scans it and until the reader has
 * left it; a scan's result lives in the slot of its chunk's index modulo
 * AHEAD_SLOTS, which bounds how far the workers run ahead (and so memory).
 */
#include "read.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#if PG_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define CHUNK	 (1u << 20)
#define GZ_INBUF (CHUNK / 4)
/* Inflated chunks the gzip worker may hold: the parser's, the ones the
 * look-ahead workers scan, and room to run ahead of both. */
#define RING (AHEAD_SLOTS)
/* How far look-ahead workers may run past the parser's chunk, in chunks. */
#define AHEAD_SLOTS 16
/* Plain files are served from their mapping in windows of this size. */
#define MAP_WIN (4 * CHUNK)

/* A chunk's look-ahead scan, in the slot of its index modulo AHEAD_SLOTS. */
enum { SLOT_EMPTY, SLOT_RUNNING, SLOT_DONE };
struct ahead_slot {
	uint64_t seq; /* the chunk the slot is for */
	int state;
	void *result; /* SLOT_DONE: the scan's, owned here until released */
};

/* How a gzip inflate step or fill ends. */
enum { GZ_MORE, GZ_END, GZ_TRUNCATED, GZ_ERROR };

/* One gzip stream: its input, the member being inflated and the inflaters. */
struct gz {
	int fd;
	unsigned char *inbuf;	      /* GZ_INBUF bytes read from fd */
	const unsigned char *next_in; /* the input not yet inflated... */
	size_t avail_in;	      /* ...and its length */
	uint64_t in_pos;	      /* file offset just past the bytes read */
	int in_eof;		      /* read() said end of file */
	int in_member;		      /* a member is being inflated */
	int member_zlib;	      /* ...by zlib (else by ISA-L) */
	uint64_t member_at;	      /* file offset of the member's first byte */
	uint64_t member_out;	      /* bytes of the member delivered */
	uint64_t skip;		      /* bytes zlib makes again that were delivered */
	unsigned char *scratch;	      /* CHUNK bytes to make the skipped ones in */
	z_stream zs;
	int zs_ready;
	int hashing;	 /* sha holds the file's bytes up to hashed */
	uint64_t hashed; /* file offset just past the bytes hashed */
	struct pg_sha256_evp sha;
#if PG_ISAL
	struct inflate_state *isal;
#endif
	char errmsg[512];
};

struct rd_src {
	int fd;
	int gzip;
	/* plain: a read-only mapping served in windows, or read() into buf */
	unsigned char *buf;
	unsigned char *map;
	size_t map_len, map_pos;
	/* memory (rd_in_open_mem): borrowed bytes served in windows of mem_win */
	int is_mem;
	const unsigned char *mem;
	size_t mem_len, mem_pos, mem_win;
	/* gzip: inflated into ring buffers, by the worker or by refill itself */
	struct gz gz;
	int gz_end;		/* serial: how the stream ended (GZ_*), GZ_MORE before */
	struct pg_pool *thread; /* the inflater, one job on one thread; NULL: serial */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *ring[RING]; /* allocated as the inflater first fills them */
	size_t ring_len[RING];
	uint64_t head, tail; /* head: next to consume; tail: next to fill */
	int done;	     /* producer finished */
	int stop;	     /* the consumer asks the producer and workers to stop */
	int error;	     /* producer error; message in gz.errmsg */
	int truncated;
	uint64_t consumed_ring; /* which ring slot the consumer holds, +1 */
	/* look-ahead (rd_in_ahead_start) */
	int threads;	/* what the opener allowed */
	uint64_t held;	/* 1 + the index of the chunk the consumer holds, or takes next once
			   it has left one; 0 before the first */
	uint64_t n_win; /* mem and map: how many chunks they are served in */
	const struct rd_ahead *ahead;
	int ahead_quit;	     /* the workers are to stop */
	uint64_t ahead_next; /* the next chunk a worker takes */
	struct pg_pool *ahead_pool;
	struct ahead_slot slots[AHEAD_SLOTS];
};

static void ahead_release_locked(struct rd_src *s);

static int read_full(int fd, unsigned char *buf, size_t cap, size_t *got)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*got = n;
	return 0;
}

/* ---- gzip ---- */

/* Read more input behind the bytes not yet inflated (moved to the front). */
static int gz_read(struct gz *g)
{
	size_t got = 0;

	if (g->in_eof)
		return 0;
	memmove(g->inbuf, g->next_in, g->avail_in);
	if (read_full(g->fd, g->inbuf + g->avail_in, GZ_INBUF - g->avail_in, &got) < 0) {
		snprintf(g->errmsg, sizeof(g->errmsg), "read error: %s", strerror(errno));
		return -1;
	}
	if (g->hashing && g->in_pos == g->hashed) {
		/* only bytes that continue the hashed ones: what zlib reads again
		 * after gz_redo_with_zlib, and anything past it, rd_in_sha256 reads */
		pg_sha256_evp_update(&g->sha, g->inbuf + g->avail_in, got);
		g->hashed += got;
	}
	g->next_in = g->inbuf;
	g->avail_in += got;
	g->in_pos += got;
	g->in_eof = got == 0;
	return 0;
}

static uint64_t gz_in_offset(const struct gz *g)
{
	return g->in_pos - g->avail_in;
}

static void gz_start_zlib(struct gz *g)
{
	inflateReset(&g->zs);
	g->member_zlib = 1;
}

/* Between members: skip zero padding and start the next member, ISA-L's when
 * it begins with the gzip magic and flags that ISA-L reads as zlib does.
 * GZ_MORE: a member starts; GZ_END: the file ends; GZ_ERROR: a read error
 * (message set). */
static int gz_member_start(struct gz *g)
{
	for (;;) {
		while (g->avail_in > 0 && g->next_in[0] == 0) {
			g->next_in++;
			g->avail_in--;
		}
		if (g->avail_in >= 4 || (g->avail_in > 0 && g->in_eof))
			break;
		if (g->in_eof)
			return GZ_END;
		if (gz_read(g) < 0)
			return GZ_ERROR;
	}
	g->in_member = 1;
	g->member_at = gz_in_offset(g);
	g->member_out = 0;
	g->skip = 0;
#if PG_ISAL
	/* ISA-L ignores the flag bits RFC 1952 reserves, which zlib refuses */
	if (g->avail_in >= 4 && g->next_in[0] == 0x1f && g->next_in[1] == 0x8b &&
	    (g->next_in[3] & 0xe0) == 0) {
		isal_inflate_reset(g->isal);
		g->isal->crc_flag = ISAL_GZIP;
		g->member_zlib = 0;
		return GZ_MORE;
	}
#endif
	gz_start_zlib(g);
	return GZ_MORE;
}

/* Inflate the input at hand into out[0, cap): bytes made in *made. GZ_MORE:
 * the input is used up or out is full; GZ_END: the member's trailer was read;
 * GZ_ERROR: corrupt (zlib: message set). */
static int gz_step(struct gz *g, unsigned char *out, size_t cap, size_t *made)
{
#if PG_ISAL
	if (!g->member_zlib) {
		struct inflate_state *st = g->isal;
		st->next_in = (uint8_t *)g->next_in;
		st->avail_in = (uint32_t)g->avail_in;
		st->next_out = out;
		st->avail_out = (uint32_t)cap;
		int r = isal_inflate(st);
		*made = cap - st->avail_out;
		g->next_in = st->next_in;
		g->avail_in = st->avail_in;
		if (r != ISAL_DECOMP_OK)
			return GZ_ERROR;
		return st->block_state == ISAL_BLOCK_FINISH ? GZ_END : GZ_MORE;
	}
#endif
	g->zs.next_in = (Bytef *)g->next_in;
	g->zs.avail_in = (uInt)g->avail_in;
	g->zs.next_out = out;
	g->zs.avail_out = (uInt)cap;
	int zrc = inflate(&g->zs, Z_NO_FLUSH);
	*made = cap - g->zs.avail_out;
	g->next_in = g->zs.next_in;
	g->avail_in = g->zs.avail_in;
	if (zrc == Z_STREAM_END)
		return GZ_END;
	if (zrc == Z_OK || zrc == Z_BUF_ERROR)
		return GZ_MORE;
	snprintf(g->errmsg, sizeof(g->errmsg), "corrupt gzip data at compressed byte %llu (%s)",
		 (unsigned long long)gz_in_offset(g), g->zs.msg ? g->zs.msg : "inflate error");
	return GZ_ERROR;
}

/* ISA-L could not finish the member: zlib inflates it again from its first
 * byte and passes over the member_out bytes already delivered. */
static int gz_redo_with_zlib(struct gz *g)
{
	if (lseek(g->fd, (off_t)g->member_at, SEEK_SET) < 0) {
		snprintf(g->errmsg, sizeof(g->errmsg), "read error: %s", strerror(errno));
		return -1;
	}
	g->in_pos = g->member_at;
	g->next_in = g->inbuf;
	g->avail_in = 0;
	g->in_eof = 0;
	g->skip = g->member_out;
	if (!g->scratch)
		g->scratch = pg_xmalloc(CHUNK);
	gz_start_zlib(g);
	return 0;
}

/*
 * Fill out[0, cap) with the next inflated bytes: *got of them, fewer than cap
 * only where the stream ends. Returns GZ_MORE while there may be more,
 * GZ_END at a clean end, GZ_TRUNCATED when the input ends inside a member,
 * GZ_ERROR (message in g->errmsg); the *got bytes come before that end.
 */
static int gz_fill(struct gz *g, unsigned char *out, size_t cap, size_t *got)
{
	size_t n = 0;
	int rc = GZ_MORE;

	while (n < cap) {
		if (!g->in_member && (rc = gz_member_start(g)) != GZ_MORE)
			break;
		if (g->avail_in == 0 && gz_read(g) < 0) {
			rc = GZ_ERROR;
			break;
		}
		size_t made = 0, before = g->avail_in;
		if (g->skip > 0) {
			rc = gz_step(g, g->scratch, g->skip < CHUNK ? (size_t)g->skip : CHUNK,
				     &made);
			g->skip -= made;
		} else {
			rc = gz_step(g, out + n, cap - n, &made);
			n += made;
			g->member_out += made;
		}
		if (rc == GZ_END) {
			g->in_member = 0;
			rc = GZ_MORE;
			continue;
		}
		/* no progress: more input, unless there is none */
		int starved = 0;
		if (rc == GZ_MORE && made == 0 && g->avail_in == before) {
			if (!g->in_eof && g->avail_in < GZ_INBUF && gz_read(g) < 0) {
				rc = GZ_ERROR;
				break;
			}
			starved = g->avail_in == before;
		}
		if ((rc == GZ_ERROR || starved) && !g->member_zlib) {
			/* ISA-L makes bytes of data zlib refuses before it fails
			 * (a match reaching before the member's start, a code
			 * set zlib finds invalid): the member's bytes still in
			 * out are taken back, and zlib makes them again or not */
			size_t back = g->member_out < n ? (size_t)g->member_out : n;
			n -= back;
			g->member_out -= back;
			if (gz_redo_with_zlib(g) < 0) {
				rc = GZ_ERROR;
				break;
			}
			rc = GZ_MORE;
			continue;
		}
		if (rc == GZ_ERROR)
			break;
		if (starved) {
			rc = GZ_TRUNCATED;
			break;
		}
	}
	*got = n;
	return rc;
}

static int gz_init(struct gz *g, int fd)
{
	memset(g, 0, sizeof(*g));
	g->fd = fd;
	g->inbuf = pg_xmalloc(GZ_INBUF);
	g->next_in = g->inbuf;
	if (inflateInit2(&g->zs, 15 + 32) != Z_OK)
		return -1;
	g->zs_ready = 1;
#if PG_ISAL
	g->isal = pg_xmalloc(sizeof(*g->isal));
	isal_inflate_init(g->isal);
#endif
	return 0;
}

static void gz_release(struct gz *g)
{
	if (g->zs_ready)
		inflateEnd(&g->zs);
	pg_sha256_evp_free(&g->sha);
#if PG_ISAL
	free(g->isal);
#endif
	free(g->scratch);
	free(g->inbuf);
	memset(g, 0, sizeof(*g));
}

/* Producer: inflate the whole file into ring buffers. */
static void gz_job(void *arg, uint32_t job, void *scratch)
{
	struct rd_src *s = arg;
	int rc = GZ_MORE;

	PG_UNUSED(job);
	PG_UNUSED(scratch);
	while (rc == GZ_MORE) {
		/* take a free slot */
		pthread_mutex_lock(&s->mu);
		while (s->tail - s->head >= RING - 1 && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		int stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
		unsigned slot = (unsigned)(s->tail % RING);
		size_t produced = 0;
		if (!s->ring[slot])
			s->ring[slot] = pg_xmalloc(CHUNK);
		rc = gz_fill(&s->gz, s->ring[slot], CHUNK, &produced);
		pthread_mutex_lock(&s->mu);
		if (produced > 0) {
			s->ring_len[slot] = produced;
			s->tail++;
		}
		s->truncated = rc == GZ_TRUNCATED;
		s->error = rc == GZ_ERROR;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	pthread_mutex_lock(&s->mu);
	s->done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* Serial refill: inflate the next buffer here. */
static int gz_refill_serial(struct rd_in *in, struct rd_src *s)
{
	size_t got = 0;

	if (s->gz_end == GZ_MORE)
		s->gz_end = gz_fill(&s->gz, s->ring[0], CHUNK, &got);
	in->chunk = in->p = s->ring[0];
	in->end = in->p + got;
	if (got > 0)
		return 1;
	in->chunk = in->p = in->end = NULL;
	in->truncated = s->gz_end == GZ_TRUNCATED;
	if (s->gz_end == GZ_ERROR) {
		in->err = 1;
		return pg_error_set(PG_EFORMAT, "%s", s->gz.errmsg);
	}
	in->eof = 1;
	return 0;
}

static int gz_refill_ring(struct rd_in *in, struct rd_src *s)
{
	pthread_mutex_lock(&s->mu);
	if (s->consumed_ring) { /* release the slot we held */
		ahead_release_locked(s);
		s->head++;
		s->held = s->head + 1; /* no worker may take the chunk left */
		s->consumed_ring = 0;
		pthread_cond_broadcast(&s->cv);
	}
	while (s->head == s->tail && !s->done)
		pthread_cond_wait(&s->cv, &s->mu);
	if (s->head == s->tail) {
		int err = s->error;
		in->truncated = s->truncated;
		pthread_mutex_unlock(&s->mu);
		in->chunk = in->p = in->end = NULL;
		if (err) {
			in->err = 1;
			return pg_error_set(PG_EFORMAT, "%s", s->gz.errmsg);
		}
		in->eof = 1;
		return 0;
	}
	unsigned slot = (unsigned)(s->head % RING);
	s->consumed_ring = 1;
	s->held = s->head + 1;
	in->chunk = in->p = s->ring[slot];
	in->end = in->p + s->ring_len[slot];
	pthread_mutex_unlock(&s->mu);
	return 1;
}

static int gz_open(struct rd_in *in, struct rd_src *s, const char *path, int threads, int hash)
{
	if (gz_init(&s->gz, s->fd) < 0) {
		rd_in_close(in);
		return pg_error_set(PG_EIO, "cannot read '%s': cannot start zlib", path);
	}
	if (hash) {
		if (pg_sha256_evp_init(&s->gz.sha, path)) {
			rd_in_close(in);
			return PG_EIO;
		}
		s->gz.hashing = 1;
	}
	if (threads == 1) {
		s->ring[0] = pg_xmalloc(CHUNK);
		return 0;
	}
	struct pg_pool_jobs job = {gz_job, s, 1, NULL, 0, NULL};
	if (!(s->thread = pg_pool_start(&job, 1))) {
		rd_in_close(in);
		return pg_error_set(PG_EIO, "cannot start a thread for '%s'", path);
	}
	return 0;
}

/* ---- look-ahead ---- */

/* Chunk i's bytes, when the source has made it: 1, 0 when not yet, -1 when
 * there is no chunk i. Called with s->mu held. */
static int ahead_chunk(struct rd_src *s, uint64_t i, const unsigned char **p, size_t *len)
{
	if (s->gzip) {
		if (i >= s->tail)
			return s->done ? -1 : 0;
		*p = s->ring[i % RING];
		*len = s->ring_len[i % RING];
		return 1;
	}
	if (i >= s->n_win)
		return -1;
	const unsigned char *base = s->map ? s->map : s->mem;
	size_t total = s->map ? s->map_len : s->mem_len, win = s->map ? MAP_WIN : s->mem_win;
	*p = base + i * win;
	*len = total - i * win < win ? total - i * win : win;
	return 1;
}

/*
 * A look-ahead worker (each of the pool's jobs is one): takes the next chunk
 * not yet taken (chunk 0 is the parser's), when the source has made it and it
 * is less than AHEAD_SLOTS past the parser's chunk, and scans it, unless the
 * parser has already passed it. Chunks are taken in order by whichever worker
 * is free, so however many of the pool's threads started, every chunk the
 * parser waits for (rd_in_ahead_result) is taken.
 */
static void ahead_job(void *arg, uint32_t w, void *scratch)
{
	struct rd_src *s = arg;

	PG_UNUSED(w);
	for (;;) {
		const unsigned char *p = NULL;
		size_t len = 0;
		int have = 0;
		uint64_t i;

		pthread_mutex_lock(&s->mu);
		while (!s->ahead_quit && (have = ahead_chunk(s, s->ahead_next, &p, &len)) >= 0 &&
		       !(have && s->ahead_next + 1 < s->held + AHEAD_SLOTS))
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->ahead_quit || have < 0) {
			pthread_mutex_unlock(&s->mu);
			return;
		}
		i = s->ahead_next++;
		if (i + 1 < s->held) { /* passed */
			pthread_mutex_unlock(&s->mu);
			continue;
		}
		struct ahead_slot *sl = &s->slots[i % AHEAD_SLOTS];
		sl->seq = i;
		sl->state = SLOT_RUNNING;
		sl->result = NULL;
		pthread_mutex_unlock(&s->mu);

		void *r = s->ahead->scan(s->ahead->ctx, scratch, p, len);

		pthread_mutex_lock(&s->mu);
		sl->result = r;
		sl->state = SLOT_DONE;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
}

/* The consumer leaves the chunk it holds: its scan, if any, ends and is
 * released. Called with s->mu held. */
static void ahead_release_locked(struct rd_src *s)
{
	if (!s->ahead || s->held == 0)
		return;
	uint64_t c = s->held - 1;
	struct ahead_slot *sl = &s->slots[c % AHEAD_SLOTS];

	if (sl->seq != c)
		return;
	while (sl->state == SLOT_RUNNING)
		pthread_cond_wait(&s->cv, &s->mu);
	if (sl->state == SLOT_DONE && sl->result)
		s->ahead->release(s->ahead->ctx, sl->result);
	sl->result = NULL;
	sl->state = SLOT_EMPTY;
	sl->seq = UINT64_MAX;
}

int rd_in_ahead_start(struct rd_in *in, const struct rd_ahead *ahead, int workers)
{
	struct rd_src *s = in->src;

	if (workers == 0) /* as many as the threads: the parser mostly waits on them */
		workers = s && s->threads > 1 ? s->threads : 0;
	if (!s || s->ahead || workers < 1 || s->threads == 1 || s->held > 0 ||
	    (s->gzip ? !s->thread : !(s->map || s->is_mem)))
		return 0;
	for (int i = 0; i < AHEAD_SLOTS; i++)
		s->slots[i].seq = UINT64_MAX;
	s->ahead_next = 1;
	s->ahead = ahead;
	struct pg_pool_jobs job = {
	    ahead_job, s, (uint32_t)workers, NULL, ahead->scratch_size, ahead->scratch_release};
	if (!(s->ahead_pool = pg_pool_start(&job, workers))) {
		s->ahead = NULL;
		return 0;
	}
	return 1;
}

void *rd_in_ahead_result(struct rd_in *in)
{
	struct rd_src *s = in->src;
	void *r = NULL;

	if (!s || !s->ahead || s->held < 2)
		return NULL;
	uint64_t c = s->held - 1;
	struct ahead_slot *sl = &s->slots[c % AHEAD_SLOTS];
	pthread_mutex_lock(&s->mu);
	while (!s->ahead_quit && (sl->seq != c || sl->state == SLOT_RUNNING))
		pthread_cond_wait(&s->cv, &s->mu);
	if (sl->seq == c && sl->state == SLOT_DONE)
		r = sl->result;
	pthread_mutex_unlock(&s->mu);
	return r;
}

/* mem and map: the consumer moves to the next chunk. */
static void ahead_advance(struct rd_src *s)
{
	if (!s->ahead) {
		s->held++;
		return;
	}
	pthread_mutex_lock(&s->mu);
	ahead_release_locked(s);
	s->held++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* Raise a stop flag the source's threads wait on, and join them. */
static void stop_pool(struct rd_src *s, int *flag, struct pg_pool *pool)
{
	pthread_mutex_lock(&s->mu);
	*flag = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pg_pool_finish(pool);
}

/* Stop the workers and release what they made. */
static void ahead_stop(struct rd_src *s)
{
	if (!s->ahead)
		return;
	stop_pool(s, &s->ahead_quit, s->ahead_pool);
	for (int i = 0; i < AHEAD_SLOTS; i++)
		if (s->slots[i].state == SLOT_DONE && s->slots[i].result)
			s->ahead->release(s->ahead->ctx, s->slots[i].result);
	s->ahead = NULL;
}

void rd_in_ahead_stop(struct rd_in *in)
{
	if (in->src)
		ahead_stop(in->src);
}

/* ---- opening, refilling, closing ---- */

static struct rd_src *src_new(int threads)
{
	struct rd_src *s = pg_xcalloc(1, sizeof(*s));

	s->fd = -1;
	s->threads = threads;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	return s;
}

static void src_free(struct rd_src *s)
{
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

int rd_in_open_hashing(struct rd_in *in, const char *path, int threads, int hash)
{
	struct rd_src *s = src_new(threads);
	struct stat st;
	unsigned char magic[2];
	ssize_t r;

	memset(in, 0, sizeof(*in));
	in->src = s;
	s->fd = open(path, O_RDONLY);
	if (s->fd < 0) {
		int e = errno;
		src_free(s);
		in->src = NULL;
		return pg_error_set(PG_EIO, "cannot open '%s': %s", path, strerror(e));
	}
	if (fstat(s->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(s->fd);
		src_free(s);
		in->src = NULL;
		return pg_error_set(PG_EIO, "cannot read '%s': is a directory", path);
	}
	in->compressed_bytes = (uint64_t)st.st_size;
	r = pread(s->fd, magic, 2, 0);
	s->gzip = (r == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
	if (s->gzip)
		return gz_open(in, s, path, threads, hash);
	/* Map regular files: the parser reads the page cache in place (no copy,
	 * no syscall per chunk) and pages behind it are dropped, so memory stays
	 * flat. Anything that cannot be mapped is read in chunks. */
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, s->fd, 0);
		if (m != MAP_FAILED) {
			s->map = m;
			s->map_len = (size_t)st.st_size;
			s->n_win = (s->map_len + MAP_WIN - 1) / MAP_WIN;
			madvise(m, s->map_len, MADV_SEQUENTIAL);
			return 0;
		}
	}
	s->buf = pg_xmalloc(CHUNK);
	return 0;
}

int rd_in_open(struct rd_in *in, const char *path, int threads)
{
	return rd_in_open_hashing(in, path, threads, 0);
}

int rd_in_sha256(struct rd_in *in, const char *path, char hex[65])
{
	struct rd_src *s = in->src;
	struct gz *g = s ? &s->gz : NULL;

	if (!s || !s->gzip || !g->hashing)
		return 0;
	if (s->thread) { /* the inflater may be reading still: it stops first */
		stop_pool(s, &s->stop, s->thread);
		s->thread = NULL;
	}
	for (;;) {
		ssize_t r = pread(g->fd, g->inbuf, GZ_INBUF, (off_t)g->hashed);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return pg_error_set(PG_EIO, "cannot read '%s': %s", path, strerror(errno));
		if (r == 0)
			break;
		pg_sha256_evp_update(&g->sha, g->inbuf, (size_t)r);
		g->hashed += (uint64_t)r;
	}
	g->hashing = 0;
	pg_sha256_evp_hex(&g->sha, hex);
	return 1;
}

int rd_in_open_mem_threads(struct rd_in *in, const void *data, size_t len, size_t window,
			   int threads)
{
	struct rd_src *s = src_new(threads);

	memset(in, 0, sizeof(*in));
	in->src = s;
	s->is_mem = 1;
	s->mem = data;
	s->mem_len = len;
	s->mem_win = window ? window : len;
	s->n_win = s->mem_win ? (len + s->mem_win - 1) / s->mem_win : 0;
	in->compressed_bytes = len;
	return 0;
}

int rd_in_open_mem(struct rd_in *in, const void *data, size_t len, size_t window)
{
	return rd_in_open_mem_threads(in, data, len, window, 1);
}

int rd_in_is_gzip(const struct rd_in *in)
{
	return in->src && in->src->gzip;
}

int rd_in_refill(struct rd_in *in)
{
	struct rd_src *s = in->src;

	if (in->eof || in->err)
		return in->err ? PG_EFORMAT : 0;
	in->chunk_off += (uint64_t)(in->end - in->chunk);
	if (s->gzip)
		return s->thread ? gz_refill_ring(in, s) : gz_refill_serial(in, s);
	if (s->is_mem) {
		if (s->mem_pos >= s->mem_len) {
			in->chunk = in->p = in->end = s->mem ? s->mem + s->mem_len : NULL;
			in->eof = 1;
			return 0;
		}
		size_t n =
		    s->mem_len - s->mem_pos < s->mem_win ? s->mem_len - s->mem_pos : s->mem_win;
		ahead_advance(s);
		in->chunk = in->p = s->mem + s->mem_pos;
		in->end = in->p + n;
		s->mem_pos += n;
		return 1;
	}
	if (s->map) {
		ahead_advance(s);     /* no worker is on the previous window, or will be */
		if (s->map_pos > 0) { /* done with the previous window; never past the map */
			size_t start = s->map_pos - MAP_WIN;
			size_t len = s->map_len - start < MAP_WIN ? s->map_len - start : MAP_WIN;
			len &= ~(size_t)(sysconf(_SC_PAGESIZE) - 1);
			if (len)
				madvise(s->map + start, len, MADV_DONTNEED);
		}
		if (s->map_pos >= s->map_len) {
			in->chunk = in->p = in->end = s->map + s->map_len;
			in->eof = 1;
			return 0;
		}
		size_t n = s->map_len - s->map_pos < MAP_WIN ? s->map_len - s->map_pos : MAP_WIN;
		in->chunk = in->p = s->map + s->map_pos;
		in->end = in->p + n;
		s->map_pos += MAP_WIN;
		return 1;
	}
	size_t got = 0;
	if (read_full(s->fd, s->buf, CHUNK, &got) < 0) {
		in->err = 1;
		return pg_error_set(PG_EIO, "read error: %s", strerror(errno));
	}
	in->chunk = in->p = s->buf;
	in->end = s->buf + got;
	if (got == 0)
		in->eof = 1;
	return got > 0;
}

void rd_in_close(struct rd_in *in)
{
	struct rd_src *s = in->src;

	if (!s)
		return;
	ahead_stop(s);
	if (s->gzip) {
		if (s->thread)
			stop_pool(s, &s->stop, s->thread);
		for (int i = 0; i < RING; i++)
			free(s->ring[i]);
		gz_release(&s->gz);
	}
	free(s->buf);
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	src_free(s);
	in->src = NULL;
}
