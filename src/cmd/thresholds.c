/*
 * Thresholds by name or path, and what fails a gate: shared by every command
 * that takes --thresholds and by `action`, so a name means the same set
 * wherever it is given and `gate --fail-on` exits as the Action's fail_on.
 *
 * A name is a set shipped beside the binary: `make install` puts
 * the files of thresholds/ under $(PREFIX)/share/profgate/thresholds, the image has
 * them there, and a build tree finds the repository's thresholds/ (the
 * binary in build/ or build/<variant>/). "default" is also compiled in, so it
 * works with no folder at all. A value with a '/', ending in ".json", or
 * naming a file that exists is a path.
 */
#include "cmd.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../gate/gate.h"

#define THRESHOLDS_MAX_BYTES (1 << 20)

/* The folder of the shipped sets, relative to the binary's. */
static const char *const shipped_dirs[] = {"/../share/profgate/thresholds", "/../thresholds",
					   "/../../thresholds"};

/* The first shipped folder that exists (malloc'd), or NULL. */
static char *shipped_dir(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	for (size_t i = 0; i < PG_ARRAY_LEN(shipped_dirs); i++) {
		char *d = pg_xasprintf("%s%s", exe, shipped_dirs[i]);
		if (stat(d, &st) == 0 && S_ISDIR(st.st_mode))
			return d;
		free(d);
	}
	return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* "default" and the names of the shipped folder's sets, sorted, into b. */
static void known_names(const char *dir, struct pg_buf *b)
{
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;
	char *names[64];
	size_t n = 0;

	names[n++] = pg_xstrdup("default");
	while (d && (de = readdir(d)) && n < PG_ARRAY_LEN(names))
		if (ends_with(de->d_name, ".json") && strcmp(de->d_name, "default.json") != 0)
			names[n++] = pg_xstrndup(de->d_name, strlen(de->d_name) - 5);
	if (d)
		closedir(d);
	qsort(names, n, sizeof(char *), pg_cmp_str);
	for (size_t i = 0; i < n; i++) {
		pg_buf_addf(b, "%s%s", i ? ", " : "", names[i]);
		free(names[i]);
	}
}

int cmd_resolve_thresholds(const char *cmd, const char *value, char **path)
{
	struct stat st;
	struct pg_buf known = PG_BUF_INIT;
	char *dir;
	int rc;

	*path = NULL;
	if (!value || strcmp(value, "default") == 0)
		return 0;
	if (strchr(value, '/') || ends_with(value, ".json") || stat(value, &st) == 0) {
		*path = pg_xstrdup(value);
		return 0;
	}
	dir = shipped_dir();
	if (dir) {
		char *p = pg_xasprintf("%s/%s.json", dir, value);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			free(dir);
			*path = p;
			return 0;
		}
		free(p);
	}
	known_names(dir, &known);
	rc = pg_error_set(PG_EUSAGE,
			  "%s: thresholds '%s': no such file, and not a shipped set (known: %s)",
			  cmd, value, known.ptr);
	pg_buf_release(&known);
	free(dir);
	return rc;
}

int cmd_load_thresholds(const char *cmd, const char *value, struct gate_thresholds *th)
{
	struct pg_buf text = PG_BUF_INIT;
	char *path = NULL;
	int rc;

	memset(th, 0, sizeof(*th));
	if ((rc = cmd_resolve_thresholds(cmd, value, &path)) != 0)
		return rc;
	if (!path) {
		gate_thresholds_default(th);
		return 0;
	}
	rc = pg_read_small(path, THRESHOLDS_MAX_BYTES, 0, &text);
	if (rc == PG_EIO)
		rc = pg_error_set(PG_EUSAGE, "cannot read thresholds file '%s': %s", path,
				  strerror(errno));
	else if (rc == PG_ELIMIT)
		rc = pg_error_set(PG_EUSAGE, "%s: larger than %d bytes; not a thresholds file",
				  path, THRESHOLDS_MAX_BYTES);
	else if (rc == 0)
		rc = gate_thresholds_parse(text.ptr, text.len, path, th);
	pg_buf_release(&text);
	free(path);
	return rc;
}

int cmd_fail_on_check(const char *fail_on)
{
	return fail_on && (strcmp(fail_on, "fail") == 0 || strcmp(fail_on, "warn") == 0 ||
			   strcmp(fail_on, "never") == 0)
		   ? 0
		   : -1;
}

int cmd_fail_on_exit(const char *fail_on, const char *verdict)
{
	if (!fail_on)
		fail_on = "fail";
	if (strcmp(fail_on, "never") == 0)
		return PG_EXIT_OK;
	if (strcmp(verdict, "fail") == 0)
		return PG_EXIT_FAIL;
	if (strcmp(verdict, "incomparable") == 0)
		return PG_EXIT_INCOMPARABLE;
	if (strcmp(fail_on, "warn") == 0 &&
	    (strcmp(verdict, "warn") == 0 || strcmp(verdict, "inconclusive") == 0))
		return PG_EXIT_FAIL;
	return PG_EXIT_OK;
}
