/*
 * report: markdown for people. Renders what the summary (and, later, the gate)
 * decided; decides nothing. Every string that comes from a profile goes
 * through report_code() or report_text(), so a kernel name cannot mention
 * anyone, open HTML or break a table.
 */
#ifndef PG_REPORT_H
#define PG_REPORT_H

#include "../summary/summary.h"
#include "../util/util.h"

struct gate_result;

/* The one-profile report: read top to bottom. */
void report_summary_md(const struct summary *s, struct pg_buf *out);
/* The comparison report: what the gate decided and where the time went. */
void report_compare_md(const struct gate_result *r, struct pg_buf *out);

/* A profile string as an inline code span, safe in a table cell: backticks
 * become ', pipes are escaped, control characters become spaces, and the text
 * is cut to max bytes (on a UTF-8 boundary) with an ellipsis. */
void report_code(struct pg_buf *b, const char *s, size_t max);
/* A profile string as plain markdown text, safe anywhere: markdown and HTML
 * characters escaped, '@' and '#' followed by a zero-width joiner so they
 * never mention or link. */
void report_text(struct pg_buf *b, const char *s, size_t max);
/* Microseconds for people: "812 us", "3.41 ms", "1.205 s". */
void report_time(struct pg_buf *b, double us);

#endif
