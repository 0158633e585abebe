/*
 * Names profilers write that more than one reader must understand: the line
 * and thread names that say what a track is, and the argument/stat names the
 * trace model keeps (everything else is dropped at read time).
 */
#include "read.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum trace_track_kind read_track_kind_for_name(const char *name, int on_device)
{
	if (strncmp(name, "Stream #", 8) == 0)
		return TRACE_TRACK_STREAM;
	if (strcmp(name, "XLA Ops") == 0 || strcmp(name, "Async XLA Ops") == 0 ||
	    strncmp(name, "XLA Ops - from", 14) == 0)
		return TRACE_TRACK_DEVICE_OPS;
	if (strcmp(name, "Steps") == 0)
		return TRACE_TRACK_STEPS;
	if (strcmp(name, "XLA Modules") == 0)
		return TRACE_TRACK_MODULES;
	if (strncmp(name, "Framework ", 10) == 0 || strncmp(name, "TensorFlow ", 11) == 0 ||
	    strcmp(name, "Source code") == 0 || strcmp(name, "XLA TraceMe") == 0 ||
	    strcmp(name, "Launch Stats") == 0)
		return TRACE_TRACK_ANNOTATIONS;
	return on_device ? TRACE_TRACK_OTHER : TRACE_TRACK_HOST_THREAD;
}

/* Argument / stat names kept in argument sets. Append only. */
static const char *const kept[] = {
    "name",
    "hlo_op",
    "hlo_module",
    "tf_op",
    "long_name",
    "hlo_category",
    "flops",
    "bytes_accessed",
    TRACE_MARK_STEP_NUM,
    TRACE_MARK_R,
    "group_id",
    "program_id",
    "run_id",
    "step_name",
    "deduplicated_name",
    "iter_num",
    "Collective name",
    "In msg nelems",
    "Out msg nelems",
    "Group size",
    "dtype",
    "bytes",
    "Process Group Name",
    "labels",
    "sort_index",
    "source",
    "model_flops",
    "memcpy_details",
    "replica_groups",
    "shape_with_layout",
    "Total Allocated",
    "Total Reserved",
    "Device Id",
    "Device Type",
};

_Static_assert(PG_ARRAY_LEN(kept) == READ_KEPT_ARGS, "READ_KEPT_ARGS must match the list");

#define PER_LEN 8
static signed char by_len[40][PER_LEN];
static unsigned char first_byte[256]; /* some kept name starts with it */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
	memset(by_len, -1, sizeof(by_len));
	for (size_t i = 0; i < PG_ARRAY_LEN(kept); i++) {
		size_t len = strlen(kept[i]);
		first_byte[(unsigned char)kept[i][0]] = 1;
		for (int j = 0; j < PER_LEN && len < 40; j++)
			if (by_len[len][j] < 0) {
				by_len[len][j] = (signed char)i;
				break;
			}
	}
}

int read_kept_arg(const char *k, size_t n)
{
	pthread_once(&once, init);
	if (n >= 40 || n == 0 || !first_byte[(unsigned char)k[0]])
		return -1;
	for (int j = 0; j < PER_LEN && by_len[n][j] >= 0; j++)
		if (kept[by_len[n][j]][0] == k[0] && memcmp(kept[by_len[n][j]], k, n) == 0)
			return by_len[n][j];
	return -1;
}

const char *read_kept_arg_name(int i)
{
	return i >= 0 && (size_t)i < PG_ARRAY_LEN(kept) ? kept[i] : "";
}

/* The tables xprof's tools make of an .xplane.pb, by the names marin saves
 * them under (<tool>.json, its XPROF_TABLE_TOOLS) and TensorBoard's profile
 * plugin caches them under: per-step and per-kernel aggregates, not events. */
static const char *const xprof_tools[] = {
    "overview_page", "kernel_stats",   "framework_op_stats",	      "op_profile",
    "hlo_stats",     "memory_profile", "input_pipeline_analyzer",     "input_pipeline",
    "memory_viewer", "pod_viewer",     "tf_data_bottleneck_analysis",
};

const char *read_xprof_tool(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strcspn(base, ".");
	if (strcmp(base + n, ".json") != 0 && strcmp(base + n, ".json.gz") != 0)
		return NULL;
	for (size_t i = 0; i < PG_ARRAY_LEN(xprof_tools); i++)
		if (strlen(xprof_tools[i]) == n && memcmp(base, xprof_tools[i], n) == 0)
			return xprof_tools[i];
	return NULL;
}

int read_parse_index(const char *s, const char *prefix, int trailing, int32_t *out)
{
	size_t n = strlen(prefix);
	char *end;

	if (strncmp(s, prefix, n) != 0)
		return 0;
	long v = strtol(s + n, &end, 10);
	if (end == s + n || (*end && !trailing) || v < 0 || v > 1000000)
		return 0;
	*out = (int32_t)v;
	return 1;
}
