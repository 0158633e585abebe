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
 * With threads other than 1, the gzip source inflates on its own thread into a
 * ring of buffers so that inflate and parse overlap on two cores; with 1, each
 * refill inflates on the caller's thread. ISA-L inflates when the build has it
 * (PG_ISAL), zlib otherwise, with the same bytes and messages (input.c).
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

int rd_in_open(struct rd_in *in, const char *path, int threads) PG_WUR;
/* rd_in_open, and with hash a gzip file's SHA-256 taken from its bytes as they
 * are read (input.c); other sources do not hash. */
int rd_in_open_hashing(struct rd_in *in, const char *path, int threads, int hash) PG_WUR;
/* Once the reader is done with the stream (only rd_in_close may follow): the
 * hex SHA-256 of the whole file, hashing what was left unread, and 1; 0 when
 * the source does not hash (hash it yourself); PG_EIO on a read error. */
int rd_in_sha256(struct rd_in *in, const char *path, char hex[65]) PG_WUR;
/* Bytes already in memory (borrowed until rd_in_close), served in chunks of
 * at most `window` bytes (0: one chunk): for tests and fuzzing, which cut the
 * input at every boundary a reader must survive. Never gzip. */
int rd_in_open_mem(struct rd_in *in, const void *data, size_t len, size_t window) PG_WUR;
/* The same on up to `threads` threads: rd_in_ahead_start may scan its
 * windows ahead of the reader (tests cut the input at every boundary). */
int rd_in_open_mem_threads(struct rd_in *in, const void *data, size_t len, size_t window,
			   int threads) PG_WUR;

/*
 * Look-ahead: a reader whose format allows it hands each chunk after the
 * first to `workers` threads as the source makes it, and later takes what the
 * scan made of a chunk when it gets there. A scan sees one chunk's bytes only
 * (the source keeps them until the reader has moved past the chunk and the
 * scan has returned), so it is speculative: the reader must check that the
 * result fits where it stands. Only where the input may use several threads
 * (a threaded gzip stream, a mapped file, threaded memory); 1 when started.
 */
struct rd_ahead {
	/* On a worker: what the reader makes of chunk[0..len), owned by the
	 * source until release(); NULL for nothing. worker: the thread's
	 * scratch_size zeroed bytes, given to scratch_release at the end. */
	void *(*scan)(void *ctx, void *worker, const unsigned char *chunk, size_t len);
	void (*release)(void *ctx, void *result);
	void *ctx;
	size_t scratch_size;
	void (*scratch_release)(void *worker);
};
/* Before the first read only; workers 0: as many as the opener's threads
 * (none with one). `ahead` and its ctx must outlive the workers (rd_in_ahead_stop). */
int rd_in_ahead_start(struct rd_in *in, const struct rd_ahead *ahead, int workers);
/* The scan of the chunk the reader is in (none for the first), waiting
 * until a worker has made it; NULL for none. Valid until the reader leaves
 * the chunk. */
void *rd_in_ahead_result(struct rd_in *in);
/* Stop the workers and release every scan (rd_in_close does it too): before
 * `ahead` or its ctx goes away. */
void rd_in_ahead_stop(struct rd_in *in);

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
#define READ_KEPT_ARGS 34 /* entries of the kept list (names.c) */
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
