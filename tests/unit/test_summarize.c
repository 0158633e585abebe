/*
 * Golden tests for the summary: traces built through the trace API whose right
 * answers are known by construction (every number below is worked out in the
 * comments), checked field by field, plus the split invariant and determinism.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/analyze/analyze.h"
#include "../../src/read/read.h"
#include "../../src/summary/summary.h"
#include "../../src/trace/trace.h"

#define US 1000 /* ns per us */

struct gen {
	struct trace t;
	uint32_t file;
	trace_str k_corr;
};

static void gen_init(struct gen *g, int rank)
{
	trace_init(&g->t);
	g->file = trace_file_add(&g->t, "synthetic.json");
	g->t.files[g->file].rank = rank;
	g->t.files[g->file].framework = strdup("pytorch");
}

static uint32_t device(struct gen *g, enum trace_dev_kind kind, int index)
{
	struct trace_device d;
	memset(&d, 0, sizeof(d));
	d.kind = kind;
	d.index = index;
	d.rank = g->t.files[g->file].rank;
	d.file = g->file;
	return trace_device_add(&g->t, &d);
}

static uint32_t track(struct gen *g, uint32_t dev, enum trace_track_kind kind, const char *name)
{
	struct trace_track tr;
	memset(&tr, 0, sizeof(tr));
	tr.device = dev;
	tr.kind = kind;
	tr.name = trace_intern_cstr(&g->t, name);
	tr.pid = trace_intern_cstr(&g->t, "p");
	tr.tid = trace_intern_cstr(&g->t, name);
	return trace_track_add(&g->t, &tr);
}

/* An X event with argument set args (0: none); cat is a Kineto category name. */
static void ev_args(struct gen *g, uint32_t tr, const char *name, const char *cat, int64_t ts_us,
		    int64_t dur_us, int64_t corr, uint32_t args)
{
	struct trace_event *e = trace_event_add(&g->t);
	e->args = args;
	e->ts_ns = ts_us * US;
	e->dur_ns = dur_us * US;
	e->name = trace_intern_cstr(&g->t, name);
	e->track = tr;
	e->cat = trace_cat_intern(&g->t, cat, strlen(cat));
	e->ph = 'X';
	if (corr >= 0) {
		e->corr = (uint64_t)corr;
		e->flags = TRACE_EV_HAS_CORR;
	}
	trace_event_commit(&g->t, e);
	g->t.tracks[tr].cat_mask |= g->t.cats[e->cat].class_mask;
}

static void ev(struct gen *g, uint32_t tr, const char *name, const char *cat, int64_t ts_us,
	       int64_t dur_us, int64_t corr)
{
	ev_args(g, tr, name, cat, ts_us, dur_us, corr, 0);
}

/* The argument set of one key and value. */
static uint32_t arg1(struct gen *g, const char *key, const char *value)
{
	struct trace_arg a = {trace_intern_cstr(&g->t, key), trace_intern_cstr(&g->t, value)};
	return trace_argset_intern(&g->t, &a, 1);
}

static void summarize_trace(const struct trace *t, int warmup, struct summary *s)
{
	struct analyze_options o;
	analyze_options_init(&o);
	o.warmup = warmup;
	o.version = "test";
	summary_init(s);
	assert_int_equal(analyze_summarize(t, &o, s), 0);
}

static void summarize(struct gen *g, int warmup, struct summary *s)
{
	summarize_trace(&g->t, warmup, s);
}

static void assert_split_sums(const struct sum_split *x)
{
	double sum = x->compute_us + x->exposed_comm_us + x->exposed_memcpy_us + x->idle_us;
	assert_true(fabs(sum - x->wall_us) < 1e-6);
}

static const struct sum_family *family(const struct summary *s, const char *name)
{
	for (uint32_t i = 0; i < s->n_families; i++)
		if (strcmp(s->families[i].family, name) == 0)
			return &s->families[i];
	return NULL;
}

/*
 * One GPU, two streams, one ProfilerStep of 100 us on the host launching
 * everything (correlations 1..4):
 *   stream 7: gemm 0..40, elementwise 60..80
 *   stream 9: nccl all-reduce 20..70 (overlaps gemm 20..40 and ew 60..70)
 *   stream 7: memcpy 85..95 (under nothing)
 * Device span: 0..95 = 95 us. Union compute = 40 + 20 = 60. Comm union 50,
 * exposed comm = 40..60 = 20. Exposed memcpy 10. Idle = 95 - 90 = 5.
 */
static void test_overlap_split(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, 0);
	uint32_t gpu = device(&g, TRACE_DEV_GPU, 0), cpu = device(&g, TRACE_DEV_CPU, 0);
	uint32_t s7 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
	uint32_t s9 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 9");
	uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	ev(&g, host, "ProfilerStep#7", "user_annotation", -10, 120, -1);
	for (int c = 1; c <= 4; c++)
		ev(&g, host, "cudaLaunchKernel", "cuda_runtime", -10 + c, 1, c);
	ev(&g, s7, "ampere_sgemm_128x64", "kernel", 0, 40, 1);
	ev(&g, s7, "vectorized_elementwise_kernel", "kernel", 60, 20, 2);
	ev(&g, s9, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", 20, 50, 3);
	ev(&g, s7, "Memcpy DtoH (Device -> Pageable)", "gpu_memcpy", 85, 10, 4);
	summarize(&g, 0, &s);

	assert_string_equal(s.steps_source, "profiler-step");
	assert_int_equal(s.n_steps, 1);
	assert_int_equal(s.steps[0].step, 7);
	assert_true(fabs(s.steps[0].us - 95.0) < 1e-9);
	assert_true(fabs(s.steps[0].host_us - 120.0) < 1e-9);
	assert_int_equal(s.n_devices, 1);
	const struct sum_split *x = &s.devices[0].steady;
	assert_true(fabs(x->wall_us - 95) < 1e-9);
	assert_true(fabs(x->compute_us - 60) < 1e-9);
	assert_true(fabs(x->exposed_comm_us - 20) < 1e-9);
	assert_true(fabs(x->comm_us - 50) < 1e-9);
	assert_true(fabs(x->exposed_memcpy_us - 10) < 1e-9);
	assert_true(fabs(x->idle_us - 5) < 1e-9);
	assert_true(fabs(x->kernel_sum_us - 120) < 1e-9);
	assert_split_sums(x);
	assert_split_sums(&s.devices[0].all);
	/* 30 of 50 us of communication is under compute */
	assert_true(fabs(s.mean.comm_overlap_share - 0.6) < 1e-9);
	assert_true(fabs(s.mean.idle_share - 5.0 / 95) < 1e-9);
	assert_int_equal(s.n_collectives, 1);
	assert_string_equal(s.collectives[0].kind, "all-reduce");
	assert_true(fabs(s.collectives[0].us_per_step - 50) < 1e-9);
	assert_non_null(family(&s, "matmul"));
	assert_true(fabs(family(&s, "matmul")->us_per_step - 40) < 1e-9);
	assert_true(fabs(family(&s, "memcpy")->us_per_step - 10) < 1e-9);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * XLA-style nesting on a TPU op line: while 0..100 holds fusion 10..40 and
 * all-reduce 50..90. Self: while 100 - 30 - 40 = 30. The split takes each
 * record's own time in its category: the while's 0..10, 40..50 and 90..100
 * are compute beside the fusion's 30, so compute 60; the all-reduce is under
 * no compute (the while's own time stops where it starts), so exposed comm
 * 40; idle 0; kernel_sum 100 (each instant of the line once).
 */
static void test_nesting(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	uint32_t steps = track(&g, tpu, TRACE_TRACK_STEPS, "Steps");
	ev(&g, steps, "3", "", 0, 100, -1);
	ev(&g, ops, "while.5", "", 0, 100, -1);
	ev(&g, ops, "fusion.12", "", 10, 30, -1);
	ev(&g, ops, "all-reduce.3", "", 50, 40, -1);
	summarize(&g, 0, &s);

	assert_string_equal(s.steps_source, "steps-line");
	assert_int_equal(s.steps[0].step, 3);
	const struct sum_split *x = &s.devices[0].steady;
	assert_true(fabs(x->compute_us - 60) < 1e-9);
	assert_true(fabs(x->exposed_comm_us - 40) < 1e-9);
	assert_true(fabs(x->idle_us - 0) < 1e-9);
	assert_true(fabs(x->busy_us - 100) < 1e-9);
	assert_true(fabs(x->kernel_sum_us - 100) < 1e-9);
	assert_split_sums(x);
	int seen = 0;
	for (uint32_t i = 0; i < s.n_ops; i++) {
		if (strcmp(s.ops[i].name, "while") == 0) {
			assert_true(fabs(s.ops[i].self_us_per_step - 30) < 1e-9);
			assert_true(fabs(s.ops[i].total_us_per_step - 100) < 1e-9);
			seen |= 1;
		}
		if (strcmp(s.ops[i].name, "fusion") == 0) {
			assert_string_equal(s.ops[i].examples[0], "fusion.12");
			seen |= 2;
		}
	}
	assert_int_equal(seen, 3);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * marin's basic profile_summary fixture, one step: on the XLA Ops line,
 * fusion.1 0..100 encloses all-reduce.1 20..60; softmax 120..180 follows.
 * The fusion's own 0..20 and 60..100 (60 us) are compute, not idle: compute
 * 60 + 60 = 120, exposed comm 40, idle 200 - 160 = 40 (100..120 and
 * 180..200). The gap before softmax is 20 us, from the fusion's end.
 */
static void test_parent_own_time(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	uint32_t steps = track(&g, tpu, TRACE_TRACK_STEPS, "Steps");
	ev(&g, steps, "0", "", 0, 200, -1);
	ev(&g, ops, "fusion.1", "", 0, 100, -1);
	ev(&g, ops, "all-reduce.1", "", 20, 40, -1);
	ev(&g, ops, "softmax", "", 120, 60, -1);
	ev(&g, ops, "fusion.2", "", 199, 1, -1);
	summarize(&g, 0, &s);

	const struct sum_split *x = &s.devices[0].steady;
	assert_true(fabs(x->wall_us - 200) < 1e-9);
	assert_true(fabs(x->compute_us - 121) < 1e-9);
	assert_true(fabs(x->exposed_comm_us - 40) < 1e-9);
	assert_true(fabs(x->comm_us - 40) < 1e-9);
	assert_true(fabs(x->idle_us - 39) < 1e-9);
	assert_true(fabs(x->kernel_sum_us - 161) < 1e-9);
	assert_split_sums(x);
	assert_split_sums(&s.devices[0].all);
	int seen = 0;
	for (uint32_t i = 0; i < s.n_gaps; i++)
		if (strcmp(s.gaps[i].op, "softmax") == 0) {
			assert_true(fabs(s.gaps[i].us_per_step - 20) < 1e-9);
			seen = 1;
		}
	assert_true(seen);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * Kernels nested in another kernel of their stream (timestamps Kineto
 * rounds): stream 7 holds a gemm 0..14 with a split-K reduce 11..14 inside
 * it, an elementwise kernel 20..24 with another 21..23 inside it; stream 9 an
 * all-reduce 12..30. Every instant a stream's kernels cover counts once:
 * compute 14 + 4 = 18 (nothing lost to the nesting), comm 18, exposed comm
 * 12..30 less 12..14 and 20..24 = 12, idle 0 (wall 0..30: 30 = 18 + 12).
 * kernel_sum is each stream's busy time summed: 18 + 18 = 36. Self times are
 * the ops' (gemm 11, reduce 3), and families add up to them.
 */
static void test_nested_kernels(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, 0);
	uint32_t gpu = device(&g, TRACE_DEV_GPU, 0), cpu = device(&g, TRACE_DEV_CPU, 0);
	uint32_t s7 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
	uint32_t s9 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 9");
	uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	ev(&g, host, "ProfilerStep#1", "user_annotation", -10, 50, -1);
	for (int c = 1; c <= 5; c++)
		ev(&g, host, "cudaLaunchKernel", "cuda_runtime", -10 + c, 1, c);
	ev(&g, s7, "volta_sgemm_32x128_nt", "kernel", 0, 14, 1);
	ev(&g, s7, "splitKreduce_kernel", "kernel", 11, 3, 2);
	ev(&g, s7, "vectorized_elementwise_kernel<4>", "kernel", 20, 4, 3);
	ev(&g, s7, "vectorized_elementwise_kernel<4>", "kernel", 21, 2, 4);
	ev(&g, s9, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", 12, 18, 5);
	summarize(&g, 0, &s);

	const struct sum_split *x = &s.devices[0].steady;
	assert_true(fabs(x->wall_us - 30) < 1e-9);
	assert_true(fabs(x->compute_us - 18) < 1e-9);
	assert_true(fabs(x->comm_us - 18) < 1e-9);
	assert_true(fabs(x->exposed_comm_us - 12) < 1e-9);
	assert_true(fabs(x->idle_us - 0) < 1e-9);
	assert_true(fabs(x->busy_us - 30) < 1e-9);
	assert_true(fabs(x->kernel_sum_us - 36) < 1e-9);
	assert_split_sums(x);
	assert_true(fabs(s.mean.compute_share + s.mean.exposed_comm_share +
			 s.mean.exposed_memcpy_share + s.mean.idle_share - 1) < 1e-9);
	assert_true(fabs(family(&s, "matmul")->us_per_step - 11) < 1e-9);
	assert_true(fabs(family(&s, "elementwise")->us_per_step - 4) < 1e-9);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * Kineto puts cuda_sync waits on the stream they wait for: a Stream Sync
 * 10..40 around a copy 20..25 is not work. Busy 0..10 (gemm) + 20..25 (copy)
 * over 0..25: idle 10, no op or family for the sync.
 */
static void test_sync_is_not_work(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, 0);
	uint32_t gpu = device(&g, TRACE_DEV_GPU, 0), cpu = device(&g, TRACE_DEV_CPU, 0);
	uint32_t s7 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
	uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	ev(&g, host, "ProfilerStep#1", "user_annotation", -10, 60, -1);
	for (int c = 1; c <= 2; c++)
		ev(&g, host, "cudaLaunchKernel", "cuda_runtime", -10 + c, 1, c);
	ev(&g, s7, "ampere_sgemm_128x64", "kernel", 0, 10, 1);
	ev(&g, s7, "Stream Sync", "cuda_sync", 10, 30, -1);
	ev(&g, s7, "Memcpy DtoH (Device -> Pageable)", "gpu_memcpy", 20, 5, 2);
	summarize(&g, 0, &s);

	const struct sum_split *x = &s.devices[0].all;
	assert_true(fabs(x->wall_us - 25) < 1e-9);
	assert_true(fabs(x->busy_us - 15) < 1e-9);
	assert_true(fabs(x->idle_us - 10) < 1e-9);
	assert_true(fabs(x->exposed_memcpy_us - 5) < 1e-9);
	assert_split_sums(x);
	for (uint32_t i = 0; i < s.n_ops; i++)
		assert_string_not_equal(s.ops[i].name, "Stream Sync");
	assert_null(family(&s, "other"));
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * One kernel name, two families: RCCL runs every collective as
 * ncclDevKernel_Generic, and its "Collective name" says which. The name alone
 * gives collective-other; the all-reduce records are the op
 * "ncclDevKernel_Generic [all-reduce]". Every op's family and category are
 * those its time is counted under: the families, the collectives and the
 * split agree with the ops. Stream 7: all-reduce 0..30, broadcast 40..45,
 * all-reduce 50..70, a gemm 80..90.
 */
static void test_one_name_two_families(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, 0);
	uint32_t gpu = device(&g, TRACE_DEV_GPU, 0), cpu = device(&g, TRACE_DEV_CPU, 0);
	uint32_t s7 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
	uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	uint32_t ar = arg1(&g, "Collective name", "allreduce");
	uint32_t bc = arg1(&g, "Collective name", "broadcast");
	ev(&g, host, "ProfilerStep#1", "user_annotation", -10, 110, -1);
	for (int c = 1; c <= 4; c++)
		ev(&g, host, "cudaLaunchKernel", "cuda_runtime", -10 + c, 1, c);
	ev_args(&g, s7, "ncclDevKernel_Generic", "kernel", 0, 30, 1, ar);
	ev_args(&g, s7, "ncclDevKernel_Generic", "kernel", 40, 5, 2, bc);
	ev_args(&g, s7, "ncclDevKernel_Generic", "kernel", 50, 20, 3, ar);
	ev(&g, s7, "ampere_sgemm_128x64", "kernel", 80, 10, 4);
	summarize(&g, 0, &s);

	int seen = 0;
	for (uint32_t i = 0; i < s.n_ops; i++) {
		const struct sum_op *o = &s.ops[i];
		const struct sum_family *f = family(&s, o->family);
		assert_non_null(f);
		assert_string_equal(o->category, f->category);
		if (strcmp(o->name, "ncclDevKernel_Generic [all-reduce]") == 0) {
			assert_string_equal(o->family, "all-reduce");
			assert_string_equal(o->category, "communication");
			assert_string_equal(o->examples[0], "ncclDevKernel_Generic");
			assert_true(fabs(o->self_us_per_step - 50) < 1e-9);
			assert_true(fabs(f->us_per_step - 50) < 1e-9);
			seen |= 1;
		}
		if (strcmp(o->name, "ncclDevKernel_Generic") == 0) {
			assert_string_equal(o->family, "collective-other");
			assert_true(fabs(o->self_us_per_step - 5) < 1e-9);
			assert_true(fabs(f->us_per_step - 5) < 1e-9);
			seen |= 2;
		}
	}
	assert_int_equal(seen, 3);
	assert_int_equal(s.n_collectives, 2);
	for (uint32_t i = 0; i < s.n_collectives; i++)
		assert_true(fabs(s.collectives[i].us_per_step -
				 (strcmp(s.collectives[i].kind, "all-reduce") == 0 ? 50 : 5)) <
			    1e-9);
	assert_true(fabs(s.devices[0].steady.comm_us - 55) < 1e-9);
	assert_true(fabs(s.devices[0].steady.compute_us - 10) < 1e-9);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * Sixteen steps on a Steps line: step 0 is compilation (1000 us), the rest 100
 * us except every 4th (steps 4, 8, 12, 16) at 300 us, each with an op over its
 * first half. Auto warm-up drops step 0 only. The last step's time ends where
 * the device's activity does (150 us into it): the steps never add up to more
 * than the capture. Its span is still its Steps event.
 */
static void test_warmup_and_classes(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	uint32_t steps = track(&g, tpu, TRACE_TRACK_STEPS, "Steps");
	int64_t t0 = 0;
	for (int i = 0; i < 17; i++) {
		int64_t d = i == 0 ? 1000 : (i % 4 == 0 ? 300 : 100);
		char nm[16];
		snprintf(nm, sizeof(nm), "%d", i);
		ev(&g, steps, nm, "", t0, d, -1);
		ev(&g, ops, "fusion.1", "", t0, d / 2, -1);
		t0 += d;
	}
	summarize(&g, -1, &s);
	assert_int_equal(s.warmup, 1);
	assert_false(s.steps[0].steady);
	assert_true(s.steps[1].steady);
	assert_int_equal(s.steady.count, 16);
	assert_true(fabs(s.steady.median_us - 100) < 1e-9);
	assert_true(fabs(s.steady.max_us - 300) < 1e-9);
	/* a Steps line's step is its own event, not cut to the device's last op */
	assert_true(fabs(s.steps[16].us - 300) < 1e-9);
	assert_true(fabs(s.steps[16].span_us - 300) < 1e-9);
	assert_int_equal(s.n_classes, 2);
	assert_string_equal(s.classes[1].name, "heavy");
	assert_int_equal(s.classes[1].count, 4); /* 4, 8, 12 and the last, 16 */
	assert_int_equal(s.classes[1].periodicity, 4);
	summary_release(&s);

	/* --warmup 3 by position */
	summarize(&g, 3, &s);
	assert_int_equal(s.warmup, 3);
	assert_int_equal(s.steady.count, 14);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * Eight ranks, one GPU each, one ProfilerStep#10 per rank; rank 5 is a
 * straggler (its kernel takes 180 us, the others 100 us). Step time is the
 * slowest device's: 180 us. Skew 80 us; the slowest device is rank 5's.
 */
static void test_eight_ranks_straggler(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	trace_init(&g.t);
	for (int r = 0; r < 8; r++) {
		char path[32];
		snprintf(path, sizeof(path), "rank%d.json", r);
		g.file = trace_file_add(&g.t, path);
		g.t.files[g.file].rank = r;
		g.t.files[g.file].world_size = 8;
		uint32_t gpu = device(&g, TRACE_DEV_GPU, r), cpu = device(&g, TRACE_DEV_CPU, 0);
		uint32_t st = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
		uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
		ev(&g, host, "ProfilerStep#10", "user_annotation", 0, 500, -1);
		ev(&g, host, "cudaLaunchKernel", "cuda_runtime", 1, 1,
		   77); /* same id on every rank */
		ev(&g, st, "ampere_sgemm", "kernel", 10, r == 5 ? 180 : 100, 77);
	}
	summarize(&g, 0, &s);
	assert_int_equal(s.n_devices, 8);
	assert_int_equal(s.device_count, 8);
	assert_int_equal(s.world_size, 8);
	assert_string_equal(s.devices[5].id, "rank5/gpu5");
	assert_int_equal(s.n_steps, 1);
	assert_true(fabs(s.steps[0].us - 180) < 1e-9);
	for (int r = 0; r < 8; r++)
		assert_true(fabs(s.steps[0].device_us[r] - (r == 5 ? 180 : 100)) < 1e-9);
	assert_true(fabs(s.skew_us - 80) < 1e-9);
	assert_string_equal(s.slowest_device, "rank5/gpu5");
	/* per device per step: (7 * 100 + 180) / 8 */
	assert_true(fabs(family(&s, "matmul")->us_per_step - 110) < 1e-9);
	for (uint32_t w = 0; w < s.n_warnings; w++)
		assert_string_not_equal(s.warnings[w].code, "ranks-missing");
	summary_release(&s);
	trace_release(&g.t);
}

/* Idle gaps: a marker op (copy-start) hands its gap to the op after it. */
static void test_gaps_marker(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	uint32_t steps = track(&g, tpu, TRACE_TRACK_STEPS, "Steps");
	ev(&g, steps, "1", "", 0, 200, -1);
	ev(&g, ops, "fusion.0", "", 0, 10, -1);
	ev(&g, ops, "copy-start.3", "", 100, 1, -1); /* gap 90 before the marker */
	ev(&g, ops, "convolution.1", "", 101, 20, -1);
	summarize(&g, 0, &s);
	assert_true(s.n_gaps >= 1);
	assert_string_equal(s.gaps[0].op, "convolution");
	assert_string_equal(s.gaps[0].marker, "copy-start");
	assert_true(fabs(s.gaps[0].us_per_step - 90) < 1e-9);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * Kineto GPU user annotations as regions: "ProfilerStep#3" (folded to
 * "ProfilerStep#") holds "forward", which holds a 30 us gemm; a 20 us kernel
 * sits in the step outside "forward". Inclusive: step 50, forward 30;
 * exclusive: step 20, forward 30.
 */
static void test_annotation_regions(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, -1);
	uint32_t gpu = device(&g, TRACE_DEV_GPU, 0);
	uint32_t st = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
	uint32_t an = track(&g, gpu, TRACE_TRACK_ANNOTATIONS, "stream 7 annotations");
	ev(&g, an, "ProfilerStep#3", "gpu_user_annotation", 0, 100, -1);
	ev(&g, an, "forward", "gpu_user_annotation", 10, 50, -1);
	ev(&g, st, "ampere_sgemm", "kernel", 15, 30, -1);
	ev(&g, st, "vectorized_elementwise_kernel", "kernel", 70, 20, -1);
	summarize(&g, 0, &s);
	const struct sum_region *step = NULL, *fwd = NULL;
	for (uint32_t i = 0; i < s.n_regions; i++) {
		if (strcmp(s.regions[i].path, "ProfilerStep#") == 0)
			step = &s.regions[i];
		if (strcmp(s.regions[i].path, "ProfilerStep#/forward") == 0)
			fwd = &s.regions[i];
	}
	assert_non_null(step);
	assert_non_null(fwd);
	assert_int_equal(fwd->depth, 2);
	assert_true(fabs(step->inclusive_us_per_step - 50) < 1e-9);
	assert_true(fabs(step->exclusive_us_per_step - 20) < 1e-9);
	assert_true(fabs(fwd->inclusive_us_per_step - 30) < 1e-9);
	assert_true(fabs(fwd->exclusive_us_per_step - 30) < 1e-9);
	/* annotations are regions, never work */
	assert_true(fabs(s.devices[0].all.busy_us - 50) < 1e-9);
	summary_release(&s);
	trace_release(&g.t);
}

static const struct sum_region *region(const struct summary *s, const char *path)
{
	for (uint32_t i = 0; i < s->n_regions; i++)
		if (strcmp(s->regions[i].path, path) == 0)
			return &s->regions[i];
	return NULL;
}

/* An op with a scope: tf_op and the name stat, each left out when NULL. */
static void ev_scope(struct gen *g, uint32_t tr, const char *name, int64_t ts_us, int64_t dur_us,
		     const char *tf_op, const char *name_stat)
{
	struct trace_arg a[2];
	uint32_t n = 0;
	if (name_stat)
		a[n++] = (struct trace_arg){trace_intern_cstr(&g->t, "name"),
					    trace_intern_cstr(&g->t, name_stat)};
	if (tf_op)
		a[n++] = (struct trace_arg){trace_intern_cstr(&g->t, "tf_op"),
					    trace_intern_cstr(&g->t, tf_op)};
	ev(g, tr, name, "", ts_us, dur_us, -1);
	trace_event_at(&g->t, g->t.n_events - 1)->args = trace_argset_intern(&g->t, a, n);
}

/* Every region's exclusive time is its ops' not under a child region: the
 * exclusive times add up to the top-level regions' inclusive times. */
static void assert_exclusive_partitions(const struct summary *s)
{
	double excl = 0, top = 0;
	for (uint32_t i = 0; i < s->n_regions; i++) {
		excl += s->regions[i].exclusive_us_total;
		if (s->regions[i].depth == 1)
			top += s->regions[i].inclusive_us_total;
	}
	assert_true(fabs(excl - top) < 1e-9);
}

/*
 * marin's hierarchy test (marin-community/marin tests/profiling/
 * test_profile_summary.py, test_hierarchy_blacklist_prefers_semantic_parts):
 * one 100 us op on a TPU op line under tf_op
 * "jit(_train_step)/shard_map/apply_rotary_embedding/pallas_call". shard_map
 * and pallas_call are plumbing, so the regions are "_train_step" (inclusive
 * 100, exclusive 0) and "_train_step/apply_rotary_embedding" (inclusive and
 * exclusive 100: the innermost region left holds the op, although the scope's
 * last segment was dropped).
 */
static void test_regions_dropped_leaf(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	ev_scope(&g, ops, "custom_kernel.1", 0, 100,
		 "jit(_train_step)/shard_map/apply_rotary_embedding/pallas_call", NULL);
	summarize(&g, 0, &s);
	assert_int_equal(s.n_regions, 2);
	const struct sum_region *top = region(&s, "_train_step");
	const struct sum_region *leaf = region(&s, "_train_step/apply_rotary_embedding");
	assert_non_null(top);
	assert_non_null(leaf);
	assert_int_equal(leaf->depth, 2);
	assert_true(fabs(top->inclusive_us_total - 100) < 1e-9);
	assert_true(fabs(top->exclusive_us_total - 0) < 1e-9);
	assert_true(fabs(leaf->inclusive_us_total - 100) < 1e-9);
	assert_true(fabs(leaf->exclusive_us_total - 100) < 1e-9);
	for (uint32_t i = 0; i < s.n_regions; i++) {
		assert_null(strstr(s.regions[i].path, "shard_map"));
		assert_null(strstr(s.regions[i].path, "pallas_call"));
	}
	assert_exclusive_partitions(&s);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * The scopes marin's other hierarchy test gives (test_gap_before_specific_op_
 * and_hierarchical_regions): op names that are paths joined with "=>"
 * ("train_step=>forward=>matmul", 50 us; "train_step=>backward=>all-reduce.1",
 * 10 us) split like '/', and a tf_op path (20 us). Beside them, XLA GPU
 * kernels: tf_op "XlaModule:..." takes the name stat as the scope (30 us
 * under "f/dot_general"), while a name stat without tf_op is no scope, so an
 * op carrying name "fabricated" (40 us) is in no region.
 */
static void test_regions_sources(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	ev(&g, ops, "train_step=>forward=>matmul", "", 0, 50, -1);
	ev_scope(
	    &g, ops, "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1", 100, 20,
	    "jit(_train_step)/apply_rotary_embedding/linear_softmax_cross_entropy_loss_bwd", NULL);
	ev(&g, ops, "train_step=>backward=>all-reduce.1", "", 140, 10, -1);
	ev_scope(&g, ops, "cutlass_gemm", 200, 30, "XlaModule:#hlo_module=jit_f,program_id=3#",
		 "jit(f)/dot_general");
	ev_scope(&g, ops, "fusion.7", 300, 40, NULL, "fabricated");
	summarize(&g, 0, &s);

	const struct sum_region *r = region(&s, "train_step");
	assert_non_null(r);
	assert_true(fabs(r->inclusive_us_total - 60) < 1e-9);
	assert_true(fabs(r->exclusive_us_total - 0) < 1e-9);
	r = region(&s, "train_step/forward/matmul");
	assert_non_null(r);
	assert_int_equal(r->depth, 3);
	assert_true(fabs(r->exclusive_us_total - 50) < 1e-9);
	assert_non_null(region(&s, "train_step/backward/all-reduce.1"));
	r = region(&s, "_train_step/apply_rotary_embedding/linear_softmax_cross_entropy_loss_bwd");
	assert_non_null(r);
	assert_true(fabs(r->exclusive_us_total - 20) < 1e-9);
	r = region(&s, "f/dot_general");
	assert_non_null(r);
	assert_true(fabs(r->exclusive_us_total - 30) < 1e-9);
	for (uint32_t i = 0; i < s.n_regions; i++) {
		assert_null(strstr(s.regions[i].path, "fabricated"));
		assert_null(strstr(s.regions[i].path, "XlaModule"));
		assert_null(strstr(s.regions[i].path, "=>"));
	}
	/* 50 + 20 + 10 + 30; the 40 us op is in none */
	double top = 0;
	for (uint32_t i = 0; i < s.n_regions; i++)
		if (s.regions[i].depth == 1)
			top += s.regions[i].inclusive_us_total;
	assert_true(fabs(top - 110) < 1e-9);
	assert_exclusive_partitions(&s);
	summary_release(&s);
	trace_release(&g.t);
}

/* An XLA event with an argument set (long_name carries the HLO text). */
static void ev_hlo(struct gen *g, uint32_t tr, const char *name, int64_t ts_us, int64_t dur_us,
		   const char *hlo)
{
	struct trace_arg a = {trace_intern_cstr(&g->t, "long_name"), trace_intern_cstr(&g->t, hlo)};
	ev(g, tr, name, "", ts_us, dur_us, -1);
	trace_event_at(&g->t, g->t.n_events - 1)->args = trace_argset_intern(&g->t, &a, 1);
}

/*
 * Collective sizes from HLO text: an all-reduce of bf16[1024,512] (1 MiB) over
 * groups of 4 in 100 us: algbw 10.486 GB/s, busbw x 2(4-1)/4 = 15.729; a
 * reduce-scatter whose f32[256] output (1 KiB) comes from groups of size 4 in
 * iota form moves 4 KiB.
 */
static void test_hlo_collective_sizes(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	uint32_t steps = track(&g, tpu, TRACE_TRACK_STEPS, "Steps");
	ev(&g, steps, "1", "", 0, 1000, -1);
	ev_hlo(&g, ops, "all-reduce.3", 0, 100,
	       "%all-reduce.3 = bf16[1024,512]{1,0:T(8,128)} all-reduce(bf16[1024,512]{1,0} %p), "
	       "replica_groups={{0,1,2,3},{4,5,6,7}}, to_apply=%add");
	ev_hlo(&g, ops, "reduce-scatter.1", 200, 10,
	       "%reduce-scatter.1 = f32[256]{0} reduce-scatter(f32[1024]{0} %x), channel_id=2, "
	       "replica_groups=[2,4]<=[8], dimensions={0}");
	summarize(&g, 0, &s);
	const struct sum_collective *ar = NULL, *rs = NULL;
	for (uint32_t i = 0; i < s.n_collectives; i++) {
		if (strcmp(s.collectives[i].kind, "all-reduce") == 0)
			ar = &s.collectives[i];
		if (strcmp(s.collectives[i].kind, "reduce-scatter") == 0)
			rs = &s.collectives[i];
	}
	assert_non_null(ar);
	assert_non_null(rs);
	assert_true(fabs(ar->bytes_per_step - 1048576) < 1e-6);
	assert_int_equal(ar->group_size, 4);
	assert_true(fabs(ar->algbw_gbps - 10.48576) < 1e-6);
	assert_true(fabs(ar->busbw_gbps - 10.48576 * 1.5) < 1e-6);
	assert_true(fabs(rs->bytes_per_step - 4096) < 1e-6);
	assert_int_equal(rs->group_size, 4);
	summary_release(&s);
	trace_release(&g.t);
}

/* The same trace twice gives byte-identical JSON. */
static void test_deterministic_json(void **state)
{
	struct gen g;
	struct summary a, b;
	struct pg_buf ja = PG_BUF_INIT, jb = PG_BUF_INIT;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	for (int i = 0; i < 50; i++)
		ev(&g, ops, i % 3 ? "fusion.1" : "all-gather.2", "", i * 10, 7, -1);
	summarize(&g, -1, &a);
	summarize(&g, -1, &b);
	summary_write_json(&a, &ja);
	summary_write_json(&b, &jb);
	assert_int_equal(ja.len, jb.len);
	assert_memory_equal(ja.ptr, jb.ptr, ja.len);
	assert_non_null(strstr(ja.ptr, "\"schema\": \"profgate.summary/1\""));
	assert_non_null(strstr(ja.ptr, "\"no-steps\""));
	summary_release(&a);
	summary_release(&b);
	pg_buf_release(&ja);
	pg_buf_release(&jb);
	trace_release(&g.t);
}

/* The JSON of s read back and written again gives the same bytes; the copy
 * read back is left in *back. */
static void round_trip(const struct summary *s, struct summary *back, struct pg_buf *json)
{
	struct pg_buf again = PG_BUF_INIT;

	summary_write_json(s, json);
	assert_int_equal(summary_parse_json(json->ptr, json->len, "rt.json", back), 0);
	summary_write_json(back, &again);
	assert_int_equal(json->len, again.len);
	assert_memory_equal(json->ptr, again.ptr, json->len);
	pg_buf_release(&again);
}

/*
 * Two GPUs and one ProfilerStep launching gpu0's kernels only: gemm 0..60
 * and elementwise 80..100 (idle 60..80). gpu1 runs one kernel outside any
 * step (no correlation), so it has no steady window. The breakdown is
 * gpu0's (compute 80 of 100, idle 20), not halved by gpu1's zeros; per-step
 * numbers are per the one device with a steady window; with no
 * communication the overlap is null, and it reads back null.
 */
static void test_breakdown_steady_devices(void **state)
{
	struct gen g;
	struct summary s, back;
	struct pg_buf json = PG_BUF_INIT;
	(void)state;

	gen_init(&g, 0);
	uint32_t gpu0 = device(&g, TRACE_DEV_GPU, 0), gpu1 = device(&g, TRACE_DEV_GPU, 1);
	uint32_t cpu = device(&g, TRACE_DEV_CPU, 0);
	uint32_t s0 = track(&g, gpu0, TRACE_TRACK_STREAM, "stream 7");
	uint32_t s1 = track(&g, gpu1, TRACE_TRACK_STREAM, "stream 7");
	uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	ev(&g, host, "ProfilerStep#1", "user_annotation", -10, 200, -1);
	ev(&g, host, "cudaLaunchKernel", "cuda_runtime", -9, 1, 1);
	ev(&g, host, "cudaLaunchKernel", "cuda_runtime", -8, 1, 2);
	ev(&g, s0, "ampere_sgemm_128x64", "kernel", 0, 60, 1);
	ev(&g, s0, "vectorized_elementwise_kernel", "kernel", 80, 20, 2);
	ev(&g, s1, "vectorized_elementwise_kernel", "kernel", 500, 30, -1);
	summarize(&g, 0, &s);

	assert_int_equal(s.n_devices, 2);
	assert_true(summary_device_steady(&s.devices[0]));
	assert_false(summary_device_steady(&s.devices[1]));
	assert_int_equal(s.basis_devices, 1);
	assert_true(fabs(s.mean.compute_share - 0.8) < 1e-9);
	assert_true(fabs(s.mean.idle_share - 0.2) < 1e-9);
	assert_true(fabs(s.mean.compute_share + s.mean.exposed_comm_share +
			 s.mean.exposed_memcpy_share + s.mean.idle_share - 1) < 1e-12);
	assert_string_equal(s.worst_device, "gpu0");
	assert_true(s.mean.comm_overlap_share < 0);
	assert_true(s.worst.comm_overlap_share < 0);
	assert_true(fabs(family(&s, "matmul")->us_per_step - 60) < 1e-9);
	assert_true(fabs(family(&s, "matmul")->share - 0.6) < 1e-9);
	/* over the capture gpu1 has its work all the same */
	assert_true(fabs(s.devices[1].all.wall_us - 30) < 1e-9);
	round_trip(&s, &back, &json);
	assert_non_null(strstr(json.ptr, "\"comm_overlap_share\": null"));
	assert_true(back.mean.comm_overlap_share < 0);
	assert_true(fabs(back.mean.compute_share - 0.8) < 1e-9);
	summary_release(&s);
	summary_release(&back);
	pg_buf_release(&json);
	trace_release(&g.t);
}

/* Without steps a family has no step to be a share of, and without devices
 * the breakdown has nothing to average: null, read back as null. */
static void test_undefined_shares_null(void **state)
{
	struct gen g;
	struct summary s, back, none;
	struct pg_buf json = PG_BUF_INIT, j2 = PG_BUF_INIT;
	(void)state;

	gen_init(&g, -1);
	uint32_t tpu = device(&g, TRACE_DEV_TPU, 0);
	uint32_t ops = track(&g, tpu, TRACE_TRACK_DEVICE_OPS, "XLA Ops");
	for (int i = 0; i < 5; i++)
		ev(&g, ops, "fusion.1", "", i * 10, 7, -1);
	summarize(&g, -1, &s);
	assert_int_equal(s.steady.count, 0);
	assert_true(s.n_families > 0);
	for (uint32_t i = 0; i < s.n_families; i++)
		assert_true(s.families[i].share < 0);
	assert_true(s.mean.compute_share >= 0); /* the capture is the window */
	round_trip(&s, &back, &json);
	assert_non_null(strstr(json.ptr, "\"share\": null"));
	assert_true(back.families[0].share < 0);

	summary_init(&none);
	none.basis = strdup(SUMMARY_BASIS_TIMELINE);
	none.steps_source = strdup("none");
	summary_finalize(&none);
	assert_true(none.mean.compute_share < 0 && none.worst.idle_share < 0);
	assert_true(isnan(none.mean.kernel_sum_minus_wall_us_per_step));
	assert_null(none.worst_device);
	summary_release(&back);
	round_trip(&none, &back, &j2);
	assert_non_null(strstr(j2.ptr, "\"compute_share\": null"));
	assert_non_null(strstr(j2.ptr, "\"kernel_sum_minus_wall_us_per_step\": null"));
	assert_true(back.mean.idle_share < 0);
	assert_true(isnan(back.mean.kernel_sum_minus_wall_us_per_step));
	summary_release(&s);
	summary_release(&back);
	summary_release(&none);
	pg_buf_release(&json);
	pg_buf_release(&j2);
	trace_release(&g.t);
}

/*
 * Kineto and XPlane list a stream's kernels nearly, not quite, in time order:
 * runs that reach back into the ones before them, children listed before
 * their parents. The summary must not depend on the order the events come in:
 * the same kernels in time order, in overlapping runs across two streams, and
 * reversed (past the budget of the run merge) give the same bytes.
 */
static int has_warning(const struct summary *s, const char *code, const char *needle)
{
	for (uint32_t i = 0; i < s->n_warnings; i++)
		if (strcmp(s->warnings[i].code, code) == 0 &&
		    (!needle || strstr(s->warnings[i].message, needle)))
			return 1;
	return 0;
}

/* The summary's JSON, read back and written again, gives the same bytes;
 * merging the summary alone gives them too. */
static void assert_round_trip(const struct summary *s)
{
	struct pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT, c = PG_BUF_INIT;
	struct summary r, m;

	summary_write_json(s, &a);
	assert_int_equal(summary_parse_json(a.ptr, a.len, "test", &r), 0);
	summary_write_json(&r, &b);
	assert_int_equal(b.len, a.len);
	assert_memory_equal(b.ptr, a.ptr, a.len);
	assert_int_equal(summary_merge(&m, &r, 1), 0);
	summary_write_json(&m, &c);
	assert_int_equal(c.len, a.len);
	assert_memory_equal(c.ptr, a.ptr, a.len);
	summary_release(&r);
	summary_release(&m);
	pg_buf_release(&a);
	pg_buf_release(&b);
	pg_buf_release(&c);
}

/*
 * Pipelined steps (HTA's rank0.json.gz in small): ProfilerStep#1..#3 of 100 us
 * each launch a compute kernel (stream 7, 5..60 us into the step) and a
 * collective that runs on past the next step's start (stream 9, 50..140 us
 * in). Each step's span is 135 us, and the spans add up to 405 us on a device
 * whose capture is 5..340 = 335 us. The step times tile it: steps 1 and 2 run
 * to the next step's first kernel (100 us each), step 3 to the end of the
 * work (340 - 205 = 135 us). ProfilerStep#4 launches nothing (the profiler
 * stopped): listed without a time, not steady, warned about.
 */
static void test_pipelined_steps(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, 0);
	uint32_t gpu = device(&g, TRACE_DEV_GPU, 0), cpu = device(&g, TRACE_DEV_CPU, 0);
	uint32_t s7 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
	uint32_t s9 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 9");
	uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	char name[32];
	for (int k = 1; k <= 4; k++) {
		int64_t b = 100 * (k - 1);
		snprintf(name, sizeof(name), "ProfilerStep#%d", k);
		ev(&g, host, name, "user_annotation", b, 100, -1);
		if (k == 4)
			break;
		ev(&g, host, "cudaLaunchKernel", "cuda_runtime", b + 1, 1, 10 * k + 1);
		ev(&g, host, "cudaLaunchKernel", "cuda_runtime", b + 2, 1, 10 * k + 2);
		ev(&g, s7, "ampere_sgemm_128x64", "kernel", b + 5, 55, 10 * k + 1);
		ev(&g, s9, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel", b + 50, 90,
		   10 * k + 2);
	}
	summarize(&g, -1, &s);
	assert_int_equal(s.n_steps, 4);
	assert_int_equal(s.steps_captured, 4);
	const double us[] = {100, 100, 135};
	for (int k = 0; k < 3; k++) {
		assert_int_equal(s.steps[k].step, k + 1);
		assert_true(fabs(s.steps[k].us - us[k]) < 1e-9);
		assert_true(fabs(s.steps[k].device_us[0] - us[k]) < 1e-9);
		assert_true(fabs(s.steps[k].span_us - 135) < 1e-9);
		assert_true(fabs(s.steps[k].host_us - 100) < 1e-9);
		/* the spans add up to 1.35x the step times: the last timed
		 * step holds the drain of the ones before it */
		assert_int_equal(s.steps[k].steady, k < 2);
	}
	assert_non_null(strstr(s.warmup_reason, "pipelined"));
	assert_true(s.steps[3].us < 0 && s.steps[3].span_us < 0 && s.steps[3].device_us[0] < 0);
	assert_true(fabs(s.steps[3].host_us - 100) < 1e-9);
	assert_false(s.steps[3].steady);
	assert_true(has_warning(&s, "steps-cut", "(4)"));
	assert_true(has_warning(&s, "steps-cut", "the last"));
	assert_false(has_warning(&s, "steps-missing", NULL));
	/* the steps tile the device's capture, the steady ones its first 200 us */
	assert_true(fabs(s.devices[0].all.wall_us - 335) < 1e-9);
	assert_true(fabs(s.devices[0].steady.wall_us - 200) < 1e-9);
	assert_int_equal(s.steady.count, 2);
	assert_true(fabs(s.steady.median_us - 100) < 1e-9);
	assert_true(fabs(s.steady.max_us - 100) < 1e-9);
	/* per step: the sgemm's 2 x 55 us over 2 steps, a share of the 100 us step */
	assert_true(fabs(family(&s, "matmul")->us_per_step - 55) < 1e-9);
	assert_true(fabs(family(&s, "matmul")->share - 0.55) < 1e-9);
	assert_round_trip(&s);
	summary_release(&s);

	/* --warmup 3 leaves only the cut step: nothing is steady */
	summarize(&g, 3, &s);
	assert_int_equal(s.steady.count, 0);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * A step in the middle with no device work: ProfilerStep#2 launches nothing.
 * Step 1 (kernel 5..60) does not run on to step 3's kernel (205..260): it
 * ends with its own work, so the missing step's 145 us are nobody's.
 */
static void test_step_hole(void **state)
{
	struct gen g;
	struct summary s;
	(void)state;

	gen_init(&g, 0);
	uint32_t gpu = device(&g, TRACE_DEV_GPU, 0), cpu = device(&g, TRACE_DEV_CPU, 0);
	uint32_t s7 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
	uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	ev(&g, host, "ProfilerStep#1", "user_annotation", 0, 100, -1);
	ev(&g, host, "ProfilerStep#2", "user_annotation", 100, 100, -1);
	ev(&g, host, "ProfilerStep#3", "user_annotation", 200, 100, -1);
	ev(&g, host, "cudaLaunchKernel", "cuda_runtime", 1, 1, 1);
	ev(&g, host, "cudaLaunchKernel", "cuda_runtime", 201, 1, 3);
	ev(&g, s7, "ampere_sgemm_128x64", "kernel", 5, 55, 1);
	ev(&g, s7, "ampere_sgemm_128x64", "kernel", 205, 55, 3);
	summarize(&g, -1, &s);
	assert_int_equal(s.n_steps, 3);
	assert_true(fabs(s.steps[0].us - 55) < 1e-9);
	assert_true(s.steps[1].us < 0);
	assert_true(fabs(s.steps[2].us - 55) < 1e-9);
	assert_int_equal(s.steady.count, 2);
	assert_true(fabs(s.devices[0].steady.wall_us - 110) < 1e-9);
	assert_true(has_warning(&s, "steps-cut", "(2)"));
	assert_false(has_warning(&s, "steps-cut", "the last"));
	assert_round_trip(&s);
	summary_release(&s);
	trace_release(&g.t);
}

/*
 * A CPU-only run's step with every top-level op at its fastest (host.c
 * fastest()): six steps of a Python frame holding aten::linear (50 us, with
 * aten::addmm inside) and two aten::relu (10 us each), 40 us of the step
 * between them. A co-tenant stretched the linear to 80 us in steps 2 and 4,
 * the first relu to 20 us in steps 3 and 5 and the second to 25 us in steps 4
 * and 6: steps of 110, 140, 120, 155, 120 and 125 us, a median of 122.5 us.
 * Its fastest is 110 us: each position at its shortest, the Python frame and
 * the nested addmm no position of their own, the time between the ops at its
 * least (40 us in every step).
 */
static void test_host_fastest(void **state)
{
	static const int64_t linear[6] = {50, 80, 50, 80, 50, 50},
			     relu1[6] = {10, 10, 20, 10, 20, 10},
			     relu2[6] = {10, 10, 10, 25, 10, 25};
	struct gen g;
	struct summary s;
	int64_t t0 = 0;
	(void)state;

	gen_init(&g, 0);
	uint32_t cpu = device(&g, TRACE_DEV_CPU, 0);
	uint32_t host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	for (int k = 0; k < 6; k++) {
		int64_t len = linear[k] + relu1[k] + relu2[k] + 40;
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", k + 1);
		ev(&g, host, name, "user_annotation", t0, len, -1);
		ev(&g, host, "train.py(12): step", "python_function", t0, len, -1);
		ev(&g, host, "aten::linear", "cpu_op", t0 + 5, linear[k], -1);
		ev(&g, host, "aten::addmm", "cpu_op", t0 + 6, linear[k] - 2, -1);
		ev(&g, host, "aten::relu", "cpu_op", t0 + linear[k] + 15, relu1[k], -1);
		ev(&g, host, "aten::relu", "cpu_op", t0 + linear[k] + relu1[k] + 30, relu2[k], -1);
		t0 += len;
	}
	summarize(&g, 0, &s);
	assert_string_equal(s.basis, SUMMARY_BASIS_HOST);
	assert_int_equal(s.steady.count, 6);
	assert_true(fabs(s.steady.median_us - 122.5) < 1e-9);
	assert_true(fabs(s.host.fastest_us_per_step - 110) < 1e-9);
	assert_round_trip(&s);
	summary_release(&s);
	trace_release(&g.t);

	/* with device work the steps are the device's: no host witness */
	gen_init(&g, 0);
	uint32_t gpu = device(&g, TRACE_DEV_GPU, 0);
	cpu = device(&g, TRACE_DEV_CPU, 0);
	host = track(&g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	uint32_t s7 = track(&g, gpu, TRACE_TRACK_STREAM, "stream 7");
	for (int k = 0; k < 3; k++) {
		char name[32];
		snprintf(name, sizeof(name), "ProfilerStep#%d", k + 1);
		ev(&g, host, name, "user_annotation", 100 * k, 100, -1);
		ev(&g, host, "cudaLaunchKernel", "cuda_runtime", 100 * k + 1, 1, k + 1);
		ev(&g, s7, "ampere_sgemm_128x64", "kernel", 100 * k + 5, 55, k + 1);
	}
	summarize(&g, 0, &s);
	assert_true(s.host.fastest_us_per_step < 0);
	summary_release(&s);
	trace_release(&g.t);
}

struct kern {
	int stream;
	const char *name;
	int64_t ts, dur, corr;
};

static void order_trace(struct gen *g, const struct kern *k, const uint32_t *order, uint32_t n)
{
	gen_init(g, 0);
	uint32_t gpu = device(g, TRACE_DEV_GPU, 0), cpu = device(g, TRACE_DEV_CPU, 0);
	uint32_t st[2] = {track(g, gpu, TRACE_TRACK_STREAM, "stream 7"),
			  track(g, gpu, TRACE_TRACK_STREAM, "stream 9")};
	uint32_t host = track(g, cpu, TRACE_TRACK_HOST_THREAD, "main");
	char step[32];
	for (int i = 0; i < 6; i++) {
		snprintf(step, sizeof(step), "ProfilerStep#%d", i);
		ev(g, host, step, "user_annotation", i * 10000, 10000, -1);
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct kern *x = &k[order[i]];
		ev(g, host, "cudaLaunchKernel", "cuda_runtime", x->corr, 1, x->corr);
		ev(g, st[x->stream], x->name, "kernel", x->ts, x->dur, x->corr);
	}
}

static void test_event_order(void **state)
{
	enum { N = 3000 };
	static struct kern k[N];
	static uint32_t order[3][N];
	struct pg_buf json[3] = {PG_BUF_INIT, PG_BUF_INIT, PG_BUF_INIT};
	(void)state;

	/* kernels 20 us apart; every fifth one a 15 us parent of the next on its
	 * stream (which starts 2 us later); every seventh on stream 9, overlapping */
	for (uint32_t i = 0; i < N; i++) {
		int stream = i % 7 == 3;
		k[i] = (struct kern){stream,
				     stream  ? "ncclAllReduce"
				     : i % 5 ? "gemm"
					     : "fused",
				     (int64_t)i * 20 + (i % 5 == 1) * 2 - (i % 5 == 1) * 20,
				     1 + i % 4, (int64_t)i * 20};
		if (i % 5 == 0)
			k[i].dur = 15;
	}
	for (uint32_t i = 0; i < N; i++) {
		order[0][i] = i;
		order[2][i] = N - 1 - i;
	}
	/* runs of 40, each starting 15 back inside the run before it */
	for (uint32_t i = 0, o = 0; i < N; i += 40)
		for (uint32_t j = i; j < i + 40 && j < N; j++)
			order[1][o++] = j;
	for (uint32_t i = 40; i < N; i += 40)
		for (uint32_t j = 0; j < 15 && i + j < N; j++) {
			uint32_t x = order[1][i + j];
			memmove(&order[1][i - 15 + j + 1], &order[1][i - 15 + j],
				15 * sizeof(uint32_t));
			order[1][i - 15 + j] = x;
		}
	for (int v = 0; v < 3; v++) {
		struct gen g;
		struct summary s;
		order_trace(&g, k, order[v], N);
		summarize(&g, -1, &s);
		assert_string_equal(s.steps_source, "profiler-step");
		assert_true(s.n_steps >= 5);
		summary_write_json(&s, &json[v]);
		summary_release(&s);
		trace_release(&g.t);
	}
	for (int v = 1; v < 3; v++) {
		assert_int_equal(json[v].len, json[0].len);
		assert_memory_equal(json[v].ptr, json[0].ptr, json[0].len);
	}
	for (int v = 0; v < 3; v++)
		pg_buf_release(&json[v]);
}

/*
 * Summaries read with host_markers_only (as summarize reads) equal those read
 * with every event decoded, byte for byte, on every corpus XPlane and on the
 * TensorFlow two-host folder; and the TPU capture, whose host plane names no
 * marker, is one where host events were left undecoded.
 */
#define MAX_XPLANES 64
static char *xplanes[MAX_XPLANES];
static int n_xplanes;

static int collect_xplane(const char *path, const struct stat *st, int type, struct FTW *f)
{
	size_t n = strlen(path);
	(void)st;
	(void)f;
	if (type == FTW_F && n > 10 && strcmp(path + n - 10, ".xplane.pb") == 0 &&
	    n_xplanes < MAX_XPLANES)
		xplanes[n_xplanes++] = strdup(path);
	return 0;
}

/* Reads paths (one capture) into a summary's JSON; returns read_paths' failures. */
static int summary_of(const char *const *paths, uint32_t n, int markers_only, uint64_t *undecoded,
		      struct pg_buf *json)
{
	struct trace t;
	struct summary s;
	int failed;

	trace_init(&t);
	t.host_markers_only = markers_only;
	t.decode_threads = 2;
	failed = read_paths(&t, paths, NULL, n, 2, NULL);
	*undecoded = 0;
	for (uint32_t i = 0; i < t.n_files; i++)
		*undecoded += t.files[i].undecoded_events;
	if (!failed) {
		summarize_trace(&t, -1, &s);
		summary_write_json(&s, json);
		summary_release(&s);
	}
	trace_release(&t);
	return failed;
}

static void test_corpus_host_markers_only(void **state)
{
	const char *corpus = getenv("PG_CORPUS") ? getenv("PG_CORPUS") : "../shared/corpus";
	const char *tf = "/tensorflow__profiler/plugins/profile/GPU-multi-worker/";
	const char *tf_paths[2];
	int n_tf = 0, tpu_skipped = 0;
	(void)state;

	n_xplanes = 0;
	if (nftw(corpus, collect_xplane, 16, FTW_PHYS) != 0 || n_xplanes == 0)
		skip();
	for (int i = 0; i <= n_xplanes; i++) {
		/* each file alone, then the TF workers as one capture */
		const char *const *paths =
		    i < n_xplanes ? (const char *const *)&xplanes[i] : tf_paths;
		uint32_t n = i < n_xplanes ? 1 : (uint32_t)n_tf;
		struct pg_buf full = PG_BUF_INIT, lazy = PG_BUF_INIT;
		uint64_t und_full, und_lazy;
		if (i < n_xplanes && strstr(xplanes[i], tf) && n_tf < 2)
			tf_paths[n_tf++] = xplanes[i];
		if (n == 0)
			continue;
		int f_full = summary_of(paths, n, 0, &und_full, &full);
		int f_lazy = summary_of(paths, n, 1, &und_lazy, &lazy);
		assert_int_equal(f_full, f_lazy);
		assert_int_equal(und_full, 0);
		assert_int_equal(full.len, lazy.len);
		assert_memory_equal(full.ptr, lazy.ptr, full.len);
		if (i < n_xplanes && strstr(xplanes[i], "/tpu_inference_2.xplane.pb"))
			tpu_skipped = und_lazy > 0;
		pg_buf_release(&full);
		pg_buf_release(&lazy);
	}
	assert_int_equal(n_tf, 2);
	assert_true(tpu_skipped);
	for (int i = 0; i < n_xplanes; i++)
		free(xplanes[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_overlap_split),
	    cmocka_unit_test(test_nesting),
	    cmocka_unit_test(test_parent_own_time),
	    cmocka_unit_test(test_nested_kernels),
	    cmocka_unit_test(test_one_name_two_families),
	    cmocka_unit_test(test_sync_is_not_work),
	    cmocka_unit_test(test_warmup_and_classes),
	    cmocka_unit_test(test_eight_ranks_straggler),
	    cmocka_unit_test(test_gaps_marker),
	    cmocka_unit_test(test_deterministic_json),
	    cmocka_unit_test(test_breakdown_steady_devices),
	    cmocka_unit_test(test_undefined_shares_null),
	    cmocka_unit_test(test_annotation_regions),
	    cmocka_unit_test(test_regions_dropped_leaf),
	    cmocka_unit_test(test_regions_sources),
	    cmocka_unit_test(test_hlo_collective_sizes),
	    cmocka_unit_test(test_event_order),
	    cmocka_unit_test(test_pipelined_steps),
	    cmocka_unit_test(test_step_hole),
	    cmocka_unit_test(test_host_fastest),
	    cmocka_unit_test(test_corpus_host_markers_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
