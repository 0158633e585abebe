/*
 * Format dispatch: sniff the bytes, pick a reader, and undo a failed file so
 * the trace never holds half of it.
 */
#include "read.h"

#include <stdlib.h>
#include <string.h>

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

struct snapshot {
	uint64_t events;
	uint32_t tracks, devices, files, warnings;
};

static void rollback(struct trace *t, const struct snapshot *s)
{
	trace_events_truncate(t, s->events);
	t->n_tracks = s->tracks;
	t->n_devices = s->devices;
	while (t->n_warnings > s->warnings)
		free(t->warnings[--t->n_warnings].message);
	while (t->n_files > s->files) {
		struct trace_file *f = &t->files[--t->n_files];
		free(f->path);
		free(f->backend);
		free(f->framework);
		free(f->framework_version);
		free(f->device_kind);
	}
}

int read_path(struct trace *t, const char *path)
{
	struct snapshot snap = {t->n_events, t->n_tracks, t->n_devices, t->n_files, t->n_warnings};
	struct rd_in in;
	uint32_t file;
	int rc;

	if (has_suffix(path, ".xplane.riegeli"))
		return pg_error_set(PG_EUNSUPP,
				    "cannot read '%s': .xplane.riegeli (chunked, brotli) is not supported; "
				    "export the profile as .xplane.pb",
				    path);
	rc = rd_in_open(&in, path);
	if (rc)
		return rc;
	file = trace_file_add(t, path);
	t->files[file].bytes = in.compressed_bytes;
	t->files[file].compressed = rd_in_is_gzip(&in);
	t->files[file].format = TRACE_FMT_CHROME_JSON;
	rc = read_chrome_json(t, file, &in);
	rd_in_close(&in);
	if (rc)
		rollback(t, &snap);
	return rc;
}
