/*
 * The history record's private declarations, shared by record.c (building,
 * writing and reading records) and record_scan.c (reading a line in the
 * writer's own form without a JSON tree); history.h is the public API.
 */
#ifndef PG_HISTORY_RECORD_H
#define PG_HISTORY_RECORD_H

#include "history.h"

/* A number's text as the record writes it: integers exactly, others with
 * enough digits to read back the same double (owned by the caller). */
char *record_number_text(double v);
/* An identity field taking text (NULL: null), which it then owns. */
void record_put_field(struct history_record *r, char *key, char *text, enum history_value type);
/* A metric added to r (its name copied). */
void record_add_metric(struct history_record *r, const char *name, double value);
/* r's metrics by name (a check, not a sort, when they are in order). */
void record_sort_metrics(struct history_record *r);
/* 0, or an error with the message set: the fields whose form is fixed (the
 * id, time, series, kind and verdict). */
int record_check_fields(const struct history_record *r);
/* 1: line, in the form history_record_write makes, read into r
 * (initialized); 0: not that form, r released and initialized again for
 * the cJSON path (record_scan.c). */
int record_canonical_parse(struct history_record *r, const char *line, size_t len);

#endif
