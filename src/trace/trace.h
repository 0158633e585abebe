/*
 * trace: the in-memory model every reader fills and every analysis reads.
 * Interned strings, devices, tracks, compact 40-byte events, interned argument
 * sets, and the per-file facts a reader learned (format, dialect, warnings).
 * It knows no file format.
 *
 * Ownership: a struct trace owns everything reachable from it; strings handed
 * out by trace_str_get() live until trace_release().
 */
#ifndef PG_TRACE_H
#define PG_TRACE_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "../util/util.h"

typedef uint32_t trace_str; /* interned string id; 0 is the empty string */

enum trace_dev_kind {
	TRACE_DEV_CPU,
	TRACE_DEV_GPU,
	TRACE_DEV_TPU,
	TRACE_DEV_OTHER,
};

struct trace_device {
	enum trace_dev_kind kind;
	int32_t index;	 /* GPU n / TPU n; for Kineto the pid of its events; -1 unknown */
	int32_t rank;	 /* distributed rank, -1 unknown */
	uint32_t file;	 /* index into trace.files */
	trace_str label; /* as the profile names it: "/device:GPU:0", "GPU 0", "python3.10" */
	trace_str name;	 /* hardware name where known: "NVIDIA H100 80GB HBM3" */
	trace_str host;
	uint64_t n_events;
};

enum trace_track_kind {
	TRACE_TRACK_STREAM,	 /* device stream: kernels, memory copies and sets */
	TRACE_TRACK_DEVICE_OPS,	 /* XLA Ops, Async XLA Ops */
	TRACE_TRACK_STEPS,	 /* a Steps line */
	TRACE_TRACK_MODULES,	 /* XLA Modules */
	TRACE_TRACK_HOST_THREAD, /* host threads: framework ops, runtime calls */
	TRACE_TRACK_ANNOTATIONS, /* name scopes, framework ops lines, GPU user annotations, async
				    spans */
	TRACE_TRACK_OTHER,
	TRACE_TRACK_KIND_COUNT,
};

struct trace_track {
	uint32_t device;
	enum trace_track_kind kind;
	trace_str name; /* thread or line name as written */
	trace_str pid;	/* the raw process key as text ("0", "Spans", plane id) */
	trace_str tid;	/* the raw thread key as text (tid, line id) */
	uint64_t n_events;
	int64_t first_ns;  /* earliest start, INT64_MAX when empty */
	int64_t last_ns;   /* latest end, INT64_MIN when empty */
	uint32_t cat_mask; /* TRACE_CATCLASS_* bits seen on this track */
};

/* Event flags. */
enum {
	TRACE_EV_INSTANT = 1 << 0,   /* zero-duration marker (ph i/I/n) */
	TRACE_EV_FROM_BE = 1 << 1,   /* built from a B/E pair */
	TRACE_EV_ASYNC = 1 << 2,     /* built from a b/e pair */
	TRACE_EV_HAS_CORR = 1 << 4,  /* corr is meaningful */
	TRACE_EV_CLIPPED = 1 << 6,   /* end was missing; clipped to the track's end */
	TRACE_EV_AGGREGATE = 1 << 7, /* counted, no timestamp (XPlane num_occurrences) */
};

/*
 * One event, 40 bytes. Times are int64 ns on the file's own time base.
 * args indexes an interned argument set (0 = none), so per-op constant
 * arguments (hlo_op, module, collective sizes) cost nothing per event.
 */
struct trace_event {
	int64_t ts_ns;
	int64_t dur_ns;
	uint64_t corr; /* Kineto correlation / XPlane correlation_id */
	trace_str name;
	uint32_t track;
	uint32_t args;
	uint16_t cat; /* index into trace.cats */
	uint8_t ph;   /* 'X', 'i', 's', 'f', ... as in Chrome JSON */
	uint8_t flags;
};

/* Category classes, from the category name (Kineto cats, XPlane line kinds). */
enum {
	TRACE_CATCLASS_DEVICE = 1 << 0, /* kernel, gpu_memcpy, gpu_memset, Kernel, Memcpy, ... */
	TRACE_CATCLASS_DEVICE_ANN = 1 << 1, /* gpu_user_annotation */
	TRACE_CATCLASS_HOST = 1 << 2,	    /* cpu_op, cuda_runtime, python_function, ... */
	TRACE_CATCLASS_FLOW = 1 << 3,	    /* ac2g, async_cpu_to_gpu, fwdbwd */
	TRACE_CATCLASS_STEP = 1 << 4,	    /* user_annotation */
	TRACE_CATCLASS_ACCEL = 1 << 5,	    /* non-GPU accelerator activity (MTIA) */
	TRACE_CATCLASS_PYTHON = 1 << 6,	    /* python_function: interpreter frames */
};

struct trace_cat {
	trace_str name;
	uint32_t class_mask;
};

struct trace_arg {
	trace_str key;
	trace_str value;
};

/*
 * One sample of a device allocator's totals, taken after an allocation or a
 * free: Kineto's "[memory]" instant events (profile_memory=True), XPlane's
 * MemoryAllocation / MemoryDeallocation events (as c10's XLA type). Readers
 * keep them apart from the events, since every one carries numbers of its
 * own that would make an argument set each. Device types are c10's
 * (TRACE_MEM_*); bytes are < 0 when the event did not say.
 */
enum { TRACE_MEM_CPU = 0, TRACE_MEM_CUDA = 1, TRACE_MEM_HIP = 6, TRACE_MEM_XLA = 9 };
struct trace_mem {
	int64_t ts_ns;
	int64_t allocated_bytes, reserved_bytes;
	uint32_t file;
	int32_t device_type;
	int32_t device_id; /* -1 for the host */
};

struct trace_warning {
	uint32_t file;
	char code[32];
	char *message;
};

enum trace_format { TRACE_FMT_CHROME_JSON, TRACE_FMT_XPLANE };
enum trace_dialect {
	TRACE_DIALECT_GENERIC,
	TRACE_DIALECT_JAX,
	TRACE_DIALECT_KINETO,
	TRACE_DIALECT_XPLANE,
	TRACE_DIALECT_PYTORCH_LEGACY /* the autograd profiler's own export (no Kineto) */
};

/* An XPlane plane as the file lists it (inspect reports every one). */
struct trace_plane {
	char *name;
	int64_t id;
	uint64_t events; /* XEvents over all its lines, num_occurrences ones included */
	uint32_t lines;
};

struct trace_file {
	char *path;
	enum trace_format format;
	enum trace_dialect dialect;
	int compressed;		/* gzip */
	uint64_t bytes;		/* size on disk */
	uint64_t content_bytes; /* after decompression */
	uint64_t entries;	/* elements of the event array (every phase) */
	uint64_t entries_ahead; /* of them, read by look-ahead workers: never in any output */
	uint64_t phase_counts[128];
	uint64_t events_kept;	   /* kept, and Chrome flow endpoints counted but not kept */
	char display_time_unit[8]; /* "ms", "ns" or "" (display hint only) */
	int64_t base_time_ns;	   /* Kineto baseTimeNanoseconds; 0 when absent */
	int schema_version;	   /* Kineto schemaVersion; -1 absent */
	int32_t rank, world_size;  /* distributedInfo; -1 absent */
	char *backend;		   /* distributedInfo.backend, or NULL */
	char *framework;	   /* "pytorch", "jax", "tensorflow", or NULL */
	char *framework_version;   /* when the file says */
	char *device_kind;	   /* hardware name of the profiled devices, when the file says */
	uint32_t declared_devices; /* devices the file lists (deviceProperties, planes) */
	uint64_t aggregate_events; /* XPlane num_occurrences events: counted, not placed */
	uint64_t undecoded_events; /* host-thread events counted, not decoded (host_markers_only) */
	/* XPlane: a line that is not a host thread (a device's streams, ops, steps, any
	 * other), and no step-marker name in the metadata: the host view leaves this
	 * file's host threads out, and summarize does not decode them (read/xplane.c) */
	int host_threads_aside;
	int64_t profile_start_ns; /* epoch ns from XPlane Task Environment; 0 when absent */
	int64_t profile_stop_ns;
	char *host;		    /* host name (XSpace hostnames or the file name) */
	char sha256[65];	    /* hex digest of the file's bytes, when computed */
	uint32_t duplicate_of;	    /* UINT32_MAX, or the file whose bytes these are */
	struct trace_plane *planes; /* XPlane only */
	uint32_t n_planes;
};

/* Events live in fixed blocks, so growth never moves them; the layout is
 * here only so that trace_event_at(), called once per event by every reader
 * and analysis, can be inlined. */
#define TRACE_EVBLOCK_SHIFT 16
#define TRACE_EVBLOCK_SIZE  (1u << TRACE_EVBLOCK_SHIFT)

struct trace_evblock {
	struct trace_event ev[TRACE_EVBLOCK_SIZE];
};

/* What a read of several files has done so far, for a progress line: the
 * reading threads add to it as each file is read, anyone may look. */
struct trace_progress {
	_Atomic uint32_t files;	 /* files read */
	_Atomic uint64_t events; /* events in them */
};

struct trace {
	struct pg_arena strings_arena;
	/* interned strings */
	struct trace_strent *strs;
	uint32_t n_strs, cap_strs;
	uint32_t *str_index; /* open-addressed hash -> string id */
	uint32_t str_index_cap;

	struct trace_cat *cats;
	uint32_t n_cats, cap_cats;

	/* interned argument sets: set i is args[argsets[i].off .. +n] */
	struct trace_argset *argsets;
	uint32_t n_argsets, cap_argsets;
	struct trace_arg *args;
	uint64_t n_args, cap_args;
	uint32_t *argset_index;
	uint32_t argset_index_cap;

	struct trace_device *devices;
	uint32_t n_devices, cap_devices;
	struct trace_track *tracks;
	uint32_t n_tracks, cap_tracks;

	struct trace_evblock **blocks;
	uint32_t n_blocks, cap_blocks;
	uint64_t n_events;

	struct trace_file *files;
	uint32_t n_files, cap_files;
	int want_sha256; /* readers hash each file's bytes (on a thread of its own) */
	struct trace_progress *progress; /* read_paths counts into it; NULL: none (the caller's) */
	/* threads a reader may use within one file (XPlane lines; a gzip file is
	 * inflated on a second thread, ahead of the parse, unless it is 1) */
	int decode_threads;
	/* The caller reads host threads only for step markers (summarize): a
	 * reader may count, not decode, the host-thread events of a file whose
	 * metadata can hold no marker (trace_is_marker_stat, _name). */
	int host_markers_only;
	struct trace_warning *warnings;
	uint32_t n_warnings, cap_warnings;
	struct trace_mem *mem; /* allocator samples, in read order */
	uint64_t n_mem, cap_mem;
	struct trace_digest *digests; /* still running: trace_digests_wait() ends them */
};

/*
 * What can make a host event a step marker, one list for analyze (which takes
 * markers from nothing else) and for readers under host_markers_only: an event
 * named "ProfilerStep#N", an event with a step_num or _r stat.
 */
#define TRACE_MARK_PROFILER_STEP     "ProfilerStep#"
#define TRACE_MARK_PROFILER_STEP_LEN 13
#define TRACE_MARK_STEP_NUM	     "step_num"
#define TRACE_MARK_R		     "_r"
static inline int trace_is_marker_name(const char *name, size_t n)
{
	return n >= TRACE_MARK_PROFILER_STEP_LEN &&
	       memcmp(name, TRACE_MARK_PROFILER_STEP, TRACE_MARK_PROFILER_STEP_LEN) == 0;
}
static inline int trace_is_marker_stat(const char *k, size_t n)
{
	return (n == 8 && memcmp(k, TRACE_MARK_STEP_NUM, 8) == 0) ||
	       (n == 2 && memcmp(k, TRACE_MARK_R, 2) == 0);
}

/*
 * A file's SHA-256 still being computed when its reading ended (the reader
 * starts it; see read.c). wait() blocks until it is done, writes the hex
 * digest, frees the digest and returns 0, or a PG_E* code with the error set;
 * with hex NULL it only ends and frees it (no error set).
 */
struct trace_digest {
	struct trace_digest *next;
	uint32_t file;
	int (*wait)(struct trace_digest *d, char hex[65]);
};

void trace_init(struct trace *t);
/* Waits for digests still running, then frees everything. */
void trace_release(struct trace *t);
/* Ends every running digest: files[].sha256 (and each duplicate's) filled.
 * Returns 0, or the first failure's code with its error set. */
int trace_digests_wait(struct trace *t) PG_WUR;

/* Strings. */
trace_str trace_intern(struct trace *t, const char *s, size_t n);
trace_str trace_intern_cstr(struct trace *t, const char *s);
const char *trace_str_get(const struct trace *t, trace_str id);
size_t trace_str_len(const struct trace *t, trace_str id);
/* The id of s if already interned, else 0 (never interns). */
trace_str trace_str_find(const struct trace *t, const char *s);

/* Categories: the class is derived from the name on first intern. */
uint16_t trace_cat_intern(struct trace *t, const char *s, size_t n);

/* Argument sets: interns the whole list (order matters); returns 0 for n == 0. */
uint32_t trace_argset_intern(struct trace *t, const struct trace_arg *a, uint32_t n);
/* Looks up key in set; returns the value id or 0. */
trace_str trace_arg_get(const struct trace *t, uint32_t set, trace_str key);
uint32_t trace_argset_get(const struct trace *t, uint32_t set, const struct trace_arg **out);

/* Devices, tracks, files. Each returns the new index. */
uint32_t trace_device_add(struct trace *t, const struct trace_device *d);
uint32_t trace_track_add(struct trace *t, const struct trace_track *tr);
uint32_t trace_file_add(struct trace *t, const char *path);
void trace_file_free_planes(struct trace_file *f);

/* Events: add returns a zeroed slot to fill; the track's counts and span are
 * updated by trace_event_commit(). */
struct trace_event *trace_event_add(struct trace *t);
void trace_event_commit(struct trace *t, const struct trace_event *e);
static inline struct trace_event *trace_event_at(const struct trace *t, uint64_t i)
{
	return &t->blocks[i >> TRACE_EVBLOCK_SHIFT]->ev[i & (TRACE_EVBLOCK_SIZE - 1)];
}
/* Events i, i+1, ... that are stored together: returns event i and sets *n to how many follow
 * it in the same storage (at least 1), so a loop over all events needs no per-event lookup.
 * i must be below n_events. */
const struct trace_event *trace_event_run(const struct trace *t, uint64_t i, uint64_t *n);
/* Reserve n event slots (uninitialised) and return the first index; readers
 * fill them, possibly from several threads, and update track counts after. */
uint64_t trace_events_reserve(struct trace *t, uint64_t n);
/* A memory sample appended (its fields copied). */
void trace_mem_add(struct trace *t, const struct trace_mem *m);
/* Drop events from index n on (used to undo a file that failed mid-read). */
void trace_events_truncate(struct trace *t, uint64_t n);

void trace_warn(struct trace *t, uint32_t file, const char *code, const char *fmt, ...)
    PG_PRINTF(4, 5);

const char *trace_dev_kind_name(enum trace_dev_kind k);
const char *trace_track_kind_name(enum trace_track_kind k);
const char *trace_dialect_name(enum trace_dialect d);
const char *trace_format_name(enum trace_format f);

/* Move all of src into dst (ids remapped); src is released. */
void trace_merge(struct trace *dst, struct trace *src);

/* Bytes held by the model (events, strings, tables), for memory budgets. */
size_t trace_memory_bytes(const struct trace *t);

#endif
