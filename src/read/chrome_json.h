/*
 * The Chrome trace JSON reader's private state and the functions its files
 * share: chrome_json.c scans the events, chrome_syntax.c holds the scanner's
 * slow paths (error messages, string escapes), chrome_meta.c the naming and
 * file facts worked out from metadata and the top-level blocks. The byte
 * access is inline here: every token goes through it.
 */
#ifndef PG_READ_CHROME_JSON_H
#define PG_READ_CHROME_JSON_H

#include "read.h"

#define MAX_ARGS 24
/* Categories remembered by their text (a trace has a handful, interleaved). */
#define CJ_CATS_SEEN 16

enum { CH_EOF = -1, CH_ERR = -2 };

/* The argument names kept are read_kept_arg()'s (names.c), shared with XPlane. */

struct pidinfo {
	trace_str pid;
	trace_str process_name;
	trace_str labels;
	int has_events;
};

struct pending {
	uint32_t track;
	uint32_t alive;
	int64_t ts;
	trace_str name;
	uint16_t cat;
	uint32_t args;
	uint64_t corr;
	uint64_t key; /* async: hash of (pid, cat, id, name) */
	uint8_t flags;
};

/* The last text interned through one field, so a run of equal values is
 * interned once (intern_cached()). */
struct cj_strcache {
	struct pg_buf text;
	trace_str id;
	int set;
};

struct argval {
	int key; /* read_kept_arg() index */
	uint32_t off, len;
};

struct cj {
	struct trace *t;
	uint32_t file;
	struct rd_in *in;
	const char *path;
	uint64_t index;	     /* event index within the array */
	uint64_t n_counted;  /* events kept, and flow endpoints counted (count_flow) */
	uint64_t max_events; /* kept of this file (rd_max_events) */

	/* per-event fields */
	struct pg_buf key, name, cat, pid, tid, idtext, vals;
	struct pg_buf scratch; /* ph, args values, quoted times: never the id */
	int ph;
	int64_t ts, dur;
	int has_ts, has_dur, has_id;
	uint64_t corr;
	int has_corr;
	struct argval args[MAX_ARGS];
	int n_args;

	/* tables */
	trace_str kept_ids[READ_KEPT_ARGS];
	int a_name, a_labels, a_sort; /* read_kept_arg() indices the reader itself uses */
	int a_mem[4];		      /* Total Allocated, Total Reserved, Device Id, Device Type */
	struct pg_u64map tracks;
	struct pidinfo *pids;
	uint32_t n_pids, cap_pids;
	struct pg_u64map pidmap;
	struct pending *pend;
	uint32_t n_pend, cap_pend;
	uint32_t first_track;
	uint64_t first_event;

	/* cache */
	struct cj_strcache pid_text, tid_text; /* pid and tid change seldom */
	trace_str last_pid, last_tid;
	uint32_t last_track;
	struct cj_strcache cats_seen[CJ_CATS_SEEN]; /* id: the category's index */
	uint32_t n_cats_seen;

	/* header facts */
	struct pg_buf dev_props, dist_info;
	int saw_trace_events, top_is_array;
	int table_keys; /* an object had "cols" (1) and "rows" (2): an xprof tool table */
	int jax_evidence, kineto_evidence, highres_ticks, xprof_ui;
	int torch_name; /* a flow endpoint had a cj_is_torch_name() name */
	uint64_t unmatched_end, unclosed_begin;

	/* look-ahead (chrome_ahead.c) */
	struct cj_scan *rec;	  /* a worker's: events are recorded here, not finished */
	uint32_t rec_base;	  /* a worker's: where its input starts in the chunk */
	struct rd_ahead ahead;	  /* the parser's: the scan it gave the source */
	struct cj_spares *spares; /* the parser's: released scans, for reuse */
	int ahead_on;
	uint64_t scan_chunk;	    /* chunk_off of the chunk scan is for */
	const struct cj_scan *scan; /* that chunk's, or NULL */
	uint32_t scan_run;	    /* its first run not yet passed */
};

/* chrome_json.c */
/* A JSON number as read (chrome_num.c). */
struct num {
	int neg;
	uint64_t mant; /* up to 19 significant digits */
	int exp10;     /* value = mant * 10^exp10 */
	int is_int;    /* no fraction or exponent */
	int round_up;  /* the first fraction digit past the 19 kept was >= 5 */
	char text[64];
	int len;
};

/* Which bytes may be part of a JSON number; 10^0 .. 10^19. */
extern const unsigned char cj_numchar[256];
extern const uint64_t cj_pow10u[20];
/* Reads the number at c's position into n; 0, or cj_fail's code. */
int cj_read_number(struct cj *c, struct num *n);
/* n, a time in microseconds, into integer ns (rounded half up at the last
 * digit); 0, or -1 when it does not fit. */
int cj_num_us_to_ns(const struct num *n, int64_t *out);
/* n into an unsigned integer; 0, or -1 when it is not one or does not fit. */
int cj_num_to_u64(const struct num *n, uint64_t *out);

int cj_slow_peek(struct cj *c);
uint32_t cj_pid_index(struct cj *c, trace_str pid);
uint32_t cj_track_for(struct cj *c, trace_str pid, trace_str tid);
const char *cj_arg_text(struct cj *c, int key, size_t *len);

/* One event at the reader's position, through to cj_finish_event (or, on a
 * look-ahead worker, cj_record); 0 or PG_EFORMAT. */
int cj_parse_event(struct cj *c);
/* The event in c's per-event fields joins the trace. */
int cj_finish_event(struct cj *c);
/* The buffers reading one event fills (key, name, cat, pid, tid, id,
 * scratch, args' values). */
void cj_event_bufs_init(struct cj *c);
void cj_event_bufs_release(struct cj *c);

/* chrome_ahead.c: the events of chunks ahead of the parser, read on other
 * threads (rd_in_ahead_start) and taken in order where they fit */
void cj_ahead_start(struct cj *c);
void cj_ahead_stop(struct cj *c);
/* Where the parser stands at an event's start: the events a worker read
 * from exactly here, finished in order; their count, 0 when none fit, or
 * PG_EFORMAT. c->in is left past the last. */
int cj_ahead_take(struct cj *c);
/* A worker's cj_finish_event: the event's fields appended to c->rec. */
int cj_record(struct cj *c);

/* chrome_syntax.c: each returns PG_EFORMAT with the message set */
int cj_fail(struct cj *c, const char *fmt, ...) PG_PRINTF(2, 3);
int cj_fail_src(struct cj *c);
int cj_fail_eof(struct cj *c);
int cj_bad_char(struct cj *c, int ch, const char *expected);
int cj_read_escape(struct cj *c, struct pg_buf *out);

/* chrome_meta.c */
void cj_handle_metadata(struct cj *c);
void cj_apply_header_json(struct cj *c);
void cj_resolve_tracks(struct cj *c);
void cj_decide_dialect(struct cj *c);
void cj_file_warnings(struct cj *c);

/* A name only PyTorch gives (chrome_meta.c's test for the legacy export). */
static inline int cj_is_torch_name(const char *s, size_t n)
{
	return (n >= 6 && memcmp(s, "aten::", 6) == 0) || trace_is_marker_name(s, n);
}

static inline trace_str intern_buf(struct cj *c, const struct pg_buf *b)
{
	return trace_intern(c->t, b->ptr, b->len);
}

static inline int peekc(struct cj *c)
{
	if (c->in->p < c->in->end)
		return *c->in->p;
	return cj_slow_peek(c);
}

static inline int is_ws(int ch)
{
	return ch <= ' ' && (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t');
}

/* Skip whitespace and return the next byte without consuming it. */
static inline int skip_ws(struct cj *c)
{
	if (c->in->p<c->in->end && * c->in->p> ' ')
		return *c->in->p; /* most tokens follow the last with no space */
	for (;;) {
		const unsigned char *p = c->in->p, *end = c->in->end;
		while (p < end && is_ws(*p))
			p++;
		c->in->p = p;
		if (p < end)
			return *p;
		int ch = cj_slow_peek(c);
		if (ch < 0 || !is_ws(ch))
			return ch;
	}
}

#endif
