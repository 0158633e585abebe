/*
 * bench_time COMMAND [ARG...]: run a command for `make bench` with its stdout on /dev/null, wait
 * for it with wait4() and print "<wall s> <peak RSS KiB> <user+sys CPU s>" on stdout. Exits with
 * the command's code, or 128 + signal number when it was killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	double cpu;
	int status = 0;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_time COMMAND [ARG...]\n");
		return 125;
	}
	fflush(NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("bench_time: fork");
		return 125;
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		close(fd);
		execvp(argv[1], argv + 1);
		perror("bench_time: exec");
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno == EINTR)
			continue;
		perror("bench_time: wait4");
		return 125;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	printf("%.4f %ld %.4f\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       ru.ru_maxrss, cpu);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
