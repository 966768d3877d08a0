/* SPDX-License-Identifier: BSD-2-Clause */
/* Cost accounting and the clock: the parsers against known text, the
 * figures against what this test itself burns, the TSC against
 * CLOCK_MONOTONIC. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "base/cpuacct.h"

static void test_stat_parse(void)
{
	const char *text = "cpu  100 5 200 1000 50 7 30 2 0 0\n"
			   "cpu0 60 5 120 400 20 7 20 1 0 0\n"
			   "cpu1 40 0 80 600 30 0 10 1 0 0\n"
			   "intr 12345\n";
	struct cqp_stat_times t;

	CHECK(cqp_stat_parse(text, -1, &t) == 0);
	/* user nice system irq softirq; not idle, iowait, steal */
	CHECK(t.busy == 100 + 5 + 200 + 7 + 30);
	CHECK(t.irq == 7 && t.softirq == 30 && t.steal == 2);
	CHECK(cqp_stat_parse(text, 1, &t) == 0);
	CHECK(t.busy == 40 + 80 + 10 && t.irq == 0 && t.softirq == 10);
	/* "cpu1" must not match "cpu10"'s line, nor a missing CPU. */
	CHECK(cqp_stat_parse("cpu10 1 2 3 4 5 6 7 8\n", 1, &t) == -1);
	CHECK(cqp_stat_parse(text, 2, &t) == -1);
	CHECK(cqp_stat_parse("cpu  1 2\n", -1, &t) == -1);
	CHECK(cqp_stat_parse("", -1, &t) == -1);
}

/* A guest's /proc/stat over one second (USER_HZ 100, two vCPUs): we ran
 * half a core, and the hypervisor gave 60 % of a core to someone else
 * (steal, the 8th value).  Steal is nobody's load on this machine. */
static void machine_pair(const char *after, double proc_pct, struct cqp_cost *c)
{
	const char *before = "cpu  1000 0 500 8000 10 0 20 300 0 0\n"
			     "cpu0 500 0 250 4000 5 0 10 150 0 0\n"
			     "cpu1 500 0 250 4000 5 0 10 150 0 0\n";
	struct cqp_cpu_snap s = {0}, e = {0};

	s.have_sys = cqp_stat_parse(before, -1, &s.sys) == 0;
	e.have_sys = cqp_stat_parse(after, -1, &e.sys) == 0;
	CHECK(s.have_sys && e.have_sys);
	s.machine_ns = 5000000000u;
	e.machine_ns = 6000000000u;
	memset(c, 0, sizeof(*c));
	c->proc_cpu_pct = proc_pct;
	cqp_acct_machine(&s, &e, 0, 2, 100, c);
}

static void test_steal(void)
{
	struct cqp_cost c;

	/* user +40, system +10 (ours), steal +60, idle +90 ticks. */
	machine_pair("cpu  1040 0 510 8090 10 0 20 360 0 0\n", 50, &c);
	if (c.noisy)
		fprintf(stderr,
			"steal 60 %% of a core: busy %.1f %%, others %.1f %%, "
			"noisy\n",
			c.sys_busy_pct, c.others_busy_pct);
	CHECK(c.has_sys && !c.noisy);
	CHECK_NEAR(c.sys_busy_pct, 50, 1e-9);
	CHECK_NEAR(c.others_busy_pct, 0, 1e-9);
	CHECK_NEAR(c.sys_steal_pct, 60, 1e-9);
	/* Another process's 40 % beside the steal is still noise. */
	machine_pair("cpu  1080 0 510 8050 10 0 20 360 0 0\n", 50, &c);
	CHECK(c.noisy);
	CHECK_NEAR(c.others_busy_pct, 40, 1e-9);
}

static void test_softirqs_parse(void)
{
	const char *text = "                    CPU0       CPU1\n"
			   "          HI:          1          2\n"
			   "       TIMER:       5000       6000\n"
			   "      NET_TX:          3          4\n"
			   "      NET_RX:        100        200\n"
			   "     TASKLET:         10         20\n"
			   "         RCU:       7000       8000\n";
	uint64_t n = 0;

	/* The data path's rows only, every CPU: no TIMER, no RCU. */
	CHECK(cqp_softirqs_parse(text, &n) == 0);
	CHECK(n == 1 + 2 + 3 + 4 + 100 + 200 + 10 + 20);
	CHECK(cqp_softirqs_parse("         RCU:  7\n", &n) == -1);
	CHECK(cqp_softirqs_parse("", &n) == -1);
}

/* CONFIG_IRQ_TIME_ACCOUNTING from the kernel's config, or from the file
 * only such a kernel makes. */
static void test_irqtime(void)
{
	char cfg[] = "/tmp/cqp-cfg-XXXXXX";
	int fd = mkstemp(cfg);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CHECK(f != NULL);
	if (!f)
		return;
	fputs("CONFIG_TICK_CPU_ACCOUNTING=y\n"
	      "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n",
	      f);
	fclose(f);
	CHECK(!cqp_irqtime_measured(cfg, "/nonexistent/irq"));
	CHECK(cqp_irqtime_measured(cfg, cfg)); /* a pressure/irq file */
	f = fopen(cfg, "a");
	if (f) {
		fputs("CONFIG_IRQ_TIME_ACCOUNTING=y\n", f);
		fclose(f);
	}
	CHECK(cqp_irqtime_measured(cfg, "/nonexistent/irq"));
	CHECK(!cqp_irqtime_measured("/nonexistent/cfg", "/nonexistent/irq"));
	unlink(cfg);
}

static void test_pid_stat(void)
{
	uint64_t ticks = 0;

	CHECK(cqp_pid_stat_ticks("1234 (a) b (c)) S 1 2 3 4 5 6 7 8 9 10 "
				 "111 222 1 1 20 0\n",
				 &ticks) == 0);
	CHECK(ticks == 333);
	CHECK(cqp_pid_stat_ticks("1234 (x) S 1 2", &ticks) == -1);
	CHECK(cqp_pid_stat_ticks("garbage", &ticks) == -1);
}

static void test_cpuinfo(void)
{
	CHECK(cqp_cpuinfo_invariant_tsc(
	    "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc "
	    "rdtscp\n"));
	CHECK(cqp_cpuinfo_invariant_tsc(
	    "flags\t\t: nonstop_tsc constant_tsc\nbugs\t: x\n"));
	/* TCG's guest: a TSC, no promise. */
	CHECK(!cqp_cpuinfo_invariant_tsc("flags\t\t: fpu tsc rdtscp\n"));
	CHECK(!cqp_cpuinfo_invariant_tsc("flags\t\t: constant_tsc\n"));
	/* Whole words only, and only on the flags line. */
	CHECK(!cqp_cpuinfo_invariant_tsc(
	    "flags\t\t: xconstant_tsc nonstop_tscx\n"));
	CHECK(!cqp_cpuinfo_invariant_tsc(
	    "flags\t\t: fpu\nbugs\t\t: constant_tsc nonstop_tsc\n"));
	CHECK(!cqp_cpuinfo_invariant_tsc(""));
}

static void spin_ms(unsigned ms)
{
	uint64_t end = cqp_monotonic_ns() + (uint64_t)ms * 1000000u;
	volatile uint64_t x = 0;

	while (cqp_monotonic_ns() < end)
		x++;
}

static void *spinner(void *arg)
{
	spin_ms(*(unsigned *)arg);
	return NULL;
}

/* A thread of ours that spins is ours: proc above the thread's own. */
static void test_acct(void)
{
	struct cqp_cpu_acct a;
	struct cqp_cost c = {0};
	pthread_t t;
	unsigned ms = 400;

	cqp_acct_init(&a, 0);
	cqp_acct_begin(&a);
	CHECK(pthread_create(&t, NULL, spinner, &ms) == 0);
	spin_ms(ms);
	pthread_join(t, NULL);
	cqp_acct_end(&a, &c);
	CHECK(c.seconds > 0.39 && c.seconds < 5);
	/* Spinning: nearly all user time, unless the machine starves us. */
	CHECK(c.cpu_pct > 20 && c.cpu_pct <= 101);
	CHECK_NEAR(c.cpu_user_pct + c.cpu_sys_pct, c.cpu_pct, 2.0);
	CHECK(c.cpu_user_pct > c.cpu_sys_pct);
	CHECK(c.proc_cpu_pct >= c.cpu_pct);
	CHECK(c.proc_cpu_pct > c.cpu_pct + 10); /* the second thread */
	CHECK(c.has_sys && c.has_cpu);
	/* The machine was busy at least with us (10 ms ticks of slack). */
	CHECK(c.sys_busy_pct + 100 * 0.02 / c.seconds >= c.proc_cpu_pct * 0.9);
	CHECK(c.others_busy_pct >= 0);
	CHECK(!c.noisy || c.others_busy_pct > CQP_NOISY_PCT);

	/* Asleep: no CPU to speak of. */
	double cpu, user, sys;
	struct timespec nap = {0, 200 * 1000 * 1000};

	cqp_acct_begin(&a);
	nanosleep(&nap, NULL);
	cqp_acct_thread(&a, &cpu, &user, &sys);
	CHECK(cpu < 5 && user < 5 && sys < 5);

	/* The machine's window opened early: begin keeps it, end closes
	 * it, the next begin opens a new one. */
	cqp_acct_begin_machine(&a);
	CHECK(a.machine_ready);
	uint64_t opened = a.start.machine_ns;
	nanosleep(&nap, NULL);
	cqp_acct_begin(&a);
	CHECK(a.start.machine_ns == opened && a.start.wall_ns > opened);
	spin_ms(100);
	cqp_acct_end(&a, &c);
	CHECK(!a.machine_ready && c.has_sys);
	CHECK(c.seconds > 0.09 && c.seconds < 0.2);
	cqp_acct_begin(&a);
	CHECK(a.machine_ready && a.start.machine_ns > opened);
	cqp_acct_end(&a, &c);
	cqp_acct_free(&a);
}

/* The split is getrusage's ratio applied to the exact total: it adds up
 * exactly, even for a phase of a few ticks, where getrusage's own total
 * (stale by up to a tick at each end) misses it by several points. */
static void test_split(void)
{
	struct cqp_cpu_acct a;
	struct cqp_cost c = {0};
	double user, sys;

	cqp_cpu_split(80, 1000, 3000, 0, 0, &user, &sys);
	CHECK_NEAR(user, 20, 1e-9);
	CHECK_NEAR(sys, 60, 1e-9);
	/* No sample in the phase: the lifetime ratio. */
	cqp_cpu_split(40, 0, 0, 3000, 1000, &user, &sys);
	CHECK_NEAR(user, 30, 1e-9);
	CHECK_NEAR(sys, 10, 1e-9);
	/* None ever: all user, as the kernel splits it. */
	cqp_cpu_split(10, 0, 0, 0, 0, &user, &sys);
	CHECK(user == 10 && sys == 0);
	/* All user: 100.1 * 43 / 43 rounds above 100.1, and the sys share
	 * left over was -1.4e-14, printed "-0.0". */
	cqp_cpu_split(100.1, 43, 0, 0, 0, &user, &sys);
	CHECK(sys == 0 && !signbit(sys) && user <= 100.1 + 1e-9);

	for (int i = 0; i < 5; i++) {
		cqp_acct_init(&a, -1);
		cqp_acct_begin(&a);
		spin_ms(15);
		cqp_acct_end(&a, &c);
		CHECK_NEAR(c.cpu_user_pct + c.cpu_sys_pct, c.cpu_pct, 1e-6);
		cqp_acct_free(&a);
	}
}

/* The TSC against a 200 ms CLOCK_MONOTONIC measurement, where the TSC
 * is invariant; where the kernel does not use it too, --clock tsc is
 * refused and auto is monotonic (tests/test_clock.c: the rule). */
static void test_tsc(void)
{
	struct cqp_clock_info ci;
	struct timespec w = {0, 200 * 1000 * 1000};
	uint64_t t0, m0, t1, m1;
	double err;
	bool trusted;

	CHECK(cqp_clock_init(CQP_CLOCK_MONOTONIC) == 0);
	cqp_clock_get(&ci);
	CHECK(!ci.tsc && ci.why_not_tsc != NULL);
	trusted = ci.invariant_tsc && strcmp(ci.kernel_clocksource, "tsc") == 0;
	printf("kernel clocksource \"%s\", invariant TSC %s\n",
	       ci.kernel_clocksource, ci.invariant_tsc ? "yes" : "no");
	if (!trusted) {
		CHECK(cqp_clock_init(CQP_CLOCK_TSC) < 0);
		CHECK(cqp_clock_init(CQP_CLOCK_AUTO) == 0);
		cqp_clock_get(&ci);
		CHECK(!ci.tsc && ci.why_not_tsc && ci.why_not_tsc[0]);
		printf("TSC not trusted here: %s\n",
		       ci.why_not_tsc ? ci.why_not_tsc : "?");
	}
	if (!ci.invariant_tsc) {
		printf("no invariant TSC here: calibration not checked\n");
		return;
	}
	/* The calibration, whether or not auto would use it. */
	CHECK(cqp_clock_init(trusted ? CQP_CLOCK_TSC : CQP_CLOCK_TSC_FORCE) ==
	      0);
	cqp_clock_get(&ci);
	CHECK(ci.tsc && ci.hz > 1e6 && ci.why_not_tsc == NULL);
	t0 = cqp_now_ns();
	m0 = cqp_monotonic_ns();
	nanosleep(&w, NULL);
	t1 = cqp_now_ns();
	m1 = cqp_monotonic_ns();
	err = ((double)(t1 - t0) - (double)(m1 - m0)) / (double)(m1 - m0);
	printf("TSC %.0f Hz; over %.1f ms it differs from CLOCK_MONOTONIC by "
	       "%.4f %%\n",
	       ci.hz, (double)(m1 - m0) / 1e6, 100 * err);
	CHECK(err < 0.01 && err > -0.01);
	/* The same epoch as CLOCK_MONOTONIC, within a millisecond. */
	CHECK_NEAR((double)cqp_now_ns(), (double)cqp_monotonic_ns(), 1e6);
	CHECK(cqp_clock_init(CQP_CLOCK_AUTO) == 0);
	cqp_clock_get(&ci);
	CHECK(ci.tsc == trusted);
}

int main(void)
{
	test_softirqs_parse();
	test_irqtime();
	test_stat_parse();
	test_steal();
	test_pid_stat();
	test_cpuinfo();
	test_acct();
	test_split();
	test_tsc();
	return check_done("test_cpuacct");
}
