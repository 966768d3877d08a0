/* SPDX-License-Identifier: BSD-2-Clause */
/* The progress line: where a run of several steps is, on a terminal.
 *
 * One line on stderr, "\r<text>\033[K", rewritten in place: the step
 * (i of n), what it measures (a string the caller words) and the time
 * left.  It is drawn at step boundaries and from ticks of a place that
 * wakes anyway (the peer watch), at most every CQP_PROGRESS_EVERY_NS and
 * only when its text changed, and cleared ("\r\033[K") before anything
 * else is printed.  The clock is the caller's: every call takes now. */
#ifndef CQP_PROGRESS_H
#define CQP_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/options.h"

/* The line fits an 80-column terminal with the cursor after it. */
#define CQP_PROGRESS_COLS     79
#define CQP_PROGRESS_EVERY_NS (250ull * 1000 * 1000)

struct cqp_progress {
	FILE *out;	   /* NULL: off, every call does nothing */
	unsigned n;	   /* steps in the run */
	unsigned i;	   /* the step under way, from 0 */
	bool started;	   /* a step has begun */
	uint64_t step_ns;  /* -D: a step's known length; 0: unknown */
	uint64_t first_ns; /* when the first step began */
	uint64_t begun_ns; /* when this step began */
	uint64_t drawn_ns; /* the last draw */
	bool shown;	   /* a line is on the screen */
	char what[64];
	char last[CQP_PROGRESS_COLS + 1]; /* the text on the screen */
	/* Ticks may come from --threads' threads: they skip a draw
	 * rather than wait. */
	pthread_mutex_t lock;
};

/* Whether a run of nsteps steps shows the line on fd: a terminal,
 * no --quiet, and more than one step or a -D step to count down. */
bool cqp_progress_wanted(const struct cqp_params *p, unsigned nsteps, int fd);

/* Sets pg up for nsteps steps of step_s seconds each (-D; 0: unknown),
 * drawn on out (NULL: off). */
void cqp_progress_init(struct cqp_progress *pg, FILE *out, unsigned nsteps,
		       uint32_t step_s);
/* Step i (from 0) begins, measuring what; draws when due. */
void cqp_progress_step(struct cqp_progress *pg, unsigned i, const char *what,
		       uint64_t now_ns);
/* The time moved on: draws when due and changed.  Never waits. */
void cqp_progress_tick(struct cqp_progress *pg, uint64_t now_ns);
/* Takes the line off the screen (before other output); a later step or
 * tick draws it again. */
void cqp_progress_clear(struct cqp_progress *pg);
/* Clears and turns it off for good: before the report, and on every
 * way out. */
void cqp_progress_end(struct cqp_progress *pg);

/* The line's text at now, without the control sequences, e.g.
 * "step 4/23  4096 B, event  12 s left"; at most CQP_PROGRESS_COLS
 * characters.  Returns its length. */
size_t cqp_progress_text(const struct cqp_progress *pg, uint64_t now_ns,
			 char *buf, size_t cap);

#endif
