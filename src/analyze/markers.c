/*
 * Step markers: which step sources a profile offers (inspect lists them; the
 * summary picks the best). Only counts and step-number ranges here.
 */
#include "analyze.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *analyze_marker_name(enum analyze_marker_kind k)
{
	static const char *names[] = {"steps-line", "step-annotation", "profiler-step", "modules"};
	return (unsigned)k < PG_ARRAY_LEN(names) ? names[k] : "unknown";
}

int analyze_parse_id(const char *s, int64_t *out)
{
	const char *d = s && *s == '-' ? s + 1 : s;
	char *end;
	long long v;

	if (!d || *d < '0' || *d > '9')
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end || errno == ERANGE || v > ANALYZE_MAX_ID || v < -ANALYZE_MAX_ID)
		return 0;
	*out = v;
	return 1;
}

static void note(struct analyze_marker *m, int has, int64_t step)
{
	m->count++;
	if (!has)
		return;
	if (m->first_step < 0 || step < m->first_step)
		m->first_step = step;
	if (step > m->last_step)
		m->last_step = step;
}

void analyze_markers(const struct trace *t, struct analyze_marker *all)
{
	trace_str k_r = trace_str_find(t, TRACE_MARK_R),
		  k_step = trace_str_find(t, TRACE_MARK_STEP_NUM);
	/* per name: 0 unknown, 1 a ProfilerStep#, 2 not; names repeat, strncmp is not free */
	unsigned char *is_step = pg_xcalloc(t->n_strs ? t->n_strs : 1, 1);

	for (uint32_t i = 0; i < t->n_files * ANALYZE_MARK_COUNT; i++)
		all[i] = (struct analyze_marker){0, -1, -1};
	for (uint64_t i = 0; i < t->n_events; i++) {
		const struct trace_event *e = trace_event_at(t, i);
		const struct trace_track *tr = &t->tracks[e->track];
		int64_t step = 0;

		if (e->ph != 'X' || tr->device == UINT32_MAX)
			continue;
		struct analyze_marker *out =
		    &all[(size_t)t->devices[tr->device].file * ANALYZE_MARK_COUNT];
		switch (tr->kind) {
		case TRACE_TRACK_STEPS: {
			int has = analyze_parse_id(trace_str_get(t, e->name), &step);
			note(&out[ANALYZE_MARK_STEPS_LINE], has, step);
			continue;
		}
		case TRACE_TRACK_MODULES: note(&out[ANALYZE_MARK_MODULES], 0, 0); continue;
		case TRACE_TRACK_HOST_THREAD: {
			const char *name = trace_str_get(t, e->name);
			if (is_step[e->name] == 0)
				is_step[e->name] = trace_is_marker_name(name, strlen(name)) ? 1 : 2;
			if (is_step[e->name] == 1) {
				int has =
				    analyze_parse_id(name + TRACE_MARK_PROFILER_STEP_LEN, &step);
				note(&out[ANALYZE_MARK_PROFILER_STEP], has, step);
				continue;
			}
			if (e->args && ((k_r && trace_arg_get(t, e->args, k_r)) ||
					(k_step && trace_arg_get(t, e->args, k_step)))) {
				trace_str v = k_step ? trace_arg_get(t, e->args, k_step) : 0;
				int has = v && analyze_parse_id(trace_str_get(t, v), &step);
				note(&out[ANALYZE_MARK_STEP_ANNOTATION], has, step);
			}
			continue;
		}
		default: continue;
		}
	}
	free(is_step);
}
