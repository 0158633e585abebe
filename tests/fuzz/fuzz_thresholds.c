/*
 * Fuzz target: thresholds files (src/gate/thresholds.c), then the rules put to
 * work: rule lookup by metric name, and the gate of a slower reference
 * summary against the reference under them.
 */
#include "fuzz.h"

#include <stdlib.h>

static const char *const metrics[] = {
    "step.median_us",
    "step.p90_us",
    "breakdown.idle_share",
    "family.matmul.us_per_step",
    "op.volta_sgemm_128x64_nn.us_per_step",
    "collective.all-reduce.busbw_gbps",
    "region.a/b/c.us_per_step",
    "throughput.tflops_per_device",
    "",
    "*",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct summary b, c;
	static int have_ref;
	struct gate_thresholds th;
	char *text = fuzz_text(data, size);

	if (!have_ref) {
		fuzz_reference_summary(&b, 1.0);
		fuzz_reference_summary(&c, 1.3);
		have_ref = 1;
	}
	if (gate_thresholds_parse(text, size, "fuzz.thresholds.json", &th) == 0) {
		for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
			(void)gate_rule_for(&th, metrics[i]);
		/* every rule's glob against every other rule's name */
		for (uint32_t i = 0; i < th.n_rules && i < 16; i++)
			for (uint32_t k = 0; k < th.n_rules && k < 16; k++)
				(void)gate_glob_match(th.rules[i].metric, th.rules[k].metric);
		fuzz_gate_downstream(&b, &c, &th);
	} else {
		fuzz_check_error_line();
	}
	gate_thresholds_release(&th);
	free(text);
	return 0;
}
