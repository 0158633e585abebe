/*
 * profgate inspect: what a profile file holds, before any analysis. Per file:
 * format, dialect, producer hints, event counts by phase, devices, tracks with
 * counts and spans, step markers, quality warnings. Text, or --json.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../analyze/analyze.h"
#include "../read/read.h"
#include "../source/source.h"
#include "../trace/trace.h"

static int opt_json;
static const char *opt_capture, *opt_threads;

static const struct cmd_opt inspect_opts[] = {
    {"json", 0, NULL, "print one JSON document instead of text", &opt_json, NULL, 0},
    CMD_OPTS_READ(&opt_capture, &opt_threads),
};

const struct cmd_spec cmd_inspect_spec = {
    "inspect", "INPUT...",
    "Show what each profile file holds: format, dialect, producer, event counts,\n"
    "devices, tracks, step markers and quality warnings. An INPUT may be a file or a\n"
    "profile directory (a logdir, plugins/profile/, a timestamp folder, a Kineto trace\n"
    "folder): the files of its newest capture are read, and the captures seen are listed.\n"
    "A W&B run or artifact (wandb://ENTITY/PROJECT/RUN_ID, wandb-artifact://...) is fetched.",
    inspect_opts, (int)PG_ARRAY_LEN(inspect_opts)};

/* Stable per-file device ids: gpu0, tpu3, cpu, cpu#2, other0. */
static void device_id(const struct trace *t, uint32_t d, char *out, size_t cap)
{
	const struct trace_device *dev = &t->devices[d];
	int dup = 0;

	for (uint32_t i = 0; i < d; i++) {
		const struct trace_device *o = &t->devices[i];
		if (o->file == dev->file && o->kind == dev->kind && o->index == dev->index)
			dup++;
	}
	if (dev->kind == TRACE_DEV_CPU)
		snprintf(out, cap, "cpu");
	else if (dev->index >= 0)
		snprintf(out, cap, "%s%d", trace_dev_kind_name(dev->kind), dev->index);
	else
		snprintf(out, cap, "%s", trace_dev_kind_name(dev->kind));
	if (dup) {
		size_t n = strlen(out);
		snprintf(out + n, cap - n, "#%d", dup + 1);
	}
}

static int has_events_device(const struct trace *t, uint32_t d)
{
	return t->devices[d].n_events > 0;
}

/* A count or index that is negative when unknown: null then. */
static void int_or_null(struct pg_json *j, const char *key, int64_t v)
{
	pg_json_key(j, key);
	if (v >= 0)
		pg_json_int(j, v);
	else
		pg_json_null(j);
}

static void phases_json(struct pg_json *j, const struct trace_file *f)
{
	pg_json_obj_begin(j);
	for (int p = 0; p < 128; p++) {
		if (!f->phase_counts[p])
			continue;
		char k[2] = {(char)p, 0};
		pg_json_kv_uint(j, k, f->phase_counts[p]);
	}
	pg_json_obj_end(j);
}

static void device_json(struct pg_json *j, const struct trace *t, uint32_t d)
{
	const struct trace_device *dev = &t->devices[d];
	char id[64];

	device_id(t, d, id, sizeof(id));
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "id", id);
	pg_json_kv_str(j, "kind", trace_dev_kind_name(dev->kind));
	pg_json_kv_int(j, "index", dev->index);
	pg_json_kv_str(j, "label", trace_str_get(t, dev->label));
	pg_json_kv_str(j, "name", dev->name ? trace_str_get(t, dev->name) : NULL);
	pg_json_kv_str(j, "host", dev->host ? trace_str_get(t, dev->host) : NULL);
	pg_json_kv_int(j, "rank", dev->rank);
	pg_json_kv_uint(j, "events", dev->n_events);
	pg_json_obj_end(j);
}

static void track_json(struct pg_json *j, const struct trace *t, const struct trace_track *tr)
{
	int has_span = tr->first_ns <= tr->last_ns;
	char id[64];

	device_id(t, tr->device, id, sizeof(id));
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "device", id);
	pg_json_kv_str(j, "kind", trace_track_kind_name(tr->kind));
	pg_json_kv_str(j, "name", trace_str_get(t, tr->name));
	pg_json_kv_str(j, "pid", trace_str_get(t, tr->pid));
	pg_json_kv_str(j, "tid", trace_str_get(t, tr->tid));
	pg_json_kv_uint(j, "events", tr->n_events);
	pg_json_key(j, "first_us");
	if (has_span)
		pg_json_double(j, (double)tr->first_ns / 1000.0, 3);
	else
		pg_json_null(j);
	pg_json_key(j, "span_us");
	if (has_span)
		pg_json_double(j, (double)(tr->last_ns - tr->first_ns) / 1000.0, 3);
	else
		pg_json_null(j);
	pg_json_obj_end(j);
}

static void file_json(struct pg_json *j, const struct trace *t, uint32_t fi,
		      const struct analyze_marker *mk)
{
	const struct trace_file *f = &t->files[fi];

	pg_json_obj_begin(j);
	pg_json_kv_str(j, "path", f->path);
	pg_json_kv_str(j, "format", trace_format_name(f->format));
	pg_json_kv_str(j, "duplicate_of",
		       f->duplicate_of != UINT32_MAX ? t->files[f->duplicate_of].path : NULL);
	pg_json_kv_str(j, "compression", f->compressed ? "gzip" : "none");
	pg_json_kv_str(j, "dialect", trace_dialect_name(f->dialect));
	pg_json_kv_uint(j, "bytes", f->bytes);
	pg_json_kv_uint(j, "content_bytes", f->content_bytes);
	pg_json_kv_uint(j, "events", f->entries);
	pg_json_kv_uint(j, "events_kept", f->events_kept);
	pg_json_key(j, "phases");
	phases_json(j, f);
	pg_json_key(j, "producer");
	pg_json_obj_begin(j);
	pg_json_kv_str(j, "framework", f->framework);
	pg_json_kv_str(j, "version", f->framework_version);
	pg_json_kv_str(j, "device_kind", f->device_kind);
	int_or_null(j, "schema_version", f->schema_version);
	pg_json_kv_str(j, "display_time_unit",
		       f->display_time_unit[0] ? f->display_time_unit : NULL);
	pg_json_kv_int(j, "base_time_ns", f->base_time_ns);
	pg_json_obj_end(j);
	pg_json_key(j, "distributed");
	pg_json_obj_begin(j);
	pg_json_kv_int(j, "rank", f->rank);
	pg_json_kv_int(j, "world_size", f->world_size);
	pg_json_kv_str(j, "backend", f->backend);
	pg_json_obj_end(j);
	pg_json_kv_uint(j, "declared_devices", f->declared_devices);

	if (f->format == TRACE_FMT_XPLANE) {
		pg_json_kv_str(j, "host", f->host);
		pg_json_kv_uint(j, "aggregate_events", f->aggregate_events);
		pg_json_kv_int(j, "profile_start_ns", f->profile_start_ns);
		pg_json_kv_int(j, "profile_stop_ns", f->profile_stop_ns);
		pg_json_key(j, "planes");
		pg_json_arr_begin(j);
		for (uint32_t p = 0; p < f->n_planes; p++) {
			pg_json_obj_begin(j);
			pg_json_kv_str(j, "name", f->planes[p].name);
			pg_json_kv_int(j, "id", f->planes[p].id);
			pg_json_kv_uint(j, "lines", f->planes[p].lines);
			pg_json_kv_uint(j, "events", f->planes[p].events);
			pg_json_obj_end(j);
		}
		pg_json_arr_end(j);
	}
	pg_json_key(j, "devices");
	pg_json_arr_begin(j);
	for (uint32_t d = 0; d < t->n_devices; d++)
		if (t->devices[d].file == fi && has_events_device(t, d))
			device_json(j, t, d);
	pg_json_arr_end(j);

	pg_json_key(j, "tracks");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < t->n_tracks; i++) {
		const struct trace_track *tr = &t->tracks[i];
		if (tr->device != UINT32_MAX && t->devices[tr->device].file == fi && tr->n_events)
			track_json(j, t, tr);
	}
	pg_json_arr_end(j);

	pg_json_key(j, "steps");
	pg_json_arr_begin(j);
	for (int k = 0; k < ANALYZE_MARK_COUNT; k++) {
		if (!mk[k].count)
			continue;
		pg_json_obj_begin(j);
		pg_json_kv_str(j, "source", analyze_marker_name((enum analyze_marker_kind)k));
		pg_json_kv_uint(j, "markers", mk[k].count);
		int_or_null(j, "first_step", mk[k].first_step);
		int_or_null(j, "last_step", mk[k].last_step);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);

	pg_json_key(j, "warnings");
	pg_json_arr_begin(j);
	for (uint32_t w = 0; w < t->n_warnings; w++) {
		if (t->warnings[w].file != fi)
			continue;
		pg_json_obj_begin(j);
		pg_json_kv_str(j, "code", t->warnings[w].code);
		pg_json_kv_str(j, "message", t->warnings[w].message);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
	pg_json_obj_end(j);
}

static void fmt_span(char *out, size_t cap, int64_t ns)
{
	if (ns >= 1000000000)
		snprintf(out, cap, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(out, cap, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(out, cap, "%.3f us", (double)ns / 1e3);
}

/* Every name from a profile or a file name goes out as one line (pg_line, in
 * t1 or t2): a track named "x\n::error::" cannot start a line of its own. */
static void file_text(struct pg_buf *b, const struct trace *t, uint32_t fi,
		      const struct analyze_marker *mk)
{
	const struct trace_file *f = &t->files[fi];
	struct pg_buf t1 = PG_BUF_INIT, t2 = PG_BUF_INIT;
	char id[64], span[32];
	int any = 0;

	pg_buf_add_line(b, f->path);
	pg_buf_addc(b, '\n');
	if (f->duplicate_of != UINT32_MAX) {
		pg_buf_addf(b, "  identical  to %s (same sha256): read once\n",
			    pg_line(&t1, t->files[f->duplicate_of].path));
		pg_buf_release(&t1);
		return;
	}
	pg_buf_addf(b, "  format     %s%s, dialect %s, %llu bytes", trace_format_name(f->format),
		    f->compressed ? " (gzip)" : "", trace_dialect_name(f->dialect),
		    (unsigned long long)f->bytes);
	if (f->compressed)
		pg_buf_addf(b, " (%llu uncompressed)", (unsigned long long)f->content_bytes);
	pg_buf_addc(b, '\n');
	pg_buf_addf(b, "  producer   %s", f->framework ? pg_line(&t1, f->framework) : "unknown");
	if (f->framework_version)
		pg_buf_addf(b, " (%s)", pg_line(&t1, f->framework_version));
	if (f->device_kind)
		pg_buf_addf(b, "; device %s", pg_line(&t1, f->device_kind));
	if (f->rank >= 0)
		pg_buf_addf(b, "; rank %d", f->rank);
	if (f->world_size >= 0)
		pg_buf_addf(b, " of %d", f->world_size);
	if (f->backend)
		pg_buf_addf(b, " (%s)", pg_line(&t1, f->backend));
	if (f->display_time_unit[0])
		pg_buf_addf(b, "; displayTimeUnit %s (display only)",
			    pg_line(&t1, f->display_time_unit));
	pg_buf_addc(b, '\n');
	if (f->format == TRACE_FMT_XPLANE) {
		pg_buf_addf(b, "  events     %llu XEvents\n", (unsigned long long)f->entries);
	} else {
		pg_buf_addf(b, "  events     %llu (", (unsigned long long)f->entries);
		for (int p = 0; p < 128; p++)
			if (f->phase_counts[p]) {
				pg_buf_addf(b, "%s%c %llu", any ? ", " : "", p,
					    (unsigned long long)f->phase_counts[p]);
				any = 1;
			}
		pg_buf_addf(b, "%s)\n", any ? "" : "none");
	}

	if (f->format == TRACE_FMT_XPLANE) {
		pg_buf_addf(b, "  host       %s", pg_line(&t1, f->host));
		if (f->aggregate_events)
			pg_buf_addf(b, "; %llu aggregate events (counted, no time)",
				    (unsigned long long)f->aggregate_events);
		pg_buf_adds(b, "\n  planes     ");
		for (uint32_t p = 0; p < f->n_planes; p++)
			pg_buf_addf(b, "%s%s(%llu)", p ? ", " : "", pg_line(&t1, f->planes[p].name),
				    (unsigned long long)f->planes[p].events);
		pg_buf_addc(b, '\n');
	}
	pg_buf_adds(b, "  devices\n");
	for (uint32_t d = 0; d < t->n_devices; d++) {
		const struct trace_device *dev = &t->devices[d];
		if (dev->file != fi || !has_events_device(t, d))
			continue;
		device_id(t, d, id, sizeof(id));
		pg_buf_addf(b, "    %-8s %-24s %10llu events", id,
			    pg_line(&t1, trace_str_get(t, dev->label)),
			    (unsigned long long)dev->n_events);
		if (dev->name)
			pg_buf_addf(b, "  %s", pg_line(&t1, trace_str_get(t, dev->name)));
		pg_buf_addc(b, '\n');
	}
	pg_buf_adds(b, "  tracks\n");
	uint32_t host_shown = 0, host_more = 0;
	uint64_t host_more_events = 0;
	for (uint32_t i = 0; i < t->n_tracks; i++) {
		const struct trace_track *tr = &t->tracks[i];
		if (tr->device == UINT32_MAX || t->devices[tr->device].file != fi || !tr->n_events)
			continue;
		/* text mode keeps host threads short; --json lists every track */
		if (tr->kind == TRACE_TRACK_HOST_THREAD && ++host_shown > 12) {
			host_more++;
			host_more_events += tr->n_events;
			continue;
		}
		device_id(t, tr->device, id, sizeof(id));
		fmt_span(span, sizeof(span),
			 tr->first_ns <= tr->last_ns ? tr->last_ns - tr->first_ns : 0);
		const char *name = trace_str_get(t, tr->name);
		pg_buf_addf(b, "    %-8s %-13s %-32.32s %10llu events  span %s\n", id,
			    trace_track_kind_name(tr->kind),
			    pg_line(&t1, name[0] ? name : trace_str_get(t, tr->tid)),
			    (unsigned long long)tr->n_events, span);
	}
	if (host_more)
		pg_buf_addf(b,
			    "    ... %u more host threads with %llu events (--json lists them)\n",
			    host_more, (unsigned long long)host_more_events);
	pg_buf_adds(b, "  steps     ");
	any = 0;
	for (int k = 0; k < ANALYZE_MARK_COUNT; k++) {
		if (!mk[k].count)
			continue;
		pg_buf_addf(b, "%s %s: %llu markers", any ? ";" : "",
			    analyze_marker_name((enum analyze_marker_kind)k),
			    (unsigned long long)mk[k].count);
		if (mk[k].first_step >= 0)
			pg_buf_addf(b, " (steps %lld..%lld)", (long long)mk[k].first_step,
				    (long long)mk[k].last_step);
		any = 1;
	}
	pg_buf_adds(b, any ? "\n" : " none found\n");
	for (uint32_t w = 0; w < t->n_warnings; w++)
		if (t->warnings[w].file == fi)
			pg_buf_addf(b, "  warning    %s: %s\n", pg_line(&t1, t->warnings[w].code),
				    pg_line(&t2, t->warnings[w].message));
	pg_buf_release(&t1);
	pg_buf_release(&t2);
}

static void captures_json(struct pg_json *j, const struct source_set *src)
{
	pg_json_key(j, "captures");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < src->n_captures; i++) {
		const struct source_capture *c = &src->captures[i];
		int chosen = 0;
		for (uint32_t k = 0; k < src->n_chosen; k++)
			chosen |= src->chosen[k] == (int32_t)i;
		pg_json_obj_begin(j);
		pg_json_kv_str(j, "name", c->name);
		pg_json_kv_str(j, "dir", c->dir);
		pg_json_key(j, "chosen");
		pg_json_bool(j, chosen);
		pg_json_key(j, "files");
		pg_json_arr_begin(j);
		for (uint32_t k = 0; k < c->n_files; k++) {
			pg_json_obj_begin(j);
			pg_json_kv_str(j, "path", c->files[k].path);
			pg_json_kv_str(j, "kind", source_kind_name(c->files[k].kind));
			pg_json_kv_uint(j, "bytes", c->files[k].bytes);
			pg_json_obj_end(j);
		}
		pg_json_arr_end(j);
		pg_json_obj_end(j);
	}
	pg_json_arr_end(j);
	pg_json_key(j, "notes");
	pg_json_arr_begin(j);
	for (uint32_t i = 0; i < src->n_notes; i++)
		pg_json_str(j, src->notes[i]);
	pg_json_arr_end(j);
}

static void captures_text(struct pg_buf *b, const struct source_set *src)
{
	struct pg_buf t1 = PG_BUF_INIT, t2 = PG_BUF_INIT;

	for (uint32_t i = 0; i < src->n_captures; i++) {
		const struct source_capture *c = &src->captures[i];
		int chosen = 0;
		for (uint32_t k = 0; k < src->n_chosen; k++)
			chosen |= src->chosen[k] == (int32_t)i;
		pg_buf_addf(b, "capture %s%s: %u files in %s\n", pg_line(&t1, c->name),
			    chosen ? " (chosen)" : "", c->n_files, pg_line(&t2, c->dir));
	}
	for (uint32_t i = 0; i < src->n_notes; i++)
		pg_buf_addf(b, "note: %s\n", pg_line(&t1, src->notes[i]));
	if (src->n_captures || src->n_notes)
		pg_buf_addc(b, '\n');
	pg_buf_release(&t1);
	pg_buf_release(&t2);
}

/* What was read, across files: hosts, ranks, devices by kind. */
struct readout {
	uint32_t files, duplicates, hosts, ranks, dev[4];
};

static void count_readout(const struct trace *t, struct readout *r)
{
	memset(r, 0, sizeof(*r));
	for (uint32_t f = 0; f < t->n_files; f++) {
		const struct trace_file *fi = &t->files[f];
		int seen = 0;
		r->files++;
		if (fi->duplicate_of != UINT32_MAX)
			r->duplicates++;
		for (uint32_t g = 0; g < f && fi->host; g++)
			if (t->files[g].host && strcmp(t->files[g].host, fi->host) == 0)
				seen = 1;
		if (fi->host && !seen)
			r->hosts++;
		seen = 0;
		for (uint32_t g = 0; g < f && fi->rank >= 0; g++)
			if (t->files[g].rank == fi->rank)
				seen = 1;
		if (fi->rank >= 0 && !seen)
			r->ranks++;
	}
	for (uint32_t d = 0; d < t->n_devices; d++)
		if (t->devices[d].n_events)
			r->dev[t->devices[d].kind]++;
}

static void readout_json(struct pg_json *j, const struct readout *r)
{
	pg_json_key(j, "read");
	pg_json_obj_begin(j);
	pg_json_kv_uint(j, "files", r->files);
	pg_json_kv_uint(j, "duplicates", r->duplicates);
	pg_json_kv_uint(j, "hosts", r->hosts);
	pg_json_kv_uint(j, "ranks", r->ranks);
	pg_json_key(j, "devices");
	pg_json_obj_begin(j);
	for (int k = 0; k < 4; k++)
		pg_json_kv_uint(j, trace_dev_kind_name((enum trace_dev_kind)k), r->dev[k]);
	pg_json_obj_end(j);
	pg_json_obj_end(j);
}

int cmd_inspect(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct cmd_stdin in = {0};
	struct trace t;
	struct source_set src;
	struct pg_buf out = PG_BUF_INIT;
	struct pg_json j;
	int n_pos, rc = PG_EXIT_OK, threads;

	opt_json = 0;
	opt_capture = opt_threads = NULL;
	if (cmd_parse_or_help(&cmd_inspect_spec, argc, argv, pos, &n_pos, NULL, &rc)) {
		free(pos);
		return cmd_finish(rc);
	}
	if (n_pos == 0) {
		free(pos);
		pg_error_set(PG_EUSAGE, "inspect: no input given (see 'profgate inspect --help')");
		return cmd_error(PG_EXIT_USAGE);
	}
	if (cmd_parse_threads("inspect", opt_threads, &threads)) {
		free(pos);
		return cmd_error(PG_EXIT_USAGE);
	}
	if ((rc = cmd_stdin_take("inspect", pos, n_pos, &in)) != 0) {
		cmd_stdin_release(&in);
		free(pos);
		return cmd_error(rc == PG_EUSAGE ? PG_EXIT_USAGE : PG_EXIT_INPUT);
	}
	rc = cmd_read_inputs(&src, &t, pos, n_pos, opt_capture, threads, 0);
	cmd_stdin_unname_trace(&in, &t);
	struct analyze_marker *marks =
	    pg_xcalloc((size_t)t.n_files * ANALYZE_MARK_COUNT + 1, sizeof(*marks));
	analyze_markers(&t, marks);
	if (opt_json) {
		pg_json_init(&j, &out, 1);
		pg_json_obj_begin(&j);
		captures_json(&j, &src);
		struct readout ro;
		count_readout(&t, &ro);
		readout_json(&j, &ro);
		pg_json_key(&j, "files");
		pg_json_arr_begin(&j);
		for (uint32_t f = 0; f < t.n_files; f++)
			file_json(&j, &t, f, &marks[(size_t)f * ANALYZE_MARK_COUNT]);
		pg_json_arr_end(&j);
		pg_json_obj_end(&j);
	} else {
		captures_text(&out, &src);
		if (t.n_files > 1) {
			struct readout ro;
			count_readout(&t, &ro);
			pg_buf_addf(
			    &out,
			    "read %u files (%u identical), %u hosts, %u ranks; devices with "
			    "events: %u gpu, %u tpu, %u cpu, %u other\n\n",
			    ro.files, ro.duplicates, ro.hosts, ro.ranks, ro.dev[TRACE_DEV_GPU],
			    ro.dev[TRACE_DEV_TPU], ro.dev[TRACE_DEV_CPU], ro.dev[TRACE_DEV_OTHER]);
		}
		for (uint32_t f = 0; f < t.n_files; f++) {
			if (f)
				pg_buf_addc(&out, '\n');
			file_text(&out, &t, f, &marks[(size_t)f * ANALYZE_MARK_COUNT]);
		}
	}
	fwrite(out.ptr, 1, out.len, stdout);
	free(marks);
	pg_buf_release(&out);
	trace_release(&t);
	source_set_release(&src);
	cmd_stdin_release(&in);
	free(pos);
	return cmd_finish(rc);
}
