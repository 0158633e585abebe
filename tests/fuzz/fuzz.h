/*
 * Shared by the fuzz targets (tests/fuzz/fuzz_<name>.c): the libFuzzer entry
 * point, checks that abort on a broken invariant, and the downstream stages a
 * parsed input is pushed through (common.c). A target is one small file.
 */
#ifndef PG_FUZZ_H
#define PG_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/gate/gate.h"
#include "../../src/summary/summary.h"
#include "../../src/trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant is a crash: libFuzzer keeps the input, replay fails. */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                         \
	} while (0)
_Noreturn void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    PG_PRINTF(4, 5);

/* The bytes as a NUL-terminated string (free() it). */
char *fuzz_text(const uint8_t *data, size_t size);
/* 1 when the n bytes are well-formed UTF-8. */
int fuzz_utf8_valid(const char *s, size_t n);
/* A report GitHub renders inert: UTF-8, no control bytes; outside code spans
 * no HTML but <sub>, no @mention, no link; table rows as wide as their header. */
void fuzz_check_markdown(const char *md, size_t len);
/* One error line: no control characters, at most the message buffer. */
void fuzz_check_error_line(void);

/* A trace holding one file record named path (for messages). */
uint32_t fuzz_trace_open(struct trace *t, const char *path);

/*
 * A summary through everything downstream of a reader: its JSON (valid
 * UTF-8, read back without error, written again byte-identical) and the
 * markdown report.
 */
void fuzz_summary_downstream(const struct summary *s);
/* A trace through summarize with the fuzz options; the caller frees *s. */
void fuzz_trace_summary(const struct trace *t, struct summary *s);
/* A trace through summarize, then fuzz_summary_downstream(). */
void fuzz_trace_downstream(const struct trace *t);
/*
 * Gate c against b under th: the verdict JSON (valid UTF-8, turned into a
 * history record that parses back), the comparison report.
 */
void fuzz_gate_downstream(const struct summary *b, const struct summary *c,
			  const struct gate_thresholds *th);
/* A small real summary (a generated Kineto trace, summarized once): a
 * baseline for targets that fuzz the other side or the rules. steps_scale
 * stretches its steps (1.0: as generated). */
void fuzz_reference_summary(struct summary *s, double steps_scale);

/*
 * A loopback HTTP server on a thread of this process, for targets that fuzz
 * what a remote answers (GitHub, W&B). Each connection is read up to the end
 * of its request and answered with the next response of the script, raw
 * bytes (status line, headers, body) written as they are, then closed; past
 * the last one it answers 404. Started on first use; returns its port.
 */
int fuzz_http_port(void);
/* The script for the next calls: data cut at FUZZ_HTTP_SEP into responses
 * (at most FUZZ_HTTP_MAX), FUZZ_HTTP_API in them replaced. secret, when not NULL, must never appear
 * in a request line, and no request to a path other than auth_path may carry an Authorization
 * header: the server aborts if one does. auth_path: NULL for any; paths separated by '|', one
 * ending in '/' a prefix ("graphql|artifactsV2/"). */
#define FUZZ_HTTP_SEP "\n=====\n"
#define FUZZ_HTTP_MAX 16
/* In a scripted response: replaced by "http://127.0.0.1:<port>". */
#define FUZZ_HTTP_API "@API@"
void fuzz_http_script(const uint8_t *data, size_t size, const char *secret, const char *auth_path);
/* Requests served since the script was set. */
int fuzz_http_served(void);
/* A fresh empty folder under TMPDIR for this process (the same path each
 * call; emptied first). */
const char *fuzz_scratch_dir(void);

#endif
