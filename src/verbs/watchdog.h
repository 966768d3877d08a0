/* SPDX-License-Identifier: BSD-2-Clause */
/* A watchdog that interrupts a thread blocked past its deadline.
 *
 * A blocking ibv_get_cq_event costs one system call per wakeup, which is
 * what event mode should measure, but alone it would wait forever for a
 * dead peer.  The watchdog thread sleeps until the published deadline
 * and, once it has passed, signals the blocked thread (SIGUSR1, installed
 * without SA_RESTART) so its read returns EINTR.
 *
 * It wakes at deadlines, not on a tick, and while the thread keeps
 * re-arming before its deadlines pass (a stream of completions, each
 * wait with a deadline 20 ms on), it lets itself be late, by 50 ms at
 * first and up to 500 ms, doubling at each look: about 2 wakeups a
 * second then.  Under emulation each wakeup of another process's thread
 * on the peer's CPU cost that peer several percent of its rate at the
 * 20 a second of a 50 ms tick, and at the 2 to 6 a second left about 4 %
 * (issue 31): it runs off the caller's CPU only where --cpu put the caller
 * there (keep_off).  Once it has had to signal, it is exact again.  Publishing
 * a deadline is a store and a load on the hot path; a futex wake only for one
 * the watchdog would notice too late.
 */
#ifndef CQP_WATCHDOG_H
#define CQP_WATCHDOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* A deadline this much earlier than the watchdog's sleep does not wake
 * it: the signal may come that much late, and deadlines rounded to the
 * millisecond cost no futex wake each. */
#define CQP_WATCHDOG_SLACK_NS (2 * 1000 * 1000)

struct cqp_watchdog {
	pthread_t thread;
	/* Set before start: run off the caller's single CPU (--cpu), not to
	 * wake on the measured core; else keep the process's affinity, so a
	 * taskset confines it too (see above). */
	bool keep_off;
	/* The thread that blocks, set at each arm: a --threads step runs
	 * on threads of its own, new from step to step. */
	_Atomic pthread_t target;
	bool running;
	_Atomic uint64_t deadline_ns; /* cqp_now_ns(); 0 = not blocked */
	/* An arm with a deadline before this wakes the watchdog (bumps the
	 * futex word gen): it would notice it too late. */
	_Atomic uint64_t wake_below_ns;
	_Atomic uint32_t gen;
	_Atomic bool stop;
};

/* A helper thread's attributes: where the caller runs on a single CPU
 * (--cpu), every other CPU, so that its wakeups stay off the measured
 * core; else untouched (a taskset confines it too). */
void cqp_thread_keep_off_caller(pthread_attr_t *attr);

/* Starts watching the calling thread. */
int cqp_watchdog_start(struct cqp_watchdog *w);
void cqp_watchdog_stop(struct cqp_watchdog *w);

/* Wakes the watchdog to look at a deadline earlier than its sleep. */
void cqp_watchdog_wake(struct cqp_watchdog *w);

static inline void cqp_watchdog_arm(struct cqp_watchdog *w,
				    uint64_t deadline_ns)
{
	atomic_store_explicit(&w->target, pthread_self(), memory_order_relaxed);
	/* seq_cst: ordered before the load, against the watchdog's store of
	 * its sleep and load of the deadline (one of us sees the other). */
	atomic_store(&w->deadline_ns, deadline_ns);
	if (deadline_ns + CQP_WATCHDOG_SLACK_NS <
	    atomic_load(&w->wake_below_ns))
		cqp_watchdog_wake(w);
}

static inline void cqp_watchdog_disarm(struct cqp_watchdog *w)
{
	atomic_store_explicit(&w->deadline_ns, 0, memory_order_relaxed);
}

#endif
