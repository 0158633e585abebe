/*
 * Names cut to fit a table cell so that the rows of one table stay told
 * apart. Kernel names, C++ templates above all, often share their first
 * hundred bytes and differ deep inside ("...TensorMap<Eigen::Tensor<float"
 * against "...<bool"): a plain cut at the cell's width shows the same text on
 * every row.
 *
 * How it works: a name's distinguishing byte is where it first differs from
 * the other name of the list that shares the longest start with it (names
 * equal to it do not count: no cut tells them apart). A name that fits is
 * shown whole. A name whose plain cut shows that byte and a few after it is
 * cut plainly. Any other shows its head (about two fifths of the width, ended
 * after a separator when one is near), an ellipsis, and a window of the rest
 * of the width that opens at the start of the word holding the byte (or of
 * the argument list it ends, for context), or earlier when the name ends
 * sooner, with an ellipsis when the name goes on. Windows open at word starts
 * where one is near, so they read as names, not as pieces of them.
 * A last pass looks for rows that still read the same and places those
 * windows at the byte where the two differ. Every cut falls on a UTF-8
 * boundary, so no multi-byte character is split; escaping is the renderers'
 * (escape.c). Deterministic: the cuts depend on the list alone.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* A plain cut must show this many bytes past the distinguishing one for the
 * difference to read as a difference, not a lone letter at the cut. */
#define PLAIN_MARGIN 12
/* The farthest a window opens before the distinguishing byte (at most half
 * the window). */
#define BACK_MAX 32
/* Rounds of the last pass: each settles the pairs the one before left. */
#define ROUNDS 4

/* k moved back to the start of a UTF-8 sequence (at most 3 bytes, never below
 * floor): a run of stray continuation bytes cannot swallow the name. */
static size_t seq_start(const char *s, size_t k, size_t floor)
{
	for (int i = 0; i < 3 && k > floor && ((unsigned char)s[k] & 0xc0) == 0x80; i++)
		k--;
	return k;
}

/* Bytes of s[0, n) to keep so that at most max are used without splitting a
 * UTF-8 sequence. */
static size_t fit(const char *s, size_t n, size_t max)
{
	return n <= max ? n : seq_start(s, max, 0);
}

static size_t common_prefix(const char *a, const char *b)
{
	size_t k = 0;
	while (a[k] && a[k] == b[k])
		k++;
	return k;
}

/* A byte of a word: identifiers with their "::" qualifiers, and the bytes of
 * any non-ASCII character. */
static int word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == ':' || c >= 0x80;
}

/* From k inside a word, the start of the next word when one starts before
 * limit; else k. */
static size_t next_word(const char *s, size_t k, size_t limit)
{
	size_t j = k;

	while (j < limit && word_byte((unsigned char)s[j]))
		j++;
	while (j < limit && !word_byte((unsigned char)s[j]))
		j++;
	return j < limit ? j : k;
}

/* Where a window showing byte d opens: the start of d's word; when that word
 * starts within 8 bytes of d, the argument list it ends ("float, 1, 1, int"
 * from just after its '<' or '('), or, when the bracket is right before the
 * word, the word before the bracket too ("Tensor<bool"). Never before floor
 * nor more than back bytes before d. */
static size_t window_start(const char *s, size_t d, size_t floor, size_t back)
{
	size_t lo = d > floor + back ? d - back : floor, k = d;

	while (k > lo && word_byte((unsigned char)s[k - 1]))
		k--;
	if (k == lo && k > floor && word_byte((unsigned char)s[k - 1])) {
		/* a word longer than back ("Cijk_Ailk_..._GRPM0p26"): from a '_' in it */
		const char *u = memchr(s + k, '_', d - k);
		return u ? (size_t)(u - s) + 1 : seq_start(s, k, floor);
	}
	if (d - k >= 8 || k == lo)
		return seq_start(s, k, floor);
	size_t j = k;
	while (j > lo && s[j - 1] != '<' && s[j - 1] != '(')
		j--;
	if (j > lo && j < k)
		return seq_start(s, j, floor);
	j = k;
	while (j > lo && !word_byte((unsigned char)s[j - 1]))
		j--;
	while (j > lo && word_byte((unsigned char)s[j - 1]))
		j--;
	/* the whole word before, not a piece of it: from the cap, the next word */
	if (j > floor && word_byte((unsigned char)s[j - 1]))
		j = next_word(s, j, k + 1);
	return seq_start(s, j, floor);
}

/* The head of a windowed name: two fifths of max, ended just after a
 * separator when one lies in its last third, else after a '_'. */
static size_t head_of(const char *s, size_t max)
{
	size_t h = seq_start(s, max * 2 / 5, 0);
	for (size_t k = h; k > h - h / 3; k--)
		if (!word_byte((unsigned char)s[k - 1]))
			return k;
	for (size_t k = h; k > h - h / 3; k--)
		if (s[k - 1] == '_')
			return k;
	return h;
}

/* The cut of s (n bytes) that shows byte d within max bytes. */
static void place(const char *s, size_t n, size_t d, size_t max, struct report_cut *c)
{
	size_t plain = fit(s, n, max);

	*c = (struct report_cut){plain, 0, 0};
	if (n <= max || d + PLAIN_MARGIN <= plain)
		return;
	size_t head = head_of(s, max), width = max - head;
	size_t back = BACK_MAX < width / 2 ? BACK_MAX : width / 2;
	size_t from = window_start(s, d < n ? d : n, head, back);
	if (from + width > n) {
		/* the window ends with the name: from a word's start when one is near */
		from = seq_start(s, n - width, head);
		if (from > 0 && word_byte((unsigned char)s[from - 1]))
			from = next_word(s, from, d < from + 12 ? d : from + 12);
	}
	if (from <= head)
		return; /* the window would follow the head: a plain cut shows it */
	*c = (struct report_cut){head, from, fit(s + from, n - from, width)};
}

/* What a cut shows, the ellipses included: two names whose shows are equal
 * read the same. */
static void show(struct pg_buf *b, const char *s, const struct report_cut *c)
{
	size_t n = strlen(s), end = c->len ? c->from + c->len : c->head;

	pg_buf_reset(b);
	pg_buf_add(b, s, c->head);
	if (c->len) {
		pg_buf_adds(b, "…");
		pg_buf_add(b, s + c->from, c->len);
	}
	if (end < n)
		pg_buf_adds(b, "…");
	pg_buf_addc(b, '\0');
}

/* Pairs of different names that still read the same get windows at the byte
 * where the two differ; returns whether any pair did. */
static int settle(const char *const *names, uint32_t n, size_t max, struct report_cut *cuts)
{
	struct pg_buf *shown = pg_xcalloc(n, sizeof(*shown));
	int moved = 0;

	for (uint32_t i = 0; i < n; i++)
		show(&shown[i], names[i] ? names[i] : "", &cuts[i]);
	for (uint32_t i = 0; i < n; i++) {
		const char *a = names[i] ? names[i] : "";
		for (uint32_t j = i + 1; j < n; j++) {
			const char *b = names[j] ? names[j] : "";
			if (strcmp(shown[i].ptr, shown[j].ptr) != 0 || strcmp(a, b) == 0)
				continue;
			size_t d = common_prefix(a, b);
			place(a, strlen(a), d, max, &cuts[i]);
			place(b, strlen(b), d, max, &cuts[j]);
			moved = 1;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		pg_buf_release(&shown[i]);
	free(shown);
	return moved;
}

void report_cut_names(const char *const *names, uint32_t n, size_t max, struct report_cut *cuts)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *a = names[i] ? names[i] : "";
		size_t d = 0;
		for (uint32_t j = 0; j < n; j++) {
			const char *b = names[j] ? names[j] : "";
			if (j == i || strcmp(a, b) == 0)
				continue;
			size_t k = common_prefix(a, b);
			d = k > d ? k : d;
		}
		place(a, strlen(a), d, max, &cuts[i]);
	}
	for (int r = 0; r < ROUNDS && n > 1 && settle(names, n, max, cuts); r++)
		;
}
