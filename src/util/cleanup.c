/*
 * cleanup: the files a signal must not leave behind. A command interrupted
 * by Ctrl-C or a cancelled CI job (SIGINT, SIGTERM, SIGHUP) would otherwise
 * leave its standard-input spool in TMPDIR and an output's temporary name
 * beside the output. A path is registered while it exists; the handler
 * removes the registered files, then the registered folders, and raises the
 * signal again with its default action, so the exit status still says what
 * ended the process.
 *
 * The handler makes only async-signal-safe calls (unlink, rmdir, signal,
 * raise) and reads only fixed slots: a path is copied into its slot before
 * the slot is published (a release store), and a slot is unpublished before
 * it is reused. Registration takes a mutex, as worker threads write files too.
 */
#include "util.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define CLEANUP_SLOTS 32

static struct {
	char path[PATH_MAX];
	int dir;
	volatile sig_atomic_t used;
} slots[CLEANUP_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

int pg_cleanup_add(const char *path, int dir)
{
	size_t n = strlen(path);
	int at = -1;

	if (n >= PATH_MAX)
		return -1;
	pthread_mutex_lock(&slots_lock);
	for (int i = 0; i < CLEANUP_SLOTS && at < 0; i++)
		if (!__atomic_load_n(&slots[i].used, __ATOMIC_ACQUIRE))
			at = i;
	if (at >= 0) {
		memcpy(slots[at].path, path, n + 1);
		slots[at].dir = dir;
		__atomic_store_n(&slots[at].used, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&slots_lock);
	return at;
}

void pg_cleanup_drop(int slot)
{
	if (slot < 0 || slot >= CLEANUP_SLOTS)
		return;
	pthread_mutex_lock(&slots_lock);
	__atomic_store_n(&slots[slot].used, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&slots_lock);
}

static void on_signal(int sig)
{
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < CLEANUP_SLOTS; i++) {
			if (!__atomic_load_n(&slots[i].used, __ATOMIC_ACQUIRE) ||
			    slots[i].dir != pass)
				continue;
			if (pass)
				rmdir(slots[i].path);
			else
				unlink(slots[i].path);
		}
	signal(sig, SIG_DFL);
	raise(sig);
}

void pg_cleanup_install(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < PG_ARRAY_LEN(sigs); i++) {
		struct sigaction old;
		/* a signal the parent ignores (nohup) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}
