/*
 * Thresholds files (profgate.thresholds/1): rules matched to metric names by
 * glob, identity fields, quality actions. Validation is strict: an unknown key
 * or a wrong type is an error naming the file and the key's path, because a
 * typo in a gate's configuration must not silently loosen the gate.
 */
#include "gate.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const char gate_default_thresholds[];
extern const size_t gate_default_thresholds_len;

struct parse {
	const char *origin;
	struct gate_thresholds *th;
};

static int bad(const struct parse *p, const char *path, const char *why)
{
	return pg_error_set(PG_EUSAGE, "%s: %s: %s", p->origin, path, why);
}

/* Every key of obj must be one of allowed (NULL-terminated). */
static int known_keys(const struct parse *p, const cJSON *obj, const char *where,
		      const char *const *allowed)
{
	for (const cJSON *k = obj->child; k; k = k->next) {
		int ok = 0;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = strcmp(*a, k->string) == 0;
		if (!ok) {
			char path[256];
			snprintf(path, sizeof(path), "%s%s%s", where, *where ? "." : "", k->string);
			return bad(p, path, "unknown key");
		}
	}
	return 0;
}

static int get_number(const struct parse *p, const cJSON *v, const char *path, double lo, double hi,
		      double *out)
{
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return bad(p, path, "must be a number");
	if (v->valuedouble < lo || v->valuedouble > hi) {
		char why[96];
		snprintf(why, sizeof(why), "must be between %g and %g", lo, hi);
		return bad(p, path, why);
	}
	*out = v->valuedouble;
	return 0;
}

static int parse_limit(const struct parse *p, const cJSON *v, const char *path,
		       struct gate_limit *l)
{
	static const char *const keys[] = {"relative", "absolute", NULL};
	char sub[256];
	const cJSON *x;

	if (!cJSON_IsObject(v))
		return bad(p, path, "must be an object like {\"relative\": 0.05}");
	if (known_keys(p, v, path, keys))
		return PG_EUSAGE;
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "relative"))) {
		snprintf(sub, sizeof(sub), "%s.relative", path);
		if (get_number(p, x, sub, 0, 1e6, &l->relative))
			return PG_EUSAGE;
		l->has_relative = 1;
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "absolute"))) {
		snprintf(sub, sizeof(sub), "%s.absolute", path);
		if (get_number(p, x, sub, 0, 1e18, &l->absolute))
			return PG_EUSAGE;
		l->has_absolute = 1;
	}
	if (!l->has_relative && !l->has_absolute)
		return bad(p, path, "needs \"relative\" or \"absolute\"");
	return 0;
}

/* "noise": {"relative": r, "absolute": a, "step_share": s}: the prior sd of
 * one run's value, its parts added in quadrature. */
static int parse_noise(const struct parse *p, const cJSON *v, const char *path, struct gate_rule *r)
{
	static const char *const keys[] = {"relative", "absolute", "step_share", NULL};
	static const double max[] = {10, 1e18, 1};
	double *dst[] = {&r->noise.relative, &r->noise.absolute, &r->noise_step_share};
	char sub[256];
	const cJSON *x;

	if (!cJSON_IsObject(v))
		return bad(p, path, "must be an object like {\"relative\": 0.03}");
	if (known_keys(p, v, path, keys))
		return PG_EUSAGE;
	for (int k = 0; keys[k]; k++) {
		if (!(x = cJSON_GetObjectItemCaseSensitive(v, keys[k])))
			continue;
		snprintf(sub, sizeof(sub), "%s.%s", path, keys[k]);
		if (get_number(p, x, sub, 0, max[k], dst[k]))
			return PG_EUSAGE;
	}
	r->noise.has_relative = r->noise.relative > 0;
	r->noise.has_absolute = r->noise.absolute > 0;
	return 0;
}

static int parse_rule(const struct parse *p, const cJSON *v, uint32_t i, struct gate_rule *r)
{
	static const char *const keys[] = {
	    "metric",	      "direction",    "warn",	     "fail", "floor_share", "noise",
	    "min_step_share", "significance", "min_samples", "test", "comment",	    NULL};
	char path[64], sub[128];
	const cJSON *x;
	double d;

	snprintf(path, sizeof(path), "rules[%u]", i);
	memset(r, 0, sizeof(*r));
	r->floor_share = -1;
	r->min_step_share = -1;
	r->significance = -1;
	r->min_samples = -1;
	r->order = i;
	if (!cJSON_IsObject(v))
		return bad(p, path, "must be an object");
	if (known_keys(p, v, path, keys))
		return PG_EUSAGE;
	x = cJSON_GetObjectItemCaseSensitive(v, "metric");
	snprintf(sub, sizeof(sub), "%s.metric", path);
	if (!cJSON_IsString(x) || !x->valuestring[0])
		return bad(p, sub, "must be a metric name or glob, e.g. \"family.*.us_per_step\"");
	r->metric = pg_xstrdup(x->valuestring);
	x = cJSON_GetObjectItemCaseSensitive(v, "direction");
	snprintf(sub, sizeof(sub), "%s.direction", path);
	if (!cJSON_IsString(x))
		return bad(p, sub, "must be \"lower\", \"higher\" or \"info\"");
	if (strcmp(x->valuestring, "lower") == 0)
		r->direction = GATE_LOWER_IS_BETTER;
	else if (strcmp(x->valuestring, "higher") == 0)
		r->direction = GATE_HIGHER_IS_BETTER;
	else if (strcmp(x->valuestring, "info") == 0)
		r->direction = GATE_INFO;
	else
		return bad(p, sub, "must be \"lower\", \"higher\" or \"info\"");
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "warn"))) {
		snprintf(sub, sizeof(sub), "%s.warn", path);
		if (parse_limit(p, x, sub, &r->warn))
			return PG_EUSAGE;
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "fail"))) {
		snprintf(sub, sizeof(sub), "%s.fail", path);
		if (parse_limit(p, x, sub, &r->fail))
			return PG_EUSAGE;
	}
	if (r->direction != GATE_INFO && !r->warn.has_relative && !r->warn.has_absolute &&
	    !r->fail.has_relative && !r->fail.has_absolute)
		return bad(p, path, "a judged metric needs \"warn\" or \"fail\" limits");
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "floor_share"))) {
		snprintf(sub, sizeof(sub), "%s.floor_share", path);
		if (get_number(p, x, sub, 0, 1, &r->floor_share))
			return PG_EUSAGE;
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "noise"))) {
		snprintf(sub, sizeof(sub), "%s.noise", path);
		if (parse_noise(p, x, sub, r))
			return PG_EUSAGE;
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "min_step_share"))) {
		snprintf(sub, sizeof(sub), "%s.min_step_share", path);
		if (get_number(p, x, sub, 0, 1, &r->min_step_share))
			return PG_EUSAGE;
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "significance"))) {
		snprintf(sub, sizeof(sub), "%s.significance", path);
		if (get_number(p, x, sub, 1e-9, 0.5, &r->significance))
			return PG_EUSAGE;
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "min_samples"))) {
		snprintf(sub, sizeof(sub), "%s.min_samples", path);
		/* 0: a metric that is no timing (a memory peak), whose fail no
		 * count of steps needs to confirm */
		if (get_number(p, x, sub, 0, 1e6, &d) || d != floor(d) || d == 1)
			return bad(p, sub, "must be 0 or a whole number from 2");
		r->min_samples = (int32_t)d;
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "test"))) {
		snprintf(sub, sizeof(sub), "%s.test", path);
		if (!cJSON_IsBool(x))
			return bad(p, sub, "must be true or false");
		r->test = cJSON_IsTrue(x);
	}
	snprintf(sub, sizeof(sub), "%s.comment", path);
	if ((x = cJSON_GetObjectItemCaseSensitive(v, "comment")) && !cJSON_IsString(x))
		return bad(p, sub, "must be a string");
	return 0;
}

/* "unknown identity field (device_kind, ..., steps_captured or labels.KEY)" */
static int bad_identity(const struct parse *p, const char *path)
{
	struct pg_buf why = PG_BUF_INIT;
	int rc;

	pg_buf_adds(&why, "unknown identity field (");
	for (size_t i = 0; i < SUMMARY_ID_N; i++)
		pg_buf_addf(&why, "%s%s", i ? ", " : "", summary_id_fields[i].name);
	pg_buf_adds(&why, " or labels.KEY)");
	rc = bad(p, path, why.ptr);
	pg_buf_release(&why);
	return rc;
}

static int parse_identity(const struct parse *p, const cJSON *v)
{
	struct gate_thresholds *th = p->th;
	uint32_t i = 0;

	if (!cJSON_IsArray(v))
		return bad(p, "identity", "must be an array of field names");
	th->identity = pg_xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(char *));
	for (const cJSON *x = v->child; x; x = x->next, i++) {
		char path[64];
		snprintf(path, sizeof(path), "identity[%u]", i);
		if (!cJSON_IsString(x))
			return bad(p, path, "must be a string");
		if (!summary_id_find(x->valuestring) &&
		    !(strncmp(x->valuestring, "labels.", 7) == 0 && x->valuestring[7]))
			return bad_identity(p, path);
		th->identity[th->n_identity++] = pg_xstrdup(x->valuestring);
	}
	return 0;
}

static int parse_quality(const struct parse *p, const cJSON *v)
{
	struct gate_thresholds *th = p->th;

	if (!cJSON_IsObject(v))
		return bad(p, "quality", "must be an object of warning code to action");
	th->quality = pg_xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*th->quality));
	for (const cJSON *x = v->child; x; x = x->next) {
		char path[192];
		struct gate_quality_rule *q = &th->quality[th->n_quality];
		snprintf(path, sizeof(path), "quality.%s", x->string);
		if (!cJSON_IsString(x))
			return bad(p, path,
				   "must be \"ignore\", \"warn\", \"fail\" or \"inconclusive\"");
		if (strcmp(x->valuestring, "ignore") == 0)
			q->action = GATE_IGNORE;
		else if (strcmp(x->valuestring, "warn") == 0)
			q->action = GATE_WARN;
		else if (strcmp(x->valuestring, "fail") == 0)
			q->action = GATE_FAIL;
		else if (strcmp(x->valuestring, "inconclusive") == 0)
			q->action = GATE_INCONCLUSIVE;
		else
			return bad(p, path,
				   "must be \"ignore\", \"warn\", \"fail\" or \"inconclusive\"");
		q->code = pg_xstrdup(x->string);
		th->n_quality++;
	}
	return 0;
}

static int parse_top(const struct parse *p, const cJSON *root)
{
	static const char *const keys[] = {
	    "schema",	"name",	   "description", "significance",	    "min_samples",
	    "identity", "quality", "rules",	  "consecutive_violations", "min_workload_overlap",
	    "comment",	NULL};
	struct gate_thresholds *th = p->th;
	const cJSON *x;
	double d;

	if (!cJSON_IsObject(root))
		return bad(p, "(top)", "must be a JSON object");
	if (known_keys(p, root, "", keys))
		return PG_EUSAGE;
	x = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!cJSON_IsString(x) || strcmp(x->valuestring, GATE_THRESHOLDS_SCHEMA) != 0)
		return bad(p, "schema", "must be \"" GATE_THRESHOLDS_SCHEMA "\"");
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "name"))) {
		if (!cJSON_IsString(x))
			return bad(p, "name", "must be a string");
		th->name = pg_xstrdup(x->valuestring);
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "description"))) {
		if (!cJSON_IsString(x))
			return bad(p, "description", "must be a string");
		th->description = pg_xstrdup(x->valuestring);
	}
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "comment")) && !cJSON_IsString(x))
		return bad(p, "comment", "must be a string");
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "significance")) &&
	    get_number(p, x, "significance", 1e-9, 0.5, &th->significance))
		return PG_EUSAGE;
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "min_samples"))) {
		if (get_number(p, x, "min_samples", 2, 1e6, &d) || d != floor(d))
			return bad(p, "min_samples", "must be a whole number from 2");
		th->min_samples = (uint32_t)d;
	}
	/* optional (added after the first release): older files keep their meaning */
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "consecutive_violations"))) {
		if (get_number(p, x, "consecutive_violations", 1, 100, &d) || d != floor(d))
			return bad(p, "consecutive_violations",
				   "must be a whole number from 1 to 100");
		th->consecutive_violations = (uint32_t)d;
	}
	/* optional too: 0 turns the workload check off, on purpose */
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "min_workload_overlap")) &&
	    get_number(p, x, "min_workload_overlap", 0, 1, &th->min_workload_overlap))
		return PG_EUSAGE;
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "identity")) && parse_identity(p, x))
		return PG_EUSAGE;
	if ((x = cJSON_GetObjectItemCaseSensitive(root, "quality")) && parse_quality(p, x))
		return PG_EUSAGE;
	x = cJSON_GetObjectItemCaseSensitive(root, "rules");
	if (!cJSON_IsArray(x))
		return bad(p, "rules", "must be an array of rules");
	th->rules = pg_xcalloc((size_t)cJSON_GetArraySize(x) + 1, sizeof(*th->rules));
	for (const cJSON *r = x->child; r; r = r->next) {
		if (parse_rule(p, r, th->n_rules, &th->rules[th->n_rules])) {
			th->n_rules++; /* released with the rest */
			return PG_EUSAGE;
		}
		th->n_rules++;
	}
	return 0;
}

#define BUILTIN_ORIGIN "built-in thresholds/default.json"

static int has_noise(const struct gate_rule *r)
{
	return r->noise.has_relative || r->noise.has_absolute || r->noise_step_share > 0;
}

/* A judged rule that gives no "noise" (a file written before it existed, or
 * one that leaves it to the tool) takes the built-in default's prior for its
 * metric: with none, the gate would take any change as beyond noise. */
static void inherit_noise(struct gate_thresholds *th)
{
	static struct gate_thresholds builtin;
	static int loaded;

	for (uint32_t i = 0; i < th->n_rules; i++) {
		struct gate_rule *r = &th->rules[i];
		const struct gate_rule *d;
		if (r->direction == GATE_INFO || has_noise(r))
			continue;
		if (!loaded) {
			gate_thresholds_default(&builtin);
			loaded = 1;
		}
		if ((d = gate_rule_for(&builtin, r->metric))) {
			r->noise = d->noise;
			r->noise_step_share = d->noise_step_share;
		}
	}
}

int gate_thresholds_parse(const char *text, size_t len, const char *origin,
			  struct gate_thresholds *th)
{
	struct parse p = {origin, th};
	const char *end = NULL;
	cJSON *root;
	int rc;

	memset(th, 0, sizeof(*th));
	th->significance = 0.05;
	th->min_samples = 5;
	th->consecutive_violations = 2;
	th->min_workload_overlap = GATE_MIN_WORKLOAD_OVERLAP;
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root) {
		size_t at = end && end >= text ? (size_t)(end - text) : 0;
		return pg_error_set(PG_EUSAGE, "%s: not valid JSON (near byte %zu)", origin, at);
	}
	rc = parse_top(&p, root);
	cJSON_Delete(root);
	if (rc == 0 && strcmp(origin, BUILTIN_ORIGIN) != 0)
		inherit_noise(th);
	return rc;
}

void gate_thresholds_default(struct gate_thresholds *th)
{
	/* The file is compiled in and tested; failing here is a build defect. */
	if (gate_thresholds_parse(gate_default_thresholds, gate_default_thresholds_len,
				  BUILTIN_ORIGIN, th)) {
		fprintf(stderr, "profgate: %s\n", pg_error_last());
		abort();
	}
}

void gate_thresholds_release(struct gate_thresholds *th)
{
	for (uint32_t i = 0; i < th->n_identity; i++)
		free(th->identity[i]);
	for (uint32_t i = 0; i < th->n_rules; i++)
		free(th->rules[i].metric);
	for (uint32_t i = 0; i < th->n_quality; i++)
		free(th->quality[i].code);
	free(th->identity);
	free(th->rules);
	free(th->quality);
	free(th->name);
	free(th->description);
	memset(th, 0, sizeof(*th));
}

int gate_glob_match(const char *g, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*g == '*') {
			star = ++g;
			resume = s;
		} else if (*g == '?' || *g == *s) {
			g++;
			s++;
		} else if (star) {
			g = star;
			s = ++resume;
		} else {
			return 0;
		}
	}
	while (*g == '*')
		g++;
	return *g == 0;
}

static int literal_chars(const char *g)
{
	int n = 0;
	for (; *g; g++)
		n += *g != '*' && *g != '?';
	return n;
}

const struct gate_rule *gate_rule_for(const struct gate_thresholds *th, const char *metric)
{
	const struct gate_rule *best = NULL;
	int best_score = -1;

	for (uint32_t i = 0; i < th->n_rules; i++) {
		const struct gate_rule *r = &th->rules[i];
		int score;
		if (!gate_glob_match(r->metric, metric))
			continue;
		score = strpbrk(r->metric, "*?") ? literal_chars(r->metric) : 1 << 20;
		if (score > best_score) {
			best = r;
			best_score = score;
		}
	}
	return best;
}
