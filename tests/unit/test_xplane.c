/*
 * XPlane reader tests: XSpace files built here with the protoc-c generated
 * code (so the bytes are what a real serializer writes), read back through
 * read_path(), and checked field by field against what was built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../src/analyze/analyze.h"
#include "../../src/read/read.h"
#include "../../src/summary/summary.h"
#include "../../src/trace/trace.h"
#include "helpers.h"
#include "xplane.pb-c.h"

typedef Tensorflow__Profiler__XSpace XSpace;
typedef Tensorflow__Profiler__XPlane XPlane;
typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;
typedef Tensorflow__Profiler__XEventMetadata XEventMetadata;
typedef Tensorflow__Profiler__XStatMetadata XStatMetadata;
typedef Tensorflow__Profiler__XPlane__EventMetadataEntry EvEntry;
typedef Tensorflow__Profiler__XPlane__StatMetadataEntry StEntry;

static int setup(void **state)
{
	(void)state;
	return th_dir_make("xplane");
}

static int teardown(void **state)
{
	(void)state;
	return th_dir_remove();
}

/* ---- a small builder over the generated structs ---- */

struct builder {
	XSpace space;
	XPlane *planes[8];
	int n_planes;
};

static XStat *stat_i(int64_t mid, int64_t v)
{
	XStat *s = calloc(1, sizeof(*s));
	tensorflow__profiler__xstat__init(s);
	s->metadata_id = mid;
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	s->int64_value = v;
	return s;
}

static XStat *stat_u(int64_t mid, uint64_t v)
{
	XStat *s = stat_i(mid, 0);
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	s->uint64_value = v;
	return s;
}

static XStat *stat_s(int64_t mid, const char *v)
{
	XStat *s = stat_i(mid, 0);
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	s->str_value = strdup(v);
	return s;
}

static XStat *stat_ref(int64_t mid, uint64_t ref)
{
	XStat *s = stat_i(mid, 0);
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
	s->ref_value = ref;
	return s;
}

static XStat *stat_gz(int64_t mid, const char *v)
{
	XStat *s = stat_i(mid, 0);
	z_stream zs;
	unsigned char *out = malloc(1024);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (unsigned char *)(uintptr_t)v;
	zs.avail_in = (uInt)strlen(v);
	zs.next_out = out;
	zs.avail_out = 1024;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_COMPRESSED_STR_VALUE;
	s->compressed_str_value.data = out;
	s->compressed_str_value.len = zs.total_out;
	deflateEnd(&zs);
	return s;
}

static XPlane *plane_new(struct builder *b, int64_t id, const char *name)
{
	XPlane *p = calloc(1, sizeof(*p));
	tensorflow__profiler__xplane__init(p);
	p->id = id;
	p->name = strdup(name);
	b->planes[b->n_planes++] = p;
	return p;
}

static void plane_stat_meta(XPlane *p, int64_t id, const char *name)
{
	StEntry *e = calloc(1, sizeof(*e));
	XStatMetadata *m = calloc(1, sizeof(*m));
	tensorflow__profiler__xplane__stat_metadata_entry__init(e);
	tensorflow__profiler__xstat_metadata__init(m);
	m->id = id;
	m->name = strdup(name);
	e->key = id;
	e->value = m;
	p->stat_metadata = realloc(p->stat_metadata, (p->n_stat_metadata + 1) * sizeof(void *));
	p->stat_metadata[p->n_stat_metadata++] = e;
}

static XEventMetadata *plane_ev_meta(XPlane *p, int64_t id, const char *name, const char *display)
{
	EvEntry *e = calloc(1, sizeof(*e));
	XEventMetadata *m = calloc(1, sizeof(*m));
	tensorflow__profiler__xplane__event_metadata_entry__init(e);
	tensorflow__profiler__xevent_metadata__init(m);
	m->id = id;
	m->name = strdup(name);
	if (display)
		m->display_name = strdup(display);
	e->key = id;
	e->value = m;
	p->event_metadata = realloc(p->event_metadata, (p->n_event_metadata + 1) * sizeof(void *));
	p->event_metadata[p->n_event_metadata++] = e;
	return m;
}

static void meta_add_stat(XEventMetadata *m, XStat *s)
{
	m->stats = realloc(m->stats, (m->n_stats + 1) * sizeof(void *));
	m->stats[m->n_stats++] = s;
}

static void plane_add_stat(XPlane *p, XStat *s)
{
	p->stats = realloc(p->stats, (p->n_stats + 1) * sizeof(void *));
	p->stats[p->n_stats++] = s;
}

static XLine *line_new(XPlane *p, int64_t id, const char *name, int64_t ts_ns)
{
	XLine *l = calloc(1, sizeof(*l));
	tensorflow__profiler__xline__init(l);
	l->id = id;
	l->name = strdup(name);
	l->timestamp_ns = ts_ns;
	p->lines = realloc(p->lines, (p->n_lines + 1) * sizeof(void *));
	p->lines[p->n_lines++] = l;
	return l;
}

static XEvent *event_new(XLine *l, int64_t mid, int64_t off_ps, int64_t dur_ps)
{
	XEvent *e = calloc(1, sizeof(*e));
	tensorflow__profiler__xevent__init(e);
	e->metadata_id = mid;
	e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
	e->offset_ps = off_ps;
	e->duration_ps = dur_ps;
	/* doubled at each power of two: lines of 200k events stay linear */
	if ((l->n_events & (l->n_events - 1)) == 0)
		l->events =
		    realloc(l->events, (l->n_events ? 2 * l->n_events : 1) * sizeof(void *));
	l->events[l->n_events++] = e;
	return e;
}

static void event_add_stat(XEvent *e, XStat *s)
{
	e->stats = realloc(e->stats, (e->n_stats + 1) * sizeof(void *));
	e->stats[e->n_stats++] = s;
}

/* Pack the space into a file; frees every struct through the library. */
static void builder_write(struct builder *b, const char *path)
{
	size_t n;
	uint8_t *buf;

	b->space.planes = b->planes;
	b->space.n_planes = (size_t)b->n_planes;
	n = tensorflow__profiler__xspace__get_packed_size(&b->space);
	buf = malloc(n);
	tensorflow__profiler__xspace__pack(&b->space, buf);
	th_write(path, buf, n);
	/* re-read to free: unpack+free mirrors ownership simply */
	free(buf);
	for (int i = 0; i < b->n_planes; i++) {
		/* free_unpacked works on any struct whose members were malloc'd */
		tensorflow__profiler__xplane__free_unpacked(b->planes[i], NULL);
	}
	for (size_t i = 0; i < b->space.n_hostnames; i++)
		free(b->space.hostnames[i]);
	free(b->space.hostnames);
}

static void builder_init(struct builder *b)
{
	memset(b, 0, sizeof(*b));
	tensorflow__profiler__xspace__init(&b->space);
}

/* A GPU JAX-like host: /host:CPU with a launch, /device:GPU:0 with kernels on
 * two same-id lines, a TPU plane with device_offset_ps, Task Environment. */
static void build_sample(const char *path)
{
	struct builder b;
	builder_init(&b);
	b.space.hostnames = malloc(sizeof(char *));
	b.space.hostnames[0] = strdup("worker-7");
	b.space.n_hostnames = 1;

	XPlane *gpu = plane_new(&b, 1, "/device:GPU:0");
	plane_stat_meta(gpu, 1, "correlation_id");
	plane_stat_meta(gpu, 2, "hlo_op");
	plane_stat_meta(gpu, 3, "hlo_module");
	plane_stat_meta(gpu, 4, "fusion.7"); /* a name used through ref_value */
	plane_stat_meta(gpu, 5, "gpu_device_name");
	plane_stat_meta(gpu, 6, "kernel_details");
	plane_stat_meta(gpu, 7, "tf_op");
	plane_add_stat(gpu, stat_s(5, "NVIDIA H100 80GB HBM3"));
	XEventMetadata *k1 = plane_ev_meta(gpu, 10, "gemm_kernel", NULL);
	meta_add_stat(k1, stat_s(3, "jit_step"));
	meta_add_stat(k1, stat_s(2, "dot.1")); /* the event's own hlo_op wins */
	plane_ev_meta(gpu, 11, "loop_add_fusion", "add.fusion");
	XLine *s1 = line_new(gpu, 7, "Stream #7(Kernel)", 1000);
	XEvent *e1 = event_new(s1, 10, 5000, 2000000); /* 1000 ns + 5 ns, 2 us */
	event_add_stat(e1, stat_u(1, 42));
	event_add_stat(e1, stat_ref(2, 4)); /* hlo_op = "fusion.7" via ref */
	event_add_stat(e1, stat_gz(7, "jit(step)/dot_general"));
	XLine *s2 = line_new(gpu, 7, "Stream #7(Kernel)", 1000); /* same id: one track */
	event_new(s2, 11, 3000000, 1500);			 /* 1500 ps rounds to 2 ns */
	XEvent *agg = event_new(s2, 11, 0, 0);
	agg->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_NUM_OCCURRENCES;
	agg->num_occurrences = 9;
	line_new(gpu, 8, "Stream #8(MemcpyH2D)", 1000);

	XPlane *tpu = plane_new(&b, 2, "/device:TPU:3");
	plane_stat_meta(tpu, 1, "device_offset_ps");
	plane_stat_meta(tpu, 2, "device_duration_ps");
	plane_stat_meta(tpu, 3, "hlo_category");
	plane_stat_meta(tpu, 4, "device_type_string");
	plane_add_stat(tpu, stat_s(4, "TPU v5 lite"));
	XEventMetadata *op = plane_ev_meta(tpu, 1, "all-reduce.3", NULL);
	meta_add_stat(op, stat_s(3, "all-reduce"));
	XLine *ops = line_new(tpu, 3, "XLA Ops", 0);
	XEvent *t1 = event_new(ops, 1, 100000, 1000);
	event_add_stat(t1, stat_i(1, 7000000)); /* device offset 7 us */
	event_add_stat(t1, stat_i(2, 3000000)); /* device duration 3 us */
	line_new(tpu, 1, "Steps", 0);
	line_new(tpu, 2, "XLA Modules", 0);

	XPlane *host = plane_new(&b, 3, "/host:CPU");
	plane_ev_meta(host, 1, "train", NULL);
	XLine *th = line_new(host, 99, "python3", 0);
	event_new(th, 1, 0, 5000000);

	XPlane *env = plane_new(&b, 4, "Task Environment");
	plane_stat_meta(env, 1, "profile_start_time");
	plane_stat_meta(env, 2, "profile_stop_time");
	plane_add_stat(env, stat_u(1, 1771595639214724894ULL));
	plane_add_stat(env, stat_u(2, 1771595640214724894ULL));
	plane_new(&b, 5, "/host:metadata");

	builder_write(&b, path);
}

static uint32_t find_track(const struct trace *t, const char *name)
{
	for (uint32_t i = 0; i < t->n_tracks; i++)
		if (strcmp(trace_str_get(t, t->tracks[i].name), name) == 0)
			return i;
	return UINT32_MAX;
}

static const char *arg(const struct trace *t, const struct trace_event *e, const char *key)
{
	trace_str k = trace_str_find(t, key);
	trace_str v = k ? trace_arg_get(t, e->args, k) : 0;
	return v ? trace_str_get(t, v) : NULL;
}

static void test_sample_file(void **state)
{
	char path[512];
	struct trace t;
	(void)state;

	snprintf(path, sizeof(path), "%s/worker-7.xplane.pb", th_dir);
	build_sample(path);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), 0);
	assert_int_equal(t.n_files, 1);
	const struct trace_file *f = &t.files[0];
	assert_int_equal(f->format, TRACE_FMT_XPLANE);
	/* every XEvent counts, the aggregate one too; it is not placed */
	assert_int_equal(f->entries, 5);
	assert_int_equal(f->aggregate_events, 1);
	/* the aggregate keeps a slot flagged as such, with no phase and no time */
	assert_int_equal(t.n_events, 5);
	int aggregates = 0;
	for (uint64_t i = 0; i < t.n_events; i++) {
		const struct trace_event *e = trace_event_at(&t, i);
		if (e->flags & TRACE_EV_AGGREGATE) {
			aggregates++;
			assert_int_not_equal(e->ph, 'X');
		}
	}
	assert_int_equal(aggregates, 1);
	assert_int_equal(f->n_planes, 5);
	assert_string_equal(f->planes[0].name, "/device:GPU:0");
	assert_int_equal(f->planes[0].events, 3);
	assert_string_equal(f->host, "worker-7");
	assert_true(f->profile_start_ns == 1771595639214724894LL);
	assert_true(f->profile_stop_ns == 1771595640214724894LL);
	assert_int_equal(f->declared_devices, 2);

	/* devices: GPU 0 named from gpu_device_name, TPU 3, CPU */
	int gpu = -1, tpu = -1;
	for (uint32_t d = 0; d < t.n_devices; d++) {
		if (t.devices[d].kind == TRACE_DEV_GPU)
			gpu = (int)d;
		if (t.devices[d].kind == TRACE_DEV_TPU)
			tpu = (int)d;
	}
	assert_true(gpu >= 0 && tpu >= 0);
	assert_int_equal(t.devices[gpu].index, 0);
	assert_string_equal(trace_str_get(&t, t.devices[gpu].name), "NVIDIA H100 80GB HBM3");
	assert_int_equal(t.devices[tpu].index, 3);
	assert_string_equal(trace_str_get(&t, t.devices[tpu].name), "TPU v5 lite");

	/* two lines with id 7 are one track of 3 events (aggregate counted) */
	uint32_t s7 = find_track(&t, "Stream #7(Kernel)");
	assert_int_not_equal(s7, UINT32_MAX);
	assert_int_equal(t.tracks[s7].n_events, 3);
	assert_int_equal(t.tracks[s7].kind, TRACE_TRACK_STREAM);
	assert_int_equal(t.tracks[find_track(&t, "XLA Ops")].kind, TRACE_TRACK_DEVICE_OPS);
	assert_int_equal(t.tracks[find_track(&t, "python3")].kind, TRACE_TRACK_HOST_THREAD);

	int seen = 0;
	for (uint64_t i = 0; i < t.n_events; i++) {
		const struct trace_event *e = trace_event_at(&t, i);
		const char *name = trace_str_get(&t, e->name);
		if (strcmp(name, "gemm_kernel") == 0) {
			seen |= 1;
			assert_int_equal(e->ts_ns, 1005);
			assert_int_equal(e->dur_ns, 2000);
			assert_true(e->flags & TRACE_EV_HAS_CORR);
			assert_int_equal(e->corr, 42);
			assert_string_equal(arg(&t, e, "hlo_op"), "fusion.7");
			assert_string_equal(arg(&t, e, "hlo_module"), "jit_step");
			assert_string_equal(arg(&t, e, "tf_op"), "jit(step)/dot_general");
		} else if (strcmp(name, "add.fusion") == 0) {
			seen |= 2;
			assert_string_equal(arg(&t, e, "long_name"), "loop_add_fusion");
			assert_int_equal(e->ts_ns, 1000 + 3000);
			assert_int_equal(e->dur_ns, 2);
		} else if (strcmp(name, "all-reduce.3") == 0) {
			seen |= 4;
			assert_int_equal(e->ts_ns, 7000);
			assert_int_equal(e->dur_ns, 3000);
			assert_string_equal(arg(&t, e, "hlo_category"), "all-reduce");
		}
	}
	assert_int_equal(seen, 7);
	trace_release(&t);
}

static void test_truncated_and_past_end(void **state)
{
	char path[512], cut[512];
	struct trace t;
	FILE *f;
	long n;
	(void)state;

	snprintf(path, sizeof(path), "%s/full.xplane.pb", th_dir);
	build_sample(path);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *buf = malloc((size_t)n);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);

	/* cut in half: the first plane's length runs past the end */
	snprintf(cut, sizeof(cut), "%s/cut.xplane.pb", th_dir);
	th_write(cut, buf, (size_t)n / 2);
	trace_init(&t);
	assert_int_equal(read_path(&t, cut), PG_EFORMAT);
	assert_non_null(strstr(pg_error_last(), "cut.xplane.pb"));
	assert_non_null(strstr(pg_error_last(), "byte"));
	assert_int_equal(t.n_files, 0);
	assert_int_equal(t.n_events, 0);
	assert_int_equal(t.n_devices, 0);

	/* a length prefix claiming more than the file holds */
	unsigned char bad[] = {0x0a, 0xff, 0xff, 0x03, 0x08, 0x01};
	th_write(cut, bad, sizeof(bad));
	assert_int_equal(read_path(&t, cut), PG_EFORMAT);
	assert_non_null(strstr(pg_error_last(), "past the end"));
	trace_release(&t);
	free(buf);
}

/* A gzip'd string stat of n bytes: v, then the decimal tag (0: none). */
static XStat *stat_gz_big(int64_t mid, size_t n, unsigned tag)
{
	XStat *s = stat_i(mid, 0);
	char *v = malloc(n + 16);
	z_stream zs;
	memset(v, 'a', n);
	size_t len = n + (size_t)(tag ? snprintf(v + n, 16, "#%u", tag) : 0);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	uLong cap = deflateBound(&zs, (uLong)len);
	unsigned char *out = malloc(cap);
	zs.next_in = (unsigned char *)v;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_COMPRESSED_STR_VALUE;
	s->compressed_str_value.data = out;
	s->compressed_str_value.len = zs.total_out;
	deflateEnd(&zs);
	free(v);
	return s;
}

/* A GPU plane of n kernels, each with a tf_op stat of `bytes` inflated
 * bytes, tagged i (distinct strings) or untagged (one string repeated). */
static void build_gz_bomb(const char *path, uint32_t n, size_t bytes, int distinct)
{
	struct builder b;
	builder_init(&b);
	XPlane *gpu = plane_new(&b, 1, "/device:GPU:0");
	plane_stat_meta(gpu, 1, "tf_op");
	plane_ev_meta(gpu, 10, "gemm_kernel", NULL);
	XLine *l = line_new(gpu, 7, "Stream #7(Kernel)", 1000);
	for (uint32_t i = 0; i < n; i++) {
		XEvent *e = event_new(l, 10, 5000 * (int64_t)i, 1000);
		event_add_stat(e, stat_gz_big(1, bytes, distinct ? i + 1 : 0));
	}
	builder_write(&b, path);
}

/* Compressed strings expand about 1000 times: one past RD_MAX_STRING_BYTES,
 * or distinct ones past RD_MAX_INFLATED_BYTES in all, refuse the file with
 * the cap named; one string repeated costs its memory once and is read. */
static void test_compressed_string_caps(void **state)
{
	char path[512];
	struct trace t;
	(void)state;

	snprintf(path, sizeof(path), "%s/gzbomb.xplane.pb", th_dir);
	build_gz_bomb(path, 1, RD_MAX_STRING_BYTES + 1, 0);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), PG_ELIMIT);
	assert_non_null(strstr(pg_error_last(), "gzbomb.xplane.pb"));
	assert_non_null(strstr(pg_error_last(), "a compressed stat string expands past 16 MiB"));
	trace_release(&t);

	uint32_t n = RD_MAX_INFLATED_BYTES / (RD_MAX_STRING_BYTES - 64) + 2;
	build_gz_bomb(path, n, RD_MAX_STRING_BYTES - 64, 1);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), PG_ELIMIT);
	assert_non_null(strstr(pg_error_last(), "its compressed stat strings expand past 256 MiB"));
	trace_release(&t);

	build_gz_bomb(path, n, RD_MAX_STRING_BYTES - 64, 0);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), 0);
	assert_int_equal(t.n_events, n);
	trace_release(&t);
}

/* The events kept of one file are capped (PROFGATE_MAX_EVENTS lowers the
 * cap here, so that the test needs no 32M-event file). */
static void test_event_cap(void **state)
{
	char path[512];
	struct trace t;
	(void)state;

	snprintf(path, sizeof(path), "%s/capped.xplane.pb", th_dir);
	build_gz_bomb(path, 50, 16, 1);
	setenv("PROFGATE_MAX_EVENTS", "49", 1);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), PG_ELIMIT);
	assert_non_null(strstr(pg_error_last(), "capped.xplane.pb': more than 49 events, the cap"));
	trace_release(&t);
	setenv("PROFGATE_MAX_EVENTS", "50", 1);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), 0);
	assert_int_equal(t.n_events, 50);
	trace_release(&t);
	unsetenv("PROFGATE_MAX_EVENTS");
}

static void test_misnamed_and_riegeli(void **state)
{
	char path[512];
	struct trace t;
	const char json[] = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
			    "\"ts\":1,\"dur\":2}]}";
	(void)state;

	snprintf(path, sizeof(path), "%s/host.xplane.pb", th_dir);
	th_write(path, json, strlen(json));
	trace_init(&t);
	assert_int_equal(read_path(&t, path), 0);
	assert_int_equal(t.files[0].format, TRACE_FMT_CHROME_JSON);
	assert_int_equal(t.n_warnings, 1);
	assert_string_equal(t.warnings[0].code, "misnamed");

	snprintf(path, sizeof(path), "%s/host.xplane.riegeli", th_dir);
	th_write(path, "riegeli", 7);
	assert_int_equal(read_path(&t, path), PG_EUNSUPP);
	assert_non_null(strstr(pg_error_last(), "riegeli"));
	assert_int_equal(t.n_files, 1);
	trace_release(&t);
}

static void test_corpus_tpu(void **state)
{
	const char *corpus = getenv("PG_CORPUS") ? getenv("PG_CORPUS") : "../shared/corpus";
	char path[1024];
	struct trace t;
	(void)state;

	if (!corpus || access(corpus, R_OK) != 0)
		skip();
	snprintf(path, sizeof(path), "%s/openxla__xprof/tpu_inference_2.xplane.pb", corpus);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), 0);
	assert_int_equal(t.files[0].entries, 26723);
	int tpus = 0;
	for (uint32_t d = 0; d < t.n_devices; d++)
		tpus += t.devices[d].kind == TRACE_DEV_TPU && t.devices[d].n_events > 0;
	assert_int_equal(tpus, 4);
	trace_release(&t);

	snprintf(path, sizeof(path),
		 "%s/openxla__xprof/tpu_inference_2.CORRUPT-utf8-mangled.xplane.pb", corpus);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), PG_EFORMAT);
	assert_non_null(strstr(pg_error_last(), "corrupt XPlane"));
	trace_release(&t);
}

/*
 * host_markers_only: a GPU kernel and a host thread with a launch (same
 * correlation) and a "train" span. Where nothing in the file's metadata can
 * make a host event a step marker, the host events are counted, not decoded;
 * a marker stat (step_num or _r, in any plane of the file) or a ProfilerStep#
 * event name (name or display name) keeps them all.
 */
enum { MARK_NONE, MARK_STEP_NUM, MARK_R_ELSEWHERE, MARK_PROFILER_STEP, MARK_DISPLAY };

static void build_host(const char *path, int mark)
{
	struct builder b;
	builder_init(&b);

	XPlane *gpu = plane_new(&b, 1, "/device:GPU:0");
	plane_stat_meta(gpu, 1, "correlation_id");
	if (mark == MARK_R_ELSEWHERE)
		plane_stat_meta(gpu, 2, "_r");
	plane_ev_meta(gpu, 10, "gemm_kernel", NULL);
	XLine *s = line_new(gpu, 7, "Stream #7(Kernel)", 1000);
	event_add_stat(event_new(s, 10, 2000000, 3000000), stat_u(1, 42));

	XPlane *host = plane_new(&b, 2, "/host:CPU");
	plane_stat_meta(host, 1, "correlation_id");
	if (mark == MARK_STEP_NUM)
		plane_stat_meta(host, 2, "step_num");
	plane_ev_meta(host, 1, mark == MARK_PROFILER_STEP ? "ProfilerStep#4" : "train",
		      mark == MARK_DISPLAY ? "ProfilerStep#4" : NULL);
	plane_ev_meta(host, 2, "cudaLaunchKernel", NULL);
	XLine *th = line_new(host, 99, "python3", 1000);
	XEvent *span = event_new(th, 1, 0, 9000000);
	if (mark == MARK_STEP_NUM)
		event_add_stat(span, stat_i(2, 4));
	event_add_stat(event_new(th, 2, 1000000, 500000), stat_u(1, 42));
	builder_write(&b, path);
}

static void test_host_markers_only(void **state)
{
	char path[512];
	(void)state;

	snprintf(path, sizeof(path), "%s/host.xplane.pb", th_dir);
	for (int mark = MARK_NONE; mark <= MARK_DISPLAY; mark++) {
		build_host(path, mark);
		for (int only = 0; only <= 1; only++) {
			struct trace t;
			trace_init(&t);
			t.host_markers_only = only;
			assert_int_equal(read_path(&t, path), 0);
			int skipped = only && mark == MARK_NONE;
			uint32_t th = find_track(&t, "python3");
			assert_int_not_equal(th, UINT32_MAX);
			/* counted either way; decoded unless skipped */
			assert_int_equal(t.files[0].entries, 3);
			assert_int_equal(t.files[0].undecoded_events, skipped ? 2 : 0);
			assert_int_equal(t.tracks[th].n_events, skipped ? 0 : 2);
			assert_int_equal(t.n_events, skipped ? 1 : 3);
			/* the device's events are the same */
			uint32_t st = find_track(&t, "Stream #7(Kernel)");
			assert_int_equal(t.tracks[st].n_events, 1);
			int kernels = 0;
			for (uint64_t i = 0; i < t.n_events; i++) {
				const struct trace_event *e = trace_event_at(&t, i);
				if (e->track != st)
					continue;
				kernels++;
				assert_int_equal(e->ts_ns, 3000); /* line 1000 ns + 2000000 ps */
				assert_int_equal(e->dur_ns, 3000);
				assert_int_equal(e->corr, 42);
			}
			assert_int_equal(kernels, 1);
			trace_release(&t);
		}
	}
}

/* Lines longer than the reader's decode run (64K events) are split across
 * threads: every event must land in its slot, in line order, with the same
 * values on one thread and on two. Offsets and durations take every varint
 * length, so the multi-byte decoding is covered too. */
#define LONG_N (3 * 65536 + 5)

static int64_t long_off(uint32_t i)
{
	return (int64_t)i * 1000003 + (i % 11 == 0 ? (int64_t)1 << (i % 56) : 0);
}

static int64_t long_dur(uint32_t i)
{
	return i % 7 == 0 ? ((int64_t)1 << (i % 50)) + i : (int64_t)(i % 300);
}

static void build_long_lines(const char *path)
{
	struct builder b;
	char name[32];
	builder_init(&b);

	XPlane *tpu = plane_new(&b, 1, "/device:TPU:0");
	plane_stat_meta(tpu, 1, "device_offset_ps");
	plane_stat_meta(tpu, 2, "hlo_op");
	plane_stat_meta(tpu, 300, "ignored_stat"); /* a two-byte id, skipped */
	plane_ev_meta(tpu, 1, "fusion", NULL);
	plane_ev_meta(tpu, 200, "copy", NULL); /* a two-byte event metadata id */
	XLine *a = line_new(tpu, 3, "XLA Ops", 0);
	for (uint32_t i = 0; i < LONG_N; i++) {
		XEvent *e = event_new(a, i % 2 ? 200 : 1, long_off(i), long_dur(i));
		if (i % 1000 == 999) {
			e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_NUM_OCCURRENCES;
			e->num_occurrences = 3;
		}
		if (i % 4 == 0)
			event_add_stat(e, stat_i(300, -(int64_t)i)); /* a ten-byte varint */
		if (i % 5000 == 1) /* device offset: replaces offset_ps */
			event_add_stat(e, stat_i(1, long_off(i) + 777));
		if (i % 3000 == 2) {
			snprintf(name, sizeof(name), "op.%u", i % 3);
			event_add_stat(e, stat_s(2, name));
		}
	}
	XLine *a2 = line_new(tpu, 3, "XLA Ops", 5); /* same id: the same track */
	for (uint32_t i = 0; i < 10; i++)
		event_new(a2, 1, long_off(i), long_dur(i));
	XLine *c = line_new(tpu, 4, "Steps", 0);
	for (uint32_t i = 0; i < 70000; i++)
		event_new(c, 1, long_off(i), 1);
	builder_write(&b, path);
}

static int64_t ps_ns(int64_t ps)
{
	return (ps + 500) / 1000;
}

static void check_long_lines(const struct trace *t)
{
	uint32_t ops = find_track(t, "XLA Ops"), steps = find_track(t, "Steps");
	uint64_t aggregates = 0;
	int64_t steps_last = INT64_MIN;

	assert_int_equal(t->n_events, LONG_N + 10 + 70000);
	assert_int_equal(t->files[0].entries, LONG_N + 10 + 70000);
	assert_int_equal(t->tracks[ops].n_events, LONG_N + 10);
	assert_int_equal(t->tracks[steps].n_events, 70000);
	for (uint32_t i = 0; i < LONG_N; i++) {
		const struct trace_event *e = trace_event_at(t, i);
		assert_int_equal(e->track, ops);
		if (i % 1000 == 999) {
			assert_int_equal(e->flags, TRACE_EV_AGGREGATE);
			aggregates++;
			continue;
		}
		int64_t off = i % 5000 == 1 ? long_off(i) + 777 : long_off(i);
		assert_int_equal(e->ts_ns, ps_ns(off));
		assert_int_equal(e->dur_ns, ps_ns(off + long_dur(i)) - ps_ns(off));
		assert_string_equal(trace_str_get(t, e->name), i % 2 ? "copy" : "fusion");
		if (i % 3000 == 2) {
			const char *v = arg(t, e, "hlo_op");
			assert_non_null(v);
			assert_int_equal(v[3] - '0', i % 3);
		} else {
			assert_null(arg(t, e, "hlo_op"));
		}
	}
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(trace_event_at(t, LONG_N + i)->ts_ns, 5 + ps_ns(long_off(i)));
	for (uint32_t i = 0; i < 70000; i++) {
		const struct trace_event *e = trace_event_at(t, LONG_N + 10 + i);
		assert_int_equal(e->track, steps);
		assert_int_equal(e->ts_ns, ps_ns(long_off(i)));
		if (ps_ns(long_off(i) + 1) > steps_last)
			steps_last = ps_ns(long_off(i) + 1);
	}
	assert_int_equal(t->files[0].aggregate_events, aggregates);
	assert_int_equal(t->tracks[ops].first_ns, 0);
	assert_int_equal(t->tracks[steps].last_ns, steps_last);
}

static void test_long_lines_split(void **state)
{
	char path[512];
	(void)state;

	snprintf(path, sizeof(path), "%s/long.xplane.pb", th_dir);
	build_long_lines(path);
	for (int threads = 1; threads <= 3; threads++) {
		struct trace t;
		trace_init(&t);
		t.decode_threads = threads;
		assert_int_equal(read_path(&t, path), 0);
		check_long_lines(&t);
		trace_release(&t);
	}
}

/*
 * Scopes as the XLA GPU runtime records them: a kernel's tf_op is the module's
 * annotation ("XlaModule:#...#", shared through ref_value) and its scope is
 * the name stat. One 100 us kernel under "jit(loss)/shard_map/attn/
 * pallas_call", one 30 us kernel whose tf_op is the scope itself, and one
 * 40 us kernel with a name stat and no tf_op, which is no scope.
 */
static void build_scoped_kernels(const char *path)
{
	struct builder b;
	builder_init(&b);
	XPlane *gpu = plane_new(&b, 1, "/device:GPU:0");
	plane_stat_meta(gpu, 1, "tf_op");
	plane_stat_meta(gpu, 2, "name");
	plane_stat_meta(gpu, 3, "XlaModule:#hlo_module=jit_loss,program_id=1#");
	plane_ev_meta(gpu, 10, "pallas_attn_kernel", NULL);
	plane_ev_meta(gpu, 11, "gemm_kernel", NULL);
	plane_ev_meta(gpu, 12, "loop_fusion", NULL);
	XLine *st = line_new(gpu, 7, "Stream #7(Kernel)", 0);
	XEvent *e = event_new(st, 10, 0, 100000000);
	event_add_stat(e, stat_ref(1, 3));
	event_add_stat(e, stat_s(2, "jit(loss)/shard_map/attn/pallas_call"));
	e = event_new(st, 11, 200000000, 30000000);
	event_add_stat(e, stat_s(1, "jit(loss)/mlp/dot_general"));
	e = event_new(st, 12, 300000000, 40000000);
	event_add_stat(e, stat_s(2, "fabricated"));
	builder_write(&b, path);
}

static const struct sum_region *find_region(const struct summary *s, const char *path)
{
	for (uint32_t i = 0; i < s->n_regions; i++)
		if (strcmp(s->regions[i].path, path) == 0)
			return &s->regions[i];
	return NULL;
}

static void test_regions_from_stats(void **state)
{
	char path[512];
	struct trace t;
	struct summary s;
	struct analyze_options o;
	(void)state;

	snprintf(path, sizeof(path), "%s/scoped.xplane.pb", th_dir);
	build_scoped_kernels(path);
	trace_init(&t);
	assert_int_equal(read_path(&t, path), 0);
	analyze_options_init(&o);
	o.version = "test";
	summary_init(&s);
	assert_int_equal(analyze_summarize(&t, &o, &s), 0);
	const struct sum_region *loss = find_region(&s, "loss");
	const struct sum_region *attn = find_region(&s, "loss/attn");
	const struct sum_region *mlp = find_region(&s, "loss/mlp/dot_general");
	assert_non_null(loss);
	assert_non_null(attn);
	assert_non_null(mlp);
	assert_int_equal(s.n_regions, 4); /* loss, loss/attn, loss/mlp, loss/mlp/dot_general */
	assert_true(fabs(loss->inclusive_us_total - 130) < 1e-9);
	assert_true(fabs(loss->exclusive_us_total - 0) < 1e-9);
	assert_true(fabs(attn->exclusive_us_total - 100) < 1e-9);
	assert_true(fabs(mlp->exclusive_us_total - 30) < 1e-9);
	summary_release(&s);
	trace_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sample_file),
	    cmocka_unit_test(test_truncated_and_past_end),
	    cmocka_unit_test(test_compressed_string_caps),
	    cmocka_unit_test(test_event_cap),
	    cmocka_unit_test(test_misnamed_and_riegeli),
	    cmocka_unit_test(test_corpus_tpu),
	    cmocka_unit_test(test_long_lines_split),
	    cmocka_unit_test(test_host_markers_only),
	    cmocka_unit_test(test_regions_from_stats),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
