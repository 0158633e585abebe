/*
 * Format dispatch: sniff the bytes, pick a reader, and undo a failed file so
 * the trace never holds half of it.
 */
#include "read.h"

#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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
		free(f->host);
		trace_file_free_planes(f);
	}
}

/* The first non-blank byte of a plain file, or -1. */
static int first_byte(const char *path)
{
	unsigned char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf)
		return '{'; /* UTF-8 byte order mark: text, so JSON */
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t')
			return buf[i];
	return -1;
}

int read_path(struct trace *t, const char *path)
{
	struct snapshot snap = {t->n_events, t->n_tracks, t->n_devices, t->n_files, t->n_warnings};
	struct rd_in in;
	uint32_t file;
	int rc, fb;

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
	fb = rd_in_is_gzip(&in) ? '{' : first_byte(path);
	if (fb == '{' || fb == '[' || fb == -1 || !has_suffix(path, ".pb")) {
		t->files[file].format = TRACE_FMT_CHROME_JSON;
		rc = read_chrome_json(t, file, &in);
		if (!rc && has_suffix(path, ".xplane.pb"))
			trace_warn(t, file, "misnamed",
				   "the file is named .xplane.pb but holds Chrome trace JSON; read as JSON");
		rd_in_close(&in);
	} else {
		rd_in_close(&in);
		rc = read_xplane(t, file, path);
	}
	if (rc)
		rollback(t, &snap);
	return rc;
}
