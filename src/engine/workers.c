/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/workers.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

/* How often the step looks at its threads, and breaks the waits of the
 * rest once one failed (a signal can land just before a read). */
#define WATCH_NS (20 * 1000 * 1000)

struct worker {
	struct cqp_run run; /* the step's, with this thread's engine */
	atomic_int *abort;  /* the step's flag (run->abort of the caller) */
	const struct cqp_bench_ops *ops;
	void *ctx;
	uint64_t size;
	struct cqp_row row;
	struct cqp_cost cost;
	int rc;
	struct cqp_error err;
	int32_t cpu;
	pthread_t tid;
	bool started;
	atomic_bool done;
};

int cqp_pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* 0: the calling thread alone (Linux), main's or a worker's. */
	if (sched_setaffinity(0, sizeof(set), &set))
		return cqp_fail(CQP_E_USAGE,
				"--cpu %d: cannot pin there (%s; "
				"this machine has CPUs 0..%ld)",
				cpu, strerror(errno),
				sysconf(_SC_NPROCESSORS_ONLN) - 1);
	return 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	const struct cqp_params *p = w->run.p;

	w->rc =
	    cqp_pin_cpu(w->run.thread < p->ncpu ? p->cpus[w->run.thread] : -1);
	if (w->rc == 0)
		w->rc = w->ops->run_size(&w->run, w->ctx, w->size, &w->row,
					 &w->cost);
	w->cpu = sched_getcpu();
	if (w->rc < 0) {
		cqp_error_save(&w->err);
		atomic_store(w->abort, 1);
	}
	atomic_store(&w->done, true);
	return NULL;
}

/* Until every thread is done; once one failed or the step is over, the
 * rest are woken from their blocking waits (SIGUSR1: EINTR) until they
 * see the flag. */
static void watch(struct worker *w, unsigned n, atomic_int *abort,
		  atomic_int *over)
{
	const struct timespec nap = {0, WATCH_NS};

	for (;;) {
		bool all = true;

		for (unsigned t = 0; t < n; t++) {
			if (!w[t].started || atomic_load(&w[t].done))
				continue;
			all = false;
			if (atomic_load(abort) || atomic_load(over))
				pthread_kill(w[t].tid, SIGUSR1);
		}
		if (all)
			return;
		nanosleep(&nap, NULL);
	}
}

/* The step's failure: the first thread's that failed of itself (the
 * others' are "another thread failed"). */
static int first_failure(const struct worker *w, unsigned n)
{
	const struct worker *pick = NULL;

	for (unsigned t = 0; t < n; t++) {
		if (w[t].rc >= 0)
			continue;
		if (!pick || (pick->err.code == CQP_E_INTERRUPTED &&
			      w[t].err.code != CQP_E_INTERRUPTED))
			pick = &w[t];
	}
	if (!pick)
		return 0;
	if (n > 1)
		return cqp_fail(pick->err.code, "thread %u: %s",
				(unsigned)(pick - w), pick->err.msg);
	return cqp_error_restore(&pick->err);
}

int cqp_workers_step(const struct cqp_bench_ops *ops, struct cqp_run *run,
		     void *ctx, uint64_t size, struct cqp_row *row,
		     struct cqp_cost *mine)
{
	unsigned n = run->ncomp;
	struct worker *w = calloc(n, sizeof(*w));
	struct cqp_cost *costs = calloc(n, sizeof(*costs));
	struct cqp_row *rows = calloc(n, sizeof(*rows));
	int32_t *cpus = calloc(n, sizeof(*cpus));
	int rc = 0;

	if (!w || !costs || !rows || !cpus) {
		rc = cqp_fail(CQP_E_NOMEM, "out of memory");
		goto out;
	}
	atomic_store(&run->sync->abort, 0);
	atomic_store(&run->sync->over, 0);
	atomic_store(&run->sync->measuring, 0);
	atomic_store(&run->sync->ended, 0);
	for (unsigned t = 0; t < n && rc == 0; t++) {
		int err;

		w[t].run = *run;
		w[t].run.thread = t;
		w[t].run.comp = &run->comp[t];
		w[t].run.ncomp = 1;
		w[t].abort = &run->sync->abort;
		w[t].ops = ops;
		w[t].ctx = ctx;
		w[t].size = size;
		w[t].row = *row;
		err = pthread_create(&w[t].tid, NULL, work, &w[t]);
		if (err) {
			atomic_store(&run->sync->abort, 1);
			rc = cqp_fail(CQP_E_SYS, "starting thread %u: %s", t,
				      strerror(err));
		}
		w[t].started = err == 0;
	}
	watch(w, n, &run->sync->abort, &run->sync->over);
	for (unsigned t = 0; t < n; t++)
		if (w[t].started)
			pthread_join(w[t].tid, NULL);
	if (rc == 0)
		rc = first_failure(w, n);
	if (rc < 0)
		goto out;
	for (unsigned t = 0; t < n; t++) {
		rows[t] = w[t].row;
		costs[t] = w[t].cost;
		cpus[t] = w[t].cpu;
	}
	if (ops->merge)
		rc = ops->merge(run, ctx, rows, n, row);
	else
		cqp_workers_merge_row(rows, n, row);
	if (rc == 0)
		rc = cqp_workers_merge_cost(costs, cpus, n, mine);
out:
	free(w);
	free(costs);
	free(rows);
	free(cpus);
	return rc;
}

void cqp_step_end_seen(struct cqp_run *run, unsigned *ended, unsigned ends)
{
	struct cqp_step_sync *sync = run->sync;

	if (!run->p->shared_channel)
		++*ended;
	else if (atomic_fetch_add(&sync->ended, 1) + 1 == ends)
		atomic_store(&sync->over, 1); /* wakes the rest (watch) */
}

bool cqp_step_done(const struct cqp_run *run, unsigned ended, unsigned ends)
{
	if (run->p->shared_channel)
		return atomic_load(&run->sync->ended) >= ends;
	return ended >= ends;
}

void cqp_step_mark(struct cqp_run *run, struct cqp_comp *comp)
{
	if (run->p->shared_channel)
		atomic_store(&run->sync->measuring, 1);
	else
		cqp_comp_begin(comp);
}

void cqp_step_look(struct cqp_run *run, struct cqp_comp *comp, bool *began)
{
	if (run->p->shared_channel && !*began &&
	    atomic_load(&run->sync->measuring)) {
		*began = true;
		cqp_comp_begin(comp);
	}
}

uint64_t cqp_rate_share(const struct cqp_run *run, uint64_t rate)
{
	unsigned n = run->p->nthreads;

	return rate / n + (run->thread < rate % n);
}

int cqp_workers_merge_cost(const struct cqp_cost *each, const int32_t *cpu,
			   unsigned n, struct cqp_cost *out)
{
	struct cqp_thread_cost *th = calloc(n, sizeof(*th));

	if (!th)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	/* Thread 0's machine- and process-wide figures stand for all. */
	*out = each[0];
	out->cpu_pct = out->cpu_user_pct = out->cpu_sys_pct = 0;
	out->completions = out->polls = out->empty_polls = 0;
	out->wakeups = out->events_acked = 0;
	out->spin_completions = out->sleep_completions = 0;
	out->channels = 0;
	out->foreign_completions = out->lock_waits = 0;
	out->lock_wait_us = 0;
	/* The policy's budgets and wakeup cost are thread 0's. */
	out->spin_us = 0;
	out->naps = 0;
	for (unsigned t = 0; t < n; t++) {
		const struct cqp_cost *c = &each[t];

		out->cpu_pct += c->cpu_pct;
		out->cpu_user_pct += c->cpu_user_pct;
		out->cpu_sys_pct += c->cpu_sys_pct;
		out->completions += c->completions;
		out->polls += c->polls;
		out->empty_polls += c->empty_polls;
		out->wakeups += c->wakeups;
		out->events_acked += c->events_acked;
		out->spin_completions += c->spin_completions;
		out->sleep_completions += c->sleep_completions;
		out->channels += c->channels;
		out->foreign_completions += c->foreign_completions;
		out->lock_waits += c->lock_waits;
		out->lock_wait_us += c->lock_wait_us;
		out->spin_us += c->spin_us;
		out->naps += c->naps;
		if (c->batch_max > out->batch_max)
			out->batch_max = c->batch_max;
		if (c->seconds > out->seconds)
			out->seconds = c->seconds;
		th[t] = (struct cqp_thread_cost){
		    .cpu = cpu ? cpu[t] : -1,
		    .completions = c->completions,
		    .wakeups = c->wakeups,
		    .cpu_pct = c->cpu_pct,
		    .cpu_user_pct = c->cpu_user_pct,
		    .cpu_sys_pct = c->cpu_sys_pct,
		    .foreign_completions = c->foreign_completions,
		    .lock_wait_us = c->lock_wait_us,
		};
	}
	out->threads = th;
	out->nthreads = n;
	return 0;
}

void cqp_workers_merge_row(const struct cqp_row *each, unsigned n,
			   struct cqp_row *out)
{
	double secs = 0, peak = 0, bits = 0, msgs = 0, offered = 0;
	uint64_t iters = 0, late = 0, sent = 0, received = 0, dry = 0;

	*out = each[0];
	for (unsigned t = 0; t < n; t++) {
		const struct cqp_row *r = &each[t];

		iters += r->iterations;
		offered += r->offered_rate;
		late += r->late_sends;
		sent += r->sent;
		received += r->received;
		dry += r->rx_dry;
		if (!r->has_bw)
			continue;
		bits += r->bw_avg_gbps * 1e9 * r->bw_seconds;
		msgs += r->msg_rate_mpps * 1e6 * r->bw_seconds;
		peak += r->bw_peak_gbps;
		if (r->bw_seconds > secs)
			secs = r->bw_seconds;
	}
	out->iterations = iters;
	/* --rate: the threads' shares add up to it; the spread of the
	 * gaps stays thread 0's. */
	out->offered_rate = offered;
	out->late_sends = late;
	/* UD delivery: the threads' datagrams and dry queues. */
	out->sent = sent;
	out->received = received;
	out->rx_dry = dry;
	if (!out->has_bw)
		return;
	out->bw_seconds = secs;
	out->bw_avg_gbps = secs > 0 ? bits / secs / 1e9 : 0;
	out->msg_rate_mpps = secs > 0 ? msgs / secs / 1e6 : 0;
	out->bw_peak_gbps = peak;
	if (out->open_loop)
		out->achieved_rate = out->msg_rate_mpps * 1e6;
}
