/*
 * Folders: the per-user cache root every cache of profgate lives under (the
 * history's private repositories, W&B downloads) and making folder paths.
 */
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *pg_cache_dir(void)
{
	const char *v;
	char tmp[4096];

	if ((v = getenv("PROFGATE_CACHE_DIR")) && *v)
		return pg_xstrdup(v);
	if ((v = getenv("XDG_CACHE_HOME")) && *v == '/')
		snprintf(tmp, sizeof(tmp), "%s/profgate", v);
	else if ((v = getenv("HOME")) && *v == '/')
		snprintf(tmp, sizeof(tmp), "%s/.cache/profgate", v);
	else
		snprintf(tmp, sizeof(tmp), "/tmp/profgate-%ld", (long)getuid());
	return pg_xstrdup(tmp);
}

int pg_mkdir_p(const char *path, unsigned mode)
{
	char *p = pg_xstrdup(path);
	int rc = 0;

	for (char *q = p + 1; *q && rc == 0; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		if (mkdir(p, mode) != 0 && errno != EEXIST)
			rc = -1;
		*q = '/';
	}
	if (rc == 0 && mkdir(p, mode) != 0 && errno != EEXIST)
		rc = -1;
	if (rc)
		rc = pg_error_set(PG_EIO, "cannot create '%s': %s", p, strerror(errno));
	free(p);
	return rc;
}
