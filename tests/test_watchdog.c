/* SPDX-License-Identifier: BSD-2-Clause */
/* The watchdog: a blocking read is broken at its deadline, however the
 * deadline came (after idleness, after a later one, already past when the
 * read began), and between deadlines the watchdog thread does not wake. */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "verbs/watchdog.h"

static int pipefd[2];

/* A read of the empty pipe, as the engine's channel read: how many ms it
 * blocked before EINTR (-1: it returned otherwise). */
static long blocked_read_ms(void)
{
	uint64_t t0 = cqp_now_ns();
	char c;

	if (read(pipefd[0], &c, 1) >= 0 || errno != EINTR)
		return -1;
	return (long)((cqp_now_ns() - t0) / 1000000u);
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The watchdog thread's id (-1: not found). */
static int watchdog_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tid = -1;

	while (d && tid < 0 && (e = readdir(d))) {
		char path[300], line[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(line, sizeof(line), f) &&
		    !strcmp(line, "cqp-watchdog\n"))
			tid = atoi(e->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return tid;
}

/* The watchdog thread's context switches so far (-1: not found). */
static long watchdog_switches(void)
{
	char path[64], line[128];
	int tid = watchdog_tid();
	long v = -1, iv = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	if (tid < 0 || !(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "voluntary_ctxt_switches: %ld", &v);
		sscanf(line, "nonvoluntary_ctxt_switches: %ld", &iv);
	}
	fclose(f);
	return v >= 0 && iv >= 0 ? v + iv : -1;
}

/* The CPUs the watchdog thread may run on; *found 0: no such thread
 * (it names itself once running). */
static cpu_set_t watchdog_cpus(int *found)
{
	int tid = watchdog_tid();
	cpu_set_t set;

	CPU_ZERO(&set);
	*found = tid >= 0 && sched_getaffinity(tid, sizeof(set), &set) == 0;
	return set;
}

/* Where the watchdog runs when its caller is on CPU cpu alone: there, as
 * taskset left the process, unless keep_off (--cpu) sends it away. */
static void placement(int cpu, bool keep_off)
{
	struct cqp_watchdog w = {0};
	cpu_set_t set;
	int found;

	w.keep_off = keep_off;
	CHECK(cqp_watchdog_start(&w) == 0);
	/* The thread names itself once running. */
	for (int i = 0; i < 100; i++) {
		set = watchdog_cpus(&found);
		if (found)
			break;
		nap_ms(10);
	}
	CHECK(found);
	printf("keep_off %d: the watchdog may run on %d CPUs, CPU %d %s\n",
	       keep_off, CPU_COUNT(&set), cpu,
	       CPU_ISSET(cpu, &set) ? "in" : "out");
	if (keep_off)
		CHECK(!CPU_ISSET(cpu, &set) && CPU_COUNT(&set) >= 1);
	else
		CHECK(CPU_ISSET(cpu, &set) && CPU_COUNT(&set) == 1);
	cqp_watchdog_stop(&w);
}

static uint64_t in_ms(long ms)
{
	return cqp_now_ns() + (uint64_t)ms * 1000000u;
}

/* Armed ms ahead, then blocked: after how many ms the read broke. */
static long broken_after(struct cqp_watchdog *w, long deadline_ms)
{
	long ms;

	cqp_watchdog_arm(w, in_ms(deadline_ms));
	ms = blocked_read_ms();
	cqp_watchdog_disarm(w);
	return ms;
}

int main(void)
{
	struct cqp_watchdog w = {0};
	long ms, before;

	CHECK(cqp_clock_init(CQP_CLOCK_AUTO) == 0);
	CHECK(pipe(pipefd) == 0);
	CHECK(cqp_watchdog_start(&w) == 0);

	/* Armed from idle: broken at the deadline, not a tick later. */
	nap_ms(100);
	ms = broken_after(&w, 100);
	printf("armed from idle: broken after %ld ms (deadline 100)\n", ms);
	CHECK(ms >= 99 && ms < 1000);

	/* A shorter wait after a longer one: the earlier deadline wakes
	 * the watchdog, which was sleeping towards the later one. */
	cqp_watchdog_arm(&w, in_ms(10000));
	nap_ms(50);
	cqp_watchdog_disarm(&w);
	ms = broken_after(&w, 100);
	printf("after a later deadline: broken after %ld ms (deadline 100)\n",
	       ms);
	CHECK(ms >= 99 && ms < 1000);

	/* Past before the read began (its signal landed before it): the
	 * signal comes again. */
	cqp_watchdog_arm(&w, in_ms(1));
	nap_ms(20);
	ms = blocked_read_ms();
	cqp_watchdog_disarm(&w);
	printf("already past: broken after %ld ms\n", ms);
	CHECK(ms >= 0 && ms < 1000);

	/* Quiet between deadlines, armed (far off) or not: the old 50 ms
	 * tick would have woken it about 10 times in each half second. */
	nap_ms(100);
	before = watchdog_switches();
	CHECK(before >= 0);
	cqp_watchdog_arm(&w, in_ms(10000));
	nap_ms(500);
	cqp_watchdog_disarm(&w);
	nap_ms(500);
	printf("watchdog switches over 1 s between deadlines: %ld\n",
	       watchdog_switches() - before);
	CHECK(watchdog_switches() - before <= 3);

	/* A stream: re-armed every millisecond, 20 ms ahead, never past.
	 * A deadline-exact watchdog would wake 50 times a second, the old
	 * tick 20; it lets itself be late instead. */
	before = watchdog_switches();
	for (int i = 0; i < 1000; i++) {
		cqp_watchdog_arm(&w, in_ms(20));
		nap_ms(1);
		cqp_watchdog_disarm(&w);
	}
	printf("watchdog switches over a 1000-wait stream: %ld\n",
	       watchdog_switches() - before);
	CHECK(watchdog_switches() - before <= 12);
	/* Then the stream stops and the thread blocks: noticed within the
	 * lateness it allowed itself (500 ms at most). */
	ms = broken_after(&w, 20);
	printf("after the stream: a 20 ms deadline broken after %ld ms\n", ms);
	CHECK(ms >= 19 && ms < 1000);
	/* Having had to signal, it is exact again. */
	ms = broken_after(&w, 100);
	printf("next: a 100 ms deadline broken after %ld ms\n", ms);
	CHECK(ms >= 99 && ms < 300);

	/* Stopping an idle watchdog returns (nothing wakes it else). */
	cqp_watchdog_stop(&w);
	CHECK(!w.running);
	/* And it starts again, for the next step. */
	CHECK(cqp_watchdog_start(&w) == 0);
	ms = broken_after(&w, 50);
	CHECK(ms >= 49 && ms < 1000);
	cqp_watchdog_stop(&w);

	/* On the first of the CPUs this process may use, when it has two. */
	cpu_set_t mine, one;

	if (sched_getaffinity(0, sizeof(mine), &mine) == 0 &&
	    CPU_COUNT(&mine) >= 2) {
		int cpu = 0;

		while (!CPU_ISSET(cpu, &mine))
			cpu++;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
		placement(cpu, false);
		placement(cpu, true);
	}
	return check_done("test_watchdog");
}
