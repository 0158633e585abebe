/*
 * util: the small shared pieces every stage uses: errors, an arena, a growable
 * byte buffer, a deterministic JSON writer, hashing and number formatting.
 * Nothing here knows about profiles.
 */
#ifndef PG_UTIL_H
#define PG_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PG_UNUSED(x)	((void)(x))
#define PG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#if defined(__GNUC__)
#define PG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define PG_WUR		__attribute__((warn_unused_result))
#else
#define PG_PRINTF(f, a)
#define PG_WUR
#endif

/* ---- errors -------------------------------------------------------------
 * Modules return 0 or a negative pg_err. The message is set once, where the
 * problem is found, and read by the command layer with pg_error_last(). The
 * message is per thread so readers on worker threads do not clobber each other.
 */
enum pg_err {
	PG_OK = 0,
	PG_ENOMEM = -1,
	PG_EIO = -2,	 /* cannot open or read a file */
	PG_EFORMAT = -3, /* the bytes are not what they claim to be */
	PG_EUNSUPP = -4, /* a known format profgate does not read */
	PG_EUSAGE = -5,	 /* bad flags or arguments */
	PG_ELIMIT = -6,	 /* a hard size or depth cap was hit */
	PG_ENOTFOUND = -7,
	PG_EDELIVERY = -8, /* a remote refused or could not be reached after retries */
};

int pg_error_set(int code, const char *fmt, ...) PG_PRINTF(2, 3);
/* src as one line for a terminal: control bytes become \n, \t, \xNN and
 * bidirectional controls \uNNNN, cut to fit cap (NUL included). Returns the
 * length written. pg_error_set() passes every message through it. */
size_t pg_sanitize_line(char *dst, size_t cap, const char *src);
const char *pg_error_last(void);
void pg_error_clear(void);

/* The one way a module speaks on stderr while it works (a retry, a fallback
 * it takes): pg_log writes the line (no prefix added), registered secrets
 * redacted, made one line as pg_sanitize_line() does. pg_progress rewrites
 * the current terminal line in place ("\r" and the text, no newline);
 * pg_progress_end ends it. pg_progress_set_quiet(1) (-q/--quiet) makes
 * pg_progress print nothing. */
void pg_log(const char *fmt, ...) PG_PRINTF(1, 2);
void pg_progress(const char *fmt, ...) PG_PRINTF(1, 2);
void pg_progress_end(void);
void pg_progress_set_quiet(int quiet);

/*
 * The secrets this process holds (tokens, API keys), so that no message can
 * carry one whatever a server echoed into it: pg_error_set() replaces each
 * with "***" before the message is kept. pg_secret_add copies s; NULL and
 * strings under 4 bytes are ignored (they would redact ordinary words); at
 * most PG_MAX_SECRETS are kept. Thread-safe.
 */
#define PG_MAX_SECRETS 16
void pg_secret_add(const char *s);
/* Replace every registered secret in s (NUL-terminated, in place) by "***". */
void pg_secret_redact(char *s);
/* 1 when s holds a registered secret. */
int pg_secret_in(const char *s);

/* x as an integer when it is one exactly, within +-2^53 (what a JSON number
 * holds without loss): 1 and *out set; else 0 (NaN, infinite, fractional,
 * huge: casting those is undefined behaviour). */
int pg_whole(double x, int64_t *out);

/* Replace every string of the NULL-terminated list secrets (NULL: none) found
 * in s (NUL-terminated, in place) by "***"; strings under 4 bytes are skipped.
 * The one redaction loop: pg_secret_redact() runs it over the registered
 * secrets, and callers holding a secret of their own over theirs. */
void pg_redact(char *s, const char *const *secrets);

/* Exit codes of the CLI (docs/cli.md "Exit codes"). Only ever appended to. */
enum pg_exit {
	PG_EXIT_OK = 0,
	PG_EXIT_FAIL = 1,
	PG_EXIT_USAGE = 2,
	PG_EXIT_INPUT = 3,
	PG_EXIT_INCOMPARABLE = 4,
	PG_EXIT_DELIVERY = 5,
	/* out of memory: EX_OSERR of sysexits.h, the system could not give a
	 * resource; nothing to do with the input, so never 3 */
	PG_EXIT_NOMEM = 71,
};

/* The exit code of a module's error where the command has no other say:
 * 0 for 0, PG_EUSAGE 2, PG_ENOMEM PG_EXIT_NOMEM, any other 3 (a delivery
 * failure is 5 only where docs/cli.md "Exit codes" says so: the command decides). */
int pg_exit_code(int err);

/* Allocation that never returns NULL: out of memory is reported ("profgate:
 * out of memory allocating N bytes") and the process exits PG_EXIT_NOMEM. */
void *pg_xmalloc(size_t n);
void *pg_xcalloc(size_t n, size_t size);
void *pg_xrealloc(void *p, size_t n);
char *pg_xstrdup(const char *s);
char *pg_xstrndup(const char *s, size_t n);
/* printf into a new string (free() it). */
char *pg_xasprintf(const char *fmt, ...) PG_PRINTF(1, 2);
char *pg_xvasprintf(const char *fmt, va_list ap) PG_PRINTF(1, 0);
/* The out-of-memory exit itself, for an allocation made some other way (a
 * library's) that failed; n is the size asked for, 0 when unknown. */
_Noreturn void pg_oom(size_t n);

/* ---- arena --------------------------------------------------------------
 * Bump allocator for per-file data freed all at once. Build with
 * -DPG_DEBUG_ARENA to send each allocation to malloc so ASan sees it.
 */
struct pg_arena {
	struct pg_arena_block *head;
	size_t block_size;
	size_t total_bytes;
#ifdef PG_DEBUG_ARENA
	void **debug_ptrs;
	size_t debug_n, debug_cap;
#endif
};

void pg_arena_init(struct pg_arena *a, size_t block_size);
void *pg_arena_alloc(struct pg_arena *a, size_t n);
char *pg_arena_strndup(struct pg_arena *a, const char *s, size_t n);
void pg_arena_release(struct pg_arena *a);

/* ---- buffer -------------------------------------------------------------
 * Growable bytes, always NUL-terminated, never NULL after init.
 */
struct pg_buf {
	char *ptr;
	size_t len, cap;
};
#define PG_BUF_INIT                                                                                \
	{                                                                                          \
		pg_buf_empty, 0, 0                                                                 \
	}
extern char pg_buf_empty[];

void pg_buf_init(struct pg_buf *b);
void pg_buf_grow(struct pg_buf *b, size_t extra);
void pg_buf_add(struct pg_buf *b, const void *p, size_t n);
void pg_buf_addc(struct pg_buf *b, char c);
void pg_buf_adds(struct pg_buf *b, const char *s);
void pg_buf_addf(struct pg_buf *b, const char *fmt, ...) PG_PRINTF(2, 3);
void pg_buf_reset(struct pg_buf *b);
/* Append p[0, n) as one gzip member at zlib's level (0-9), as gzip writes it
 * with no name and no time; 0, or -1 when zlib fails (b as before). */
int pg_buf_add_gzip(struct pg_buf *b, const void *p, size_t n, int level);
/* Append s (NULL: nothing) made one terminal line as pg_sanitize_line() does:
 * for names from profiles and files printed to stdout or stderr. */
void pg_buf_add_line(struct pg_buf *b, const char *s);
/* The same into b, emptied first; returns b->ptr. */
const char *pg_line(struct pg_buf *b, const char *s);
void pg_buf_release(struct pg_buf *b);
/* Hand the bytes to the caller (free() them); b is left empty. */
char *pg_buf_detach(struct pg_buf *b, size_t *len_out);

/* ---- JSON writer --------------------------------------------------------
 * Deterministic output: keys in the order written, integers as integers,
 * doubles with a fixed format. Pretty-printed with two-space indent.
 */
struct pg_json {
	struct pg_buf *out;
	int depth;
	int need_comma[64];
	int after_key;
	int pretty;
};

void pg_json_init(struct pg_json *j, struct pg_buf *out, int pretty);
void pg_json_obj_begin(struct pg_json *j);
void pg_json_obj_end(struct pg_json *j);
void pg_json_arr_begin(struct pg_json *j);
void pg_json_arr_end(struct pg_json *j);
void pg_json_key(struct pg_json *j, const char *key);
void pg_json_str(struct pg_json *j, const char *s);
void pg_json_strn(struct pg_json *j, const char *s, size_t n);
void pg_json_int(struct pg_json *j, int64_t v);
void pg_json_uint(struct pg_json *j, uint64_t v);
void pg_json_double(struct pg_json *j, double v, int decimals);
void pg_json_bool(struct pg_json *j, int v);
void pg_json_null(struct pg_json *j);
/* An object member, key and value in one call. */
void pg_json_kv_str(struct pg_json *j, const char *key, const char *s);
void pg_json_kv_int(struct pg_json *j, const char *key, int64_t v);
void pg_json_kv_uint(struct pg_json *j, const char *key, uint64_t v);
/* A value already in JSON form (a number's text), written as is. */
void pg_json_raw(struct pg_json *j, const char *text);
/* Append s as a JSON string literal (quotes included) to b; bytes that are not
 * UTF-8 become U+FFFD, so the output is always valid JSON text. */
void pg_json_escape(struct pg_buf *b, const char *s, size_t n);

/* ---- u64 -> u32 map -----------------------------------------------------
 * Open addressing; UINT32_MAX is "absent". Iteration order is not defined:
 * never let output depend on it.
 */
struct pg_u64map {
	uint64_t *keys;
	uint32_t *vals;
	uint32_t n, cap;
};
void pg_u64map_put(struct pg_u64map *m, uint64_t key, uint32_t val);
uint32_t pg_u64map_get(const struct pg_u64map *m, uint64_t key);
void pg_u64map_release(struct pg_u64map *m);

/* ---- sha256 ---------------------------------------------------------------*/
struct pg_sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t n;
};
void pg_sha256_init(struct pg_sha256 *s);
void pg_sha256_update(struct pg_sha256 *s, const void *p, size_t n);
void pg_sha256_hex(struct pg_sha256 *s, char out[65]);
/* sha256 of a file's bytes as hex, through OpenSSL as pg_md5_file (digest.c);
 * 0 or PG_EIO with the message set. */
int pg_sha256_file(const char *path, char out[65]) PG_WUR;
/* The same digest fed piece by piece through OpenSSL (a file's bytes as a
 * reader reads them: digest.c): _hex writes it and frees the context, _free
 * frees it unwritten (free of a context never started is a no-op). */
struct pg_sha256_evp {
	void *ctx; /* EVP_MD_CTX */
};
/* path, when given, is what an error names */
int pg_sha256_evp_init(struct pg_sha256_evp *h, const char *path) PG_WUR;
void pg_sha256_evp_update(struct pg_sha256_evp *h, const void *p, size_t n);
void pg_sha256_evp_hex(struct pg_sha256_evp *h, char out[65]);
void pg_sha256_evp_free(struct pg_sha256_evp *h);

/* ---- md5, base64, hex (digest.c) ----------------------------------------
 * MD5 through libcrypto (W&B manifests carry base64 MD5 digests).
 */
struct pg_md5 {
	void *ctx; /* EVP_MD_CTX */
};
int pg_md5_init(struct pg_md5 *m) PG_WUR;
void pg_md5_update(struct pg_md5 *m, const void *p, size_t n);
/* Write the digest and free the context. */
void pg_md5_final(struct pg_md5 *m, unsigned char out[16]);
int pg_md5(const void *p, size_t n, unsigned char out[16]) PG_WUR;
/* MD5 of a file's bytes and its length; 0 or PG_EIO with the message set. */
int pg_md5_file(const char *path, unsigned char out[16], uint64_t *bytes) PG_WUR;
/* Standard base64 with padding, appended to out. */
void pg_base64_encode(struct pg_buf *out, const void *data, size_t n);
/* Strict decode (padding required, no whitespace) into out (at most cap
 * bytes); 0, or -1 when s is not base64 or does not fit. */
int pg_base64_decode(const char *s, unsigned char *out, size_t cap, size_t *n_out) PG_WUR;
/* Lowercase hex of n bytes into out (2n + 1 chars). */
void pg_hex(char *out, const unsigned char *p, size_t n);

/* ---- folders (fs.c) -------------------------------------------------------*/
/* The cache root: PROFGATE_CACHE_DIR, else $XDG_CACHE_HOME/profgate, else
 * ~/.cache/profgate, else /tmp/profgate-<uid>. Returns a string to free(). */
char *pg_cache_dir(void);
/* mkdir -p; 0 or PG_EIO with the message set. */
int pg_mkdir_p(const char *path, unsigned mode) PG_WUR;
/* A small file's whole bytes appended to out: path "-" is standard input
 * when flags hold PG_READ_STDIN. 0; PG_EIO when it cannot be opened or read
 * ("cannot read 'PATH': why"; errno is left saying why, so a caller may word
 * it its own way); PG_ELIMIT when it holds more than cap bytes ("'PATH' is
 * larger than CAP bytes"; errno 0). A directory is refused, and a regular
 * file's size is checked before any byte is read. */
#define PG_READ_STDIN 1u
int pg_read_small(const char *path, size_t cap, unsigned flags, struct pg_buf *out) PG_WUR;

/* ---- misc ---------------------------------------------------------------*/
/* qsort comparators: doubles (NaN equal to everything, as before), int64_t,
 * uint32_t, and strcmp over an array of char pointers. */
int pg_cmp_double(const void *a, const void *b);
int pg_cmp_i64(const void *a, const void *b);
int pg_cmp_u32(const void *a, const void *b);
int pg_cmp_str(const void *a, const void *b);
/* s as a whole decimal number from min to max: ASCII digits with an optional
 * leading '-', nothing else (no space, no '+', no suffix), no overflow. 0 and
 * *out set, or -1 and *out untouched; no message is set (the caller names the
 * option). */
int pg_parse_int(const char *s, int64_t min, int64_t max, int64_t *out) PG_WUR;
uint64_t pg_hash(const void *p, size_t n);
/* Microseconds from nanoseconds, as text with three decimals: "12.345". */
void pg_fmt_us(char *out, size_t cap, int64_t ns);
/* ---- cleanup.c: what a signal must not leave behind ---- */

/* Handlers for SIGINT, SIGTERM and SIGHUP (not one the parent ignores) that
 * remove the registered paths and end the process by the signal. */
void pg_cleanup_install(void);
/* Register a file (dir 0) or an empty folder (dir 1) to remove if a signal
 * ends the process; the slot to drop once it is gone or kept, -1 when none is
 * free (the path is then left to chance). */
int pg_cleanup_add(const char *path, int dir);
void pg_cleanup_drop(int slot);

/* Write a whole regular file through a temporary name and rename, so a reader
 * never sees a partial file (nor, when a signal ends the process, a left
 * temporary one). A path that is a device, a FIFO or a symlink is
 * written through in place instead (the rename would replace the node). */
int pg_write_file_atomic(const char *path, const void *data, size_t n) PG_WUR;
/* The length of the well-formed UTF-8 sequence at s (1 to 4, at most n
 * bytes), or 0 when the bytes there are not one (a stray continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, cut short). */
size_t pg_utf8_seq(const unsigned char *s, size_t n);
#define PG_UTF8_REPLACEMENT "\xef\xbf\xbd" /* U+FFFD, for bytes that are not UTF-8 */

/* ---- natural merge sort -------------------------------------------------*/
/*
 * PG_SORT_RUNS(name, T, C, before) defines `static void name(T *v, uint32_t
 * n, C ctx)`: v sorted, stably, so that before(ctx, x, y) (x sorts before y)
 * holds between no later element and an earlier one. It merges the ascending
 * runs v already has in one pass: one move per element, and comparisons that
 * grow with the log of how many runs overlap at a place, not of how many
 * there are. A run joins the merge's heap only when its first (and least)
 * element is next: the runs wait on a second heap by their first elements.
 * The lists it serves (a device's leaves, step ids, a host thread's events)
 * come in runs that each overlap a few others (Kineto writes each kind of
 * event in order, step after step), where qsort paid n log n with a call per
 * comparison. A macro, so that each element type gets its comparison inlined.
 *
 * PG_SORT_RUNS_AHEAD(name, T, C, before, ahead) is the same sort that also
 * calls ahead(ctx, x) on the element PG_SORT_AHEAD places down the run whose
 * head was just taken: for elements that only refer to what is compared (an
 * index into a large table), ahead can prefetch it before the merge reaches it.
 */
#define PG_SORT_AHEAD			 8
#define PG_SORT_NO_AHEAD_(ctx, x)	 ((void)(ctx), (void)(x))
#define PG_SORT_RUNS(name, T, C, before) PG_SORT_RUNS_AHEAD(name, T, C, before, PG_SORT_NO_AHEAD_)
#define PG_SORT_RUNS_AHEAD(name, T, C, before, ahead)                                              \
	/* run a's head before run b's, the earlier run first on a tie */                          \
	static inline int name##_less_(const T *v, const uint32_t *pos, uint32_t a, uint32_t b,    \
				       C ctx)                                                      \
	{                                                                                          \
		return before(ctx, v[pos[a]], v[pos[b]]) ||                                        \
		       (!before(ctx, v[pos[b]], v[pos[a]]) && a < b);                              \
	}                                                                                          \
	static void name##_sift_(const T *v, const uint32_t *pos, uint32_t *heap, uint32_t hn,     \
				 uint32_t i, C ctx)                                                \
	{                                                                                          \
		for (;;) {                                                                         \
			uint32_t l = 2 * i + 1, m = i;                                             \
			if (l < hn && name##_less_(v, pos, heap[l], heap[m], ctx))                 \
				m = l;                                                             \
			if (l + 1 < hn && name##_less_(v, pos, heap[l + 1], heap[m], ctx))         \
				m = l + 1;                                                         \
			if (m == i)                                                                \
				return;                                                            \
			uint32_t t_ = heap[i];                                                     \
			heap[i] = heap[m];                                                         \
			heap[m] = t_;                                                              \
			i = m;                                                                     \
		}                                                                                  \
	}                                                                                          \
	static void name##_up_(const T *v, const uint32_t *pos, uint32_t *heap, uint32_t i, C ctx) \
	{                                                                                          \
		while (i > 0) {                                                                    \
			uint32_t up = (i - 1) / 2;                                                 \
			if (!name##_less_(v, pos, heap[i], heap[up], ctx))                         \
				return;                                                            \
			uint32_t t_ = heap[i];                                                     \
			heap[i] = heap[up];                                                        \
			heap[up] = t_;                                                             \
			i = up;                                                                    \
		}                                                                                  \
	}                                                                                          \
	static void name(T *v, uint32_t n, C ctx)                                                  \
	{                                                                                          \
		uint32_t *pos = pg_xmalloc(((size_t)n + 2) * sizeof(uint32_t)), k = 0;             \
		pos[k++] = 0;                                                                      \
		for (uint32_t i = 1; i < n; i++)                                                   \
			if (before(ctx, v[i], v[i - 1]))                                           \
				pos[k++] = i;                                                      \
		if (k < 2) {                                                                       \
			free(pos);                                                                 \
			return;                                                                    \
		}                                                                                  \
		uint32_t *end = pg_xmalloc((size_t)k * sizeof(uint32_t));                          \
		uint32_t *heap = pg_xmalloc((size_t)k * sizeof(uint32_t)), hn = 0;                 \
		uint32_t *wait = pg_xmalloc((size_t)k * sizeof(uint32_t)), wn = k;                 \
		T *out = pg_xmalloc((size_t)n * sizeof(T));                                        \
		for (uint32_t r = 0; r < k; r++) {                                                 \
			end[r] = r + 1 < k ? pos[r + 1] : n;                                       \
			wait[r] = r;                                                               \
		}                                                                                  \
		for (uint32_t i = wn / 2; i-- > 0;)                                                \
			name##_sift_(v, pos, wait, wn, i, ctx);                                    \
		for (uint32_t o = 0; o < n; o++) {                                                 \
			/* a waiting run whose first comes before the merge's next joins it */     \
			while (wn && (!hn || name##_less_(v, pos, wait[0], heap[0], ctx))) {       \
				heap[hn] = wait[0];                                                \
				name##_up_(v, pos, heap, hn++, ctx);                               \
				wait[0] = wait[--wn];                                              \
				name##_sift_(v, pos, wait, wn, 0, ctx);                            \
			}                                                                          \
			uint32_t r = heap[0];                                                      \
			if (pos[r] + PG_SORT_AHEAD < end[r])                                       \
				ahead(ctx, v[pos[r] + PG_SORT_AHEAD]);                             \
			out[o] = v[pos[r]++];                                                      \
			if (pos[r] == end[r])                                                      \
				heap[0] = heap[--hn];                                              \
			name##_sift_(v, pos, heap, hn, 0, ctx);                                    \
		}                                                                                  \
		memcpy(v, out, (size_t)n * sizeof(T));                                             \
		free(out);                                                                         \
		free(wait);                                                                        \
		free(heap);                                                                        \
		free(end);                                                                         \
		free(pos);                                                                         \
	}

/* ---- pool: jobs on threads (pool.c) -------------------------------------*/
/* Every thread profgate starts runs through here. Job i of n runs once, on
 * whichever thread takes it, with that thread's scratch: scratch_size zeroed
 * bytes (none when 0), given to scratch_release after the thread's last job. */
struct pg_pool_jobs {
	void (*run)(void *ctx, uint32_t job, void *scratch);
	void *ctx;
	uint32_t n;
	const uint32_t *order; /* the order jobs are taken in, or NULL for 0..n-1 */
	size_t scratch_size;
	void (*scratch_release)(void *scratch);
};
struct pg_pool;
/* Run every job on up to `threads` threads, this one included (no more
 * threads than jobs); returns when all are done. */
void pg_pool_run(const struct pg_pool_jobs *jobs, int threads);
/* Start up to `threads` threads (no more than jobs) on the jobs and return at
 * once; NULL, with nothing run, when not one could start (or n is 0). */
struct pg_pool *pg_pool_start(const struct pg_pool_jobs *jobs, int threads);
/* Wait until job `job` of a started pool is done. */
void pg_pool_wait(struct pg_pool *p, uint32_t job);
/* Run the jobs no thread has taken on this thread, join the threads, free p. */
void pg_pool_finish(struct pg_pool *p);

#endif
