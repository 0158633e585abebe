/*
 * gen_xplane: a large synthetic XPlane for benchmarks, made by repeating every
 * line's events of a real .xplane.pb with offsets shifted by the capture span,
 * until at least N events. Written as wire format in two passes per plane
 * (sizes, then bytes) so memory stays flat. The XSpace carries a warning that
 * marks it synthetic.
 *
 * usage: gen_xplane --source FILE.xplane.pb --events N -o OUT.xplane.pb
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xplane.pb-c.h"

typedef Tensorflow__Profiler__XSpace XSpace;
typedef Tensorflow__Profiler__XPlane XPlane;
typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEvent XEvent;

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(FILE *out, uint64_t v)
{
	while (v >= 0x80) {
		fputc((int)((v & 0x7f) | 0x80), out);
		v >>= 7;
	}
	fputc((int)v, out);
}

/* One field-2 (length-delimited) header: tag then length. */
static size_t put_ld(FILE *out, int field, uint64_t len)
{
	uint64_t tag = ((uint64_t)field << 3) | 2;
	if (out) {
		put_varint(out, tag);
		put_varint(out, len);
	}
	return varint_len(tag) + varint_len(len);
}

static uint8_t *scratch;
static size_t scratch_cap;

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "gen_xplane: out of memory\n");
		exit(1);
	}
	return q;
}

/* The plane's stat metadata id of device_offset_ps (TPU), or -1: device
 * offsets replace offsets when the profile is read, so they shift too. */
static int64_t dev_offset_id = -1;

static void find_dev_offset(const XPlane *p)
{
	dev_offset_id = -1;
	for (size_t i = 0; i < p->n_stat_metadata; i++) {
		const Tensorflow__Profiler__XStatMetadata *m = p->stat_metadata[i]->value;
		if (m && m->name && strcmp(m->name, "device_offset_ps") == 0)
			dev_offset_id = p->stat_metadata[i]->key;
	}
}

static size_t pack_event(XEvent *e, int64_t shift, FILE *out)
{
	int64_t saved = e->offset_ps;
	size_t n;
	Tensorflow__Profiler__XStat *dev = NULL;
	uint64_t dev_saved_u = 0;
	int64_t dev_saved_i = 0;

	if (e->data_case == TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS)
		e->offset_ps += shift;
	for (size_t i = 0; dev_offset_id >= 0 && i < e->n_stats; i++)
		if (e->stats[i]->metadata_id == dev_offset_id)
			dev = e->stats[i];
	if (dev) {
		dev_saved_u = dev->uint64_value;
		dev_saved_i = dev->int64_value;
		if (dev->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE)
			dev->uint64_value += (uint64_t)shift;
		else if (dev->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE)
			dev->int64_value += shift;
	}
	n = tensorflow__profiler__xevent__get_packed_size(e);
	if (out) {
		if (n > scratch_cap) {
			scratch_cap = n * 2;
			scratch = xrealloc(scratch, scratch_cap);
		}
		tensorflow__profiler__xevent__pack(e, scratch);
		fwrite(scratch, 1, n, out);
	}
	e->offset_ps = saved;
	if (dev) {
		dev->uint64_value = dev_saved_u;
		dev->int64_value = dev_saved_i;
	}
	return n;
}

/* The line's events repeated `reps` times; the line header after them. */
static size_t emit_line(XLine *l, int reps, int64_t span_ps, FILE *out)
{
	size_t total = 0;
	XEvent **ev = l->events;
	size_t n_ev = l->n_events;

	for (int r = 0; r < reps; r++)
		for (size_t i = 0; i < n_ev; i++) {
			size_t n = pack_event(ev[i], (int64_t)r * span_ps, NULL);
			total += put_ld(out, 4, n);
			if (out)
				pack_event(ev[i], (int64_t)r * span_ps, out);
			total += n;
		}
	l->events = NULL;
	l->n_events = 0;
	size_t hn = tensorflow__profiler__xline__get_packed_size(l);
	if (out) {
		uint8_t *h = xrealloc(NULL, hn);
		tensorflow__profiler__xline__pack(l, h);
		fwrite(h, 1, hn, out);
		free(h);
	}
	l->events = ev;
	l->n_events = n_ev;
	return total + hn;
}

/* Lines first (as serializers write them), then the rest of the plane. */
static size_t emit_plane(XPlane *p, int reps, int64_t span_ps, FILE *out)
{
	find_dev_offset(p);
	size_t total = 0;

	for (size_t i = 0; i < p->n_lines; i++) {
		size_t n = emit_line(p->lines[i], reps, span_ps, NULL);
		total += put_ld(out, 3, n);
		if (out)
			emit_line(p->lines[i], reps, span_ps, out);
		total += n;
	}
	XLine **lines = p->lines;
	size_t n_lines = p->n_lines;
	p->lines = NULL;
	p->n_lines = 0;
	size_t rn = tensorflow__profiler__xplane__get_packed_size(p);
	if (out) {
		uint8_t *b = xrealloc(NULL, rn);
		tensorflow__profiler__xplane__pack(p, b);
		fwrite(b, 1, rn, out);
		free(b);
	}
	p->lines = lines;
	p->n_lines = n_lines;
	return total + rn;
}

int main(int argc, char **argv)
{
	const char *src = NULL, *dst = NULL;
	long long target = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--source") == 0)
			src = argv[i + 1];
		else if (strcmp(argv[i], "--events") == 0)
			target = atoll(argv[i + 1]);
		else if (strcmp(argv[i], "-o") == 0)
			dst = argv[i + 1];
	}
	if (!src || !dst || target <= 0) {
		fprintf(stderr, "usage: gen_xplane --source FILE.xplane.pb --events N -o OUT\n");
		return 2;
	}
	FILE *in = fopen(src, "rb");
	if (!in) {
		perror(src);
		return 1;
	}
	fseek(in, 0, SEEK_END);
	long size = ftell(in);
	if (size <= 0 || fseek(in, 0, SEEK_SET) != 0) {
		fprintf(stderr, "%s: cannot size the file\n", src);
		fclose(in);
		return 1;
	}
	uint8_t *buf = xrealloc(NULL, (size_t)size);
	if (fread(buf, 1, (size_t)size, in) != (size_t)size) {
		fprintf(stderr, "%s: short read\n", src);
		free(buf);
		fclose(in);
		return 1;
	}
	fclose(in);
	XSpace *s = tensorflow__profiler__xspace__unpack(NULL, (size_t)size, buf);
	free(buf);
	if (!s) {
		fprintf(stderr, "%s: not an XPlane\n", src);
		return 1;
	}
	/* events per copy, and the capture span in absolute ps */
	long long per = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t p = 0; p < s->n_planes; p++)
		for (size_t l = 0; l < s->planes[p]->n_lines; l++) {
			XLine *ln = s->planes[p]->lines[l];
			per += (long long)ln->n_events;
			for (size_t e = 0; e < ln->n_events; e++) {
				XEvent *ev = ln->events[e];
				if (ev->data_case != TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS)
					continue;
				int64_t a = ln->timestamp_ns * 1000 + ev->offset_ps;
				if (a < lo)
					lo = a;
				if (a + ev->duration_ps > hi)
					hi = a + ev->duration_ps;
			}
		}
	if (per == 0 || lo > hi) {
		fprintf(stderr, "%s: no events to repeat\n", src);
		tensorflow__profiler__xspace__free_unpacked(s, NULL);
		return 1;
	}
	int reps = (int)((target + per - 1) / per);
	int64_t span = (hi - lo) + 1000000; /* plus 1 us between copies */

	FILE *out = fopen(dst, "wb");
	if (!out) {
		perror(dst);
		tensorflow__profiler__xspace__free_unpacked(s, NULL);
		return 1;
	}
	for (size_t p = 0; p < s->n_planes; p++) {
		size_t n = emit_plane(s->planes[p], reps, span, NULL);
		put_ld(out, 1, n);
		emit_plane(s->planes[p], reps, span, out);
	}
	char note[1024];
	snprintf(note, sizeof(note),
		 "profgate synthetic: generated by tests/tools/gen_xplane from %s (%d copies); "
		 "not a real profile",
		 src, reps);
	put_ld(out, 3, strlen(note));
	fwrite(note, 1, strlen(note), out);
	for (size_t h = 0; h < s->n_hostnames; h++) {
		put_ld(out, 4, strlen(s->hostnames[h]));
		fwrite(s->hostnames[h], 1, strlen(s->hostnames[h]), out);
	}
	int rc = 0, werr = ferror(out);
	if (fclose(out) != 0 || werr) {
		fprintf(stderr, "%s: write error\n", dst);
		rc = 1;
	} else {
		printf("%lld events (%d copies of %lld)\n", (long long)reps * per, reps, per);
	}
	tensorflow__profiler__xspace__free_unpacked(s, NULL);
	free(scratch);
	return rc;
}
