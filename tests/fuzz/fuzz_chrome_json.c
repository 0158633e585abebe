/*
 * Fuzz target: the Chrome trace JSON reader (src/read/chrome_json.c) on plain
 * bytes, read whole and again in small chunks with look-ahead workers (the
 * result must not depend on where chunks end or on the workers), then
 * summarized and reported.
 */
#include "fuzz.h"

#include <string.h>

#include "../../src/read/read.h"

static int read_json(struct trace *t, const uint8_t *data, size_t size, size_t window, int threads)
{
	uint32_t f = fuzz_trace_open(t, "fuzz.pt.trace.json");
	struct rd_in in;
	int rc;

	t->files[f].format = TRACE_FMT_CHROME_JSON;
	FUZZ_CHECK(rd_in_open_mem_threads(&in, data, size, window, threads) == 0,
		   "rd_in_open_mem_threads");
	rc = read_chrome_json(t, f, &in);
	rd_in_close(&in);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace whole, cut;
	char why[1024];
	int rc = read_json(&whole, data, size, 0, 1);

	snprintf(why, sizeof(why), "%s", rc ? pg_error_last() : "");
	if (rc)
		fuzz_check_error_line();
	/* chunks of 1 to 61 bytes, chosen by the input's size, with two workers
	 * reading them ahead of the parser (chrome_ahead.c) */
	int rc2 = read_json(&cut, data, size, 1 + size % 61, 2);
	FUZZ_CHECK(rc == rc2, "whole: %d, in chunks: %d", rc, rc2);
	if (rc) {
		FUZZ_CHECK(strcmp(why, pg_error_last()) == 0, "whole: %s; in chunks: %s", why,
			   pg_error_last());
	} else {
		FUZZ_CHECK(whole.n_events == cut.n_events && whole.n_tracks == cut.n_tracks &&
			       whole.n_devices == cut.n_devices,
			   "events %llu/%llu, tracks %u/%u, devices %u/%u",
			   (unsigned long long)whole.n_events, (unsigned long long)cut.n_events,
			   whole.n_tracks, cut.n_tracks, whole.n_devices, cut.n_devices);
		fuzz_trace_downstream(&whole);
	}
	trace_release(&whole);
	trace_release(&cut);
	return 0;
}
