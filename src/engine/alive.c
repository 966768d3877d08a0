/* SPDX-License-Identifier: BSD-2-Clause */
/* The requester's ALIVE frames during a READ or atomic step (alive.h). */
#include "engine/alive.h"

#include "base/error.h"
#include "verbs/watchdog.h"

#include <errno.h>
#include <string.h>
#include <time.h>

unsigned cqp_alive_period_ms(int timeout_ms)
{
	unsigned q = timeout_ms > 0 ? (unsigned)timeout_ms / 4 : 1000;

	return q < 1 ? 1 : q > 1000 ? 1000 : q;
}

static void *alive_loop(void *arg)
{
	struct cqp_alive *a = arg;
	struct timespec at;

	pthread_mutex_lock(&a->mu);
	clock_gettime(CLOCK_MONOTONIC, &at);
	while (!a->stop) {
		at.tv_nsec += (long)(a->period_ms % 1000) * 1000000L;
		at.tv_sec += a->period_ms / 1000 + at.tv_nsec / 1000000000L;
		at.tv_nsec %= 1000000000L;
		while (!a->stop &&
		       pthread_cond_timedwait(&a->cv, &a->mu, &at) != ETIMEDOUT)
			;
		if (a->stop)
			break;
		/* A failed send is the session's to find: the target has
		 * gone, and the step's own waits see it. */
		if (cqp_oob_send(a->o, CQP_MSG_ALIVE, NULL, 0) < 0)
			break;
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

int cqp_alive_start(struct cqp_alive *a, struct cqp_oob *o, unsigned period_ms)
{
	pthread_condattr_t ca;
	pthread_attr_t ta;
	int e;

	memset(a, 0, sizeof(*a));
	a->o = o;
	a->period_ms = period_ms;
	pthread_mutex_init(&a->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* Off the measured core, as the watchdog: a requester pinned
	 * with --cpu pays none of its wakeups. */
	e = pthread_attr_init(&ta);
	if (!e) {
		cqp_thread_keep_off_caller(&ta);
		e = pthread_create(&a->thread, &ta, alive_loop, a);
		pthread_attr_destroy(&ta);
	}
	if (e) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mu);
		return cqp_fail(CQP_E_SYS, "starting the ALIVE thread: %s",
				strerror(e));
	}
	a->running = true;
	return 0;
}

void cqp_alive_stop(struct cqp_alive *a)
{
	if (!a->running)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	a->running = false;
}
