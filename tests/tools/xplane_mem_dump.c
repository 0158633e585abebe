/*
 * xplane_mem_dump: the raw allocator events of an XPlane, one line each, for
 * tests that check the summary's memory numbers independently of profgate's
 * reader and analysis. The file is unpacked whole with the protobuf-c
 * generated code; every MemoryAllocation / MemoryDeallocation event of every
 * plane prints its plane, its allocator (allocator_name, else
 * index_on_host or device_ordinal, as xprof's memory profile names it) and its bytes_allocated,
 * bytes_reserved and peak_bytes_in_use stats (-1 when absent), tab-separated.
 *
 * usage: xplane_mem_dump FILE.xplane.pb
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xplane.pb-c.h"

typedef Tensorflow__Profiler__XPlane XPlane;
typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;

static const char *event_name(const XPlane *p, int64_t id)
{
	for (size_t i = 0; i < p->n_event_metadata; i++)
		if (p->event_metadata[i]->key == id && p->event_metadata[i]->value)
			return p->event_metadata[i]->value->name;
	return "";
}

static const char *stat_name(const XPlane *p, int64_t id)
{
	for (size_t i = 0; i < p->n_stat_metadata; i++)
		if (p->stat_metadata[i]->key == id && p->stat_metadata[i]->value)
			return p->stat_metadata[i]->value->name;
	return "";
}

static long long stat_int(const XStat *s)
{
	switch (s->value_case) {
	case TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE: return (long long)s->int64_value;
	case TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE: return (long long)s->uint64_value;
	case TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE: return (long long)s->double_value;
	default: return -1;
	}
}

static void dump_event(const XPlane *p, const XEvent *e)
{
	const char *alloc = "";
	char idx[32] = "";
	long long v[3] = {-1, -1, -1};
	static const char *const keys[3] = {"bytes_allocated", "bytes_reserved",
					    "peak_bytes_in_use"};

	for (size_t k = 0; k < e->n_stats; k++) {
		const XStat *s = e->stats[k];
		const char *n = stat_name(p, s->metadata_id);
		if (strcmp(n, "allocator_name") == 0) {
			if (s->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE)
				alloc = s->str_value;
			else if (s->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE)
				alloc = stat_name(p, (int64_t)s->ref_value);
			continue;
		}
		if (strcmp(n, "index_on_host") == 0 || strcmp(n, "device_ordinal") == 0) {
			snprintf(idx, sizeof(idx), "%lld", stat_int(s));
			continue;
		}
		for (int i = 0; i < 3; i++)
			if (strcmp(n, keys[i]) == 0)
				v[i] = stat_int(s);
	}
	if (!*alloc)
		alloc = idx;
	printf("%s\t%s\t%lld\t%lld\t%lld\n", p->name, alloc, v[0], v[1], v[2]);
}

int main(int argc, char **argv)
{
	Tensorflow__Profiler__XSpace *sp = NULL;
	uint8_t *buf = NULL;
	int rc = 1;
	long size;
	FILE *f;

	if (argc != 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: xplane_mem_dump FILE.xplane.pb\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = size >= 0 ? malloc((size_t)size + 1) : NULL;
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "xplane_mem_dump: cannot read %s\n", argv[1]);
		fclose(f);
		goto out;
	}
	fclose(f);
	if (!(sp = tensorflow__profiler__xspace__unpack(NULL, (size_t)size, buf))) {
		fprintf(stderr, "xplane_mem_dump: %s is not an XSpace\n", argv[1]);
		goto out;
	}
	for (size_t i = 0; i < sp->n_planes; i++) {
		const XPlane *p = sp->planes[i];
		for (size_t l = 0; l < p->n_lines; l++)
			for (size_t k = 0; k < p->lines[l]->n_events; k++) {
				const XEvent *e = p->lines[l]->events[k];
				const char *n = event_name(p, e->metadata_id);
				if (strcmp(n, "MemoryAllocation") == 0 ||
				    strcmp(n, "MemoryDeallocation") == 0)
					dump_event(p, e);
			}
	}
	rc = 0;
out:
	if (sp)
		tensorflow__profiler__xspace__free_unpacked(sp, NULL);
	free(buf);
	return rc;
}
