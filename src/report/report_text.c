/* SPDX-License-Identifier: BSD-2-Clause */
/* Lines, wrapping and number formats of the human report. */
#include "report/report_text.h"
#include "report/report.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

static void line_advance(struct cqp_line *l, int n)
{
	if (n > 0)
		l->len += (size_t)n < CQP_LINE_CAP - l->len
			      ? (size_t)n
			      : CQP_LINE_CAP - 1 - l->len;
}

void cqp_line_cell(struct cqp_line *l, int width, const char *text)
{
	line_advance(l, snprintf(l->buf + l->len, CQP_LINE_CAP - l->len,
				 " %-*s ", width, text));
}

void cqp_line_printf(struct cqp_line *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	line_advance(
	    l, vsnprintf(l->buf + l->len, CQP_LINE_CAP - l->len, fmt, ap));
	va_end(ap);
}

size_t cqp_line_emit(struct cqp_line *l, FILE *out)
{
	size_t len = l->len;

	while (len > 0 && l->buf[len - 1] == ' ')
		len--;
	if (out)
		fprintf(out, "%.*s\n", (int)len, l->buf);
	l->len = 0;
	return len;
}

/* Where to end a piece of s that may hold at most room characters:
 * the last field separator (two blanks) in its second half, else the
 * last blank; 0 when there is none. */
static size_t break_at(const char *s, size_t room)
{
	size_t p, single = 0;

	for (p = room; p > 0; p--) {
		if (s[p] != ' ')
			continue;
		if (s[p - 1] == ' ' && p > room / 2) {
			while (s[p - 1] == ' ')
				p--;
			return p;
		}
		if (!single && s[p - 1] != ' ')
			single = p;
	}
	return single;
}

void cqp_line_wrap(struct cqp_line *l, FILE *out)
{
	const char *s = l->buf;
	size_t len = l->len, lead = strspn(s, " "), indent = 0;

	while (len > 0 && s[len - 1] == ' ')
		len--;
	while (len > lead) {
		size_t room = CQP_HUMAN_COLS - indent, end;

		if (len <= room) {
			fprintf(out, "%*s%.*s\n", (int)indent, "", (int)len, s);
			break;
		}
		end = break_at(s, room);
		if (end <= lead)
			end = len; /* one word longer than the line */
		fprintf(out, "%*s%.*s\n", (int)indent, "", (int)end, s);
		if (!indent)
			indent = lead + 2;
		s += end;
		len -= end;
		lead = strspn(s, " ");
		s += lead;
		len -= lead;
		lead = 0;
	}
	l->len = 0;
}

void cqp_text_printf(struct cqp_text *t, const char *fmt, ...)
{
	char buf[CQP_LINE_CAP];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (int i = 0; i < n && buf[i]; i++) {
		if (buf[i] == '\n')
			cqp_line_wrap(&t->l, t->out);
		else if (t->l.len + 1 < CQP_LINE_CAP)
			t->l.buf[t->l.len++] = buf[i];
	}
}

void cqp_report_say(FILE *out, const char *fmt, ...)
{
	struct cqp_text t = {.out = out};
	char buf[CQP_LINE_CAP];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cqp_text_printf(&t, "%s\n", buf);
}

void cqp_fmt_fixed(char *buf, size_t cap, int decimals, double v)
{
	if (isfinite(v))
		snprintf(buf, cap, "%.*f", decimals, v);
	else
		snprintf(buf, cap, "-");
}

void cqp_fmt_rate(char *buf, size_t cap, double v, const char *sep)
{
	static const char *const prefix[] = {"", "k", "M", "G", "T"};
	unsigned i = 0;

	if (!isfinite(v)) {
		snprintf(buf, cap, "-");
		return;
	}
	while (v >= 999.5 && i < 4) {
		v /= 1e3;
		i++;
	}
	if (i == 0)
		sep = "";
	if (i == 0 && v == floor(v))
		snprintf(buf, cap, "%.0f", v); /* counts stay counts */
	else if (v < 9.995)
		snprintf(buf, cap, "%.2f%s%s", v, sep, prefix[i]);
	else if (v < 99.95)
		snprintf(buf, cap, "%.1f%s%s", v, sep, prefix[i]);
	else
		snprintf(buf, cap, "%.0f%s%s", v, sep, prefix[i]);
}

void cqp_fmt_us(char *buf, size_t cap, double us)
{
	if (!isfinite(us))
		snprintf(buf, cap, "-");
	else if (us < 9.995)
		snprintf(buf, cap, "%.2f", us);
	else if (us < 99.95)
		snprintf(buf, cap, "%.1f", us);
	else
		snprintf(buf, cap, "%.0f", us);
}
