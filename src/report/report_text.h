/* SPDX-License-Identifier: BSD-2-Clause */
/* The human report's pieces (report_human.c assembles them): lines built
 * cell by cell, prose wrapped to the terminal's width, figures in words
 * a person reads, the row table (report_table.c) and the -H histogram
 * (report_hist.c).  Internal to the report layer. */
#ifndef CQP_REPORT_TEXT_H
#define CQP_REPORT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report/report_fields.h"

/* What every line of the default human report fits in. */
#define CQP_HUMAN_COLS 100

#define CQP_LINE_CAP 1024

struct cqp_line {
	char buf[CQP_LINE_CAP];
	size_t len;
};

/* " TEXT" left-aligned in width, then a blank: cells two blanks apart. */
void cqp_line_cell(struct cqp_line *l, int width, const char *text);
/* Appends, as printf. */
void cqp_line_printf(struct cqp_line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints the line without trailing blanks (out may be NULL: measure
 * only); returns its length, and empties it. */
size_t cqp_line_emit(struct cqp_line *l, FILE *out);
/* Prints the line folded to CQP_HUMAN_COLS, at the field separators
 * (two blanks) where it can, else at a blank; continuation lines are
 * indented under the first word.  Empties it. */
void cqp_line_wrap(struct cqp_line *l, FILE *out);

/* Prose: text whose every line is folded by cqp_line_wrap as its
 * newline is written. */
struct cqp_text {
	struct cqp_line l;
	FILE *out;
};
void cqp_text_printf(struct cqp_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A finite value with that many decimals, else "-". */
void cqp_fmt_fixed(char *buf, size_t cap, int decimals, double v);
/* Three significant figures and a decimal prefix: "3.05 M", "47.7 k";
 * sep goes between the figure and the prefix. */
void cqp_fmt_rate(char *buf, size_t cap, double v, const char *sep);
/* Microseconds with the precision a reader needs: "1.52", "12.3",
 * "147"; "-" when not finite. */
void cqp_fmt_us(char *buf, size_t cap, double us);

/* -H: the distribution under its row (report_hist.c). */
void cqp_human_hist(const struct cqp_hist *h, FILE *out);

/* The row table: header and a block per row (report_table.c).  out NULL
 * measures only.  Returns the longest line's length. */
size_t cqp_human_table(const struct cqp_report *r, const struct shape *s,
		       FILE *out);

#endif
