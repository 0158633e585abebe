/*
 * Fuzz target: the summary reader (src/summary/read.c, profgate.summary/1 and
 * the dispatch to marin's format), then the summary downstream, the gate
 * against a copy of itself made faster, and `merge` of the two.
 */
#include "fuzz.h"

#include <stdlib.h>

#include "../../src/summary/summary.h"

/* The baseline: the same summary made a tenth faster, from other files. */
static void perturb(struct summary *b)
{
	for (uint32_t i = 0; i < b->n_files; i++) {
		free(b->files[i].sha256);
		b->files[i].sha256 = pg_xstrdup("00000000000000000000000000000000000000000000000"
						"00000000000000000");
	}
	for (uint32_t i = 0; i < b->n_steps; i++) {
		b->steps[i].us *= 0.9;
		for (uint32_t d = 0; d < b->n_devices && b->steps[i].device_us; d++)
			b->steps[i].device_us[d] *= 0.9;
	}
	b->steady.median_us *= 0.9;
	b->steady.p90_us *= 0.9;
	b->steady.mean_us *= 0.9;
	for (uint32_t i = 0; i < b->n_ops; i++)
		b->ops[i].self_us_per_step *= 0.8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct summary b, c;
	struct gate_thresholds th;

	if (summary_parse_json((const char *)data, size, "fuzz.summary.json", &c)) {
		fuzz_check_error_line();
		summary_release(&c);
		return 0;
	}
	fuzz_summary_downstream(&c);
	FUZZ_CHECK(summary_parse_json((const char *)data, size, "fuzz.summary.json", &b) == 0,
		   "the second read failed: %s", pg_error_last());
	perturb(&b);
	gate_thresholds_default(&th);
	fuzz_gate_downstream(&b, &c, &th);
	gate_thresholds_release(&th);
	/* as `profgate merge` would: finalize derives everything again */
	struct summary both[2] = {c, b}, m; /* borrowed copies: freed through c and b */
	if (summary_merge(&m, both, 2) == 0)
		fuzz_summary_downstream(&m);
	else
		fuzz_check_error_line();
	summary_release(&m);
	summary_release(&b);
	summary_release(&c);
	return 0;
}
