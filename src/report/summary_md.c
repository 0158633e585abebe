/*
 * The one-profile report: what was measured, the step time, where the time
 * goes (per device and for the job), the heaviest families, ops, collectives,
 * gaps and regions, what to try next, and what to distrust. Deterministic: the
 * same summary gives the same bytes.
 */
#include "report.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_BYTES 100

/* The first max hex digits of a digest (a summary read from a file may hold
 * anything there). */
static void hex_prefix(struct pg_buf *b, const char *s, size_t max)
{
	for (size_t i = 0; s && i < max && s[i] && strchr("0123456789abcdefABCDEF", s[i]); i++)
		pg_buf_addc(b, s[i]);
}

static void pct(struct pg_buf *b, double share)
{
	pg_buf_addf(b, "%.1f%%", 100 * share);
}

int report_host_profile(const struct summary *s)
{
	return summary_host_basis(s) && !s->device_count;
}

/* Table cells: each writes "| ", its value and a space, so a row is its cells
 * and then "|\n". */
static void cell_text(struct pg_buf *b, const char *s, size_t max)
{
	pg_buf_adds(b, "| ");
	report_text(b, s, max);
	pg_buf_addc(b, ' ');
}

static void cell_time(struct pg_buf *b, double us)
{
	pg_buf_adds(b, "| ");
	report_time(b, us);
	pg_buf_addc(b, ' ');
}

static void cell_pct(struct pg_buf *b, double share)
{
	pg_buf_adds(b, "| ");
	pct(b, share);
	pg_buf_addc(b, ' ');
}

/* The cuts of one column of names: the string at offset in each of n rows of
 * stride bytes, cut together so that they read apart (report_cut_names). The
 * caller frees the result. */
static struct report_cut *column_cuts(const void *rows, size_t stride, size_t offset, uint32_t n,
				      size_t max)
{
	const char **names = pg_xmalloc((n + 1) * sizeof(*names));
	struct report_cut *cuts = pg_xmalloc((n + 1) * sizeof(*cuts));

	for (uint32_t i = 0; i < n; i++)
		memcpy(&names[i], (const char *)rows + i * stride + offset, sizeof(*names));
	report_cut_names(names, n, max, cuts);
	free(names);
	return cuts;
}

#define COLUMN_CUTS(rows, field, n, max)                                                           \
	column_cuts((rows), sizeof(*(rows)), offsetof(__typeof__(*(rows)), field), (n), (max))

/* The warning that names a summary's steps without a time. */
static const char *no_work_code(const struct summary *s)
{
	for (uint32_t i = 0; i < s->n_warnings; i++)
		if (strcmp(s->warnings[i].code, "steps-no-device-work") == 0)
			return "steps-no-device-work";
	return "steps-cut";
}

static void cell_code_cut(struct pg_buf *b, const char *s, const struct report_cut *c)
{
	pg_buf_adds(b, "| ");
	report_code_cut(b, s, c);
	pg_buf_addc(b, ' ');
}

/* Devices with and without a steady window. */
static uint32_t steady_device_count(const struct summary *s)
{
	uint32_t n = 0;

	for (uint32_t d = 0; d < s->n_devices; d++)
		n += summary_device_steady(&s->devices[d]) != 0;
	return n;
}

/* breakdown.mean in a sentence: its four parts sum to 100 %, over the devices
 * with a steady window (said when some have none). */
static void breakdown_line(const struct summary *s, struct pg_buf *b)
{
	uint32_t n = steady_device_count(s);

	if (!s->n_devices)
		return;
	if (s->mean.compute_share < 0) {
		pg_buf_adds(
		    b, "No device has work in the steady steps, so there is no time split.\n\n");
		return;
	}
	if (n == s->n_devices)
		pg_buf_adds(b, "Where the time goes (mean over devices, steady steps): ");
	else
		pg_buf_addf(b,
			    "Where the time goes (mean over the %u of %u devices with work in the "
			    "steady steps): ",
			    n, s->n_devices);
	for (int k = 0; k < SUM_N_PARTS; k++) {
		pg_buf_addf(b, "%s%s ", k ? ", " : "", summary_parts[k].name);
		pct(b, summary_part_share(&s->mean, k));
	}
	pg_buf_adds(b, ".\n\n");
}

static void headline(const struct summary *s, struct pg_buf *b)
{
	pg_buf_adds(b, "# profgate report\n\n");
	if (s->steady.count) {
		pg_buf_adds(b, "**Step time ");
		report_time(b, s->steady.median_us);
		pg_buf_adds(b, "** (median of ");
		pg_buf_addf(b, "%u steady step%s, p90 ", s->steady.count,
			    s->steady.count == 1 ? "" : "s");
		report_time(b, s->steady.p90_us);
		pg_buf_adds(b, ", steps from ");
		report_code(b, s->steps_source ? s->steps_source : "none", 40);
		pg_buf_adds(b, ")");
	} else {
		pg_buf_adds(
		    b, "**No steps found**: numbers below are over the whole capture, per device");
	}
	if (report_host_profile(s)) {
		pg_buf_adds(b, " in a host profile (CPU): no device work, so the steps, ops and "
			       "families are the host's.\n\n");
		return;
	}
	pg_buf_addf(b, " on %u device%s", s->device_count, s->device_count == 1 ? "" : "s");
	if (s->device_kind) {
		pg_buf_adds(b, " (");
		report_text(b, s->device_kind, NAME_MAX_BYTES);
		pg_buf_adds(b, ")");
	}
	pg_buf_adds(b, ".\n\n");
	breakdown_line(s, b);
}

static void identity(const struct summary *s, struct pg_buf *b)
{
	pg_buf_adds(b, "## What was measured\n\n| | |\n|---|---|\n");
	pg_buf_adds(b, "| framework | ");
	report_text(b, s->framework ? s->framework : "unknown", 40);
	if (s->framework_version) {
		pg_buf_adds(b, " (");
		report_text(b, s->framework_version, 60);
		pg_buf_adds(b, ")");
	}
	if (report_host_profile(s))
		pg_buf_adds(b, " |\n| devices | none: a host profile (CPU)");
	else
		pg_buf_addf(b, " |\n| devices | %u", s->device_count);
	if (s->device_kind && !report_host_profile(s)) {
		pg_buf_adds(b, " × ");
		report_text(b, s->device_kind, NAME_MAX_BYTES);
	}
	pg_buf_addf(b, " |\n| hosts | %u |\n", s->host_count);
	if (s->world_size >= 0)
		pg_buf_addf(b, "| world size | %d |\n", s->world_size);
	uint32_t untimed = 0;
	for (uint32_t i = 0; i < s->n_steps; i++)
		untimed += s->steps[i].us < 0;
	pg_buf_addf(b, "| steps | %u captured, ", s->steps_captured);
	if (untimed)
		pg_buf_addf(b, "%u without device work (`%s`), ", untimed, no_work_code(s));
	pg_buf_addf(b, "%u warm-up excluded (", s->warmup);
	report_text(b, s->warmup_reason ? s->warmup_reason : "", 160);
	pg_buf_adds(b, ") |\n");
	for (uint32_t i = 0; i < s->n_labels; i++) {
		pg_buf_adds(b, "| label | ");
		report_code(b, s->labels[i], NAME_MAX_BYTES);
		pg_buf_adds(b, " |\n");
	}
	for (uint32_t i = 0; i < s->n_files && i < 20; i++) {
		pg_buf_adds(b, "| file | ");
		report_code(b, s->files[i].path, NAME_MAX_BYTES);
		pg_buf_adds(b, " (");
		report_text(b, s->files[i].dialect ? s->files[i].dialect : "?", 40);
		pg_buf_addf(b, ", %llu events, sha256 `", (unsigned long long)s->files[i].events);
		hex_prefix(b, s->files[i].sha256, 12);
		pg_buf_adds(b, "`) |\n");
	}
	if (s->n_files > 20)
		pg_buf_addf(b, "| file | … and %u more |\n", s->n_files - 20);
	pg_buf_adds(b, "\n");
}

static void steps(const struct summary *s, struct pg_buf *b)
{
	if (!s->steady.count)
		return;
	pg_buf_adds(b, "## Step time\n\n| count | mean | median | p90 | min | max | MAD |\n"
		       "|---:|---:|---:|---:|---:|---:|---:|\n");
	pg_buf_addf(b, "| %u | ", s->steady.count);
	const double v[] = {s->steady.mean_us, s->steady.median_us, s->steady.p90_us,
			    s->steady.min_us,  s->steady.max_us,    s->steady.mad_us};
	for (size_t i = 0; i < PG_ARRAY_LEN(v); i++) {
		report_time(b, v[i]);
		pg_buf_adds(b, i + 1 < PG_ARRAY_LEN(v) ? " | " : " |\n\n");
	}
	if (s->n_classes > 1) {
		pg_buf_adds(b, "Two kinds of step: ");
		for (uint32_t i = 0; i < s->n_classes; i++) {
			const struct sum_class *c = &s->classes[i];
			pg_buf_adds(b, i ? ", " : "");
			report_text(b, c->name, 40);
			pg_buf_addf(b, " ×%u at ", c->count);
			report_time(b, c->median_us);
			if (c->periodicity > 0)
				pg_buf_addf(b, " (every %d steps)", c->periodicity);
		}
		pg_buf_adds(b, ".\n\n");
	}
	if (s->n_devices > 1 && s->slowest_device) {
		pg_buf_adds(b, "Devices differ by ");
		report_time(b, s->skew_us);
		pg_buf_adds(b, " per step on average; the slowest is most often ");
		report_code(b, s->slowest_device, NAME_MAX_BYTES);
		pg_buf_adds(b, ".\n\n");
	}
}

/* Up to this many devices the split has a row per device; past it, the
 * spread over devices and the devices that waited most. */
#define DEVICE_ROWS 16
#define WORST_SHOWN 8

/* The split table's header after its first column: wall, the parts, comm overlapped. */
static void device_columns(struct pg_buf *b)
{
	pg_buf_adds(b, " | wall");
	for (int k = 0; k < SUM_N_PARTS; k++)
		pg_buf_addf(b, " | %s", summary_parts[k].name);
	pg_buf_adds(b, " | comm overlapped |\n|---|---:|---:|---:|---:|---:|---:|\n");
}

#define SPLIT_COLUMNS (SUM_N_PARTS + 2)

/* Column k of the split table for one device: 0 wall (us), 1 to SUM_N_PARTS
 * the parts' shares, then comm overlapped; < 0 when the device has no such
 * value (no communication for the last). */
static double split_value(const struct sum_split *x, int k)
{
	double w = x->wall_us > 0 ? x->wall_us : 1;

	if (k == 0)
		return x->wall_us;
	if (k <= SUM_N_PARTS)
		return summary_part_us(x, k - 1) / w;
	return x->comm_us > 0 ? (x->comm_us - x->exposed_comm_us) / x->comm_us : -1;
}

/* The cell of column k holding y: a time, a share, or "–" when y < 0. */
static void split_cell(struct pg_buf *b, int k, double y)
{
	if (y < 0)
		pg_buf_adds(b, "| – ");
	else if (k == 0)
		cell_time(b, y);
	else
		cell_pct(b, y);
}

/* A device's split as the table's cells after the first. */
static void split_cells(struct pg_buf *b, const struct sum_split *x)
{
	for (int k = 0; k < SPLIT_COLUMNS; k++)
		split_cell(b, k, split_value(x, k));
	pg_buf_adds(b, "|\n");
}

static void device_row(const struct summary *s, struct pg_buf *b, const struct sum_device *d)
{
	static const char *const marks[] = {" ", " (worst) ", " (slowest) ", " (worst, slowest) "};
	int worst = s->n_devices > 1 && s->worst_device && strcmp(s->worst_device, d->id) == 0;
	/* a row per device keeps its marks; past DEVICE_ROWS the slowest is
	 * marked too, as the worst list may be the only place it shows */
	int slowest = s->n_devices > DEVICE_ROWS && s->slowest_device &&
		      strcmp(s->slowest_device, d->id) == 0;

	pg_buf_adds(b, "| ");
	report_code(b, d->id, 60);
	pg_buf_adds(b, marks[worst + 2 * slowest]);
	if (!summary_device_steady(d)) {
		pg_buf_adds(b, "| no work in the steady steps | – | – | – | – | – |\n");
		return;
	}
	split_cells(b, &d->steady);
}

/* The spread of each column over the devices with work in the steady steps:
 * min, median, p90 and max, each column sorted on its own. */
static void device_spread(const struct summary *s, struct pg_buf *b)
{
	static const char *const rows[] = {"min", "median", "p90", "max"};
	static const double q[] = {0, 0.5, 0.9, 1};
	double *v[SPLIT_COLUMNS];
	uint32_t n[SPLIT_COLUMNS] = {0};

	for (int k = 0; k < SPLIT_COLUMNS; k++) {
		v[k] = pg_xmalloc((s->n_devices + 1) * sizeof(double));
		for (uint32_t i = 0; i < s->n_devices; i++) {
			const struct sum_split *x = &s->devices[i].steady;
			double y = split_value(x, k);
			if (x->wall_us > 0 && y >= 0)
				v[k][n[k]++] = y;
		}
		qsort(v[k], n[k], sizeof(double), pg_cmp_double);
	}
	pg_buf_adds(b, "| over devices");
	device_columns(b);
	for (size_t r = 0; r < PG_ARRAY_LEN(rows); r++) {
		pg_buf_addf(b, "| %s ", rows[r]);
		for (int k = 0; k < SPLIT_COLUMNS; k++)
			split_cell(b, k, n[k] ? summary_quantile(v[k], n[k], q[r]) : -1);
		pg_buf_adds(b, "|\n");
	}
	pg_buf_adds(b, "\n");
	for (int k = 0; k < SPLIT_COLUMNS; k++)
		free(v[k]);
}

struct waited {
	uint32_t index;
	double share;
};

/* The largest wait share first, then summary order: the first is the
 * summary's worst device. */
static int by_wait(const void *pa, const void *pb)
{
	const struct waited *a = pa, *b = pb;
	if (a->share != b->share)
		return a->share > b->share ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* The devices that waited most, and the slowest device when it is not one
 * of them. */
static void device_worst(const struct summary *s, struct pg_buf *b)
{
	struct waited *w = pg_xmalloc((s->n_devices + 1) * sizeof(*w));
	uint32_t n = 0, shown;
	int slowest_shown = 0;

	for (uint32_t i = 0; i < s->n_devices; i++)
		if (s->devices[i].steady.wall_us > 0)
			w[n++] = (struct waited){i, summary_wait_share(&s->devices[i].steady)};
	qsort(w, n, sizeof(*w), by_wait);
	shown = n < WORST_SHOWN ? n : WORST_SHOWN;
	pg_buf_addf(b,
		    "The %u device%s that waited most (idle, exposed communication and exposed "
		    "copies, as a share of the wall)",
		    shown, shown == 1 ? "" : "s");
	if (s->slowest_device)
		pg_buf_adds(b, ", and the slowest device");
	pg_buf_adds(b, ":\n\n| device");
	device_columns(b);
	for (uint32_t i = 0; i < shown; i++) {
		const struct sum_device *d = &s->devices[w[i].index];
		slowest_shown |= s->slowest_device && strcmp(s->slowest_device, d->id) == 0;
		device_row(s, b, d);
	}
	for (uint32_t i = 0; i < s->n_devices && s->slowest_device && !slowest_shown; i++)
		if (strcmp(s->slowest_device, s->devices[i].id) == 0) {
			device_row(s, b, &s->devices[i]);
			break;
		}
	pg_buf_adds(b, "\n");
	free(w);
}

static void devices(const struct summary *s, struct pg_buf *b)
{
	if (!s->n_devices)
		return;
	pg_buf_adds(b, "## Where the time goes, per device (steady steps)\n\n");
	if (s->n_devices <= DEVICE_ROWS) {
		pg_buf_adds(b, "| device");
		device_columns(b);
		for (uint32_t i = 0; i < s->n_devices; i++)
			device_row(s, b, &s->devices[i]);
		pg_buf_adds(b, "\n");
		return;
	}
	uint32_t idle = 0;
	for (uint32_t i = 0; i < s->n_devices; i++)
		idle += !(s->devices[i].steady.wall_us > 0);
	if (idle == s->n_devices) {
		pg_buf_addf(b, "%u devices, none with work in the steady steps.\n\n", idle);
		return;
	}
	pg_buf_addf(b,
		    "%u devices: the spread over the %u with work in the steady steps (each "
		    "column on its own, so a row is not one device)",
		    s->n_devices, s->n_devices - idle);
	if (idle)
		pg_buf_addf(b, "; %u device%s had no work in them", idle, idle == 1 ? "" : "s");
	pg_buf_adds(b, ".\n\n");
	device_spread(s, b);
	device_worst(s, b);
}

/* An op row's first cells: name (cut as c says), family, self time per step. */
static void op_cells(struct pg_buf *b, const struct sum_op *o, const struct report_cut *c)
{
	pg_buf_adds(b, "| ");
	report_code_cut(b, o->name, c);
	pg_buf_adds(b, " | ");
	report_text(b, o->family, 60);
	pg_buf_adds(b, " | ");
	report_time(b, o->self_us_per_step);
	pg_buf_adds(b, " | ");
}

/* Family shares are of the step time and need not add up to 100 %: say what
 * they add up to and why, whenever that is not 100 % (to the table's 0.1 %). */
static void family_sum(const struct summary *s, struct pg_buf *b)
{
	double sum = 0;

	if (s->n_families && s->families[0].share < 0) {
		pg_buf_adds(b, "No steady steps, so no step time: the families have no share.\n\n");
		return;
	}
	for (uint32_t i = 0; i < s->n_families; i++)
		sum += s->families[i].share;
	if (fabs(sum - 1) < 0.0005)
		return;
	pg_buf_adds(b, "The families add up to ");
	pct(b, sum);
	pg_buf_adds(b, " of the step, not 100%: a share is the family's time per device per "
		       "step (self time, summed over the device's streams) over the step time "
		       "(the median steady step, the slowest device's). Streams that run at "
		       "once (communication beside compute) each count their time, which adds; "
		       "time a device is idle or waits for the slowest device is no family's, "
		       "which takes away.\n\n");
}

static void families_ops(const struct summary *s, struct pg_buf *b)
{
	if (s->n_families) {
		pg_buf_adds(b, "## Families\n\n| family | category | per step | share of step | "
			       "count per step |\n"
			       "|---|---|---:|---:|---:|\n");
		for (uint32_t i = 0; i < s->n_families; i++) {
			const struct sum_family *f = &s->families[i];
			cell_text(b, f->family, 60);
			cell_text(b, f->category, 60);
			cell_time(b, f->us_per_step);
			if (f->share >= 0)
				cell_pct(b, f->share);
			else
				pg_buf_adds(b, "| – ");
			pg_buf_addf(b, "| %.1f |\n", f->count_per_step);
		}
		pg_buf_adds(b, "\n");
		family_sum(s, b);
	}
	if (s->n_ops) {
		uint32_t n = s->n_ops < 15 ? s->n_ops : 15;
		pg_buf_addf(b,
			    "## Top ops (%u of %u)\n\n| op | family | self per step | total per "
			    "step | count per step |\n"
			    "|---|---|---:|---:|---:|\n",
			    n, s->n_ops);
		struct report_cut *cuts = COLUMN_CUTS(s->ops, name, n, NAME_MAX_BYTES);
		for (uint32_t i = 0; i < n; i++) {
			const struct sum_op *o = &s->ops[i];
			cell_code_cut(b, o->name, &cuts[i]);
			cell_text(b, o->family, 60);
			cell_time(b, o->self_us_per_step);
			cell_time(b, o->total_us_per_step);
			pg_buf_addf(b, "| %.1f |\n", o->count_per_step);
		}
		pg_buf_adds(b, "\n");
		free(cuts);
	}
}

static void collectives(const struct summary *s, struct pg_buf *b)
{
	if (!s->n_collectives)
		return;
	pg_buf_adds(b, "## Collectives\n\n| kind | count per step | time per step | bytes per step "
		       "| algbw | busbw | over the capture, per device |\n"
		       "|---|---:|---:|---:|---:|---:|---:|\n");
	for (uint32_t i = 0; i < s->n_collectives; i++) {
		const struct sum_collective *c = &s->collectives[i];
		cell_text(b, c->kind, 60);
		pg_buf_addf(b, "| %.1f ", c->count_per_step);
		cell_time(b, c->us_per_step);
		if (c->bytes_per_step >= 0)
			pg_buf_addf(b, "| %.3g MB | %.2f GB/s | %.2f GB/s | ",
				    c->bytes_per_step / 1e6, c->algbw_gbps, c->busbw_gbps);
		else
			pg_buf_adds(b, "| – | – | – | ");
		pg_buf_addf(b, "%.0f × , ", c->capture_count_per_device);
		report_time(b, c->capture_us_per_device);
		pg_buf_adds(b, " |\n");
	}
	pg_buf_adds(b, "\n");
}

/* What a step processes, when declared, and the rates that follow. */
static void throughput(const struct summary *s, struct pg_buf *b)
{
	const struct sum_rate *r = &s->rate;

	if (r->tokens_per_s < 0 && r->samples_per_s < 0 && r->mfu < 0 && r->hfu < 0)
		return;
	pg_buf_adds(b, "## Throughput\n\n");
	if (r->tokens_per_s >= 0)
		pg_buf_addf(b, "- %.0f tokens/s (%.0f tokens per step)\n", r->tokens_per_s,
			    r->tokens_per_step);
	if (r->samples_per_s >= 0)
		pg_buf_addf(b, "- %.2f samples/s (%.0f samples per step)\n", r->samples_per_s,
			    r->samples_per_step);
	if (r->mfu >= 0)
		pg_buf_addf(b, "- MFU %.1f%% (%.4g model FLOPs per step over %.0f device%s)\n",
			    100 * r->mfu, r->model_flops_per_step, r->devices,
			    r->devices == 1 ? "" : "s");
	if (r->hfu >= 0)
		pg_buf_addf(b, "- HFU %.1f%% (the ops' own FLOPs)\n", 100 * r->hfu);
	if (r->peak_tflops_per_device >= 0) {
		pg_buf_addf(b, "- peak %.1f TFLOP/s per device: ", r->peak_tflops_per_device);
		report_text(b, r->peak_source ? r->peak_source : "", 120);
		pg_buf_adds(b, "\n");
	}
	pg_buf_adds(b, "\n");
}

static void memory(const struct summary *s, struct pg_buf *b)
{
	const struct sum_memory *m = &s->memory;

	if (!m->n_devices)
		return;
	pg_buf_adds(b, "## Memory\n\n| allocator | peak allocated | peak reserved | steady peak "
		       "allocated | steady peak reserved |\n|---|---:|---:|---:|---:|\n");
	for (uint32_t i = 0; i < m->n_devices; i++) {
		const struct sum_memory_device *d = &m->devices[i];
		const double v[] = {d->peak_allocated_bytes, d->peak_reserved_bytes,
				    d->steady_peak_allocated_bytes, d->steady_peak_reserved_bytes};
		cell_text(b, d->device, 40);
		for (size_t k = 0; k < PG_ARRAY_LEN(v); k++) {
			pg_buf_adds(b, "| ");
			if (v[k] >= 0)
				report_bytes(b, v[k]);
			else
				pg_buf_adds(b, "–");
			pg_buf_adds(b, " ");
		}
		pg_buf_adds(b, "|\n");
	}
	pg_buf_adds(b, "\n");
}

static void gaps_regions(const struct summary *s, struct pg_buf *b)
{
	if (s->n_gaps) {
		uint32_t n = s->n_gaps < 10 ? s->n_gaps : 10;
		pg_buf_adds(b, "## Idle before ops\n\n| before op | after marker | idle per step | "
			       "largest | count per step |\n"
			       "|---|---|---:|---:|---:|\n");
		struct report_cut *ops = COLUMN_CUTS(s->gaps, op, n, NAME_MAX_BYTES);
		struct report_cut *markers = COLUMN_CUTS(s->gaps, marker, n, 60);
		for (uint32_t i = 0; i < n; i++) {
			const struct sum_gap *g = &s->gaps[i];
			cell_code_cut(b, g->op, &ops[i]);
			pg_buf_adds(b, "| ");
			if (g->marker && strcmp(g->marker, g->op) != 0)
				report_code_cut(b, g->marker, &markers[i]);
			pg_buf_addc(b, ' ');
			cell_time(b, g->us_per_step);
			cell_time(b, g->max_us);
			pg_buf_addf(b, "| %.1f |\n", g->count_per_step);
		}
		pg_buf_adds(b, "\n");
		free(ops);
		free(markers);
	}
	if (s->n_regions) {
		uint32_t n = s->n_regions < 10 ? s->n_regions : 10;
		pg_buf_adds(b, "## Regions\n\n| region | inclusive per step | exclusive per step "
			       "|\n|---|---:|---:|\n");
		struct report_cut *cuts = COLUMN_CUTS(s->regions, path, n, 140);
		for (uint32_t i = 0; i < n; i++) {
			const struct sum_region *r = &s->regions[i];
			cell_code_cut(b, r->path, &cuts[i]);
			cell_time(b, r->inclusive_us_per_step);
			cell_time(b, r->exclusive_us_per_step);
			pg_buf_adds(b, "|\n");
		}
		pg_buf_adds(b, "\n");
		free(cuts);
	}
}

static const struct sum_candidate *find_candidate(const struct summary *s, const char *id)
{
	for (uint32_t i = 0; i < s->n_candidates; i++)
		if (s->candidates[i].id && strcmp(s->candidates[i].id, id) == 0)
			return &s->candidates[i];
	return NULL;
}

/* A share of the step thread's wall as a table cell; no cell when there is
 * no wall (no host step markers), as the header has no column then. */
static void wall_share(struct pg_buf *b, const struct sum_host *h, double us)
{
	if (h->wall_us_per_step <= 0)
		return;
	pct(b, us / h->wall_us_per_step);
	pg_buf_adds(b, " | ");
}

/* The step thread's split: what the shares below are of. */
static void host_split(const struct summary *s, struct pg_buf *b)
{
	const struct sum_host *h = &s->host;

	if (h->wall_us_per_step < 0) {
		pg_buf_adds(b,
			    "No host step markers: the host view covers the whole capture and has "
			    "no step thread, so no wall, busy or idle time. Per step: Python "
			    "frames ");
		report_time(b, h->python_us_per_step);
		pg_buf_adds(b, ", launch calls ");
		report_time(b, h->launch_us_per_step);
		pg_buf_adds(b, ".\n\n");
		return;
	}
	pg_buf_adds(b, "Per steady step of the step thread (the thread with the step markers");
	if (h->step_threads > 1)
		pg_buf_addf(b, "; %u of them, one per process, numbers per thread",
			    h->step_threads);
	pg_buf_adds(b, ")");
	if (h->step_median_us >= 0) {
		pg_buf_adds(b, "; the median step marker spans ");
		report_time(b, h->step_median_us);
	}
	pg_buf_adds(b, ":\n\n| wall | busy | idle | busy share | Python frames | launch calls "
		       "|\n|---:|---:|---:|---:|---:|---:|\n| ");
	const double v[] = {h->wall_us_per_step, h->busy_us_per_step, h->idle_us_per_step};
	for (size_t i = 0; i < PG_ARRAY_LEN(v); i++) {
		report_time(b, v[i]);
		pg_buf_adds(b, " | ");
	}
	pct(b, h->busy_share);
	pg_buf_adds(b, " | ");
	report_time(b, h->python_us_per_step);
	pg_buf_adds(b, " | ");
	report_time(b, h->launch_us_per_step);
	pg_buf_adds(b, " |\n\n");
}

static void host_families_ops(const struct summary *s, struct pg_buf *b)
{
	const struct sum_host *h = &s->host;
	int walled = h->wall_us_per_step > 0;
	const char *share = walled ? " share of step thread |" : "";
	const char *align = walled ? "---:|" : "";

	if (h->n_families) {
		uint32_t n = h->n_families < 10 ? h->n_families : 10;
		pg_buf_addf(b, "| host family | per step |%s count per step |\n|---|---:|%s---:|\n",
			    share, align);
		for (uint32_t i = 0; i < n; i++) {
			const struct sum_family *f = &h->families[i];
			pg_buf_adds(b, "| ");
			report_text(b, f->family, 60);
			pg_buf_adds(b, " | ");
			report_time(b, f->us_per_step);
			pg_buf_adds(b, " | ");
			wall_share(b, h, f->us_per_step);
			pg_buf_addf(b, "%.1f |\n", f->count_per_step);
		}
		if (n < h->n_families)
			pg_buf_addf(b, "| … %u more | |%s |\n", h->n_families - n,
				    walled ? " |" : "");
		pg_buf_adds(b, "\n");
	}
	if (h->n_ops) {
		uint32_t n = h->n_ops < 10 ? h->n_ops : 10;
		pg_buf_addf(b,
			    "| host op (%u of %u) | family | self per step |%s count per step |\n"
			    "|---|---|---:|%s---:|\n",
			    n, h->n_ops, share, align);
		struct report_cut *cuts = COLUMN_CUTS(h->ops, name, n, NAME_MAX_BYTES);
		for (uint32_t i = 0; i < n; i++) {
			const struct sum_op *o = &h->ops[i];
			op_cells(b, o, &cuts[i]);
			wall_share(b, h, o->self_us_per_step);
			pg_buf_addf(b, "%.1f |\n", o->count_per_step);
		}
		pg_buf_adds(b, "\n");
		free(cuts);
	}
	if (walled && (h->n_families || h->n_ops))
		pg_buf_adds(b,
			    "Times are self time on every host thread, so the shares can add past "
			    "100% when other threads work beside the step thread.\n\n");
}

/* The data-loading family and the threads whose time is mostly data loading. */
static void host_data_loading(const struct summary *s, struct pg_buf *b)
{
	const struct sum_host *h = &s->host;
	const struct sum_family *f = NULL;
	uint32_t loaders = 0;
	double loader_us = 0;

	for (uint32_t i = 0; i < h->n_families; i++)
		if (h->families[i].family && strcmp(h->families[i].family, "data-loading") == 0)
			f = &h->families[i];
	for (uint32_t i = 0; i < h->n_threads; i++)
		if (h->threads[i].role && strcmp(h->threads[i].role, "data-loader") == 0) {
			loaders++;
			loader_us += h->threads[i].busy_us_per_step;
		}
	pg_buf_adds(b, "Data loading: ");
	if (f) {
		report_time(b, f->us_per_step);
		pg_buf_adds(b, " per step");
		if (h->wall_us_per_step > 0) {
			pg_buf_adds(b, " (");
			pct(b, f->us_per_step / h->wall_us_per_step);
			pg_buf_adds(b, " of the step thread)");
		}
	} else {
		pg_buf_adds(b, "no data-loading events");
	}
	if (loaders) {
		pg_buf_addf(b, "; %u data-loader thread%s busy ", loaders, loaders == 1 ? "" : "s");
		report_time(b, loader_us);
		pg_buf_adds(b, " per step");
	} else {
		pg_buf_adds(b, "; no data-loader threads");
	}
	pg_buf_adds(b, ".\n\n");
}

static void host_threads(const struct summary *s, struct pg_buf *b)
{
	const struct sum_host *h = &s->host;

	if (!h->n_threads)
		return;
	uint32_t n = h->n_threads < 8 ? h->n_threads : 8;
	pg_buf_adds(b,
		    "| thread | role | busy per step | events per step |\n|---|---|---:|---:|\n");
	struct report_cut *cuts = COLUMN_CUTS(h->threads, name, n, NAME_MAX_BYTES);
	for (uint32_t i = 0; i < n; i++) {
		const struct sum_thread *t = &h->threads[i];
		pg_buf_adds(b, "| ");
		report_code_cut(b, t->name, &cuts[i]);
		pg_buf_adds(b, " | ");
		report_text(b, t->role ? t->role : "other", 40);
		pg_buf_adds(b, " | ");
		report_time(b, t->busy_us_per_step);
		pg_buf_addf(b, " | %.1f |\n", t->count_per_step);
	}
	if (n < h->n_threads)
		pg_buf_addf(b, "| … %u more threads | | | |\n", h->n_threads - n);
	pg_buf_adds(b, "\n");
	free(cuts);
}

/* host.*: what the host threads did in the steady steps. */
static void host(const struct summary *s, struct pg_buf *b)
{
	if (!s->host.window)
		return;
	pg_buf_adds(b, "## Host\n\n");
	const struct sum_candidate *c = find_candidate(s, "host-bound");
	if (c) {
		pg_buf_adds(b, "**Host-bound**: ");
		report_text(b, c->evidence, 400);
		pg_buf_adds(b, "\n\n");
	}
	host_split(s, b);
	host_families_ops(s, b);
	host_data_loading(s, b);
	host_threads(s, b);
}

/* The rest of a bullet after its lead: sep, the text (cut at 400 bytes), end
 * of line. */
static void bullet_text(struct pg_buf *b, const char *sep, const char *text)
{
	pg_buf_adds(b, sep);
	report_text(b, text, 400);
	pg_buf_adds(b, "\n");
}

static void candidates_quality(const struct summary *s, struct pg_buf *b)
{
	if (s->n_candidates) {
		pg_buf_adds(b, "## What to try next\n\n");
		for (uint32_t i = 0; i < s->n_candidates; i++) {
			pg_buf_adds(b, "- **");
			report_text(b, s->candidates[i].title, 120);
			bullet_text(b, "**: ", s->candidates[i].evidence);
		}
		pg_buf_adds(b, "\n");
	}
	if (s->n_warnings) {
		pg_buf_adds(b, "## Quality warnings\n\n");
		for (uint32_t i = 0; i < s->n_warnings; i++) {
			pg_buf_adds(b, "- ");
			report_code(b, s->warnings[i].code, 40);
			bullet_text(b, ": ", s->warnings[i].message);
		}
		pg_buf_adds(b, "\n");
	}
}

void report_summary_md(const struct summary *s, struct pg_buf *out)
{
	headline(s, out);
	identity(s, out);
	steps(s, out);
	devices(s, out);
	families_ops(s, out);
	collectives(s, out);
	gaps_regions(s, out);
	throughput(s, out);
	memory(s, out);
	host(s, out);
	candidates_quality(s, out);
	pg_buf_adds(out, "<sub>profgate ");
	report_text(out, s->profgate_version, 40);
	pg_buf_addf(out, " · %s · basis ", SUMMARY_SCHEMA);
	report_code(out, s->basis ? s->basis : "", 120);
	pg_buf_adds(out, "</sub>\n");
}
