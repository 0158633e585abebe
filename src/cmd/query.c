/*
 * profgate query: ask a summary one thing and get one answer. INPUT is what
 * report takes (a summary, or a profile summarized first); the question is a
 * topic (ops, breakdown, gaps, regions, op NAME, next) or --question TEXT,
 * which the table below maps to a topic and its arguments by words it holds,
 * first row first, the same text always to the same query (docs/query.md
 * lists the rows). The answer is rendered by report/query.c: JSON with
 * --json, else a few lines.
 */
#include "cmd.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../summary/summary.h"

static const char *opt_out, *opt_capture, *opt_threads, *opt_question, *opt_top, *opt_family,
    *opt_category, *opt_before, *opt_depth;
static int opt_json;

static const struct cmd_opt query_opts[] = {
    {"question", 0, "TEXT", "a question in words, mapped to a topic (docs/query.md lists how)",
     NULL, &opt_question, 0},
    {"json", 0, NULL, "answer as JSON (profgate.query/1) with the summary's own numbers", &opt_json,
     NULL, 0},
    {"top", 'n', "N", "ops, collectives, gaps: at most N (default 10)", NULL, &opt_top, 0},
    {"family", 0, "F", "ops: only the ops of this family", NULL, &opt_family, 0},
    {"category", 0, "C", "ops: only the ops of this category", NULL, &opt_category, 0},
    {"before", 0, "OP", "gaps: only the gaps before OP (as the payload op or the marker op)", NULL,
     &opt_before, 0},
    {"depth", 0, "N", "regions: down to depth N", NULL, &opt_depth, 0},
    {"output", 'o', "FILE", "write the answer here ('-', the default: standard output)", NULL,
     &opt_out, 0},
    CMD_OPTS_READ(&opt_capture, &opt_threads),
};

const struct cmd_spec cmd_query_spec = {
    "query", "INPUT [TOPIC [ARG]]",
    "Answer one question about a summary: TOPIC is ops (the top ops by self time), breakdown\n"
    "(compute against communication, memory copies and idle; the worst collective), gaps\n"
    "(idle time before ops), regions (the scopes' hierarchy), op NAME (one op in context) or\n"
    "next (what to try next); --question TEXT asks in words instead. INPUT is a summary, or\n"
    "anything summarize takes, summarized first. Same input and question, same bytes.",
    query_opts, (int)PG_ARRAY_LEN(query_opts)};

/*
 * The questions: a row matches when the lowercased question holds one of its
 * words (each '|'-separated); the first row that matches decides. The
 * argument, where the topic takes one, is the text after the row's `after`
 * word (a quoted name whole, else up to the end, trailing '?' and '.' cut).
 */
struct qrow {
	const char *words;
	enum report_query_topic topic;
	const char *after; /* the word the argument follows, or NULL */
};

static const struct qrow questions[] = {
    {"context for|context of|about op|show op|op named|the op ", REPORT_Q_OP, " op "},
    {"try next|do next|next step|what next|should we|suggest|recommend|improve|speed up",
     REPORT_Q_NEXT, NULL},
    {"gap|bubble|stall", REPORT_Q_GAPS, " before "},
    {"region|hierarch|scope|tree", REPORT_Q_REGIONS, NULL},
    {"comm|compute|dominat|collective|breakdown|split|bound|bandwidth|overlap|idle",
     REPORT_Q_BREAKDOWN, NULL},
    {"top|ops|kernel|exclusive|self time|slowest|hottest|expensive|most time", REPORT_Q_OPS, NULL},
};

static int holds_word(const char *lower, const char *words, size_t *at)
{
	for (const char *w = words; *w;) {
		size_t n = strcspn(w, "|");
		for (const char *p = lower; *p; p++)
			if (strncmp(p, w, n) == 0) {
				*at = (size_t)(p - lower);
				return 1;
			}
		w += n;
		w += *w == '|';
	}
	return 0;
}

/* The argument after `after` in text (lower is its lowercase copy): a quoted
 * name whole, else the rest with trailing '?', '.' and blanks cut; NULL when
 * there is none. Owned by the caller. */
static char *argument(const char *text, const char *lower, const char *after)
{
	const char *p = after ? strstr(lower, after) : NULL, *s, *e;

	if (!p)
		return NULL;
	s = text + (p - lower) + strlen(after);
	while (*s == ' ')
		s++;
	if (*s == '"' || *s == '\'' || *s == '`') {
		e = strchr(s + 1, *s);
		if (e)
			return e > s + 1 ? pg_xstrndup(s + 1, (size_t)(e - s - 1)) : NULL;
	}
	e = s + strlen(s);
	while (e > s && (e[-1] == '?' || e[-1] == '.' || e[-1] == ' '))
		e--;
	return e > s ? pg_xstrndup(s, (size_t)(e - s)) : NULL;
}

/* "top 5", "5 ops": the first whole number of the question, when it is one
 * the topic can take. */
static void number_in(const char *lower, struct report_query *q)
{
	for (const char *p = lower; *p; p++)
		if (isdigit((unsigned char)*p) && (p == lower || !isalnum((unsigned char)p[-1]))) {
			long v = strtol(p, NULL, 10);
			if (v > 0 && v <= 100000) {
				if (q->topic == REPORT_Q_REGIONS)
					q->depth = (int32_t)v;
				else
					q->top = (uint32_t)v;
			}
			return;
		}
}

/* Map --question to q; *arg gets the argument it names (to free). 0, or
 * PG_EUSAGE naming the topics when no row matches. */
static int map_question(const char *text, struct report_query *q, char **arg)
{
	/* a blank in front, so that " op " finds an op at the start */
	char *spaced = pg_xasprintf(" %s", text), *lower = pg_xstrdup(spaced);
	size_t at;
	int rc = 0;

	*arg = NULL;
	for (char *c = lower; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	size_t i = 0;
	while (i < PG_ARRAY_LEN(questions) && !holds_word(lower, questions[i].words, &at))
		i++;
	if (i == PG_ARRAY_LEN(questions)) {
		rc = pg_error_set(
		    PG_EUSAGE,
		    "query: no topic for the question '%s'; ask one of: ops (top ops by "
		    "self time), breakdown (compute vs communication, worst "
		    "collective), gaps [--before OP], regions, op NAME, next",
		    text);
		goto out;
	}
	q->topic = questions[i].topic;
	q->question = text;
	*arg = argument(spaced, lower, questions[i].after);
	if (q->topic == REPORT_Q_OP && !*arg)
		rc = pg_error_set(PG_EUSAGE, "query: the question '%s' names no op", text);
	if (q->topic == REPORT_Q_OP)
		q->op = *arg;
	else if (q->topic == REPORT_Q_GAPS)
		q->before = *arg;
	if (q->topic != REPORT_Q_OP && q->topic != REPORT_Q_GAPS)
		number_in(lower, q);
out:
	free(spaced);
	free(lower);
	return rc;
}

/* The topic and its argument from the positional words, and the options.
 * 0, or PG_EUSAGE with the message set. */
static int make_query(const char **pos, int n_pos, struct report_query *q, char **arg)
{
	int64_t v;
	int t;

	report_query_init(q);
	*arg = NULL;
	if (opt_question && n_pos > 1)
		return pg_error_set(PG_EUSAGE, "query: give a TOPIC or --question, not both");
	if (opt_question) {
		if (map_question(opt_question, q, arg))
			return PG_EUSAGE;
	} else if (n_pos < 2) {
		return pg_error_set(PG_EUSAGE, "query: give a TOPIC (ops, breakdown, gaps, "
					       "regions, op NAME, next) or --question TEXT");
	} else if ((t = report_query_topic_find(pos[1])) < 0) {
		return pg_error_set(PG_EUSAGE,
				    "query: unknown topic '%s' (known: ops, breakdown, gaps, "
				    "regions, op NAME, next)",
				    pos[1]);
	} else {
		q->topic = (enum report_query_topic)t;
		if (n_pos > (q->topic == REPORT_Q_OP ? 3 : 2))
			return pg_error_set(PG_EUSAGE,
					    "query: '%s' after the topic '%s' is not an "
					    "argument it takes",
					    pos[q->topic == REPORT_Q_OP ? 3 : 2], pos[1]);
		if (q->topic == REPORT_Q_OP && n_pos < 3)
			return pg_error_set(PG_EUSAGE, "query: op takes the op's NAME");
		if (q->topic == REPORT_Q_OP)
			q->op = pos[2];
	}
	if (opt_top && pg_parse_int(opt_top, 1, 100000, &v))
		return pg_error_set(PG_EUSAGE, "query: --top takes a number from 1, not '%s'",
				    opt_top);
	if (opt_top)
		q->top = (uint32_t)v;
	if (opt_depth && pg_parse_int(opt_depth, 1, 1000, &v))
		return pg_error_set(PG_EUSAGE, "query: --depth takes a number from 1, not '%s'",
				    opt_depth);
	if (opt_depth)
		q->depth = (int32_t)v;
	if (opt_family)
		q->family = opt_family;
	if (opt_category)
		q->category = opt_category;
	if (opt_before)
		q->before = opt_before;
	return 0;
}

int cmd_query(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct summary s;
	struct report_query q;
	struct pg_buf out = PG_BUF_INIT;
	struct cmd_stdin in = {0};
	char sha[65], *arg = NULL;
	int n_pos, rc = PG_EXIT_OK, threads = 0;

	opt_out = opt_capture = opt_threads = opt_question = opt_top = NULL;
	opt_family = opt_category = opt_before = opt_depth = NULL;
	opt_json = 0;
	summary_init(&s);
	if (cmd_parse_or_help(&cmd_query_spec, argc, argv, pos, &n_pos, NULL, &rc))
		goto out;
	if (n_pos < 1 || make_query(pos, n_pos, &q, &arg) ||
	    cmd_parse_threads("query", opt_threads, &threads) ||
	    cmd_check_outputs("query", &opt_out, 1, pos, 1, opt_capture)) {
		if (n_pos < 1)
			pg_error_set(PG_EUSAGE,
				     "query: no input given (see 'profgate query --help')");
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	if ((rc = cmd_stdin_take("query", pos, 1, &in)) != 0) {
		rc = cmd_error(rc == PG_EUSAGE ? PG_EXIT_USAGE : PG_EXIT_INPUT);
		goto out;
	}
	if ((rc = cmd_load_summary(pos[0], opt_capture, threads, &s, sha)) != PG_EXIT_OK)
		goto out;
	if (opt_json ? report_query_json(&s, &q, &out) : report_query_text(&s, &q, &out)) {
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	rc = cmd_write_output(opt_out, &out);
out:
	summary_release(&s);
	pg_buf_release(&out);
	cmd_stdin_release(&in);
	free(arg);
	free(pos);
	return cmd_finish(rc);
}
