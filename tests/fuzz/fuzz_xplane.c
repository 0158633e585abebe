/*
 * Fuzz target: the XPlane reader (src/read/xplane.c), protobuf wire format
 * decoded by hand from memory, then summarized and reported.
 */
#include "fuzz.h"

#include "../../src/read/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace t;
	uint32_t f = fuzz_trace_open(&t, "fuzz.xplane.pb");

	if (read_xplane_mem(&t, f, data, size) == 0)
		fuzz_trace_downstream(&t);
	else
		fuzz_check_error_line();
	trace_release(&t);
	return 0;
}
