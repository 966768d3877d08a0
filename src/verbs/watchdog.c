/* SPDX-License-Identifier: BSD-2-Clause */
#include "verbs/watchdog.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/stats.h"

/* While a passed deadline stays published, the signal is sent again this
 * often: it may have landed just before the thread went back to sleep. */
#define RESIGNAL_NS (50 * 1000 * 1000ull)
/* The lateness allowed while the thread keeps re-arming before its
 * deadlines pass (it is alive): from the first to the most, doubling. */
#define LAZY_MIN_NS (50 * 1000 * 1000ull)
#define LAZY_MAX_NS (500 * 1000 * 1000ull)

static void on_wake(int sig)
{
	(void)sig; /* the point is the EINTR */
}

/* Sleeps on the futex word until it changes from gen, a wake, or
 * (ns > 0) ns pass; a signal or a spurious return is harmless, since the
 * caller looks again. */
static void futex_sleep(_Atomic uint32_t *word, uint32_t gen, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u),
			      (long)(ns % 1000000000u)};

	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, gen,
		ns ? &ts : NULL, NULL, 0);
}

void cqp_watchdog_wake(struct cqp_watchdog *w)
{
	atomic_fetch_add(&w->gen, 1);
	syscall(SYS_futex, (uint32_t *)&w->gen, FUTEX_WAKE_PRIVATE, 1, NULL,
		NULL, 0);
}

/* Looks in a row without a deadline after which the thread is taken to
 * have stopped waiting (it may just have been between waits at each). */
#define IDLE_LOOKS 4

/* How late the watchdog may notice a deadline, from what it sees now
 * (dl) and saw at its last look (prev), with *zeros the looks in a row
 * without one: more each time the thread has re-armed since (it is
 * alive), none once it seems to have stopped waiting. */
static uint64_t next_lazy(uint64_t lazy, uint64_t prev, uint64_t dl,
			  unsigned *zeros)
{
	if (!dl)
		return ++*zeros >= IDLE_LOOKS ? 0 : lazy;
	*zeros = 0;
	if (dl == prev)
		return lazy;
	if (!lazy)
		return LAZY_MIN_NS;
	return 2 * lazy < LAZY_MAX_NS ? 2 * lazy : LAZY_MAX_NS;
}

static void *watch(void *arg)
{
	struct cqp_watchdog *w = arg;
	uint64_t lazy = 0, prev = 0;
	unsigned zeros = 0;

	pthread_setname_np(pthread_self(), "cqp-watchdog"); /* for top -H */
	while (!atomic_load(&w->stop)) {
		uint64_t dl = atomic_load(&w->deadline_ns), now = cqp_now_ns();
		uint64_t until;
		uint32_t gen;

		if (dl && now >= dl) {
			pthread_kill(atomic_load(&w->target), SIGUSR1);
			lazy = zeros = 0;
			until = now + RESIGNAL_NS;
		} else {
			lazy = next_lazy(lazy, prev, dl, &zeros);
			if (dl)
				until = dl > now + lazy ? dl : now + lazy;
			else
				until = lazy ? now + lazy : UINT64_MAX;
		}
		prev = dl;
		/* Publish which arms must wake us (those we would notice more
		 * than lazy late), then look once more: an arm that came
		 * between sees it and wakes us, or is seen here. */
		atomic_store(&w->wake_below_ns,
			     until == UINT64_MAX ? UINT64_MAX : until - lazy);
		gen = atomic_load(&w->gen);
		if (atomic_load(&w->deadline_ns) != dl || atomic_load(&w->stop))
			continue;
		futex_sleep(&w->gen, gen,
			    until == UINT64_MAX ? 0 : until - now);
	}
	return NULL;
}

void cqp_thread_keep_off_caller(pthread_attr_t *attr)
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
	/* No arm wakes the thread before its first look, which sees it. */
	atomic_store(&w->wake_below_ns, 0);
	atomic_store(&w->gen, 0);
	atomic_store(&w->stop, false);
	err = pthread_attr_init(&attr);
	if (!err) {
		if (w->keep_off)
			cqp_thread_keep_off_caller(&attr);
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
	atomic_store(&w->stop, true);
	cqp_watchdog_wake(w);
	pthread_join(w->thread, NULL);
	w->running = false;
}
