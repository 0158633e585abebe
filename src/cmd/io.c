/*
 * What every command does with its inputs and outputs beyond reading and
 * writing them: "-" as standard input, an output that would overwrite an
 * input refused before anything is read or written, and the note that a
 * folder's profgate outputs were left out.
 *
 * Standard input is spooled to a temporary file (<TMPDIR>/profgate-XXXXXX/
 * standard-input, so messages about it say what it is; .xplane.pb when the
 * bytes are no JSON, as the readers go by that name): a profile is opened
 * more than once (sniffed, read, hashed), so it must be a regular file. The
 * spool's path stands in for "-" while the command runs, and a summary made
 * of it names the file "-" again (cmd_stdin_unname). A signal that ends the
 * command removes the spool too (pg_cleanup).
 *
 * Two outputs of one command in one place (say `--json v --report v`) are
 * refused: the second would silently replace the first.
 *
 * Overwrites are judged by device and inode, not by name: the output (when it
 * exists) against every input file, and against every file a folder input
 * resolves to (source_resolve: the capture that would be read, without
 * profgate's own outputs, which are never read). An output that does not
 * exist yet overwrites nothing; one in an input folder that is profgate's
 * own output is rewritten, which is what `summarize prof -o
 * prof/summary.json` run twice needs.
 */
#include "cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../source/source.h"
#include "../summary/summary.h"
#include "../trace/trace.h"

#define SPOOL_CHUNK (1 << 16)

static int is_stdin(const char *path)
{
	return path && strcmp(path, "-") == 0;
}

/* Bytes that are no JSON (not gzip, not '{' or '[' after white space): an
 * XPlane protobuf, which the readers know by its name. */
static int xplane_bytes(const char *p, size_t n)
{
	size_t i = 0;

	if (n >= 2 && (unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b)
		return 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	return i < n && p[i] != '{' && p[i] != '[';
}

/* Standard input into <TMPDIR>/profgate-XXXXXX/standard-input (.xplane.pb
 * when it holds XPlane): a name that says what it is in any message about
 * the file. */
static int spool(const char *cmd, struct cmd_stdin *in)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = pg_xasprintf("%s/profgate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char *path = NULL, *chunk = NULL;
	size_t n;
	FILE *f = NULL;
	int rc = 0;

	if (!mkdtemp(dir)) {
		rc = pg_error_set(PG_EIO, "%s: cannot keep standard input in '%s': %s", cmd, dir,
				  strerror(errno));
		free(dir);
		return rc;
	}
	in->slot_dir = pg_cleanup_add(dir, 1);
	chunk = pg_xmalloc(SPOOL_CHUNK);
	n = fread(chunk, 1, SPOOL_CHUNK, stdin);
	path = pg_xasprintf("%s/standard-input%s", dir, xplane_bytes(chunk, n) ? ".xplane.pb" : "");
	in->slot_file = pg_cleanup_add(path, 0);
	f = fopen(path, "wbx");
	if (!f) {
		rc = pg_error_set(PG_EIO, "%s: cannot keep standard input in '%s': %s", cmd, path,
				  strerror(errno));
		goto out;
	}
	for (; n > 0; n = fread(chunk, 1, SPOOL_CHUNK, stdin))
		if (fwrite(chunk, 1, n, f) != n)
			break;
	if (ferror(stdin))
		rc = pg_error_set(PG_EIO, "%s: cannot read standard input: %s", cmd,
				  strerror(errno));
	else if (ferror(f))
		rc = pg_error_set(PG_EIO, "%s: cannot keep standard input in '%s': %s", cmd, path,
				  strerror(errno));
	if (fclose(f) != 0 && !rc)
		rc = pg_error_set(PG_EIO, "%s: cannot keep standard input in '%s': %s", cmd, path,
				  strerror(errno));
out:
	free(chunk);
	if (rc) {
		unlink(path);
		rmdir(dir);
		pg_cleanup_drop(in->slot_file);
		pg_cleanup_drop(in->slot_dir);
		free(path);
		free(dir);
		return rc;
	}
	free(dir);
	in->path = path;
	return 0;
}

int cmd_stdin_take(const char *cmd, const char **inputs, int n, struct cmd_stdin *in)
{
	int at = -1;

	in->path = NULL;
	in->slot_file = in->slot_dir = -1;
	for (int i = 0; i < n; i++) {
		if (!is_stdin(inputs[i]))
			continue;
		if (at >= 0)
			return pg_error_set(PG_EUSAGE,
					    "%s: '-' (standard input) given twice: it can be one "
					    "input only",
					    cmd);
		at = i;
	}
	if (at < 0)
		return 0;
	if (spool(cmd, in))
		return PG_EIO;
	inputs[at] = in->path;
	return 0;
}

void cmd_stdin_unname(const struct cmd_stdin *in, struct summary *s)
{
	for (uint32_t i = 0; in->path && i < s->n_files; i++)
		if (strcmp(s->files[i].path, in->path) == 0) {
			free(s->files[i].path);
			s->files[i].path = pg_xstrdup("-");
		}
}

void cmd_stdin_unname_trace(const struct cmd_stdin *in, struct trace *t)
{
	for (uint32_t i = 0; in->path && i < t->n_files; i++)
		if (strcmp(t->files[i].path, in->path) == 0) {
			free(t->files[i].path);
			t->files[i].path = pg_xstrdup("-");
		}
}

void cmd_stdin_release(struct cmd_stdin *in)
{
	char *slash;

	if (!in->path)
		return;
	unlink(in->path);
	slash = strrchr(in->path, '/');
	*slash = 0;
	rmdir(in->path);
	pg_cleanup_drop(in->slot_file);
	pg_cleanup_drop(in->slot_dir);
	free(in->path);
	in->path = NULL;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* A folder input: the files it resolves to, against the output. */
static int check_folder(const char *cmd, const char *out, const struct stat *so, const char *dir,
			const char *capture)
{
	struct source_set src;
	const char *inputs[1] = {dir};
	struct stat st;
	int rc = 0;

	if (source_resolve(&src, inputs, 1, capture) != 0) {
		/* the read reports it */
		source_set_release(&src);
		return 0;
	}
	for (uint32_t i = 0; i < src.n_files && !rc; i++)
		if (stat(src.files[i].path, &st) == 0 && same_file(&st, so))
			rc = pg_error_set(PG_EUSAGE,
					  "%s: the output '%s' would overwrite '%s', a profile "
					  "read from the input folder '%s': give another output",
					  cmd, out, src.files[i].path, dir);
	source_set_release(&src);
	return rc;
}

/* Where an output will be: its folder resolved (the file need not exist), so
 * "v.json" and "./v.json" are one place; NULL when the folder does not
 * resolve (the write reports it). Owned by the caller. */
static char *output_place(const char *out)
{
	const char *slash = strrchr(out, '/');
	char *dir = slash ? pg_xstrndup(out, (size_t)(slash - out) + (slash == out)) : NULL;
	char *real = realpath(dir ? dir : ".", NULL), *place = NULL;

	if (real)
		place = pg_xasprintf("%s/%s", real, slash ? slash + 1 : out);
	free(real);
	free(dir);
	return place;
}

/* Two outputs in one place: the second would replace the first. Standard
 * output twice interleaves them. */
static int check_output_pairs(const char *cmd, const char *const *outputs, int n_out)
{
	for (int a = 0; a < n_out; a++)
		for (int b = a + 1; b < n_out; b++) {
			const char *x = outputs[a], *y = outputs[b];
			struct stat sx, sy;
			char *px, *py;
			int same;
			if (!x || !y)
				continue;
			if (is_stdin(x) || is_stdin(y)) {
				same = is_stdin(x) && is_stdin(y);
			} else {
				px = output_place(x);
				py = output_place(y);
				same =
				    (px && py && strcmp(px, py) == 0) ||
				    (stat(x, &sx) == 0 && stat(y, &sy) == 0 && same_file(&sx, &sy));
				free(px);
				free(py);
			}
			if (same)
				return pg_error_set(PG_EUSAGE,
						    "%s: two outputs are '%s' and '%s', one place: "
						    "give each its own",
						    cmd, x, y);
		}
	return 0;
}

int cmd_check_outputs(const char *cmd, const char *const *outputs, int n_out,
		      const char *const *inputs, int n_in, const char *capture)
{
	if (check_output_pairs(cmd, outputs, n_out))
		return PG_EUSAGE;
	for (int o = 0; o < n_out; o++) {
		const char *out = outputs[o];
		struct stat so, si;

		if (!out || is_stdin(out) || stat(out, &so) != 0)
			continue; /* standard output, or a new file: nothing is overwritten */
		for (int i = 0; i < n_in; i++) {
			const char *in = inputs[i];
			if (!in || is_stdin(in) || stat(in, &si) != 0)
				continue;
			if (same_file(&si, &so))
				return pg_error_set(PG_EUSAGE,
						    "%s: the output '%s' is the input '%s': give "
						    "another output",
						    cmd, out, in);
			if (S_ISDIR(si.st_mode) && check_folder(cmd, out, &so, in, capture))
				return PG_EUSAGE;
		}
	}
	return 0;
}

void cmd_note_own_outputs(const struct source_set *src)
{
	for (uint32_t i = 0; i < src->n_own_notes; i++)
		fprintf(stderr, "profgate: note: %s\n", src->notes[src->own_notes[i]]);
}
