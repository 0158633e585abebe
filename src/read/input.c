/*
 * Byte sources for readers: a plain file read in 1 MiB chunks, or a gzip file
 * inflated by a worker thread into a ring of 1 MiB buffers (so inflate and
 * parse run on two cores). Concatenated gzip members are followed; a stream
 * that stops before its trailer is marked truncated, not silently accepted.
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

#define CHUNK (1u << 20)
#define RING  4

struct rd_src {
	int fd;
	char *path;
	int gzip;
	/* plain: a read-only mapping served in windows, or read() into buf */
	unsigned char *buf;
	unsigned char *map;
	size_t map_len, map_pos;
	/* memory (rd_in_open_mem): borrowed bytes served in windows of mem_win */
	int is_mem;
	const unsigned char *mem;
	size_t mem_len, mem_pos, mem_win;
	/* gzip ring */
	struct pg_pool *thread; /* the inflater, one job on one thread */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *ring[RING];
	size_t ring_len[RING];
	unsigned head, tail; /* head: next to consume; tail: next to fill */
	int done;	     /* producer finished */
	int stop;	     /* consumer asks the producer to stop */
	int error;	     /* producer error; message in errmsg */
	int truncated;
	char errmsg[512];
	uint64_t consumed_ring; /* which ring slot the consumer holds, +1 */
};

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

/* Producer: inflate the whole file into ring buffers. */
static void gz_job(void *arg, uint32_t job, void *scratch)
{
	struct rd_src *s = arg;
	unsigned char *inbuf = pg_xmalloc(CHUNK / 4);
	z_stream zs;
	int zrc = Z_OK, ended = 0;
	uint64_t in_total = 0;
	size_t have = 0;

	PG_UNUSED(job);
	PG_UNUSED(scratch);
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK) {
		snprintf(s->errmsg, sizeof(s->errmsg), "cannot start zlib");
		s->error = 1;
		goto finish;
	}
	for (;;) {
		/* take a free slot */
		pthread_mutex_lock(&s->mu);
		while (s->tail - s->head >= RING - 1 && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		int stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
		unsigned slot = s->tail % RING;
		unsigned char *out = s->ring[slot];
		zs.next_out = out;
		zs.avail_out = CHUNK;
		while (zs.avail_out > 0) {
			if (zs.avail_in == 0) {
				if (read_full(s->fd, inbuf, CHUNK / 4, &have) < 0) {
					snprintf(s->errmsg, sizeof(s->errmsg), "read error: %s",
						 strerror(errno));
					s->error = 1;
					break;
				}
				if (have == 0) {
					ended = 1;
					break;
				}
				in_total += have;
				zs.next_in = inbuf;
				zs.avail_in = (uInt)have;
			}
			zrc = inflate(&zs, Z_NO_FLUSH);
			if (zrc == Z_STREAM_END) {
				/* another member may follow; skip zero padding */
				while (zs.avail_in > 0 && zs.next_in[0] == 0) {
					zs.next_in++;
					zs.avail_in--;
				}
				if (zs.avail_in == 0) {
					size_t more = 0;
					if (read_full(s->fd, inbuf, CHUNK / 4, &more) == 0 &&
					    more > 0) {
						in_total += more;
						zs.next_in = inbuf;
						zs.avail_in = (uInt)more;
					}
				}
				if (zs.avail_in == 0) {
					ended = 2;
					break;
				}
				inflateReset(&zs);
				continue;
			}
			if (zrc == Z_BUF_ERROR && zs.avail_in == 0)
				continue;
			if (zrc != Z_OK) {
				uint64_t at = in_total - zs.avail_in;
				snprintf(s->errmsg, sizeof(s->errmsg),
					 "corrupt gzip data at compressed byte %llu (%s)",
					 (unsigned long long)at, zs.msg ? zs.msg : "inflate error");
				s->error = 1;
				break;
			}
		}
		size_t produced = CHUNK - zs.avail_out;
		pthread_mutex_lock(&s->mu);
		if (produced > 0) {
			s->ring_len[slot] = produced;
			s->tail++;
		}
		if (ended == 1)
			s->truncated = 1;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		if (s->error || ended)
			break;
	}
	inflateEnd(&zs);
finish:
	free(inbuf);
	pthread_mutex_lock(&s->mu);
	s->done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

int rd_in_open(struct rd_in *in, const char *path)
{
	struct rd_src *s = pg_xcalloc(1, sizeof(*s));
	struct stat st;
	unsigned char magic[2];
	ssize_t r;

	memset(in, 0, sizeof(*in));
	in->src = s;
	s->fd = open(path, O_RDONLY);
	if (s->fd < 0) {
		int e = errno;
		free(s);
		in->src = NULL;
		return pg_error_set(PG_EIO, "cannot open '%s': %s", path, strerror(e));
	}
	if (fstat(s->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(s->fd);
		free(s);
		in->src = NULL;
		return pg_error_set(PG_EIO, "cannot read '%s': is a directory", path);
	}
	in->compressed_bytes = (uint64_t)st.st_size;
	r = pread(s->fd, magic, 2, 0);
	s->gzip = (r == 2 && magic[0] == 0x1f && magic[1] == 0x8b);
	if (!s->gzip) {
		/* Map regular files: the parser reads the page cache in place (no copy,
		 * no syscall per chunk) and pages behind it are dropped, so memory stays
		 * flat. Anything that cannot be mapped is read in chunks. */
		if (S_ISREG(st.st_mode) && st.st_size > 0) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, s->fd, 0);
			if (m != MAP_FAILED) {
				s->map = m;
				s->map_len = (size_t)st.st_size;
				madvise(m, s->map_len, MADV_SEQUENTIAL);
				return 0;
			}
		}
		s->buf = pg_xmalloc(CHUNK);
		return 0;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	for (int i = 0; i < RING; i++)
		s->ring[i] = pg_xmalloc(CHUNK);
	struct pg_pool_jobs job = {gz_job, s, 1, NULL, 0, NULL};
	if (!(s->thread = pg_pool_start(&job, 1))) {
		rd_in_close(in);
		return pg_error_set(PG_EIO, "cannot start a thread for '%s'", path);
	}
	return 0;
}

int rd_in_open_mem(struct rd_in *in, const void *data, size_t len, size_t window)
{
	struct rd_src *s = pg_xcalloc(1, sizeof(*s));

	memset(in, 0, sizeof(*in));
	in->src = s;
	s->fd = -1;
	s->is_mem = 1;
	s->mem = data;
	s->mem_len = len;
	s->mem_win = window ? window : len;
	in->compressed_bytes = len;
	return 0;
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
	if (s->is_mem) {
		if (s->mem_pos >= s->mem_len) {
			in->chunk = in->p = in->end = s->mem ? s->mem + s->mem_len : NULL;
			in->eof = 1;
			return 0;
		}
		size_t n =
		    s->mem_len - s->mem_pos < s->mem_win ? s->mem_len - s->mem_pos : s->mem_win;
		in->chunk = in->p = s->mem + s->mem_pos;
		in->end = in->p + n;
		s->mem_pos += n;
		return 1;
	}
	if (s->map) {
		size_t win = 4 * CHUNK;
		if (s->map_pos > 0) { /* done with the previous window; never past the map */
			size_t start = s->map_pos - win;
			size_t len = s->map_len - start < win ? s->map_len - start : win;
			len &= ~(size_t)(sysconf(_SC_PAGESIZE) - 1);
			if (len)
				madvise(s->map + start, len, MADV_DONTNEED);
		}
		if (s->map_pos >= s->map_len) {
			in->chunk = in->p = in->end = s->map + s->map_len;
			in->eof = 1;
			return 0;
		}
		size_t n = s->map_len - s->map_pos < win ? s->map_len - s->map_pos : win;
		in->chunk = in->p = s->map + s->map_pos;
		in->end = in->p + n;
		s->map_pos += win;
		return 1;
	}
	if (!s->gzip) {
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
	pthread_mutex_lock(&s->mu);
	if (s->consumed_ring) { /* release the slot we held */
		s->head++;
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
			return pg_error_set(PG_EFORMAT, "%s", s->errmsg);
		}
		in->eof = 1;
		return 0;
	}
	unsigned slot = s->head % RING;
	s->consumed_ring = 1;
	in->chunk = in->p = s->ring[slot];
	in->end = in->p + s->ring_len[slot];
	pthread_mutex_unlock(&s->mu);
	return 1;
}

void rd_in_close(struct rd_in *in)
{
	struct rd_src *s = in->src;

	if (!s)
		return;
	if (s->gzip) {
		if (s->thread) {
			pthread_mutex_lock(&s->mu);
			s->stop = 1;
			pthread_cond_broadcast(&s->cv);
			pthread_mutex_unlock(&s->mu);
			pg_pool_finish(s->thread);
		}
		for (int i = 0; i < RING; i++)
			free(s->ring[i]);
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
	}
	free(s->buf);
	if (s->map)
		munmap(s->map, s->map_len);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	in->src = NULL;
}
