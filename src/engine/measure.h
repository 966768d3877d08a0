/* SPDX-License-Identifier: BSD-2-Clause */
/* What the benchmark mains share once traffic runs: recording latency
 * samples into a row, filling a bandwidth row, and the load projection
 * that latency binaries derive from their event-mode cost. */
#ifndef CQP_MEASURE_H
#define CQP_MEASURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/arrival.h"
#include "engine/bench.h"
#include "report/report.h"
#include "base/stats.h"

/* Latency of one step: exact samples when they fit, a histogram for -D,
 * -H and runs beyond the sample store. */
struct cqp_lat_rec {
	struct cqp_samples samples;
	struct cqp_hist hist;
	bool need_hist;
	uint64_t measured;
	double scale; /* 0.5: one-way from a round trip; 1.0 with --rtt */
	/* Open loop (--rate): samples count from the schedule (response
	 * time, a whole round trip); these from the post (service time). */
	bool open;
	struct cqp_samples svc;
	struct cqp_hist svc_hist;
	uint64_t first_sched, last_done;
	/* --samples: the step's scheduled, posted and completed times,
	 * written to out when the step ends (not while it is timed). */
	FILE *out;
	bool keep; /* keep the times without a file: a thread's share */
	uint64_t (*times)[3];
	size_t ntimes, cap_times;
	uint64_t bytes;
	const char *mode;
	uint64_t rate;
};

/* Client side: allocates the sample store for p->iters; samples (the
 * run's --samples file, or NULL) gets its header, then each step's
 * samples.  The caller owns and closes it. */
int cqp_lat_rec_init(struct cqp_lat_rec *r, const struct cqp_params *p,
		     FILE *samples);
void cqp_lat_rec_free(struct cqp_lat_rec *r);
/* Forgets the last step's figures; the step sends `bytes` in `mode`, in
 * an open loop at `rate` requests/s (0: closed loop). */
void cqp_lat_rec_begin(struct cqp_lat_rec *r, const struct cqp_params *p,
		       uint64_t bytes, const char *mode, uint64_t rate);
/* cqp_lat_rec_add's --samples times and histogram. */
void cqp_lat_rec_more(struct cqp_lat_rec *r, uint64_t posted_ns,
		      uint64_t done_ns, double ns);
/* One measured round trip: posted and completed, in nanoseconds.
 * Inline: it runs once an exchange, on the ping-pong's path. */
static inline void cqp_lat_rec_add(struct cqp_lat_rec *r, uint64_t posted_ns,
				   uint64_t done_ns)
{
	double ns = (double)(done_ns - posted_ns) * r->scale;

	r->measured++;
	if (r->samples.cap)
		cqp_samples_add(&r->samples, ns);
	if (r->out || r->keep || r->need_hist)
		cqp_lat_rec_more(r, posted_ns, done_ns, ns);
}
/* One open-loop request: when it was due, posted and answered. */
void cqp_lat_rec_add_open(struct cqp_lat_rec *r, uint64_t sched_ns,
			  uint64_t posted_ns, uint64_t done_ns);
/* --threads: adds a thread's step (samples, histograms, --samples
 * times) to into, begun like it; percentiles stay exact while every
 * sample fits.  0, or CQP_E_NOMEM. */
int cqp_lat_rec_merge(struct cqp_lat_rec *into, const struct cqp_lat_rec *from);
/* The step's summary (and, with -H, its histogram) into row. */
int cqp_lat_rec_finish(struct cqp_lat_rec *r, const struct cqp_params *p,
		       struct cqp_row *row);

/* A closed-loop latency client's schedule: --warmup exchanges, then
 * --iters measured ones or as many as --duration allows.  Before each
 * exchange, cqp_lat_loop_next says whether it is the first measured one
 * (the engine's counters start then: cqp_comp_begin), whether it is
 * measured, and whether it is the last. */
struct cqp_comp;
struct cqp_lat_loop {
	const struct cqp_params *p;
	struct cqp_comp *comp;
	uint64_t i;	 /* this exchange, from 0 */
	uint64_t end_ns; /* --duration: the measured phase's end */
	bool first, measured, last;
};
void cqp_lat_loop_init(struct cqp_lat_loop *l, const struct cqp_params *p,
		       struct cqp_comp *comp);
/* cqp_lat_loop_next's first measured exchange, and --duration's end. */
void cqp_lat_loop_mark(struct cqp_lat_loop *l);
/* Exchange l->i is next: sets first, measured and last.  Inline: it runs
 * once an exchange. */
static inline void cqp_lat_loop_next(struct cqp_lat_loop *l)
{
	const struct cqp_params *p = l->p;

	l->first = l->i == p->warmup;
	l->measured = l->i >= p->warmup;
	if (l->first || (p->duration_s && l->measured))
		cqp_lat_loop_mark(l);
	else
		l->last = !p->duration_s && l->i + 1 == p->warmup + p->iters;
}

/* The longest an open loop's sender waits for a reply before it looks at
 * its deadline and its peer again. */
#define CQP_OL_SLICE_NS (10ull * 1000 * 1000)

/* An open loop's sending side: when the next request is due, which one
 * starts and which ends the measured phase, and the late ones. */
struct cqp_open_loop {
	const struct cqp_params *p;
	struct cqp_arrivals a;
	uint64_t due;	 /* the next request's due time */
	uint64_t sent;	 /* requests posted, warm-up included */
	uint64_t late;	 /* measured requests due while there was no room */
	uint64_t end_ns; /* -D: the measured phase ends */
	bool late_marked, ending;
};

/* Requests at `rate` from now on (seed: the draw of Poisson gaps). */
void cqp_ol_begin(struct cqp_open_loop *o, const struct cqp_params *p,
		  uint64_t rate, uint64_t now, uint64_t seed);
/* A request is due at now (and the last one is not out yet); with -D,
 * the one that ends the step is due when the time is up, whatever the
 * schedule says. */
static inline bool cqp_ol_due(const struct cqp_open_loop *o, uint64_t now)
{
	return !o->ending && (o->due <= now || (o->end_ns && now >= o->end_ns));
}
/* Until when the sender may wait for replies: the next due request,
 * CQP_OL_SLICE_NS at most (its deadline and its peer want looks). */
static inline uint64_t cqp_ol_wake(const struct cqp_open_loop *o, uint64_t now)
{
	uint64_t slice = now + CQP_OL_SLICE_NS;

	if (o->ending || o->due <= now || o->due > slice)
		return slice;
	return o->due;
}
/* The due request finds no room: it goes late, counted once. */
void cqp_ol_blocked(struct cqp_open_loop *o);
/* About to post the due request: *first when it is the first measured
 * one (the caller starts its counters), *last when it ends the step. */
void cqp_ol_next(struct cqp_open_loop *o, uint64_t now, bool *first,
		 bool *last);
/* Posted at now: returns its due time (now for a -D step's last one,
 * sent before it was due); the schedule moves on. */
uint64_t cqp_ol_posted(struct cqp_open_loop *o, bool last, uint64_t now);
/* The step's late sends and arrival spread into row. */
void cqp_ol_finish(const struct cqp_open_loop *o, struct cqp_row *row);

/* A bandwidth meter's result into row. */
void cqp_bw_row(struct cqp_row *row, const struct cqp_bw_result *res);

/* The annotate hook of latency binaries: CPU per wakeup from the
 * client's event-mode row and, with --project, the load at that rate. */
void cqp_lat_annotate(const struct cqp_run *run, struct cqp_report *r);

/* The annotate hook of bandwidth binaries: with --project, the
 * projection from the server's (receiver's) cost per wakeup and, with
 * --rate, its check against what the receiver did. */
void cqp_bw_annotate(const struct cqp_run *run, struct cqp_report *r);

#endif
