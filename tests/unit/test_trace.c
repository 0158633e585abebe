/*
 * trace model tests: string and argument-set interning, the 40-byte event and its 64K blocks,
 * truncation (the reader's rollback), category classes, track spans, warnings and names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/trace/trace.h"

static void intern_returns_same_id(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	trace_str a = trace_intern_cstr(&t, "aten::mm");
	trace_str b = trace_intern(&t, "aten::mm_and_more", 8);
	trace_str c = trace_intern_cstr(&t, "aten::bmm");
	assert_int_not_equal(a, 0);
	assert_int_equal(a, b);
	assert_int_not_equal(a, c);
	assert_string_equal(trace_str_get(&t, a), "aten::mm");
	assert_int_equal(trace_str_len(&t, a), 8);
	/* id 0 is the empty string */
	assert_int_equal(trace_intern(&t, "", 0), 0);
	assert_string_equal(trace_str_get(&t, 0), "");
	/* lengths, not NULs, delimit: "a\0b" and "a" are different strings */
	trace_str z = trace_intern(&t, "a\0b", 3);
	assert_int_not_equal(z, trace_intern_cstr(&t, "a"));
	assert_int_equal(trace_str_len(&t, z), 3);
	assert_memory_equal(trace_str_get(&t, z), "a\0b", 3);
	/* find never interns */
	uint32_t n = t.n_strs;
	assert_int_equal(trace_str_find(&t, "aten::mm"), a);
	assert_int_equal(trace_str_find(&t, "never seen"), 0);
	assert_int_equal(t.n_strs, n);
	/* an id out of range reads as empty, not out of bounds */
	assert_string_equal(trace_str_get(&t, 1u << 30), "");
	assert_int_equal(trace_str_len(&t, 1u << 30), 0);
	trace_release(&t);
}

static void intern_survives_rehash(void **state)
{
	struct trace t;
	trace_str ids[20000];
	char s[32];

	(void)state;
	trace_init(&t);
	for (int i = 0; i < 20000; i++) {
		snprintf(s, sizeof(s), "kernel_%d", i);
		ids[i] = trace_intern_cstr(&t, s);
	}
	/* many table growths later every id still names its string, and is found again */
	for (int i = 0; i < 20000; i++) {
		snprintf(s, sizeof(s), "kernel_%d", i);
		assert_string_equal(trace_str_get(&t, ids[i]), s);
		assert_int_equal(trace_intern_cstr(&t, s), ids[i]);
		assert_int_equal(trace_str_find(&t, s), ids[i]);
	}
	assert_int_equal(t.n_strs, 20001); /* plus "" */
	trace_release(&t);
}

static void argsets_are_interned(void **state)
{
	struct trace t;
	const struct trace_arg *out;

	(void)state;
	trace_init(&t);
	trace_str k1 = trace_intern_cstr(&t, "hlo_op"), k2 = trace_intern_cstr(&t, "hlo_module");
	trace_str v1 = trace_intern_cstr(&t, "fusion.1"), v2 = trace_intern_cstr(&t, "jit_step");
	struct trace_arg a[2] = {{k1, v1}, {k2, v2}}, same[2] = {{k1, v1}, {k2, v2}};
	struct trace_arg swapped[2] = {{k2, v2}, {k1, v1}};

	assert_int_equal(trace_argset_intern(&t, a, 0), 0);
	uint32_t s1 = trace_argset_intern(&t, a, 2);
	assert_int_not_equal(s1, 0);
	assert_int_equal(trace_argset_intern(&t, same, 2), s1);
	/* order matters, and so does length */
	uint32_t s2 = trace_argset_intern(&t, swapped, 2);
	uint32_t s3 = trace_argset_intern(&t, a, 1);
	assert_int_not_equal(s2, s1);
	assert_int_not_equal(s3, s1);
	assert_int_not_equal(s3, s2);
	assert_int_equal(trace_argset_get(&t, s1, &out), 2);
	assert_int_equal(out[0].key, k1);
	assert_int_equal(out[1].value, v2);
	assert_int_equal(trace_arg_get(&t, s1, k2), v2);
	assert_int_equal(trace_arg_get(&t, s3, k2), 0);
	assert_int_equal(trace_arg_get(&t, 0, k1), 0);
	assert_int_equal(trace_argset_get(&t, 0, &out), 0);
	assert_null(out);
	assert_int_equal(trace_argset_get(&t, 1u << 30, &out), 0);
	/* thousands of sets: the index grows and every set is still found */
	uint32_t ids[3000];
	for (uint32_t i = 0; i < 3000; i++) {
		struct trace_arg x = {k1, i + 100};
		ids[i] = trace_argset_intern(&t, &x, 1);
	}
	for (uint32_t i = 0; i < 3000; i++) {
		struct trace_arg x = {k1, i + 100};
		assert_int_equal(trace_argset_intern(&t, &x, 1), ids[i]);
		assert_int_equal(trace_arg_get(&t, ids[i], k1), i + 100);
	}
	assert_int_equal(trace_argset_intern(&t, a, 2), s1);
	trace_release(&t);
}

static void event_is_40_bytes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct trace_event), 40);
}

static uint32_t one_track(struct trace *t)
{
	struct trace_device d;
	struct trace_track tr;

	memset(&d, 0, sizeof(d));
	d.kind = TRACE_DEV_GPU;
	d.file = trace_file_add(t, "x.json");
	memset(&tr, 0, sizeof(tr));
	tr.device = trace_device_add(t, &d);
	tr.kind = TRACE_TRACK_STREAM;
	return trace_track_add(t, &tr);
}

static void add_events(struct trace *t, uint32_t track, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++) {
		struct trace_event *e = trace_event_add(t);
		assert_int_equal(e->ts_ns, 0); /* the slot comes zeroed */
		assert_int_equal(e->flags, 0);
		e->ts_ns = (int64_t)i * 10;
		e->dur_ns = 5;
		e->corr = i;
		e->track = track;
		e->ph = 'X';
		trace_event_commit(t, e);
	}
}

static void event_blocks_past_65536(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	uint32_t tr = one_track(&t);
	add_events(&t, tr, 0, 200000); /* four blocks, the last partly filled */
	assert_int_equal(t.n_events, 200000);
	assert_int_equal(t.n_blocks, 4);
	for (uint64_t i = 0; i < 200000; i += 1 + i % 1000) {
		const struct trace_event *e = trace_event_at(&t, i);
		assert_int_equal(e->corr, i);
		assert_int_equal(e->ts_ns, (int64_t)i * 10);
	}
	/* the boundary events on both sides of each block edge */
	for (uint64_t b = 1; b < 4; b++) {
		assert_int_equal(trace_event_at(&t, b * 65536 - 1)->corr, b * 65536 - 1);
		assert_int_equal(trace_event_at(&t, b * 65536)->corr, b * 65536);
	}
	/* commit kept the track's count and span: first start 0, last end 1999990 + 5 */
	assert_int_equal(t.tracks[tr].n_events, 200000);
	assert_int_equal(t.tracks[tr].first_ns, 0);
	assert_int_equal(t.tracks[tr].last_ns, 1999995);
	assert_true(trace_memory_bytes(&t) >= 4 * 65536 * sizeof(struct trace_event));
	trace_release(&t);
}

static void events_truncate(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	uint32_t tr = one_track(&t);
	add_events(&t, tr, 0, 140000);
	trace_events_truncate(&t, 200000); /* beyond the end: nothing happens */
	assert_int_equal(t.n_events, 140000);
	trace_events_truncate(&t, 65537); /* keeps two blocks */
	assert_int_equal(t.n_events, 65537);
	assert_int_equal(t.n_blocks, 2);
	assert_int_equal(trace_event_at(&t, 65536)->corr, 65536);
	/* adding again continues at the cut and reuses the kept block */
	add_events(&t, tr, 65537, 70000);
	assert_int_equal(t.n_events, 70000);
	assert_int_equal(trace_event_at(&t, 69999)->corr, 69999);
	trace_events_truncate(&t, 65536); /* exactly one full block */
	assert_int_equal(t.n_blocks, 1);
	add_events(&t, tr, 65536, 65540);
	assert_int_equal(t.n_blocks, 2);
	assert_int_equal(trace_event_at(&t, 65539)->corr, 65539);
	trace_events_truncate(&t, 0);
	assert_int_equal(t.n_events, 0);
	assert_int_equal(t.n_blocks, 0);
	add_events(&t, tr, 0, 3);
	assert_int_equal(trace_event_at(&t, 2)->corr, 2);
	trace_release(&t); /* LeakSanitizer checks the freed blocks */
}

static void category_class_masks(void **state)
{
	static const struct {
		const char *name;
		uint32_t mask;
	} cases[] = {
	    {"kernel", TRACE_CATCLASS_DEVICE},
	    {"Kernel", TRACE_CATCLASS_DEVICE}, /* legacy Kineto names */
	    {"gpu_memcpy", TRACE_CATCLASS_DEVICE},
	    {"Memcpy", TRACE_CATCLASS_DEVICE},
	    {"gpu_memset", TRACE_CATCLASS_DEVICE},
	    {"gpu_user_annotation", TRACE_CATCLASS_DEVICE_ANN},
	    {"cpu_op", TRACE_CATCLASS_HOST},
	    {"Operator", TRACE_CATCLASS_HOST},
	    {"cuda_runtime", TRACE_CATCLASS_HOST},
	    {"Runtime", TRACE_CATCLASS_HOST},
	    {"python_function", TRACE_CATCLASS_HOST | TRACE_CATCLASS_PYTHON},
	    {"user_annotation", TRACE_CATCLASS_HOST | TRACE_CATCLASS_STEP},
	    {"ac2g", TRACE_CATCLASS_FLOW},
	    {"async_cpu_to_gpu", TRACE_CATCLASS_FLOW},
	    {"fwdbwd", TRACE_CATCLASS_FLOW},
	    {"mtia_ccp_events", TRACE_CATCLASS_ACCEL},
	    {"Trace", 0},
	    {"kernels", 0}, /* whole names only, never prefixes */
	    {"KERNEL", 0},
	    {"", 0},
	};
	struct trace t;

	(void)state;
	trace_init(&t);
	for (size_t i = 0; i < PG_ARRAY_LEN(cases); i++) {
		uint16_t c = trace_cat_intern(&t, cases[i].name, strlen(cases[i].name));
		assert_int_equal(t.cats[c].class_mask, cases[i].mask);
		assert_string_equal(trace_str_get(&t, t.cats[c].name), cases[i].name);
		/* interning again returns the same category */
		assert_int_equal(trace_cat_intern(&t, cases[i].name, strlen(cases[i].name)), c);
	}
	/* n bytes of a longer buffer */
	assert_int_equal(trace_cat_intern(&t, "kernel_extra", 6),
			 trace_cat_intern(&t, "kernel", 6));
	trace_release(&t);
}

static void track_span_and_aggregates(void **state)
{
	struct trace t;
	struct trace_event *e;

	(void)state;
	trace_init(&t);
	uint32_t tr = one_track(&t);
	assert_int_equal(t.tracks[tr].first_ns, INT64_MAX);
	assert_int_equal(t.tracks[tr].last_ns, INT64_MIN);
	e = trace_event_add(&t);
	e->track = tr;
	e->ts_ns = 500;
	e->dur_ns = 100;
	trace_event_commit(&t, e);
	e = trace_event_add(&t);
	e->track = tr;
	e->ts_ns = 100;
	e->dur_ns = 50; /* earlier start, earlier end */
	trace_event_commit(&t, e);
	/* an aggregate is counted but has no time: the span must not move */
	e = trace_event_add(&t);
	e->track = tr;
	e->ts_ns = -1000000;
	e->dur_ns = 99999999;
	e->flags = TRACE_EV_AGGREGATE;
	trace_event_commit(&t, e);
	assert_int_equal(t.tracks[tr].n_events, 3);
	assert_int_equal(t.tracks[tr].first_ns, 100);
	assert_int_equal(t.tracks[tr].last_ns, 600);
	trace_release(&t);
}

static void files_devices_warnings_and_names(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	uint32_t f0 = trace_file_add(&t, "a.json"), f1 = trace_file_add(&t, "b.json");
	assert_int_equal(f0, 0);
	assert_int_equal(f1, 1);
	assert_string_equal(t.files[1].path, "b.json");
	assert_int_equal(t.files[1].rank, -1);
	assert_int_equal(t.files[1].world_size, -1);
	assert_int_equal(t.files[1].schema_version, -1);
	trace_warn(&t, f1, "event-cap", "%d events is exactly %s", 1000000, "a cap");
	trace_warn(&t, f0, "a-code-longer-than-the-32-byte-code-field", "%s", "");
	assert_int_equal(t.n_warnings, 2);
	assert_int_equal(t.warnings[0].file, 1);
	assert_string_equal(t.warnings[0].code, "event-cap");
	assert_string_equal(t.warnings[0].message, "1000000 events is exactly a cap");
	assert_int_equal(strlen(t.warnings[1].code), 31); /* cut to fit, terminated */
	assert_string_equal(t.warnings[1].message, "");

	assert_string_equal(trace_dev_kind_name(TRACE_DEV_GPU), "gpu");
	assert_string_equal(trace_dev_kind_name(TRACE_DEV_TPU), "tpu");
	assert_string_equal(trace_dev_kind_name(TRACE_DEV_CPU), "cpu");
	assert_string_equal(trace_dev_kind_name((enum trace_dev_kind)99), "other");
	assert_string_equal(trace_track_kind_name(TRACE_TRACK_STREAM), "device-stream");
	assert_string_equal(trace_track_kind_name(TRACE_TRACK_DEVICE_OPS), "device-ops");
	assert_string_equal(trace_track_kind_name(TRACE_TRACK_STEPS), "steps");
	assert_string_equal(trace_track_kind_name(TRACE_TRACK_MODULES), "modules");
	assert_string_equal(trace_track_kind_name(TRACE_TRACK_HOST_THREAD), "host-thread");
	assert_string_equal(trace_track_kind_name(TRACE_TRACK_ANNOTATIONS), "annotations");
	assert_string_equal(trace_track_kind_name(TRACE_TRACK_KIND_COUNT), "other");
	assert_string_equal(trace_dialect_name(TRACE_DIALECT_JAX), "jax");
	assert_string_equal(trace_dialect_name(TRACE_DIALECT_KINETO), "kineto");
	assert_string_equal(trace_dialect_name(TRACE_DIALECT_GENERIC), "generic");
	assert_string_equal(trace_format_name(TRACE_FMT_CHROME_JSON), "chrome-json");
	assert_string_equal(trace_format_name(TRACE_FMT_XPLANE), "xplane");
	trace_release(&t);
	/* a released trace is all zero and can be released again */
	assert_int_equal(t.n_files, 0);
	trace_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(intern_returns_same_id),
	    cmocka_unit_test(intern_survives_rehash),
	    cmocka_unit_test(argsets_are_interned),
	    cmocka_unit_test(event_is_40_bytes),
	    cmocka_unit_test(event_blocks_past_65536),
	    cmocka_unit_test(events_truncate),
	    cmocka_unit_test(category_class_masks),
	    cmocka_unit_test(track_span_and_aggregates),
	    cmocka_unit_test(files_devices_warnings_and_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
