/* SPDX-License-Identifier: BSD-2-Clause */
/* --threads: a step of a threaded tool run on T threads at once, each on
 * its own engine and group of QPs, and the merge of what they measured
 * into the step's one row and one side's cost. */
#ifndef CQP_WORKERS_H
#define CQP_WORKERS_H

#include "engine/bench.h"

/* Pins the calling thread to cpu (-1: leaves it be); a CPU it may not
 * run on is a usage error naming --cpu. */
int cqp_pin_cpu(int cpu);

/* Runs ops->run_size once per engine of run (run->ncomp), thread t on
 * its own thread pinned to the t-th CPU of --cpu, and merges.  A thread
 * that fails stops the others (run->abort, and SIGUSR1 to break their
 * blocking waits); its failure is the step's. */
int cqp_workers_step(const struct cqp_bench_ops *ops, struct cqp_run *run,
		     void *ctx, uint64_t size, struct cqp_row *row,
		     struct cqp_cost *mine);

/* --shared-channel moves a step's end and its measure mark from the
 * thread to the step (run->sync): any thread may reap any QP's messages.
 * A QP's last message was reaped (of `ends` the thread, or with a shared
 * channel the step, waits for): */
void cqp_step_end_seen(struct cqp_run *run, unsigned *ended, unsigned ends);
/* Every end was seen (the thread's, or the step's). */
bool cqp_step_done(const struct cqp_run *run, unsigned ended, unsigned ends);
/* A measure mark was reaped: the thread's measured phase begins, or with
 * a shared channel every thread's at its next cqp_step_look. */
void cqp_step_mark(struct cqp_run *run, struct cqp_comp *comp);
/* After each reap with a shared channel: begins this thread's measured
 * phase once the step's first mark was seen (*began: it did). */
void cqp_step_look(struct cqp_run *run, struct cqp_comp *comp, bool *began);

/* --rate R over T threads: thread run->thread's share, R/T with the
 * remainder to the first ones. */
uint64_t cqp_rate_share(const struct cqp_run *run, uint64_t rate);

/* The side's cost from its threads': counters and the thread's CPU
 * summed, the process- and machine-wide figures from thread 0, seconds
 * the longest; out->threads is allocated (each thread's share, cpu[t]
 * where it ran).  0, or CQP_E_NOMEM. */
int cqp_workers_merge_cost(const struct cqp_cost *each, const int32_t *cpu,
			   unsigned n, struct cqp_cost *out);

/* The step's row from the threads': messages summed, bandwidth and rate
 * as the sums over the longest measured phase, peak the sum of the
 * threads' peaks (each over its own windows: an upper bound); with
 * --rate the offered rates and late sends summed, achieved the rate. */
void cqp_workers_merge_row(const struct cqp_row *each, unsigned n,
			   struct cqp_row *out);

#endif
