/*
 * Fuzz target: the XPlane reader (src/read/xplane.c), protobuf wire format
 * decoded by hand from memory, then summarized and reported. Each input is
 * read twice, every event decoded and as summarize reads it (host threads only
 * where they may hold step markers): what the first reads the second reads,
 * into the same summary.
 */
#include "fuzz.h"

#include <string.h>

#include "../../src/read/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace t, lazy;
	uint32_t f = fuzz_trace_open(&t, "fuzz.xplane.pb");
	uint32_t fl = fuzz_trace_open(&lazy, "fuzz.xplane.pb");
	int rc, rc_lazy;

	lazy.host_markers_only = 1;
	rc = read_xplane_mem(&t, f, data, size);
	if (rc)
		fuzz_check_error_line();
	rc_lazy = read_xplane_mem(&lazy, fl, data, size);
	if (rc == 0) {
		struct summary whole, part;
		struct pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;

		FUZZ_CHECK(rc_lazy == 0, "read whole but not as summarize reads: %s",
			   pg_error_last());
		fuzz_trace_summary(&t, &whole);
		fuzz_trace_summary(&lazy, &part);
		summary_write_json(&whole, &a);
		summary_write_json(&part, &b);
		FUZZ_CHECK(a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0,
			   "host events left undecoded change the summary (%zu vs %zu bytes)",
			   a.len, b.len);
		fuzz_summary_downstream(&whole);
		pg_buf_release(&a);
		pg_buf_release(&b);
		summary_release(&whole);
		summary_release(&part);
	}
	trace_release(&lazy);
	trace_release(&t);
	return 0;
}
