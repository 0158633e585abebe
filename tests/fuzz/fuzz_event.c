/*
 * Fuzz target: the Actions runtime's inputs and files (src/deliver/actions.c):
 * the event JSON of GITHUB_EVENT_PATH, and the same bytes as a $GITHUB_OUTPUT
 * value, read back the way the runner reads the file (name=value, or
 * name<<DELIM ... DELIM). The annotations are made from the gate's result, not
 * from bytes (tests/unit/test_deliver.c escapes hostile names in them).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/deliver/deliver.h"

static void write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	FUZZ_CHECK(f != NULL, "cannot write %s", path);
	FUZZ_CHECK(fwrite(data, 1, size, f) == size || size == 0, "short write");
	fclose(f);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct pg_buf b = PG_BUF_INIT;
	char chunk[65536];
	size_t n;

	FUZZ_CHECK(f != NULL, "cannot read %s", path);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		pg_buf_add(&b, chunk, n);
	fclose(f);
	return pg_buf_detach(&b, len);
}

static void check_event(const char *path)
{
	struct actions_event e;

	if (actions_event_read(path, &e) == 0) {
		FUZZ_CHECK(e.pr == -1 || e.pr >= 1, "pr %lld", (long long)e.pr);
		if (!e.workflow_run && e.head_repo && e.base_repo)
			FUZZ_CHECK(e.fork == (strcmp(e.head_repo, e.base_repo) != 0),
				   "fork %d for %s <- %s", e.fork, e.base_repo, e.head_repo);
	} else {
		fuzz_check_error_line();
	}
	actions_event_release(&e);
}

/* The runner's reading of one output: "name=value\n", or "name<<D\n" value
 * lines "D\n". The value must come back exactly. */
static void check_output(const char *path, const char *value)
{
	size_t len;
	char *file = read_file(path, &len), *p = file, *nl;

	FUZZ_CHECK(len > 0 && file[len - 1] == '\n', "an output file without its line end");
	nl = strchr(p, '\n');
	*nl = '\0';
	if (strncmp(p, "value=", 6) == 0) {
		FUZZ_CHECK(strcmp(p + 6, value) == 0 && nl + 1 == file + len,
			   "a one-line value read back differently");
	} else {
		const char *delim;
		char *body, *end;
		size_t dl;

		FUZZ_CHECK(strncmp(p, "value<<", 7) == 0, "no output line: %s", p);
		delim = p + 7;
		dl = strlen(delim);
		FUZZ_CHECK(dl > 0, "an empty delimiter");
		body = nl + 1;
		/* the first line equal to the delimiter ends the value */
		for (end = body;; end = strchr(end, '\n') + 1) {
			FUZZ_CHECK(end && end < file + len, "the delimiter never comes");
			if (strncmp(end, delim, dl) == 0 && end[dl] == '\n')
				break;
		}
		FUZZ_CHECK(end > body && end[-1] == '\n', "no line end before the delimiter");
		FUZZ_CHECK((size_t)(end - 1 - body) == strlen(value) &&
			       memcmp(body, value, strlen(value)) == 0,
			   "a multiline value read back differently");
		FUZZ_CHECK(end + dl + 1 == file + len, "bytes after the delimiter");
	}
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fuzz_scratch_dir();
	char path[600], out[600];
	char *text = fuzz_text(data, size);

	snprintf(path, sizeof(path), "%s/event.json", dir);
	write_file(path, data, size);
	check_event(path);

	/* a value is text up to its first NUL, as an environment or argv value */
	snprintf(out, sizeof(out), "%s/output", dir);
	write_file(out, (const uint8_t *)"", 0);
	if (actions_output(out, "value", text) == 0)
		check_output(out, text);
	else
		fuzz_check_error_line();
	free(text);
	return 0;
}
