/*
 * Fuzz target: marin's profile_summary.v1 mapped into a summary
 * (src/summary/marin.c) for any JSON object, then the summary downstream and
 * the gate against the reference summary.
 */
#include "fuzz.h"

#include <cjson/cJSON.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct summary ref;
	static int have_ref;
	struct gate_thresholds th;
	struct summary s;
	cJSON *root = cJSON_ParseWithLength((const char *)data, size);

	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return 0;
	}
	if (!have_ref) {
		fuzz_reference_summary(&ref, 1.0);
		have_ref = 1;
	}
	if (summary_from_marin("fuzz.profile_summary.json", root, &s) == 0) {
		fuzz_summary_downstream(&s);
		gate_thresholds_default(&th);
		fuzz_gate_downstream(&ref, &s, &th);
		gate_thresholds_release(&th);
	} else {
		fuzz_check_error_line();
	}
	summary_release(&s);
	cJSON_Delete(root);
	return 0;
}
