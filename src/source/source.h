/*
 * source: where profiles come from. Local files as given, and profile
 * directories (TensorBoard logdirs, plugins/profile/<timestamp>/ per host,
 * Kineto trace folders, artifact roots) resolved to the files of one capture.
 * Parses no trace format: it goes by names, sizes, digests and timestamps.
 */
#ifndef PG_SOURCE_H
#define PG_SOURCE_H

#include <stdint.h>

#include "../util/util.h"

enum source_kind {
	SOURCE_XPLANE,
	SOURCE_JAX_JSON, /* <host>.trace.json.gz */
	SOURCE_PERFETTO, /* perfetto_trace.json.gz */
	SOURCE_KINETO,	 /* *.pt.trace.json[.gz] */
	SOURCE_JSON,	 /* any other *.json[.gz] */
	SOURCE_RIEGELI,	 /* *.xplane.riegeli: found, not readable */
	SOURCE_GIVEN,	 /* a file named on the command line */
};

struct source_file {
	char *path;
	enum source_kind kind;
	uint64_t bytes;
	char sha256[65];      /* "" unless computed (only files that share a size) */
	int32_t duplicate_of; /* index in the chosen list, or -1 */
};

struct source_capture {
	char *name; /* timestamp folder name(s), a folder, or folder@kineto-timestamp */
	char *dir;
	int64_t key; /* newer is larger: folder timestamp, Kineto ms, or mtime */
	struct source_file *files;
	uint32_t n_files;
};

struct source_set {
	struct source_file *files; /* the files to read, in a stable order */
	uint32_t n_files;
	struct source_capture *captures; /* every capture seen in the directories */
	uint32_t n_captures;
	int32_t *chosen; /* per directory input: the chosen capture, or -1 */
	uint32_t n_chosen;
	char **notes; /* what was chosen and why, duplicates, skipped files */
	uint32_t n_notes;
};

/*
 * Resolve inputs (files and directories) to the files of one capture each.
 * capture, when non-NULL, picks a capture by name instead of the newest.
 * Returns 0, or PG_EIO / PG_ENOTFOUND / PG_EUSAGE with the message set.
 */
int source_resolve(struct source_set *out, const char *const *inputs, int n_inputs,
		   const char *capture) PG_WUR;
void source_set_release(struct source_set *s);
const char *source_kind_name(enum source_kind k);

#endif
