/* SPDX-License-Identifier: BSD-2-Clause */
/* A watchdog that interrupts a thread blocked past its deadline.
 *
 * A blocking ibv_get_cq_event costs one system call per wakeup, which is
 * what event mode should measure, but alone it would wait forever for a
 * dead peer.  The watchdog thread checks the published deadline a few
 * times a second and, once it has passed, signals the blocked thread
 * (SIGUSR1, installed without SA_RESTART) so its read returns EINTR.
 * Publishing a deadline is one relaxed store: nothing on the hot path.
 */
#ifndef CQP_WATCHDOG_H
#define CQP_WATCHDOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct cqp_watchdog {
	pthread_t thread;
	/* The thread that blocks, set at each arm: a --threads step runs
	 * on threads of its own, new from step to step. */
	_Atomic pthread_t target;
	bool running;
	_Atomic uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 = not blocked */
};

/* Starts watching the calling thread. */
int cqp_watchdog_start(struct cqp_watchdog *w);
void cqp_watchdog_stop(struct cqp_watchdog *w);

static inline void cqp_watchdog_arm(struct cqp_watchdog *w,
				    uint64_t deadline_ns)
{
	atomic_store_explicit(&w->target, pthread_self(), memory_order_relaxed);
	atomic_store_explicit(&w->deadline_ns, deadline_ns,
			      memory_order_release);
}

static inline void cqp_watchdog_disarm(struct cqp_watchdog *w)
{
	atomic_store_explicit(&w->deadline_ns, 0, memory_order_relaxed);
}

#endif
