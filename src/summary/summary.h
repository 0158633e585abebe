/*
 * summary: profgate.summary/1, the small deterministic reduction of a profile
 * that everything downstream works on. Times are microseconds (`_us`), shares
 * are 0..1 (`_share`). The struct owns all its strings; summary_release()
 * releases them. The JSON writer is byte-deterministic.
 */
#ifndef PG_SUMMARY_H
#define PG_SUMMARY_H

#include <stdint.h>

#include "../util/util.h"

#define SUMMARY_SCHEMA "profgate.summary/1"
/* identity.basis: the definitions a summary's numbers follow. A host-basis
 * summary (no device work: its steps, ops and families are the host's) is
 * never comparable with a timeline one. */
#define SUMMARY_BASIS_TIMELINE "profgate.timeline/2"
#define SUMMARY_BASIS_HOST     "profgate.host/1"

struct sum_file {
	char *path, *sha256, *format, *dialect;
	char *host;   /* XPlane host, or NULL */
	int32_t rank; /* Kineto distributed rank, or -1 */
	uint64_t bytes, events;
	/* not in the JSON: the strongest step marker analyze found in the file
	 * ("steps-line", "step-annotation", "profiler-step", "none"; a static
	 * string), for summarize to refuse joining unlike files; NULL when read */
	const char *step_markers;
};

struct sum_warning {
	char *code, *message;
};

/* Time split of one device over a window; sums exactly to wall_us. */
struct sum_split {
	double wall_us, busy_us, idle_us;
	double compute_us, exposed_comm_us, exposed_memcpy_us;
	double comm_us;	      /* union of communication */
	double memcpy_us;     /* union of memory copies and sets */
	double kernel_sum_us; /* sum of activity durations */
};

struct sum_device {
	char *id, *kind, *name, *host;
	int32_t index, rank;
	uint32_t file; /* index into files */
	struct sum_split all, steady;
};

/* A step's times (docs/summary.md "steps"). A device's step time tiles its
 * timeline: from the step's first device work to the next step's; its span is
 * from that first work to the step's last. */
struct sum_step {
	int64_t step;
	double us;	   /* the slowest device's step time; < 0 when no device has work */
	double host_us;	   /* host annotation span; < 0 when none */
	double *device_us; /* per device, summary order; < 0 when the device has none */
	int steady;	   /* never for a step with us < 0 */
	double span_us;	   /* the slowest device's span; < 0 when no device has work */
};

struct sum_stats {
	uint32_t count;
	double mean_us, median_us, p90_us, min_us, max_us, mad_us;
};

struct sum_class {
	char *name; /* typical, light, heavy */
	uint32_t count;
	double median_us;
	int64_t representative_step;
	int32_t periodicity; /* heavy steps every N steps; 0 when none */
};

struct sum_op {
	char *name, *family, *category;
	char *examples[3];
	double count_per_step, self_us_per_step, total_us_per_step;
	double count_total, self_us_total, total_us_total; /* exact sums: merge adds these */
};

struct sum_family {
	char *family, *category;
	/* share: us_per_step over the step time (the steady median step; for the
	 * host's families the step thread's wall); < 0 when there is none */
	double us_per_step, share;
	double count_per_step;
	double count_total, us_total;
};

struct sum_collective {
	char *kind;
	double count_per_step, us_per_step;
	double bytes_per_step;	       /* < 0 when sizes are unknown */
	double algbw_gbps, busbw_gbps; /* < 0 when unknown */
	/* over the whole capture, per device: collectives outside the steady steps
	 * (setup, evaluation) still show */
	double capture_count_per_device, capture_us_per_device;
	double count_total, us_total, bytes_total, capture_count_total, capture_us_total;
	double capture_bytes_total;
	uint32_t group_size; /* the largest group size seen (NCCL, HLO replica groups) */
	int sized, capture_sized;
};

struct sum_gap {
	char *op, *marker;
	double count_per_step, us_per_step, max_us;
	double count_total, us_total;
};

struct sum_region {
	char *path;
	uint32_t depth;
	double count_per_step, inclusive_us_per_step, exclusive_us_per_step;
	double count_total, inclusive_us_total, exclusive_us_total;
};

struct sum_candidate {
	char *id, *title, *evidence;
};

/* One allocator's peaks (memory.devices[]): "cuda:0", "cpu", as the
 * profiler's device type and index name it. Bytes are < 0 (null) when no
 * sample said; the steady peaks are the highest any steady step reached. */
struct sum_memory_device {
	char *device, *kind; /* kind: "cpu" for the host's allocator, else "accelerator" */
	double peak_allocated_bytes, peak_reserved_bytes;
	double steady_peak_allocated_bytes, steady_peak_reserved_bytes;
	double samples_total;
};

/* memory.*: the accelerators' largest peaks (max over memory.devices[] of
 * kind "accelerator", so over ranks when merged); < 0 (null) without samples. */
struct sum_memory {
	double peak_allocated_bytes, peak_reserved_bytes;
	double steady_peak_allocated_bytes, steady_peak_reserved_bytes;
	struct sum_memory_device *devices;
	uint32_t n_devices;
};

/*
 * What a step processes, as the user declares it (summarize --tokens-per-step,
 * --samples-per-step, --model-flops-per-step, --peak-tflops, or a W&B run's
 * config), and the rates that follow over the steady median step. All < 0
 * (null) when not declared or not derivable.
 */
struct sum_rate {
	double tokens_per_step, samples_per_step, model_flops_per_step;
	double peak_tflops_per_device; /* the devices' dense peak (summary_peak_tflops) */
	char *peak_dtype;	       /* the dtype the peak is of: --peak-dtype, else bf16 */
	char *peak_source; /* where the peak comes from: the table's row, or "--peak-tflops" */
	double tokens_per_s, samples_per_s;
	double mfu;	/* model FLOPs per step / (step s x peak x devices) */
	double hfu;	/* the ops' own FLOPs (tflops_per_device) over the peak */
	double devices; /* the devices the MFU divides by: world_size, else device_count */
};

/*
 * The time split as shares of the steady wall time, of one device or the mean
 * over the devices with a steady window. Undefined numbers: the four parts
 * < 0 when no device has a steady window; comm_overlap_share < 0 when none
 * has communication in it; kernel_sum_minus_wall_us_per_step NAN when no
 * device has a steady window (it can be negative). All are written as null.
 */
struct sum_breakdown_view {
	double compute_share, exposed_comm_share, exposed_memcpy_share, idle_share;
	double comm_overlap_share; /* share of communication under compute */
	double kernel_sum_minus_wall_us_per_step;
};

/* A view with every number undefined (null). */
void summary_view_undefined(struct sum_breakdown_view *v);

/*
 * The four parts a step's time splits into, named here once and listed in this
 * order by every table, sentence and verdict: key is the stem of their fields
 * (<key>_share in a breakdown view and the metric breakdown.<key>_share,
 * <key>_us in a device's split and the verdict's breakdown_us_per_step), name
 * is what people read.
 */
enum {
	SUM_PART_COMPUTE,
	SUM_PART_EXPOSED_COMM,
	SUM_PART_EXPOSED_MEMCPY,
	SUM_PART_IDLE,
	SUM_N_PARTS
};
struct sum_breakdown_part {
	const char *key, *name;
	size_t share_off; /* of <key>_share in struct sum_breakdown_view */
	size_t us_off;	  /* of <key>_us in struct sum_split */
};
extern const struct sum_breakdown_part summary_parts[SUM_N_PARTS];
/* Part k's share in v, its microseconds in x. */
double summary_part_share(const struct sum_breakdown_view *v, int k);
double summary_part_us(const struct sum_split *x, int k);
/* The part whose key or name is the first n bytes of s; NULL when none. */
const struct sum_breakdown_part *summary_part_named(const char *s, size_t n);
/* 1 when the device has a steady window: work in at least one steady step
 * (or, without steps, in the capture). Only these enter the breakdown's mean
 * and the per-device divisor of per-step numbers. */
int summary_device_steady(const struct sum_device *d);

/* A host thread's work over the host window (host.threads[]). */
struct sum_thread {
	char *name; /* as the trace names the thread, else "tid N" (one per file: "file1/tid N") */
	char *role; /* "step" (holds the step markers), "data-loader", "autograd", "other" */
	double busy_us_per_step, busy_us_total; /* union of its top-level events */
	double count_per_step, count_total;	/* events (markers and Python frames left out) */
};

/*
 * The host view (host.*): what the host threads did in the steady steps,
 * from the host step markers (window "steps"), or over the capture when the
 * trace has none (window "capture"). Totals are exact; the per-step numbers
 * are totals / (steady steps x step_threads). A summary whose steps are the
 * host's (basis profgate.host/1: no device work) is judged on these lists.
 */
struct sum_host {
	char *window;	       /* "steps", "capture", or NULL when no host events were read */
	uint32_t step_threads; /* threads that hold step markers (one per process) */
	double step_median_us; /* median host step (marker span) over the steady steps; < 0 none */
	double wall_us_per_step, busy_us_per_step, idle_us_per_step;
	double busy_share; /* busy / wall of the step thread; < 0 when no wall */
	double python_us_per_step, launch_us_per_step;
	/* the step with every top-level op of the step thread at its fastest
	 * (analyze/host.c fastest()); < 0 unless the steps are the host's */
	double fastest_us_per_step;
	double wall_us_total, busy_us_total, python_us_total, launch_us_total, fastest_us_total;
	struct sum_thread *threads;
	uint32_t n_threads;
	struct sum_family *families;
	uint32_t n_families;
	struct sum_op *ops;
	uint32_t n_ops;
};

/* identity.run: the W&B run (and artifact) the profiles came from. All NULL
 * for local inputs, and then not written, so their summaries keep their bytes. */
struct sum_run {
	char *path;	   /* "entity/project/run_id" */
	char *id, *name;   /* run id, display name */
	char *artifact;	   /* "entity/project/name:vN", or NULL (the run's trainer.log_dir) */
	char *git_sha;	   /* config git_commit / git_sha, else the run's commit */
	char *config_hash; /* 16 hex of the sha256 of the canonical config */
	char *device_kind; /* the run summary's device kind */
};

struct summary {
	char *profgate_version;
	struct sum_file *files;
	uint32_t n_files;

	/* identity */
	char *device_kind, *framework, *framework_version, *step_source, *basis;
	uint32_t device_count, host_count;
	int32_t world_size;
	uint32_t steps_captured;
	char **labels; /* "key=value" */
	uint32_t n_labels;
	struct sum_run run;

	struct sum_warning *warnings;
	uint32_t n_warnings;

	/* steps */
	char *steps_source;
	uint32_t warmup; /* steps excluded at the start */
	char *warmup_reason;
	struct sum_step *steps;
	uint32_t n_steps;
	struct sum_stats steady;
	struct sum_class *classes;
	uint32_t n_classes;
	double skew_us;	      /* mean over steady steps of slowest minus fastest device */
	char *slowest_device; /* most often the slowest in steady steps */

	struct sum_device *devices;
	uint32_t n_devices;
	struct sum_breakdown_view mean, worst;
	char *worst_device;

	struct sum_family *families;
	uint32_t n_families;
	struct sum_op *ops;
	uint32_t n_ops;
	struct sum_collective *collectives;
	uint32_t n_collectives;
	struct sum_gap *gaps;
	uint32_t n_gaps;
	struct sum_region *regions;
	uint32_t n_regions;
	double tflops_per_device; /* < 0 when the trace carries no flops */
	double flops_total;
	int has_flops;
	/* per-step numbers are totals / (basis_devices x basis_steady_steps);
	 * basis_devices counts the devices with a steady window (summary_finalize) */
	uint32_t basis_devices;
	uint32_t basis_steady_steps;
	int32_t warmup_requested; /* --warmup N, or -1 for the automatic rule */
	struct sum_rate rate;
	struct sum_memory memory;
	struct sum_host host;
	struct sum_candidate *candidates;
	uint32_t n_candidates;
};

/* ---- the schema (schema.c): one table of fields per record shape ---- */

/* How a field is stored. */
enum sum_type {
	SUM_STR, /* char *, owned */
	SUM_F64,
	SUM_U32,
	SUM_I32,
	SUM_I64,
	SUM_U64,
	SUM_CONST,  /* a fixed string (.text): written, not read back */
	SUM_OBJ,    /* a nested object: .sub over the struct at .off */
	SUM_FLAT,   /* .sub's fields written into this object */
	SUM_LIST,   /* an array of .sub records: pointer at .off, count at .n_off */
	SUM_CUSTOM, /* written, read, freed and merged by code: .custom says which */
};

/* How a number is written. */
enum sum_fmt {
	SUM_W_PLAIN,	 /* strings; integers as integers */
	SUM_W_US,	 /* 3 decimals; a rounding residue below zero is 0 */
	SUM_W_US_OPT,	 /* 3 decimals; null when negative (not known) */
	SUM_W_US_NAN,	 /* 3 decimals, any sign; null when NAN (not defined) */
	SUM_W_SHARE,	 /* 4 decimals */
	SUM_W_SHARE_OPT, /* 4 decimals; null when negative (not defined) */
	SUM_W_FIX3,	 /* 3 decimals (counts per step) */
	SUM_W_FIX0,	 /* no decimals (exact totals) */
	SUM_W_SIZED,	 /* no decimals; null when the int at .aux is 0 */
	SUM_W_INT_OPT,	 /* an integer; null when negative */
	SUM_W_INT_POS,	 /* an integer; null unless positive */
	SUM_W_FIX0_OPT,	 /* no decimals; null when negative (bytes not known) */
};

enum sum_unit {
	SUM_U_NONE,
	SUM_U_US,
	SUM_U_SHARE,
	SUM_U_COUNT,
	SUM_U_BYTES,
	SUM_U_GBPS,
	SUM_U_TFLOPS,
	SUM_U_FLOPS,
	SUM_U_PER_S, /* tokens or samples per second */
};

/* What `profgate merge` does with a field of a keyed list record. */
enum sum_merge {
	SUM_M_DERIVED,	    /* summary_finalize computes it again */
	SUM_M_KEY,	    /* the record's name: records of one key become one */
	SUM_M_FIRST,	    /* the first input's */
	SUM_M_SUM,	    /* exact totals add up; a sized total's flag (.aux) is or-ed */
	SUM_M_MAX,	    /* the largest */
	SUM_M_LAST_NOT_KEY, /* the last value other than the key itself */
	SUM_M_UNION,	    /* ops' examples: the first three distinct */
};

/* The section of the gate's catalogue a metric belongs to (enum gate_kind). */
enum sum_group {
	SUM_G_STEP,
	SUM_G_BREAKDOWN,
	SUM_G_FAMILY,
	SUM_G_OP,
	SUM_G_COLLECTIVE,
	SUM_G_REGION,
	SUM_G_THROUGHPUT,
	SUM_G_HOST,
	SUM_G_MEMORY,
};

/* When a judged field is in the catalogue. */
enum sum_when {
	SUM_WHEN_ALWAYS,
	SUM_WHEN_STEPS,	     /* the summary has steady steps */
	SUM_WHEN_SKEW,	     /* steady steps on more than one device */
	SUM_WHEN_DEVICES,    /* the summary has devices and the value is not negative */
	SUM_WHEN_KNOWN,	     /* the value is not negative */
	SUM_WHEN_FLOPS,	     /* the trace carried flops and the value is known */
	SUM_WHEN_HOST_BASIS, /* a list: its metrics exist when the steps are the host's */
};

/* A judged metric's share of the step (the rules' floors compare it). */
enum sum_share {
	SUM_SHARE_NONE,	   /* not a time per step */
	SUM_SHARE_STEP,	   /* over the step denominator */
	SUM_SHARE_STEP_OR, /* that, else (no step) the double at .aux */
};

/* The way a metric is better; thresholds files decide, this is the natural one. */
enum sum_direction {
	SUM_LOWER,
	SUM_HIGHER,
	SUM_INFO,
};

enum sum_custom {
	SUM_C_NONE,
	SUM_C_STEP_ROWS, /* steps.all[] */
	SUM_C_LABELS,	 /* identity.labels */
	SUM_C_EXAMPLES,	 /* ops[].examples */
	SUM_C_WARNINGS,	 /* quality.warnings[] */
};

#define SUM_REQUIRED 1u /* the reader refuses a file without it */
#define SUM_JUDGED   2u /* an OBJ or LIST holding metrics for this instance */
#define SUM_WINDOW   4u /* a history window's baseline rebuilds it from the medians */

struct sum_shape;

struct sum_field {
	const char *key;
	enum sum_type type;
	size_t off;
	enum sum_fmt fmt;
	double def; /* the reader's value when absent or null */
	enum sum_unit unit;
	enum sum_merge merge;
	unsigned flags;
	size_t aux; /* SUM_W_SIZED: the int flag; SUM_SHARE_STEP_OR: the share */
	const struct sum_shape *sub;
	size_t n_off; /* SUM_LIST: the uint32_t count */
	enum sum_custom custom;
	const char *text; /* SUM_CONST */
	/* judged by the gate and tracked by history: the metric name, "%s" the
	 * record's key in a list; NULL when not judged */
	const char *metric;
	enum sum_group group;
	enum sum_when when;
	enum sum_share share;
	enum sum_direction direction;
};

struct sum_shape {
	const char *name; /* "families[]", as docs/summary.md's field reference names it */
	const struct sum_field *f;
	uint32_t n;
	size_t size;		/* a list record's size */
	int nulls_unless_count; /* stats: every field but the first is null when it is 0 */
	int (*present)(const void *base); /* written only when this says so; NULL: always */
};

/* The whole summary: the root of every walk. */
extern const struct sum_shape summary_root;

/* The key field of a list record's shape, or NULL. */
const struct sum_field *summary_shape_key(const struct sum_shape *sh);
/* A record's numbers at the reader's defaults, its strings NULL. */
void summary_record_init(const struct sum_shape *sh, void *rec);
/* Copies of src's strings into dst (strings only). */
void summary_strings_copy(const struct sum_shape *sh, void *dst, const void *src);
/* Frees what the record owns. */
void summary_record_free(const struct sum_shape *sh, void *rec);

/* One metric of a summary, as summary_metrics_each() hands it out. */
struct sum_metric {
	const char *name;    /* "family.matmul.us_per_step"; valid during the call */
	const char *subject; /* the list record's key, or NULL */
	const struct sum_field *field;
	double value;
	double step_share; /* value over the step; < 0 when not a time per step */
};
typedef void (*summary_metric_fn)(void *ctx, const struct sum_metric *m);
/* Every metric the summary holds, in table order. */
void summary_metrics_each(const struct summary *s, summary_metric_fn fn, void *ctx);

/* Where a metric name lives: the field; *at its offset in struct summary, or
 * for a list record its offset in the record, with *list the list and
 * *subject the key (to free). NULL when no table field makes that name. */
const struct sum_field *summary_metric_field(const char *metric, const struct sum_field **list,
					     char **subject, size_t *at);
/* The unit of a metric: "us", "share", "GB/s", "TFLOP/s", or "" when unknown. */
const char *summary_metric_unit(const char *metric);
/* Decimals a metric's value is written with in verdicts and records. */
int summary_metric_decimals(const char *metric);
const char *summary_unit_name(enum sum_unit u);

void summary_init(struct summary *s);
void summary_release(struct summary *s);
/* Append the summary's JSON to out (pretty, deterministic). */
void summary_write_json(const struct summary *s, struct pg_buf *out);
/* 1 when any identity.run field is set. */
int summary_has_run(const struct sum_run *r);
/* dst (empty) gets copies of src's fields; summary_release releases them. */
void summary_run_copy(struct sum_run *dst, const struct sum_run *src);
void summary_run_release(struct sum_run *r);
void summary_add_warning(struct summary *s, const char *code, const char *fmt, ...) PG_PRINTF(3, 4);
/*
 * Decide the warm-up (requested >= 0: the first N steps; else leading steps
 * that stand out) and set steps[].steady. Shared by summarize and merge.
 */
void summary_choose_warmup(struct summary *s, int32_t requested);
/*
 * Everything derived from the raw parts (steps with device times and steady
 * flags, device splits, totals, reader warnings): steady statistics, classes,
 * skew, per-step numbers, shares, bandwidths, the breakdown views, sorted and
 * capped lists, derived quality warnings and candidates. Called last by both
 * summarize and merge, so equal raw parts give equal bytes.
 */
void summary_finalize(struct summary *s);
/* The quantile q of sorted v (n values) as the summary's statistics take it:
 * linear between ranks, at position (n - 1) q; 0 when n is 0. */
double summary_quantile(const double *sorted, uint32_t n, double q);
/* The share of a device's wall it waited: idle, exposed communication and
 * exposed copies. The largest names breakdown.worst_device. */
double summary_wait_share(const struct sum_split *x);
/* 1 when the summary's steps are the host's (identity.basis profgate.host/1). */
int summary_host_basis(const struct summary *s);
/* The parts a step is made of, which the gate attributes a change to: the
 * device's families and ops, or the host's for a host-basis summary. */
const struct sum_family *summary_step_families(const struct summary *s, uint32_t *n);
const struct sum_op *summary_step_ops(const struct summary *s, uint32_t *n);
/* Combine summaries of hosts or ranks of one capture into out (initialised
 * here); inputs are left as they were. Returns 0 or PG_EUSAGE with the message
 * set when they cannot be one capture. */
int summary_merge(struct summary *out, const struct summary *in, uint32_t n);
/* The same, with names for error messages (the summaries' file names);
 * allow_mixed joins inputs of different device models or frameworks (which
 * summary_merge refuses). */
int summary_merge_named(struct summary *out, const struct summary *in, uint32_t n,
			const char *const *names, int allow_mixed);

/*
 * The dense peak TFLOP/s of one device of a model (its name as the summary's
 * device_kind gives it: "NVIDIA H100 80GB HBM3", "TPU v5 lite", ...) in a
 * dtype ("bf16", "fp16", "fp8", "tf32", "fp32"), from the table in rate.c;
 * *model and *source name the row and where its number is published (static
 * strings). < 0 when the table has no row for them.
 */
double summary_peak_tflops(const char *device_kind, const char *dtype, const char **model,
			   const char **source);
/* The peak_source of a peak the user gave (summarize --peak-tflops). */
#define SUMMARY_PEAK_GIVEN "--peak-tflops"
/* throughput's rates from the declarations and the steady median step (rate.c;
 * summary_finalize calls it, summarize again once it has set the declarations). */
void summary_rates(struct summary *s);

/* Read a profgate.summary/1 file (s is initialised here; summary_release it).
 * Returns 0, or PG_EIO / PG_EFORMAT / PG_EUNSUPP with the message naming the
 * file and the key. */
int summary_read_json(const char *path, struct summary *s) PG_WUR;
/* The same from the file's text (origin names it in messages). */
int summary_parse_json(const char *text, size_t len, const char *origin, struct summary *s) PG_WUR;
/* marin's profile_summary.v1, already parsed (marin.c); the same contract. */
struct cJSON;
int summary_from_marin(const char *origin, const struct cJSON *root, struct summary *s) PG_WUR;

/* ---- identity (identity.c) ---- */

/* How an identity field is held: a string (NULL: null), a count, or a signed
 * number whose negative values are null (world_size). */
enum summary_id_type { SUMMARY_ID_STRING, SUMMARY_ID_UINT, SUMMARY_ID_INT };

struct summary_id_field {
	const char *name; /* as the verdict JSON and thresholds files name it */
	enum summary_id_type type;
	size_t offset; /* of the member in struct summary */
	int series;    /* part of a history series' name */
};

/* Every identity field, in the order the verdict JSON and history records
 * write them (labels follow as labels.KEY). */
#define SUMMARY_ID_N 9
extern const struct summary_id_field summary_id_fields[SUMMARY_ID_N];
/* The field named name, or NULL. */
const struct summary_id_field *summary_id_find(const char *name);
/* A string field's value (NULL: null). */
const char *summary_id_str(const struct summary *s, const struct summary_id_field *f);
/* A number field's value; negative: null. */
int64_t summary_id_num(const struct summary *s, const struct summary_id_field *f);
/* Append the value as text (a string as it is, a number in decimal) to out;
 * 0, appending nothing, when it is null. */
int summary_id_text(const struct summary *s, const struct summary_id_field *f, struct pg_buf *out);
/* Set a field: a string field to a copy of v (NULL: null); a number field to v. */
void summary_id_set_str(struct summary *s, const struct summary_id_field *f, const char *v);
void summary_id_set_num(struct summary *s, const struct summary_id_field *f, double v);
/* A "key=value" label's value ("" without '='), its key's length in *key_len. */
const char *summary_label_split(const char *label, size_t *key_len);
/* The value of label key in s, or NULL when s has none. */
const char *summary_label_value(const struct summary *s, const char *key);

#endif
