/*
 * analyze: pure functions from the trace model to summary parts. No I/O.
 */
#ifndef PG_ANALYZE_H
#define PG_ANALYZE_H

#include "../trace/trace.h"

/* Step markers a profile carries, by source, for one file. */
enum analyze_marker_kind {
	ANALYZE_MARK_STEPS_LINE,      /* events on a Steps line */
	ANALYZE_MARK_STEP_ANNOTATION, /* host StepTraceAnnotation: _r / step_num args */
	ANALYZE_MARK_PROFILER_STEP,   /* Kineto ProfilerStep#N on a host thread */
	ANALYZE_MARK_MODULES,	      /* XLA Modules executions */
	ANALYZE_MARK_COUNT,
};

struct analyze_marker {
	uint64_t count;
	int64_t first_step, last_step; /* step numbers where the marker has one; -1 otherwise */
};

const char *analyze_marker_name(enum analyze_marker_kind k);
/* Fill out[f * ANALYZE_MARK_COUNT + k] for every file f of t, in one pass. */
void analyze_markers(const struct trace *t, struct analyze_marker *out);

/* The largest step number or id taken from a name or an argument: what a JSON
 * number (a double) holds exactly, so that a summary reads back as written.
 * A larger one ("8888888888888888888888") is no number. */
#define ANALYZE_MAX_ID (1LL << 53)
/* A step number or id written in decimal ("12", "-3"; nothing else around it)
 * within +-ANALYZE_MAX_ID: 1 and *out set, else 0 (NULL and "" too). */
int analyze_parse_id(const char *s, int64_t *out);

/* ---- the summary (summarize.c) ---- */

struct summary;

struct analyze_options {
	int warmup;		   /* steps to exclude by position; -1: decide from the data */
	const char *version;	   /* profgate's version, recorded in the summary */
	const char *const *labels; /* "key=value" */
	uint32_t n_labels;
};

void analyze_options_init(struct analyze_options *o);
/* Fill s (initialised by the caller) from t. Returns 0. */
int analyze_summarize(const struct trace *t, const struct analyze_options *o, struct summary *s);

/* ---- classification (rules.c) ---- */

enum analyze_category {
	ANALYZE_CAT_COMPUTE,
	ANALYZE_CAT_COMMUNICATION,
	ANALYZE_CAT_MEMORY,
	ANALYZE_CAT_HOST,
	ANALYZE_CAT_OTHER,
	ANALYZE_CAT_COUNT,
};

enum analyze_family {
	ANALYZE_FAM_MATMUL,
	ANALYZE_FAM_ATTENTION_FWD,
	ANALYZE_FAM_ATTENTION_BWD,
	ANALYZE_FAM_CONV,
	ANALYZE_FAM_NORM,
	ANALYZE_FAM_ELEMENTWISE,
	ANALYZE_FAM_REDUCE,
	ANALYZE_FAM_OPTIMIZER,
	ANALYZE_FAM_LOSS,
	ANALYZE_FAM_EMBEDDING,
	ANALYZE_FAM_ALL_REDUCE,
	ANALYZE_FAM_ALL_GATHER,
	ANALYZE_FAM_REDUCE_SCATTER,
	ANALYZE_FAM_ALL_TO_ALL,
	ANALYZE_FAM_COLLECTIVE_PERMUTE,
	ANALYZE_FAM_SEND_RECV,
	ANALYZE_FAM_COLLECTIVE_OTHER,
	ANALYZE_FAM_MEMCPY,
	ANALYZE_FAM_MEMSET,
	ANALYZE_FAM_FUSION,
	ANALYZE_FAM_OTHER,
	/* host families (analyze_classify_host) */
	ANALYZE_FAM_COPY,
	ANALYZE_FAM_DATA_LOADING,
	ANALYZE_FAM_AUTOGRAD,
	ANALYZE_FAM_RUNTIME,
	ANALYZE_FAM_COUNT,
};

/* What one event says about itself; any field may be NULL. */
struct analyze_event_facts {
	const char *name;
	size_t name_len;
	const char *cat;	     /* Kineto category */
	const char *hlo_op;	     /* XLA hlo_op (may hold "a::b" stacks) */
	const char *hlo_category;    /* XLA hlo_category */
	const char *collective_name; /* Kineto "Collective name" */
};

/* First matching row of the rules table (src/analyze/rules.c): the family, and
 * its category (analyze_family_category). */
void analyze_classify(const struct analyze_event_facts *f, enum analyze_category *cat,
		      enum analyze_family *fam);
/* The one place a family's category is decided: collectives are
 * communication, memcpy and memset memory, the host families host, the rest
 * compute. Every list that names a category (ops, families, collectives, the
 * time split) takes it from here. */
enum analyze_category analyze_family_category(enum analyze_family f);
const char *analyze_category_name(enum analyze_category c);
const char *analyze_family_name(enum analyze_family f);
/*
 * The family of a host event (a framework op, a runtime call, an annotation)
 * from its name and Kineto category (NULL for none): the host rules first
 * (data loading, optimizer, autograd, copies, runtime calls, framework op
 * lists), then the device table's rules on the name, else "other".
 */
enum analyze_family analyze_classify_host(const char *name, size_t len, const char *cat);
/* For tests: host rule i's example name, category (NULL for none) and family;
 * -1 past the end. */
int analyze_host_rule_example(size_t i, const char **name, const char **cat,
			      enum analyze_family *fam);
/* For tests: row i's example input and the answer it must get; -1 past the end. */
size_t analyze_rules_count(void);
int analyze_rule_example(size_t i, struct analyze_event_facts *f, enum analyze_category *cat,
			 enum analyze_family *fam);

#endif
