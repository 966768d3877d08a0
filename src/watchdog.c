/* SPDX-License-Identifier: BSD-2-Clause */
#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "stats.h"

#define CHECK_NS (50 * 1000 * 1000) /* deadlines are whole seconds */

static void on_wake(int sig)
{
	(void)sig; /* the point is the EINTR */
}

static void *watch(void *arg)
{
	struct cqp_watchdog *w = arg;
	const struct timespec nap = {0, CHECK_NS};

	pthread_setname_np(pthread_self(), "cqp-watchdog"); /* for top -H */
	for (;;) {
		uint64_t dl;

		/* A cancellation point: stop() ends the thread here. */
		clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
		dl =
		    atomic_load_explicit(&w->deadline_ns, memory_order_acquire);
		/* Again every nap while it is past: the signal may have landed
		 * just before the thread went back to sleep. */
		if (dl && cqp_now_ns() >= dl)
			pthread_kill(atomic_load(&w->target), SIGUSR1);
	}
	return NULL;
}

/* A caller pinned to one CPU (--cpu) is the benchmark thread: its
 * watchdog wakes 20 times a second and must not do so on that CPU. */
static void keep_off_caller(pthread_attr_t *attr)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t mine, others;

	if (sched_getaffinity(0, sizeof(mine), &mine) || CPU_COUNT(&mine) != 1)
		return;
	CPU_ZERO(&others);
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		if (!CPU_ISSET(i, &mine))
			CPU_SET(i, &others);
	if (CPU_COUNT(&others))
		pthread_attr_setaffinity_np(attr, sizeof(others), &others);
}

int cqp_watchdog_start(struct cqp_watchdog *w)
{
	pthread_attr_t attr;
	struct sigaction sa;
	int err;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return cqp_fail(CQP_E_SYS, "sigaction(SIGUSR1): %s",
				strerror(errno));
	atomic_store(&w->target, pthread_self());
	atomic_store(&w->deadline_ns, 0);
	err = pthread_attr_init(&attr);
	if (!err) {
		keep_off_caller(&attr);
		err = pthread_create(&w->thread, &attr, watch, w);
		pthread_attr_destroy(&attr);
	}
	if (err)
		return cqp_fail(CQP_E_SYS, "starting the watchdog: %s",
				strerror(err));
	w->running = true;
	return 0;
}

void cqp_watchdog_stop(struct cqp_watchdog *w)
{
	if (!w->running)
		return;
	pthread_cancel(w->thread);
	pthread_join(w->thread, NULL);
	w->running = false;
}
