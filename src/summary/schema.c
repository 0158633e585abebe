/*
 * The summary's schema: one table of fields per record shape (a file, a
 * device's time split, a family, an op, a collective, ...), and the walks
 * that need nothing but the tables.
 *
 * A field says its JSON key; where it is stored (type and offset, checked
 * against the struct member's C type at compile time by TYPED()); how it is
 * written (decimals: µs 3, shares 4, counts per step 3, totals 0; null when
 * negative or when a flag says the size is unknown); the reader's default;
 * its unit; what `profgate merge` does with it (sum an exact total, take the
 * largest, keep the first, or leave it to summary_finalize); and, when the
 * gate judges it, its metric name ("family.%s.us_per_step", %s the record's
 * key), when the metric exists, how its share of the step is taken and its
 * natural direction. Tables nest (SUM_OBJ, SUM_FLAT, SUM_LIST) from
 * summary_root, whose order is the JSON's order.
 *
 * Who walks them:
 * - summary.c writes every field in table order (summary_write_json) and
 *   frees every string and list (summary_release); the per-step rows of
 *   steps.all[] stay hand-written (a fast path: a capture can have a quarter
 *   million of them), as do the labels and ops' examples (SUM_CUSTOM).
 * - read.c reads every field back with its type checked and its default.
 * - merge.c merges the lists whose records have a SUM_M_KEY field by their
 *   merge rules; summary_finalize then derives the SUM_M_DERIVED fields.
 * - summary_metrics_each() below turns the judged fields into the gate's
 *   metric catalogue (gate/catalogue.c); summary_metric_field() turns a
 *   metric name back into its field, which history's window baseline uses to
 *   rebuild a summary from metric medians (history/baseline.c, the fields
 *   flagged SUM_WINDOW); summary_metric_unit() and _decimals() give a
 *   metric's unit and digits to verdicts, records and trends.
 * - tests/unit/test_schema.c checks docs/summary.md's field reference
 *   against the tables, both ways.
 *
 * Adding a number the gate judges and history tracks, e.g. the exposed time
 * of each collective kind (not under compute), `collectives[].exposed_us_*`:
 * 1. struct sum_collective (summary.h) gets `double exposed_us_per_step,
 *    exposed_us_total;`: merge adds exact totals and derives per-step
 *    numbers again, so a per-step number comes with its total.
 * 2. collective_fields[] below gets two rows, where the keys are to appear in
 *    the JSON:
 *      F64(C, exposed_us_per_step, "exposed_us_per_step", SUM_W_US, SUM_U_US,
 *          SUM_M_DERIVED, JUDGED_US("collective.%s.exposed_us_per_step",
 *          SUM_G_COLLECTIVE, .flags = SUM_WINDOW)),
 *      US_TOTAL(C, exposed_us_total),
 * 3. The computation: the analysis fills the total where it fills the
 *    kind's us_total (az_totals in src/analyze/ops.c, from its per-family
 *    accumulators), and summary_finalize (finalize.c) derives the per-step
 *    number beside us_per_step: `c->exposed_us_per_step =
 *    per(c->exposed_us_total, norm);`.
 * 4. docs/summary.md's field reference gets the two rows (make test says
 *    which), and its prose says what the number means.
 * The writer, the reader, merge, the gate's catalogue, the window baseline,
 * the unit and the digits follow from the rows; thresholds files then name
 * the metric like any other ("collective.*.exposed_us_per_step").
 */
#include "summary.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The member's offset, and a compile error when its C type is not ct. */
#define TYPED(T, m, ct) (offsetof(T, m) + 0 * sizeof(_Generic(((T *)0)->m, ct : 1)))

#define STR(T, m, k, ...)                                                                          \
	{                                                                                          \
		.key = k, .type = SUM_STR, .off = TYPED(T, m, char *), __VA_ARGS__                 \
	}
#define F64(T, m, k, fmt_, unit_, merge_, ...)                                                     \
	{                                                                                          \
		.key = k, .type = SUM_F64, .off = TYPED(T, m, double), .fmt = fmt_, .unit = unit_, \
		.merge = merge_, __VA_ARGS__                                                       \
	}
#define INT(T, m, k, type_, ct, ...)                                                               \
	{                                                                                          \
		.key = k, .type = type_, .off = TYPED(T, m, ct), __VA_ARGS__                       \
	}
#define U32(T, m, k, ...) INT(T, m, k, SUM_U32, uint32_t, __VA_ARGS__)
#define I32(T, m, k, ...) INT(T, m, k, SUM_I32, int32_t, __VA_ARGS__)
#define I64(T, m, k, ...) INT(T, m, k, SUM_I64, int64_t, __VA_ARGS__)
#define U64(T, m, k, ...) INT(T, m, k, SUM_U64, uint64_t, __VA_ARGS__)
#define OBJ(off_, k, shape, ...)                                                                   \
	{                                                                                          \
		.key = k, .type = SUM_OBJ, .off = off_, .sub = &shape, __VA_ARGS__                 \
	}
#define LIST(T, m, n, k, shape, ...)                                                               \
	{                                                                                          \
		.key = k, .type = SUM_LIST, .off = offsetof(T, m), .n_off = TYPED(T, n, uint32_t), \
		.sub = &shape, __VA_ARGS__                                                         \
	}
#define SHAPE(name_, fields, ...)                                                                  \
	{                                                                                          \
		.name = name_, .f = fields, .n = PG_ARRAY_LEN(fields), __VA_ARGS__                 \
	}

/* A time per step the gate judges, with its share of the step. */
#define JUDGED_US(metric_, group_, ...)                                                            \
	.metric = metric_, .group = group_, .share = SUM_SHARE_STEP, __VA_ARGS__

#define S struct summary

/* ---- source ---- */

static const struct sum_field file_fields[] = {
    STR(struct sum_file, path, "path", .flags = SUM_REQUIRED),
    STR(struct sum_file, sha256, "sha256"),
    U64(struct sum_file, bytes, "bytes", .unit = SUM_U_BYTES),
    U64(struct sum_file, events, "events"),
    STR(struct sum_file, format, "format"),
    STR(struct sum_file, dialect, "dialect"),
    STR(struct sum_file, host, "host"),
    I32(struct sum_file, rank, "rank", .fmt = SUM_W_INT_OPT, .def = -1),
};
static const struct sum_shape file_shape =
    SHAPE("source.files[]", file_fields, sizeof(struct sum_file));

static const struct sum_field source_fields[] = {
    STR(S, profgate_version, "profgate_version"),
    LIST(S, files, n_files, "files", file_shape),
};
static const struct sum_shape source_shape = SHAPE("source", source_fields);

/* ---- identity ---- */

static int run_present(const void *base)
{
	return summary_has_run(base);
}

static const struct sum_field run_fields[] = {
    {.key = "source", .type = SUM_CONST, .text = "wandb"},
    STR(struct sum_run, path, "path"),
    STR(struct sum_run, id, "id"),
    STR(struct sum_run, name, "name"),
    STR(struct sum_run, artifact, "artifact"),
    STR(struct sum_run, git_sha, "git_sha"),
    STR(struct sum_run, config_hash, "config_hash"),
    STR(struct sum_run, device_kind, "device_kind"),
};
static const struct sum_shape run_shape = SHAPE("identity.run", run_fields, .present = run_present);

static const struct sum_field identity_fields[] = {
    STR(S, device_kind, "device_kind"),
    U32(S, device_count, "device_count"),
    U32(S, host_count, "host_count"),
    I32(S, world_size, "world_size", .fmt = SUM_W_INT_OPT, .def = -1),
    STR(S, framework, "framework"),
    STR(S, framework_version, "framework_version"),
    U32(S, steps_captured, "steps_captured"),
    STR(S, step_source, "step_source"),
    STR(S, basis, "basis", .flags = SUM_REQUIRED),
    {.key = "labels", .type = SUM_CUSTOM, .custom = SUM_C_LABELS},
    OBJ(offsetof(S, run), "run", run_shape),
};
static const struct sum_shape identity_shape = SHAPE("identity", identity_fields);

/* ---- quality ---- */

static const struct sum_field warning_fields[] = {
    STR(struct sum_warning, code, "code", .flags = SUM_REQUIRED),
    STR(struct sum_warning, message, "message"),
};
static const struct sum_shape warning_shape =
    SHAPE("quality.warnings[]", warning_fields, sizeof(struct sum_warning));

static const struct sum_field quality_fields[] = {
    LIST(S, warnings, n_warnings, "warnings", warning_shape, .custom = SUM_C_WARNINGS),
};
static const struct sum_shape quality_shape = SHAPE("quality", quality_fields);

/* ---- steps ---- */

/* The rows of steps.all[]: written, read and freed by hand (SUM_C_STEP_ROWS);
 * the table names them for the docs. */
static const struct sum_field step_fields[] = {
    I64(struct sum_step, step, "step"),
    F64(struct sum_step, us, "us", SUM_W_US_OPT, SUM_U_US, SUM_M_DERIVED, .def = -1),
    F64(struct sum_step, span_us, "span_us", SUM_W_US_OPT, SUM_U_US, SUM_M_DERIVED, .def = -1),
    F64(struct sum_step, host_us, "host_us", SUM_W_US_OPT, SUM_U_US, SUM_M_DERIVED, .def = -1),
    {.key = "steady", .type = SUM_CUSTOM, .custom = SUM_C_STEP_ROWS},
    {.key = "device_us", .type = SUM_CUSTOM, .custom = SUM_C_STEP_ROWS, .unit = SUM_U_US},
};
static const struct sum_shape step_shape =
    SHAPE("steps.all[]", step_fields, sizeof(struct sum_step));

#define STEP_US(m, ...) F64(struct sum_stats, m, #m, SUM_W_US, SUM_U_US, SUM_M_DERIVED, __VA_ARGS__)
#define STEP_METRIC(m)	STEP_US(m, .metric = "step." #m, .group = SUM_G_STEP, .when = SUM_WHEN_STEPS)

static const struct sum_field stats_fields[] = {
    U32(struct sum_stats, count, "count", .unit = SUM_U_COUNT),
    STEP_METRIC(mean_us),
    STEP_METRIC(median_us),
    STEP_METRIC(p90_us),
    STEP_US(min_us),
    STEP_METRIC(max_us),
    STEP_METRIC(mad_us),
};
static const struct sum_shape stats_shape =
    SHAPE("steps.steady", stats_fields, .nulls_unless_count = 1);

static const struct sum_field class_fields[] = {
    STR(struct sum_class, name, "name", .flags = SUM_REQUIRED),
    U32(struct sum_class, count, "count", .unit = SUM_U_COUNT),
    F64(struct sum_class, median_us, "median_us", SUM_W_US, SUM_U_US, SUM_M_DERIVED),
    I64(struct sum_class, representative_step, "representative_step"),
    I32(struct sum_class, periodicity, "periodicity", .fmt = SUM_W_INT_POS),
};
static const struct sum_shape class_shape =
    SHAPE("steps.classes[]", class_fields, sizeof(struct sum_class));

static const struct sum_field steps_fields[] = {
    STR(S, steps_source, "source", .flags = SUM_REQUIRED),
    U32(S, warmup, "warmup"),
    I32(S, warmup_requested, "warmup_requested", .def = -1),
    STR(S, warmup_reason, "warmup_reason"),
    {.key = "all", .type = SUM_CUSTOM, .custom = SUM_C_STEP_ROWS, .sub = &step_shape},
    OBJ(offsetof(S, steady), "steady", stats_shape, .flags = SUM_REQUIRED | SUM_JUDGED),
    LIST(S, classes, n_classes, "classes", class_shape),
    F64(S, skew_us, "skew_us", SUM_W_US, SUM_U_US, SUM_M_DERIVED, .metric = "step.skew_us",
	.group = SUM_G_STEP, .when = SUM_WHEN_SKEW),
    STR(S, slowest_device, "slowest_device"),
};
static const struct sum_shape steps_shape = SHAPE("steps", steps_fields);

/* ---- devices ---- */

#define SPLIT(m) F64(struct sum_split, m, #m, SUM_W_US, SUM_U_US, SUM_M_DERIVED)

static const struct sum_field split_fields[] = {
    SPLIT(wall_us),    SPLIT(busy_us),	       SPLIT(idle_us),
    SPLIT(compute_us), SPLIT(exposed_comm_us), SPLIT(exposed_memcpy_us),
    SPLIT(comm_us),    SPLIT(memcpy_us),       SPLIT(kernel_sum_us),
};
static const struct sum_shape split_shape = SHAPE("split", split_fields);

static const struct sum_field device_fields[] = {
    STR(struct sum_device, id, "id", .flags = SUM_REQUIRED),
    U32(struct sum_device, file, "file"),
    STR(struct sum_device, kind, "kind", .flags = SUM_REQUIRED),
    I32(struct sum_device, index, "index", .def = -1),
    STR(struct sum_device, name, "name"),
    STR(struct sum_device, host, "host"),
    I32(struct sum_device, rank, "rank", .fmt = SUM_W_INT_OPT, .def = -1),
    {.key = "(all)",
     .type = SUM_FLAT,
     .off = offsetof(struct sum_device, all),
     .sub = &split_shape},
    OBJ(offsetof(struct sum_device, steady), "steady", split_shape, .flags = SUM_REQUIRED),
};
static const struct sum_shape device_shape =
    SHAPE("devices[]", device_fields, sizeof(struct sum_device));

static const struct sum_field basis_fields[] = {
    U32(S, basis_devices, "devices"),
    U32(S, basis_steady_steps, "steady_steps"),
};
static const struct sum_shape basis_shape = SHAPE("per_step_basis", basis_fields);

/* ---- breakdown ---- */

/* null when not defined (no device with a steady window; for the overlap, no
 * communication), and then no metric: the gate does not judge it */
#define SHARE(m)                                                                                   \
	F64(struct sum_breakdown_view, m, #m, SUM_W_SHARE_OPT, SUM_U_SHARE, SUM_M_DERIVED,         \
	    .def = -1, .metric = "breakdown." #m, .group = SUM_G_BREAKDOWN,                        \
	    .when = SUM_WHEN_DEVICES)

static const struct sum_field view_fields[] = {
    SHARE(compute_share),
    SHARE(exposed_comm_share),
    SHARE(exposed_memcpy_share),
    SHARE(idle_share),
    SHARE(comm_overlap_share),
    F64(struct sum_breakdown_view, kernel_sum_minus_wall_us_per_step,
	"kernel_sum_minus_wall_us_per_step", SUM_W_US_NAN, SUM_U_US, SUM_M_DERIVED, .def = NAN),
};
static const struct sum_shape view_shape = SHAPE("view", view_fields);

static const struct sum_field breakdown_fields[] = {
    {.key = "basis",
     .type = SUM_CONST,
     .text = "steady steps, per device; mean over the devices with a steady window, and the "
	     "worst device"},
    OBJ(offsetof(S, mean), "mean", view_shape, .flags = SUM_JUDGED),
    OBJ(offsetof(S, worst), "worst", view_shape),
    STR(S, worst_device, "worst_device"),
};
static const struct sum_shape breakdown_shape = SHAPE("breakdown", breakdown_fields);

/* ---- the lists ---- */

#define COUNT_PER_STEP(T)                                                                          \
	F64(T, count_per_step, "count_per_step", SUM_W_FIX3, SUM_U_COUNT, SUM_M_DERIVED)
#define COUNT_TOTAL(T) F64(T, count_total, "count_total", SUM_W_FIX0, SUM_U_COUNT, SUM_M_SUM)
#define US_TOTAL(T, m) F64(T, m, #m, SUM_W_US, SUM_U_US, SUM_M_SUM)

static const struct sum_field family_fields[] = {
    STR(struct sum_family, family, "family", .merge = SUM_M_KEY, .flags = SUM_REQUIRED),
    STR(struct sum_family, category, "category", .merge = SUM_M_FIRST),
    COUNT_PER_STEP(struct sum_family),
    F64(struct sum_family, us_per_step, "us_per_step", SUM_W_US, SUM_U_US, SUM_M_DERIVED,
	.metric = "family.%s.us_per_step", .group = SUM_G_FAMILY, .share = SUM_SHARE_STEP_OR,
	.aux = TYPED(struct sum_family, share, double), .flags = SUM_WINDOW),
    F64(struct sum_family, share, "share", SUM_W_SHARE_OPT, SUM_U_SHARE, SUM_M_DERIVED, .def = -1),
    COUNT_TOTAL(struct sum_family),
    US_TOTAL(struct sum_family, us_total),
};
static const struct sum_shape family_shape =
    SHAPE("families[]", family_fields, sizeof(struct sum_family));

static const struct sum_field op_fields[] = {
    STR(struct sum_op, name, "name", .merge = SUM_M_KEY, .flags = SUM_REQUIRED),
    STR(struct sum_op, family, "family", .merge = SUM_M_FIRST),
    STR(struct sum_op, category, "category", .merge = SUM_M_FIRST),
    COUNT_PER_STEP(struct sum_op),
    F64(struct sum_op, self_us_per_step, "self_us_per_step", SUM_W_US, SUM_U_US, SUM_M_DERIVED,
	JUDGED_US("op.%s.us_per_step", SUM_G_OP, .flags = SUM_WINDOW)),
    F64(struct sum_op, total_us_per_step, "total_us_per_step", SUM_W_US, SUM_U_US, SUM_M_DERIVED),
    COUNT_TOTAL(struct sum_op),
    US_TOTAL(struct sum_op, self_us_total),
    US_TOTAL(struct sum_op, total_us_total),
    {.key = "examples", .type = SUM_CUSTOM, .custom = SUM_C_EXAMPLES, .merge = SUM_M_UNION},
};
static const struct sum_shape op_shape = SHAPE("ops[]", op_fields, sizeof(struct sum_op));

#define C struct sum_collective

static const struct sum_field collective_fields[] = {
    STR(C, kind, "kind", .merge = SUM_M_KEY, .flags = SUM_REQUIRED),
    COUNT_PER_STEP(C),
    F64(C, us_per_step, "us_per_step", SUM_W_US, SUM_U_US, SUM_M_DERIVED,
	JUDGED_US("collective.%s.us_per_step", SUM_G_COLLECTIVE, .flags = SUM_WINDOW)),
    F64(C, bytes_per_step, "bytes_per_step", SUM_W_US_OPT, SUM_U_BYTES, SUM_M_DERIVED, .def = -1),
    F64(C, algbw_gbps, "algbw_gbps", SUM_W_US_OPT, SUM_U_GBPS, SUM_M_DERIVED, .def = -1),
    F64(C, busbw_gbps, "busbw_gbps", SUM_W_US_OPT, SUM_U_GBPS, SUM_M_DERIVED, .def = -1,
	.metric = "collective.%s.busbw_gbps", .group = SUM_G_COLLECTIVE, .when = SUM_WHEN_KNOWN,
	.direction = SUM_HIGHER, .flags = SUM_WINDOW),
    F64(C, capture_count_per_device, "capture_count_per_device", SUM_W_FIX3, SUM_U_COUNT,
	SUM_M_DERIVED),
    F64(C, capture_us_per_device, "capture_us_per_device", SUM_W_US, SUM_U_US, SUM_M_DERIVED),
    COUNT_TOTAL(C),
    US_TOTAL(C, us_total),
    F64(C, bytes_total, "bytes_total", SUM_W_SIZED, SUM_U_BYTES, SUM_M_SUM, .def = -1,
	.aux = TYPED(C, sized, int)),
    U32(C, group_size, "group_size", .merge = SUM_M_MAX, .unit = SUM_U_COUNT),
    F64(C, capture_count_total, "capture_count_total", SUM_W_FIX0, SUM_U_COUNT, SUM_M_SUM),
    US_TOTAL(C, capture_us_total),
    F64(C, capture_bytes_total, "capture_bytes_total", SUM_W_SIZED, SUM_U_BYTES, SUM_M_SUM,
	.def = -1, .aux = TYPED(C, capture_sized, int)),
};
static const struct sum_shape collective_shape =
    SHAPE("collectives[]", collective_fields, sizeof(struct sum_collective));

#undef C

static const struct sum_field gap_fields[] = {
    STR(struct sum_gap, op, "op", .merge = SUM_M_KEY, .flags = SUM_REQUIRED),
    STR(struct sum_gap, marker, "marker", .merge = SUM_M_LAST_NOT_KEY),
    COUNT_PER_STEP(struct sum_gap),
    F64(struct sum_gap, us_per_step, "us_per_step", SUM_W_US, SUM_U_US, SUM_M_DERIVED),
    F64(struct sum_gap, max_us, "max_us", SUM_W_US, SUM_U_US, SUM_M_MAX),
    COUNT_TOTAL(struct sum_gap),
    US_TOTAL(struct sum_gap, us_total),
};
static const struct sum_shape gap_shape = SHAPE("gaps[]", gap_fields, sizeof(struct sum_gap));

static const struct sum_field region_fields[] = {
    STR(struct sum_region, path, "path", .merge = SUM_M_KEY, .flags = SUM_REQUIRED),
    U32(struct sum_region, depth, "depth", .merge = SUM_M_FIRST),
    COUNT_PER_STEP(struct sum_region),
    F64(struct sum_region, inclusive_us_per_step, "inclusive_us_per_step", SUM_W_US, SUM_U_US,
	SUM_M_DERIVED, JUDGED_US("region.%s.us_per_step", SUM_G_REGION)),
    F64(struct sum_region, exclusive_us_per_step, "exclusive_us_per_step", SUM_W_US, SUM_U_US,
	SUM_M_DERIVED),
    COUNT_TOTAL(struct sum_region),
    US_TOTAL(struct sum_region, inclusive_us_total),
    US_TOTAL(struct sum_region, exclusive_us_total),
};
static const struct sum_shape region_shape =
    SHAPE("regions[]", region_fields, sizeof(struct sum_region));

/* What the user declares a step holds (the largest when merged: ranks declare alike). */
#define DECLARED(m, fmt_, unit_) F64(S, rate.m, #m, fmt_, unit_, SUM_M_MAX, .def = -1)
/* A rate derived from the declarations; judged (higher is better) when named. */
#define RATE(m, fmt_, unit_, metric_)                                                              \
	F64(S, rate.m, #m, fmt_, unit_, SUM_M_DERIVED, .def = -1, .metric = metric_,               \
	    .group = SUM_G_THROUGHPUT, .when = SUM_WHEN_KNOWN, .direction = SUM_HIGHER,            \
	    .flags = SUM_WINDOW)

static const struct sum_field throughput_fields[] = {
    F64(S, tflops_per_device, "tflops_per_device", SUM_W_US_OPT, SUM_U_TFLOPS, SUM_M_DERIVED,
	.def = -1, .metric = "throughput.tflops_per_device", .group = SUM_G_THROUGHPUT,
	.when = SUM_WHEN_FLOPS, .direction = SUM_HIGHER, .flags = SUM_WINDOW),
    F64(S, flops_total, "flops_total", SUM_W_SIZED, SUM_U_FLOPS, SUM_M_SUM, .def = -1,
	.aux = TYPED(S, has_flops, int)),
    DECLARED(tokens_per_step, SUM_W_FIX0_OPT, SUM_U_COUNT),
    DECLARED(samples_per_step, SUM_W_FIX0_OPT, SUM_U_COUNT),
    DECLARED(model_flops_per_step, SUM_W_FIX0_OPT, SUM_U_FLOPS),
    /* merge: a peak given by --peak-tflops wins, else summary_finalize looks it up again */
    F64(S, rate.peak_tflops_per_device, "peak_tflops_per_device", SUM_W_US_OPT, SUM_U_TFLOPS,
	SUM_M_DERIVED, .def = -1),
    STR(S, rate.peak_dtype, "peak_dtype"),
    STR(S, rate.peak_source, "peak_source"),
    RATE(tokens_per_s, SUM_W_US_OPT, SUM_U_PER_S, "throughput.tokens_per_s"),
    RATE(samples_per_s, SUM_W_US_OPT, SUM_U_PER_S, "throughput.samples_per_s"),
    RATE(mfu, SUM_W_SHARE_OPT, SUM_U_SHARE, "throughput.mfu"),
    RATE(hfu, SUM_W_SHARE_OPT, SUM_U_SHARE, NULL),
    RATE(devices, SUM_W_FIX0_OPT, SUM_U_COUNT, NULL),
};
static const struct sum_shape throughput_shape = SHAPE("throughput", throughput_fields);

#undef DECLARED
#undef RATE

/* ---- memory ---- */

#define MD struct sum_memory_device
#define PEAK(T, m, merge_, ...)                                                                    \
	F64(T, m, #m, SUM_W_FIX0_OPT, SUM_U_BYTES, merge_, .def = -1, __VA_ARGS__)

static const struct sum_field memory_device_fields[] = {
    STR(MD, device, "device", .merge = SUM_M_KEY, .flags = SUM_REQUIRED),
    STR(MD, kind, "kind", .merge = SUM_M_FIRST),
    PEAK(MD, peak_allocated_bytes, SUM_M_MAX),
    PEAK(MD, peak_reserved_bytes, SUM_M_MAX),
    PEAK(MD, steady_peak_allocated_bytes, SUM_M_MAX),
    PEAK(MD, steady_peak_reserved_bytes, SUM_M_MAX),
    F64(MD, samples_total, "samples_total", SUM_W_FIX0, SUM_U_COUNT, SUM_M_SUM),
};
static const struct sum_shape memory_device_shape =
    SHAPE("memory.devices[]", memory_device_fields, sizeof(MD));

#define M struct sum_memory

static const struct sum_field memory_fields[] = {
    PEAK(M, peak_allocated_bytes, SUM_M_DERIVED, .metric = "memory.peak_allocated_bytes",
	 .group = SUM_G_MEMORY, .when = SUM_WHEN_KNOWN, .flags = SUM_WINDOW),
    PEAK(M, peak_reserved_bytes, SUM_M_DERIVED),
    PEAK(M, steady_peak_allocated_bytes, SUM_M_DERIVED),
    PEAK(M, steady_peak_reserved_bytes, SUM_M_DERIVED),
    LIST(M, devices, n_devices, "devices", memory_device_shape),
};
static const struct sum_shape memory_shape = SHAPE("memory", memory_fields);

#undef M
#undef MD
#undef PEAK

/* ---- the host view ---- */

static const struct sum_field thread_fields[] = {
    STR(struct sum_thread, name, "name", .merge = SUM_M_KEY, .flags = SUM_REQUIRED),
    STR(struct sum_thread, role, "role", .merge = SUM_M_FIRST),
    F64(struct sum_thread, busy_us_per_step, "busy_us_per_step", SUM_W_US, SUM_U_US, SUM_M_DERIVED),
    COUNT_PER_STEP(struct sum_thread),
    US_TOTAL(struct sum_thread, busy_us_total),
    COUNT_TOTAL(struct sum_thread),
};
static const struct sum_shape thread_shape =
    SHAPE("host.threads[]", thread_fields, sizeof(struct sum_thread));

/* The host's families and ops have the device lists' shapes and metric names:
 * they are metrics only when the steps are the host's (SUM_WHEN_HOST_BASIS),
 * and then the device lists are empty. */
static const struct sum_shape host_family_shape =
    SHAPE("host.families[]", family_fields, sizeof(struct sum_family));
static const struct sum_shape host_op_shape = SHAPE("host.ops[]", op_fields, sizeof(struct sum_op));

#define H struct sum_host
#define HOST_US(m, k, metric_)                                                                     \
	F64(H, m, k, SUM_W_US_OPT, SUM_U_US, SUM_M_DERIVED, .def = -1, .metric = metric_,          \
	    .group = SUM_G_HOST, .when = SUM_WHEN_KNOWN)

static const struct sum_field host_fields[] = {
    STR(H, window, "window", .merge = SUM_M_FIRST),
    U32(H, step_threads, "step_threads", .merge = SUM_M_SUM, .unit = SUM_U_COUNT),
    HOST_US(step_median_us, "step_median_us", "host.step_median_us"),
    HOST_US(wall_us_per_step, "wall_us_per_step", NULL),
    HOST_US(busy_us_per_step, "busy_us_per_step", "host.busy_us_per_step"),
    HOST_US(idle_us_per_step, "idle_us_per_step", "host.idle_us_per_step"),
    F64(H, busy_share, "busy_share", SUM_W_SHARE_OPT, SUM_U_SHARE, SUM_M_DERIVED, .def = -1,
	.metric = "host.busy_share", .group = SUM_G_HOST, .when = SUM_WHEN_KNOWN),
    HOST_US(python_us_per_step, "python_us_per_step", "host.python_us_per_step"),
    HOST_US(launch_us_per_step, "launch_us_per_step", "host.launch_us_per_step"),
    /* a step metric, so history records keep it: the gate's witness of a
     * run slowed from outside (gate/runs.c) */
    F64(H, fastest_us_per_step, "fastest_us_per_step", SUM_W_US_OPT, SUM_U_US, SUM_M_DERIVED,
	.def = -1, .metric = "step.fastest_us", .group = SUM_G_STEP, .when = SUM_WHEN_KNOWN),
    US_TOTAL(H, wall_us_total),
    US_TOTAL(H, busy_us_total),
    US_TOTAL(H, python_us_total),
    US_TOTAL(H, launch_us_total),
    US_TOTAL(H, fastest_us_total),
    LIST(H, threads, n_threads, "threads", thread_shape),
    LIST(H, families, n_families, "families", host_family_shape, .flags = SUM_JUDGED,
	 .when = SUM_WHEN_HOST_BASIS),
    LIST(H, ops, n_ops, "ops", host_op_shape, .flags = SUM_JUDGED, .when = SUM_WHEN_HOST_BASIS),
};
static const struct sum_shape host_shape = SHAPE("host", host_fields);

#undef HOST_US
#undef H

static const struct sum_field candidate_fields[] = {
    STR(struct sum_candidate, id, "id", .flags = SUM_REQUIRED),
    STR(struct sum_candidate, title, "title"),
    STR(struct sum_candidate, evidence, "evidence"),
};
static const struct sum_shape candidate_shape =
    SHAPE("candidates[]", candidate_fields, sizeof(struct sum_candidate));

/* ---- the root, in the JSON's order ---- */

static const struct sum_field root_fields[] = {
    {.key = "schema", .type = SUM_CONST, .text = SUMMARY_SCHEMA},
    OBJ(0, "source", source_shape, .flags = SUM_REQUIRED),
    OBJ(0, "identity", identity_shape, .flags = SUM_REQUIRED),
    OBJ(0, "quality", quality_shape),
    OBJ(0, "steps", steps_shape, .flags = SUM_REQUIRED | SUM_JUDGED),
    LIST(S, devices, n_devices, "devices", device_shape),
    OBJ(0, "per_step_basis", basis_shape, .flags = SUM_REQUIRED),
    OBJ(0, "breakdown", breakdown_shape, .flags = SUM_JUDGED),
    LIST(S, families, n_families, "families", family_shape, .flags = SUM_JUDGED),
    LIST(S, ops, n_ops, "ops", op_shape, .flags = SUM_JUDGED),
    LIST(S, collectives, n_collectives, "collectives", collective_shape, .flags = SUM_JUDGED),
    LIST(S, gaps, n_gaps, "gaps", gap_shape),
    LIST(S, regions, n_regions, "regions", region_shape, .flags = SUM_JUDGED),
    OBJ(0, "throughput", throughput_shape, .flags = SUM_JUDGED),
    OBJ(offsetof(S, memory), "memory", memory_shape, .flags = SUM_JUDGED),
    OBJ(offsetof(S, host), "host", host_shape, .flags = SUM_JUDGED),
    LIST(S, candidates, n_candidates, "candidates", candidate_shape),
};
const struct sum_shape summary_root = SHAPE("top level", root_fields);

#undef S

/* ---- records ---- */

#define AT(base, off, T)  ((T *)(void *)((char *)(base) + (off)))
#define CAT(base, off, T) ((const T *)(const void *)((const char *)(base) + (off)))

const struct sum_field *summary_shape_key(const struct sum_shape *sh)
{
	for (uint32_t i = 0; i < sh->n; i++)
		if (sh->f[i].merge == SUM_M_KEY)
			return &sh->f[i];
	return NULL;
}

void summary_record_init(const struct sum_shape *sh, void *rec)
{
	memset(rec, 0, sh->size);
	for (uint32_t i = 0; i < sh->n; i++) {
		const struct sum_field *f = &sh->f[i];
		if (f->type == SUM_F64 && f->fmt != SUM_W_SIZED) /* sized: 0, not known */
			*AT(rec, f->off, double) = f->def;
		else if (f->type == SUM_I32)
			*AT(rec, f->off, int32_t) = (int32_t)f->def;
	}
}

void summary_strings_copy(const struct sum_shape *sh, void *dst, const void *src)
{
	for (uint32_t i = 0; i < sh->n; i++) {
		const struct sum_field *f = &sh->f[i];
		const char *v;
		if (f->type != SUM_STR)
			continue;
		v = *CAT(src, f->off, char *);
		*AT(dst, f->off, char *) = v ? pg_xstrdup(v) : NULL;
	}
}

int summary_has_run(const struct sum_run *r)
{
	for (uint32_t i = 0; i < run_shape.n; i++)
		if (run_shape.f[i].type == SUM_STR && *CAT(r, run_shape.f[i].off, char *))
			return 1;
	return 0;
}

void summary_run_copy(struct sum_run *dst, const struct sum_run *src)
{
	summary_strings_copy(&run_shape, dst, src);
}

void summary_run_release(struct sum_run *r)
{
	summary_record_free(&run_shape, r);
	memset(r, 0, sizeof(*r));
}

/* ---- metrics ---- */

struct walk {
	const struct summary *s;
	double step_us; /* the denominator of step shares */
	summary_metric_fn fn;
	void *ctx;
	struct pg_buf name;
};

/* The step the shares are of: the steady median, or without steps the busy
 * time per step the families add up to. */
static double step_denominator(const struct summary *s)
{
	double sum = 0;

	const struct sum_family *fam;
	uint32_t n;

	if (s->steady.count > 0 && s->steady.median_us > 0)
		return s->steady.median_us;
	fam = summary_step_families(s, &n);
	for (uint32_t i = 0; i < n; i++)
		sum += fam[i].us_per_step;
	return sum;
}

static int metric_exists(const struct summary *s, const struct sum_field *f, double v)
{
	switch (f->when) {
	case SUM_WHEN_ALWAYS: return 1;
	case SUM_WHEN_STEPS: return s->steady.count > 0;
	case SUM_WHEN_SKEW: return s->steady.count > 0 && s->n_devices > 1;
	case SUM_WHEN_DEVICES: return s->n_devices > 0 && v >= 0;
	case SUM_WHEN_KNOWN: return v >= 0;
	case SUM_WHEN_FLOPS: return s->has_flops && v >= 0;
	case SUM_WHEN_HOST_BASIS: return summary_host_basis(s);
	}
	return 0;
}

static double step_share(const struct walk *w, const struct sum_field *f, const void *rec, double v)
{
	if (f->share == SUM_SHARE_NONE)
		return -1;
	if (w->step_us > 0)
		return v / w->step_us;
	return f->share == SUM_SHARE_STEP_OR ? *CAT(rec, f->aux, double) : -1;
}

/* The pattern with its "%s" replaced by the subject. */
static void metric_name(struct pg_buf *b, const char *pattern, const char *subject)
{
	const char *pc = strstr(pattern, "%s");

	b->len = 0;
	if (!pc || !subject) {
		pg_buf_adds(b, pattern);
		return;
	}
	pg_buf_add(b, pattern, (size_t)(pc - pattern));
	pg_buf_adds(b, subject);
	pg_buf_adds(b, pc + 2);
}

static void walk_shape(struct walk *w, const struct sum_shape *sh, const void *base,
		       const char *subject)
{
	for (uint32_t i = 0; i < sh->n; i++) {
		const struct sum_field *f = &sh->f[i];
		if ((f->type == SUM_OBJ || f->type == SUM_FLAT) && (f->flags & SUM_JUDGED)) {
			walk_shape(w, f->sub, (const char *)base + f->off, subject);
		} else if (f->type == SUM_LIST && (f->flags & SUM_JUDGED)) {
			if (f->when == SUM_WHEN_HOST_BASIS && !summary_host_basis(w->s))
				continue;
			const char *rec = *CAT(base, f->off, char *);
			uint32_t n = *CAT(base, f->n_off, uint32_t);
			const struct sum_field *key = summary_shape_key(f->sub);
			for (uint32_t k = 0; k < n; k++, rec += f->sub->size)
				walk_shape(w, f->sub, rec, *CAT(rec, key->off, char *));
		} else if (f->metric && f->type == SUM_F64) {
			double v = *CAT(base, f->off, double);
			if (!metric_exists(w->s, f, v))
				continue;
			metric_name(&w->name, f->metric, subject);
			struct sum_metric m = {w->name.ptr, subject, f, v,
					       step_share(w, f, base, v)};
			w->fn(w->ctx, &m);
		}
	}
}

void summary_metrics_each(const struct summary *s, summary_metric_fn fn, void *ctx)
{
	struct walk w = {s, step_denominator(s), fn, ctx, PG_BUF_INIT};

	walk_shape(&w, &summary_root, s, NULL);
	pg_buf_release(&w.name);
}

/* metric against a field's pattern: 1 when it matches, with *subject the
 * part "%s" stands for (to free), or NULL when the pattern has none. */
static int match(const char *pattern, const char *metric, char **subject)
{
	const char *pc = strstr(pattern, "%s");
	size_t n = strlen(metric), p, q;

	*subject = NULL;
	if (!pc)
		return strcmp(pattern, metric) == 0;
	p = (size_t)(pc - pattern);
	q = strlen(pc + 2);
	if (n <= p + q || strncmp(metric, pattern, p) != 0 || strcmp(metric + n - q, pc + 2) != 0)
		return 0;
	*subject = pg_xstrndup(metric + p, n - p - q);
	return 1;
}

static const struct sum_field *find_metric(const struct sum_shape *sh, size_t at0,
					   const char *metric, const struct sum_field **list,
					   char **subject, size_t *at)
{
	for (uint32_t i = 0; i < sh->n; i++) {
		const struct sum_field *f = &sh->f[i], *r;
		if ((f->type == SUM_OBJ || f->type == SUM_FLAT) && (f->flags & SUM_JUDGED)) {
			if ((r = find_metric(f->sub, at0 + f->off, metric, list, subject, at)))
				return r;
		} else if (f->type == SUM_LIST && (f->flags & SUM_JUDGED)) {
			if ((r = find_metric(f->sub, 0, metric, list, subject, at))) {
				if (!*list)
					*list = f;
				return r;
			}
		} else if (f->metric && match(f->metric, metric, subject)) {
			*at = at0 + f->off;
			return f;
		}
	}
	return NULL;
}

const struct sum_field *summary_metric_field(const char *metric, const struct sum_field **list,
					     char **subject, size_t *at)
{
	*list = NULL;
	*subject = NULL;
	*at = 0;
	return find_metric(&summary_root, 0, metric, list, subject, at);
}

const char *summary_unit_name(enum sum_unit u)
{
	static const char *const names[] = {"",	    "us",     "share", "count", "bytes",
					    "gbps", "tflops", "flops", "per_s"};
	return (size_t)u < PG_ARRAY_LEN(names) ? names[u] : "";
}

static const struct sum_field *metric_field(const char *metric)
{
	const struct sum_field *list;
	char *subject;
	size_t at;
	const struct sum_field *f = summary_metric_field(metric, &list, &subject, &at);

	free(subject);
	return f;
}

const char *summary_metric_unit(const char *metric)
{
	const struct sum_field *f = metric_field(metric);

	switch (f ? f->unit : SUM_U_NONE) {
	case SUM_U_US: return "us";
	case SUM_U_SHARE: return "share";
	case SUM_U_GBPS: return "GB/s";
	case SUM_U_TFLOPS: return "TFLOP/s";
	case SUM_U_BYTES: return "bytes";
	case SUM_U_PER_S: return "/s";
	default: return "";
	}
}

/* Times to the nanosecond, shares to 1e-6, bytes whole, the rest to 1e-3. */
int summary_metric_decimals(const char *metric)
{
	const struct sum_field *f = metric_field(metric);
	if (f && f->unit == SUM_U_BYTES)
		return 0;
	return f && f->unit == SUM_U_SHARE ? 6 : 3;
}
