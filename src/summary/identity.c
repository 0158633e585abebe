/*
 * The identity of a summary: the fields that say which workload on which
 * setup a capture is. One table names them, in the order the verdict JSON
 * and history records write them, with where each lives in struct summary
 * and whether it goes into a history series' name. Provenance (which fields
 * a thresholds file may check and their values), the verdict's identity
 * object, series names and the identity of a window baseline all walk it, so
 * a new field is added here once. Labels ("key=value") follow the fields as
 * labels.KEY.
 */
#include "summary.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define FIELD(name, type, series)                                                                  \
	{                                                                                          \
#name, type, offsetof(struct summary, name), series                                \
	}

/* The series fields are the ones every shipped thresholds file checks, fixed
 * here so that editing a thresholds file keeps a run's series. */
const struct summary_id_field summary_id_fields[SUMMARY_ID_N] = {
    FIELD(device_kind, SUMMARY_ID_STRING, 1),  FIELD(device_count, SUMMARY_ID_UINT, 1),
    FIELD(host_count, SUMMARY_ID_UINT, 1),     FIELD(world_size, SUMMARY_ID_INT, 1),
    FIELD(framework, SUMMARY_ID_STRING, 1),    FIELD(framework_version, SUMMARY_ID_STRING, 0),
    FIELD(step_source, SUMMARY_ID_STRING, 1),  FIELD(basis, SUMMARY_ID_STRING, 1),
    FIELD(steps_captured, SUMMARY_ID_UINT, 0),
};

const struct summary_id_field *summary_id_find(const char *name)
{
	for (size_t i = 0; i < SUMMARY_ID_N; i++)
		if (strcmp(summary_id_fields[i].name, name) == 0)
			return &summary_id_fields[i];
	return NULL;
}

const char *summary_id_str(const struct summary *s, const struct summary_id_field *f)
{
	return *(char *const *)((const char *)s + f->offset);
}

int64_t summary_id_num(const struct summary *s, const struct summary_id_field *f)
{
	const char *p = (const char *)s + f->offset;

	if (f->type == SUMMARY_ID_UINT)
		return *(const uint32_t *)p;
	return *(const int32_t *)p;
}

int summary_id_text(const struct summary *s, const struct summary_id_field *f, struct pg_buf *out)
{
	int64_t v;

	if (f->type == SUMMARY_ID_STRING) {
		if (!summary_id_str(s, f))
			return 0;
		pg_buf_adds(out, summary_id_str(s, f));
		return 1;
	}
	if ((v = summary_id_num(s, f)) < 0)
		return 0;
	pg_buf_addf(out, "%lld", (long long)v);
	return 1;
}

void summary_id_set_str(struct summary *s, const struct summary_id_field *f, const char *v)
{
	*(char **)((char *)s + f->offset) = v ? pg_xstrdup(v) : NULL;
}

void summary_id_set_num(struct summary *s, const struct summary_id_field *f, double v)
{
	char *p = (char *)s + f->offset;

	if (f->type == SUMMARY_ID_UINT)
		*(uint32_t *)p = (uint32_t)v;
	else
		*(int32_t *)p = (int32_t)v;
}

const char *summary_label_split(const char *label, size_t *key_len)
{
	const char *eq = strchr(label, '=');

	*key_len = eq ? (size_t)(eq - label) : strlen(label);
	return eq ? eq + 1 : "";
}

const char *summary_label_value(const struct summary *s, const char *key)
{
	size_t k = strlen(key);

	for (uint32_t i = 0; i < s->n_labels; i++)
		if (strncmp(s->labels[i], key, k) == 0 && s->labels[i][k] == '=')
			return s->labels[i] + k + 1;
	return NULL;
}
