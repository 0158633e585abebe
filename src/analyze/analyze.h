/*
 * analyze: pure functions from the trace model to summary parts. No I/O.
 */
#ifndef PG_ANALYZE_H
#define PG_ANALYZE_H

#include "../trace/trace.h"

/* Step markers a profile carries, by source, for one file. */
enum analyze_marker_kind {
	ANALYZE_MARK_STEPS_LINE,     /* events on a Steps line */
	ANALYZE_MARK_STEP_ANNOTATION,/* host StepTraceAnnotation: _r / step_num args */
	ANALYZE_MARK_PROFILER_STEP,  /* Kineto ProfilerStep#N on a host thread */
	ANALYZE_MARK_MODULES,        /* XLA Modules executions */
	ANALYZE_MARK_COUNT,
};

struct analyze_marker {
	uint64_t count;
	int64_t first_step, last_step; /* step numbers where the marker has one; -1 otherwise */
};

const char *analyze_marker_name(enum analyze_marker_kind k);
/* Fill out[ANALYZE_MARK_COUNT] for the events of file. */
void analyze_markers(const struct trace *t, uint32_t file, struct analyze_marker *out);

#endif
