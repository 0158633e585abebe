/*
 * maxrss [-o FILE] COMMAND [ARG...]: run a command, wait for it with wait4() and print its peak
 * resident set size in KiB (to FILE, else stderr), so e2e tests can bound a reader's memory.
 * Exits with the command's code, or 128 + signal number when it was killed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *out_path = NULL;
	struct rusage ru;
	int argi = 1, status = 0;
	pid_t pid;

	if (argc > 2 && strcmp(argv[1], "-o") == 0) {
		out_path = argv[2];
		argi = 3;
	}
	if (argi >= argc) {
		fprintf(stderr, "usage: maxrss [-o FILE] COMMAND [ARG...]\n");
		return 125;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "maxrss: fork: %s\n", strerror(errno));
		return 125;
	}
	if (pid == 0) {
		execvp(argv[argi], argv + argi);
		fprintf(stderr, "maxrss: cannot run '%s': %s\n", argv[argi], strerror(errno));
		_exit(127);
	}
	memset(&ru, 0, sizeof(ru));
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "maxrss: wait4: %s\n", strerror(errno));
			return 125;
		}
	}
	if (out_path) {
		FILE *f = fopen(out_path, "w");
		if (!f) {
			fprintf(stderr, "maxrss: cannot write '%s': %s\n", out_path,
				strerror(errno));
			return 125;
		}
		fprintf(f, "%ld\n", ru.ru_maxrss);
		if (fclose(f) != 0)
			return 125;
	} else {
		fprintf(stderr, "maxrss: %ld KiB\n", ru.ru_maxrss);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 125;
}
