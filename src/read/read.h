/*
 * read: one reader per profile format. Readers fill the trace model and never
 * analyze. read_path() sniffs the format from the bytes (gzip magic, then the
 * first JSON byte) and hands the file to the right reader.
 */
#ifndef PG_READ_H
#define PG_READ_H

#include <stdint.h>

#include "../trace/trace.h"

/*
 * Read one profile file into t, appending a trace_file record, its devices,
 * tracks and events. On error returns a negative pg_err with the message set
 * ("'<path>': <why> at byte N"), and t holds no partial data of that file.
 */
int read_path(struct trace *t, const char *path) PG_WUR;

/*
 * Read n files on up to `threads` threads, each into its own model, merged
 * into t in input order. dup_of (may be NULL) marks a file whose bytes equal
 * an earlier one: it gets a file record with duplicate_of set and is not
 * read. Returns the number of files that failed; *errors_out (if non-NULL)
 * receives n messages, NULL where the file read fine (caller frees each and
 * the array). With t->want_sha256 and one file, its digest may still be
 * running on return: trace_digests_wait() ends it.
 */
int read_paths(struct trace *t, const char *const *paths, const int32_t *dup_of, uint32_t n,
	       int threads, char ***errors_out);

/* ---- byte input: plain files and gzip streams, pulled in chunks ----------
 * The gzip source inflates on its own thread into a ring of buffers so that
 * inflate and parse overlap on two cores.
 */
struct rd_in {
	const unsigned char *p, *end; /* current chunk */
	const unsigned char *chunk;   /* start of current chunk */
	uint64_t chunk_off;	      /* content offset of chunk[0] */
	int eof;		      /* no more chunks */
	int err;		      /* a source error is pending (message set) */
	int truncated;		      /* gzip stream ended before its trailer */
	uint64_t compressed_bytes;    /* file size on disk */
	struct rd_src *src;
};

int rd_in_open(struct rd_in *in, const char *path) PG_WUR;
/* Bytes already in memory (borrowed until rd_in_close), served in chunks of
 * at most `window` bytes (0: one chunk): for tests and fuzzing, which cut the
 * input at every boundary a reader must survive. Never gzip. */
int rd_in_open_mem(struct rd_in *in, const void *data, size_t len, size_t window) PG_WUR;
/* Fetch the next chunk; 1 = data, 0 = end, <0 = error (message set). */
int rd_in_refill(struct rd_in *in);
void rd_in_close(struct rd_in *in);
int rd_in_is_gzip(const struct rd_in *in);

static inline uint64_t rd_in_offset(const struct rd_in *in)
{
	return in->chunk_off + (uint64_t)(in->p - in->chunk);
}

/* Chrome trace JSON (JAX export, perfetto_trace.json.gz, Kineto, generic). */
int read_chrome_json(struct trace *t, uint32_t file, struct rd_in *in) PG_WUR;

/* XPlane (.xplane.pb), decoded from a read-only mapping of the file. */
int read_xplane(struct trace *t, uint32_t file, const char *path) PG_WUR;
/* The same from bytes in memory (borrowed, never modified; the file record's
 * path names them in messages): for tests and fuzzing. */
int read_xplane_mem(struct trace *t, uint32_t file, const void *data, size_t len) PG_WUR;

/* Shared names: what a line/thread name says a track is; which argument and
 * stat names the model keeps (index into a fixed list, or -1). */
enum trace_track_kind read_track_kind_for_name(const char *name, int on_device);
int read_kept_arg(const char *k, size_t n);
#define READ_KEPT_ARGS 30 /* entries of the kept list (names.c) */
const char *read_kept_arg_name(int i);
/* The xprof tool a file is named as the table of ("kernel_stats" for
 * .../kernel_stats.json[.gz]), or NULL. */
const char *read_xprof_tool(const char *path);
/* s is prefix, then a device index (decimal, 0 to 1000000), then the end of
 * s, or anything when `trailing` allows it: 1 with *out set, else 0. */
int read_parse_index(const char *s, const char *prefix, int trailing, int32_t *out);

/* Hard caps on untrusted input, documented in docs/robustness.md. */
#define RD_MAX_STRING_BYTES (16u << 20) /* one kept JSON string */
#define RD_MAX_DEPTH	    512		/* JSON nesting */
#define RD_MAX_HEADER_BYTES (64u << 20) /* a captured top-level block (deviceProperties) */
/* The distinct strings a file's compressed XPlane stats expand to, in all:
 * zlib expands about 1000 times, so a small file could fill the memory. */
#define RD_MAX_INFLATED_BYTES (256u << 20)
/* The events kept of one file (40 bytes each and their strings); the
 * largest profiles measured hold 15.4M. PROFGATE_MAX_EVENTS sets another. */
#define RD_MAX_FILE_EVENTS (1u << 25)
/* The cap of events kept of the file path into *out; PG_EUSAGE (message
 * set) when PROFGATE_MAX_EVENTS is not a whole number from 1 to 2^32. */
int rd_max_events(const char *path, uint64_t *out) PG_WUR;
/* The refusal of path past that cap: PG_ELIMIT, message set. */
int rd_too_many_events(const char *path, uint64_t cap);

#endif
