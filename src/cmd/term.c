/*
 * Terminal conventions, in one place for every command:
 *
 * - colour: ANSI SGR codes only when the stream is a terminal, NO_COLOR is unset
 *   or empty (https://no-color.org) and TERM is not "dumb"; everywhere else the
 *   codes are "" so output piped to a file or a CI log is plain text;
 * - progress: one line on stderr, rewritten in place, for work that takes more
 *   than about two seconds (PROFGATE_PROGRESS_AFTER_MS; tests set it to 0): the
 *   phase, files read and events, seconds so far. Only when stderr is a
 *   terminal and -q/--quiet was not given; the line is wiped when the phase
 *   ends, before anything else is printed (-q also silences the modules' own
 *   pg_progress lines, a W&B download's). A ticker thread draws it, reading
 *   counters the readers update atomically (struct trace_progress), so no
 *   module prints.
 */
#include "cmd.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../trace/trace.h"

#define PROGRESS_AFTER_MS   2000
#define PROGRESS_EVERY_MS   250
#define PROGRESS_LINE_BYTES 160

static int quiet;

void term_set_quiet(int q)
{
	quiet = q;
	pg_progress_set_quiet(q); /* the modules' own lines (a W&B download) */
}

int term_color(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (no && *no)
		return 0;
	if (term && strcmp(term, "dumb") == 0)
		return 0;
	return isatty(fileno(f));
}

const char *term_sgr(FILE *f, enum term_style s)
{
	static const char *const codes[] = {
	    [TERM_RESET] = "\033[0m", [TERM_BAD] = "\033[1;31m", [TERM_WARN] = "\033[33m",
	    [TERM_GOOD] = "\033[32m", [TERM_DIM] = "\033[2m",	 [TERM_BOLD] = "\033[1m",
	};

	return term_color(f) ? codes[s] : "";
}

enum term_style term_verdict_style(const char *verdict)
{
	if (strcmp(verdict, "fail") == 0 || strcmp(verdict, "incomparable") == 0)
		return TERM_BAD;
	if (strcmp(verdict, "warn") == 0 || strcmp(verdict, "inconclusive") == 0)
		return TERM_WARN;
	if (strcmp(verdict, "recorded") == 0)
		return TERM_DIM; /* judged nothing: neither good nor bad */
	return TERM_GOOD;
}

/* ---- progress ---- */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int running, stop;
	size_t shown; /* the width of the line on screen; 0: none */
	const char *phase;
	const struct trace_progress *p;
	uint32_t n_files;
	uint64_t events;
	struct timespec t0;
	long after_ms;
} pr = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

static void count_text(char *out, size_t n, uint64_t v)
{
	if (v >= 1000000)
		snprintf(out, n, "%.1fM", (double)v / 1e6);
	else if (v >= 1000)
		snprintf(out, n, "%.1fk", (double)v / 1e3);
	else
		snprintf(out, n, "%llu", (unsigned long long)v);
}

/* Draw the line (pr.mu held). */
static void draw(long ms)
{
	char line[PROGRESS_LINE_BYTES], ev[32];
	uint64_t events = pr.events;
	int n;

	if (pr.p)
		events += atomic_load(&pr.p->events);
	count_text(ev, sizeof(ev), events);
	if (pr.p)
		n = snprintf(line, sizeof(line), "profgate: %s: %u of %u file%s, %s events, %ld s",
			     pr.phase, atomic_load(&pr.p->files), pr.n_files,
			     pr.n_files == 1 ? "" : "s", ev, ms / 1000);
	else
		n = snprintf(line, sizeof(line), "profgate: %s: %s events, %ld s", pr.phase, ev,
			     ms / 1000);
	if (n < 0)
		return;
	fprintf(stderr, "\r%s%*s", line, pr.shown > (size_t)n ? (int)(pr.shown - (size_t)n) : 0,
		"");
	fflush(stderr);
	if ((size_t)n > pr.shown)
		pr.shown = (size_t)n;
}

static void *ticker(void *arg)
{
	long next = pr.after_ms;

	(void)arg;
	pthread_mutex_lock(&pr.mu);
	while (!pr.stop) {
		struct timespec until;
		long ms = ms_since(&pr.t0);
		if (ms >= next) {
			draw(ms);
			next = ms + PROGRESS_EVERY_MS;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 50 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&pr.cv, &pr.mu, &until);
	}
	pthread_mutex_unlock(&pr.mu);
	return NULL;
}

void term_progress_begin(const char *phase, const struct trace_progress *p, uint32_t n_files,
			 uint64_t events)
{
	const char *after = getenv("PROFGATE_PROGRESS_AFTER_MS");

	if (quiet || pr.running || !isatty(STDERR_FILENO))
		return;
	pr.phase = phase;
	pr.p = p;
	pr.n_files = n_files;
	pr.events = events;
	pr.stop = 0;
	pr.shown = 0;
	pr.after_ms = after && *after ? atol(after) : PROGRESS_AFTER_MS;
	clock_gettime(CLOCK_MONOTONIC, &pr.t0);
	pr.running = pthread_create(&pr.thread, NULL, ticker, NULL) == 0;
}

void term_progress_end(void)
{
	if (!pr.running)
		return;
	pthread_mutex_lock(&pr.mu);
	pr.stop = 1;
	pthread_cond_signal(&pr.cv);
	pthread_mutex_unlock(&pr.mu);
	pthread_join(pr.thread, NULL);
	pr.running = 0;
	if (pr.shown) {
		fprintf(stderr, "\r%*s\r", (int)pr.shown, "");
		fflush(stderr);
	}
}
