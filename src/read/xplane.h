/*
 * The XPlane reader's private state and the functions its two files share:
 * xplane.c walks the file (planes, lines, the decode jobs and their threads),
 * xplane_decode.c decodes what the walk found (stat and event metadata, plane
 * stats, events). The protobuf wire format is inline here: every field of
 * every event goes through it.
 */
#ifndef PG_READ_XPLANE_H
#define PG_READ_XPLANE_H

#include "read.h"

#include <pthread.h>
#include <string.h>

#define MAX_EVENT_ARGS 24
#define DENSE_IDS      (1u << 20) /* metadata ids below this use direct tables */

struct pb {
	const uint8_t *p, *end;
};

/* A field's key as one varint value: hot loops switch on it directly. */
#define PB_KEY(field, wt) (((uint64_t)(field) << 3) | (wt))

enum stat_kind {
	STAT_OTHER,
	STAT_KEEP,
	STAT_CORR,
	STAT_DEV_OFFSET,
	STAT_DEV_DURATION,
	STAT_GROUP_ID,
};

/* The stats of allocator events (MemoryAllocation / MemoryDeallocation). */
enum xp_mem_stat { XP_MEM_NONE, XP_MEM_ALLOCATED, XP_MEM_RESERVED, XP_MEM_INDEX, XP_MEM_ALLOCATOR };

struct statinfo {
	trace_str name;
	trace_str key; /* interned kept name, or 0 */
	enum stat_kind kind;
	enum xp_mem_stat mem; /* what it says in an allocator event */
};

struct evmeta {
	trace_str name;		   /* display_name if set, else name */
	trace_str long_name;	   /* name, when display_name was used */
	uint32_t args_off, n_args; /* kept metadata stats in x->margs */
	uint32_t argset;	   /* interned set for events with no kept stats of their own */
	int set, has_argset;
	int memory; /* MemoryAllocation / MemoryDeallocation: an allocator sample */
};

struct range {
	const uint8_t *p, *end;
};

struct ranges {
	struct range *v;
	uint32_t n, cap;
};

struct xp {
	struct trace *t;
	uint32_t file;
	const char *path;
	const uint8_t *base;
	size_t size;
	int release_pages; /* the bytes are a file mapping: drop pages once decoded */

	/* per plane */
	int64_t plane_id;
	char *plane_name;
	struct statinfo *stats; /* dense by id */
	uint32_t n_stats;
	struct pg_u64map stat_sparse;
	struct statinfo *stats_sparse;
	uint32_t n_stats_sparse, cap_stats_sparse;
	struct evmeta *evm; /* dense by id */
	uint32_t n_evm;
	struct pg_u64map evm_sparse;
	struct evmeta *evm_sparse_v;
	uint32_t n_evm_sparse, cap_evm_sparse;
	struct trace_arg *margs;
	uint32_t n_margs, cap_margs;
	struct pg_u64map lines; /* line id -> track */
	uint32_t device;
	int no_device; /* metadata and Task Environment planes: lines only counted */
	struct ranges meta_r, stat_r;
	struct ranges smeta_r;	      /* stat metadata, decoded in wire order after the scan */
	uint32_t first_line, n_lines; /* its lines in the file's list */
	char *scan_err;		      /* the scan stopped here (after smeta_r) */
	trace_str k_long_name, k_group_id;
	int marker_meta; /* its metadata names a step-marker stat or event (trace_is_marker_*) */
	int memory_meta; /* its metadata names an allocator event (evmeta.memory) */

	/* file */
	char **hostnames;
	uint32_t n_hostnames;
	uint64_t plane_events;
	struct pg_buf scratch;
	pthread_mutex_t *lock; /* interning while lines decode on several threads */
	/* the file's, shared by its planes: the bytes of the new strings its
	 * compressed stats expanded to (under lock), and whether a cap was passed
	 * (XP_OVER_ONE: one string over RD_MAX_STRING_BYTES, XP_OVER_ALL: all of
	 * them over RD_MAX_INFLATED_BYTES; atomic) */
	uint64_t *inflated_bytes;
	int *inflate_over;
};
#define XP_OVER_ONE 1
#define XP_OVER_ALL 2

/* Events per decode job: longer lines are split, so threads share them. */
#define LINE_CHUNK (1u << 16)

/*
 * One XLine, walked on a worker thread before anything is decoded: its events
 * are counted and skipped by length, and the header fields around them read
 * (display_name follows the events on the wire). Every LINE_CHUNK-th event's
 * start is marked, so the line decodes as several jobs.
 */
struct xline {
	struct xp *x; /* its plane */
	const uint8_t *p, *end;
	uint64_t n_events;
	int64_t id, ts_ns;
	struct pb name;	       /* display_name if set, else name; {NULL, NULL} if neither */
	const uint8_t **marks; /* marks[k - 1]: where event k * LINE_CHUNK starts */
	uint32_t n_marks, cap_marks;
	int rc;
	char *err;
};

struct xlines {
	struct xline *v;
	uint32_t n, cap;
};

/* A run of a line's events to decode: its bytes, track and event slots;
 * results merged after. */
struct job {
	struct xp *x; /* its plane */
	const uint8_t *p, *end;
	uint32_t track;
	int64_t ts_ns;
	int steps_line;
	uint64_t n_events, first; /* slots [first, first + n_events) */
	/* results */
	uint64_t n_aggregate;
	int64_t first_ns, last_ns;
	int rc;
	char *err;
};

struct jobs {
	struct job *v;
	uint32_t n, cap;
};

/* xplane.c: PG_EFORMAT, with the message naming the byte */
int xp_corrupt(struct xp *x, const uint8_t *at, const char *what);

/* xplane_decode.c */
int xp_decode_stat_metadata(struct xp *x, struct pb *entry);
int xp_decode_event_metadata(struct xp *x, const struct range *r);
uint32_t xp_plane_device(struct xp *x, const char *name);
int xp_decode_plane_stats(struct xp *x, int is_task_env);
uint32_t xp_line_track(struct xp *x, int64_t line_id, const char *name, size_t name_n);
void xp_release_job_pages(const struct job *j, size_t page);
void xp_decode_job(struct job *shared, struct pg_buf *scratch, size_t page);
/* The allocator samples of one host job, appended to *out (the caller's). */
struct xp_mems {
	struct trace_mem *v;
	uint32_t n, cap;
};
int xp_memory_job(const struct job *j, struct xp_mems *out);

/* ---- wire format (inline: every field of every event goes through it) ---- */

/* The 7-bit groups of a varint's bytes (little-endian in w, zero past its
 * last byte), packed together: pairs, then quads, then halves. */
static inline uint64_t varint_pack(uint64_t w)
{
	w &= 0x7f7f7f7f7f7f7f7fULL;
	w = (w & 0x007f007f007f007fULL) | ((w & 0x7f007f007f007f00ULL) >> 1);
	w = (w & 0x00003fff00003fffULL) | ((w & 0x3fff00003fff0000ULL) >> 2);
	return (w & 0x000000000fffffffULL) | ((w & 0x0fffffff00000000ULL) >> 4);
}

static inline int pb_varint(struct pb *b, uint64_t *out)
{
	const uint8_t *p = b->p;
	uint64_t v;

	/* most keys, lengths, ids and small values are one byte */
	if (p < b->end && *p < 0x80) {
		*out = *p;
		b->p = p + 1;
		return 0;
	}
	/* then one 8-byte load: the first clear top bit ends the varint; the
	 * bytes up to it are kept by a mask and their 7-bit groups packed */
	if (b->end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		uint64_t stop = ~w & 0x8080808080808080ULL;
		if (stop) {
			b->p = p + ((__builtin_ctzll(stop) + 1) >> 3);
			*out = varint_pack(w & (stop ^ (stop - 1)));
			return 0;
		}
	}
	v = 0;
	for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
		uint8_t c = *b->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static inline int pb_key(struct pb *b, uint32_t *field, int *wt)
{
	uint64_t k;

	if (pb_varint(b, &k) || (k >> 3) == 0 || (k >> 3) > 0x1fffffff)
		return -1;
	*field = (uint32_t)(k >> 3);
	*wt = (int)(k & 7);
	return 0;
}

static inline int pb_sub(struct pb *b, struct pb *sub)
{
	uint64_t n;

	if (pb_varint(b, &n) || n > (uint64_t)(b->end - b->p))
		return -1;
	sub->p = b->p;
	sub->end = b->p + n;
	b->p += n;
	return 0;
}

static inline int pb_skip(struct pb *b, int wt)
{
	uint64_t v;
	struct pb sub;

	switch (wt) {
	case 0: return pb_varint(b, &v);
	case 1:
		if (b->end - b->p < 8)
			return -1;
		b->p += 8;
		return 0;
	case 2: return pb_sub(b, &sub);
	case 5:
		if (b->end - b->p < 4)
			return -1;
		b->p += 4;
		return 0;
	default: return -1; /* groups (3, 4) are not in XPlane; 6, 7 are invalid */
	}
}

#endif
