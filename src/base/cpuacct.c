/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/cpuacct.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/textfile.h"

int cqp_stat_parse(const char *text, int cpu, struct cqp_stat_times *out)
{
	char name[16];
	const char *p = text;
	size_t nlen;

	if (cpu < 0)
		snprintf(name, sizeof(name), "cpu ");
	else
		snprintf(name, sizeof(name), "cpu%d ", cpu);
	nlen = strlen(name);
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		uint64_t v[8] = {0};
		int n;

		if (strncmp(p, name, nlen) != 0)
			continue;
		/* user nice system idle iowait irq softirq steal (guest
		 * time is already inside user). */
		n = sscanf(p + nlen,
			   "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]);
		if (n < 7)
			return -1;
		out->irq = v[5];
		out->softirq = v[6];
		out->steal = v[7];
		out->busy = v[0] + v[1] + v[2] + v[5] + v[6];
		return 0;
	}
	return -1;
}

int cqp_softirqs_parse(const char *text, uint64_t *count)
{
	/* The softirqs rxe's path raises; TIMER, SCHED, RCU and the rest
	 * run without traffic too. */
	static const char *const path[] = {"HI", "NET_TX", "NET_RX", "TASKLET"};
	const char *p = text;
	int rows = 0;

	*count = 0;
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *name = p + strspn(p, " ");
		size_t len = strcspn(name, ":\n");
		bool ours = false;

		if (name[len] != ':')
			continue;
		for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++)
			if (strlen(path[i]) == len &&
			    strncmp(name, path[i], len) == 0)
				ours = true;
		if (!ours)
			continue;
		rows++;
		for (const char *q = name + len + 1; *q && *q != '\n';) {
			char *end;
			unsigned long long v = strtoull(q, &end, 10);

			if (end == q)
				break;
			*count += v;
			q = end;
		}
	}
	return rows ? 0 : -1;
}

bool cqp_irqtime_measured(const char *config_path, const char *pressure_path)
{
	char path[320], line[256];
	struct utsname u;
	bool yes = false;
	FILE *f;

	if (pressure_path && access(pressure_path, R_OK) == 0)
		return true;
	if (!config_path) {
		if (uname(&u) < 0)
			return false;
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		config_path = path;
	}
	f = fopen(config_path, "r");
	while (f && !yes && fgets(line, sizeof(line), f))
		yes = strcmp(line, "CONFIG_IRQ_TIME_ACCOUNTING=y\n") == 0;
	if (f)
		fclose(f);
	return yes;
}

int cqp_pid_stat_parse(const char *text, uint64_t *ticks, unsigned *flags)
{
	/* The command name may hold spaces and parentheses: fields count
	 * from the last ')'.  flags is field 9, utime and stime 14 and 15. */
	const char *p = strrchr(text, ')');
	uint64_t ut, st;

	if (!p || sscanf(p + 1,
			 " %*c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %" SCNu64
			 " %" SCNu64,
			 flags, &ut, &st) != 3)
		return -1;
	*ticks = ut + st;
	return 0;
}

int cqp_pid_stat_ticks(const char *text, uint64_t *ticks)
{
	unsigned flags;

	return cqp_pid_stat_parse(text, ticks, &flags);
}

/* A task's CPU ticks and flags from /proc/PID/stat; -1 when gone. */
static int pid_stat(int pid, uint64_t *ticks, unsigned *flags)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (cqp_read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	return cqp_pid_stat_parse(buf, ticks, flags);
}

/* A task's CPU in ns: /proc/PID/schedstat's run time, exact where the
 * kernel has it (CONFIG_SCHED_INFO), else /proc/PID/stat's ticks. */
static int task_cpu_ns(int pid, uint64_t *ns)
{
	char path[64], buf[256];
	uint64_t ticks;
	unsigned flags;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if (cqp_read_text(path, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%" SCNu64, ns) == 1)
		return 0;
	if (pid_stat(pid, &ticks, &flags) < 0)
		return -1;
	*ns = ticks * (uint64_t)(1000000000 / sysconf(_SC_CLK_TCK));
	return 0;
}

/* Every kernel thread now, with its CPU so far. */
static void kthreads_begin(struct cqp_cpu_acct *a)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	a->nkt = 0;
	a->have_kt = d != NULL;
	while (d && (e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		uint64_t ticks, ns;
		unsigned flags;

		if (*end || pid <= 0 || pid > INT32_MAX ||
		    pid_stat((int)pid, &ticks, &flags) < 0 ||
		    !(flags & CQP_PF_KTHREAD) || task_cpu_ns((int)pid, &ns) < 0)
			continue;
		if (a->nkt == a->kt_cap) {
			unsigned cap = a->kt_cap ? 2 * a->kt_cap : 256;
			struct cqp_kthread *kt =
			    realloc(a->kt, cap * sizeof(*kt));

			if (!kt) {
				a->have_kt = false;
				break;
			}
			a->kt = kt;
			a->kt_cap = cap;
		}
		a->kt[a->nkt++] = (struct cqp_kthread){(int)pid, ns};
	}
	if (d)
		closedir(d);
}

/* Their CPU since, in ns; one that ended meanwhile is lost, one that
 * started meanwhile is not seen, and a pid that a new task took over
 * meanwhile is skipped (no longer a kernel thread, or less run time). */
static uint64_t kthreads_ns(const struct cqp_cpu_acct *a)
{
	uint64_t sum = 0, ns, ticks;
	unsigned flags;

	for (unsigned i = 0; i < a->nkt; i++)
		if (pid_stat(a->kt[i].pid, &ticks, &flags) == 0 &&
		    (flags & CQP_PF_KTHREAD) &&
		    task_cpu_ns(a->kt[i].pid, &ns) == 0 && ns >= a->kt[i].ns)
			sum += ns - a->kt[i].ns;
	return sum;
}

void cqp_acct_init(struct cqp_cpu_acct *a, int cpu)
{
	memset(a, 0, sizeof(*a));
	a->cpu = cpu;
	a->irqtime = cqp_irqtime_measured(NULL, "/proc/pressure/irq");
}

void cqp_acct_free(struct cqp_cpu_acct *a)
{
	free(a->kt);
	a->kt = NULL;
	a->nkt = a->kt_cap = 0;
}

void cqp_acct_set_peer(struct cqp_cpu_acct *a, int pid)
{
	a->peer_pid = pid;
}

/* The machine's counters, and the peer's. */
static void snap_machine(const struct cqp_cpu_acct *a, struct cqp_cpu_snap *s)
{
	char buf[65536]; /* a line per CPU: room for about 700 */

	s->have_sys = s->have_cpu = s->have_peer = false;
	if (cqp_read_text("/proc/stat", buf, sizeof(buf)) > 0) {
		s->machine_ns = cqp_clock_ns(CLOCK_MONOTONIC);
		s->have_sys = cqp_stat_parse(buf, -1, &s->sys) == 0;
		s->have_cpu =
		    a->cpu >= 0 && cqp_stat_parse(buf, a->cpu, &s->cpu) == 0;
	}
	s->have_sirqs = cqp_read_text("/proc/softirqs", buf, sizeof(buf)) > 0 &&
			cqp_softirqs_parse(buf, &s->sirqs) == 0;
	if (a->peer_pid > 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/stat", a->peer_pid);
		s->have_peer = cqp_read_text(path, buf, sizeof(buf)) > 0 &&
			       cqp_pid_stat_ticks(buf, &s->peer_ticks) == 0;
	}
}

/* Our own clocks, nested: the process's window holds the wall clock's,
 * which holds the thread's (each opens before and closes after the one
 * inside it), so proc_cpu_pct >= cpu_pct and the thread's CPU cannot
 * pass its wall time.  The wall clock read last at the close, after the
 * thread's, is what keeps a thread under 100 %: read before it, a
 * preemption between the two reads counted in CPU and not in wall (a
 * client thread read 101.2 % on a fresh machine). */
static void snap_self(struct cqp_cpu_snap *s, bool opening)
{
	struct rusage ru;

	if (opening) {
		s->proc_ns = cqp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		s->wall_ns = cqp_clock_ns(CLOCK_MONOTONIC);
		s->thread_ns = cqp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} else {
		s->thread_ns = cqp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		s->wall_ns = cqp_clock_ns(CLOCK_MONOTONIC);
		s->proc_ns = cqp_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	}
	s->user_us = s->sys_us = 0;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		s->user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
			     (uint64_t)ru.ru_utime.tv_usec;
		s->sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u +
			    (uint64_t)ru.ru_stime.tv_usec;
	}
}

/* The machine's window holds ours: it opens first and closes last, so
 * its reads are not charged to our phase. */
void cqp_acct_begin_machine(struct cqp_cpu_acct *a)
{
	kthreads_begin(a);
	snap_machine(a, &a->start);
	a->machine_ready = true;
}

void cqp_acct_begin(struct cqp_cpu_acct *a)
{
	if (!a->machine_ready)
		cqp_acct_begin_machine(a);
	snap_self(&a->start, true);
}

void cqp_acct_begin_self(struct cqp_cpu_acct *a)
{
	snap_self(&a->start, true);
}

/* 100 * part / whole, 0 for an empty window. */
static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

static double delta_us(uint64_t now, uint64_t then)
{
	return now > then ? (double)(now - then) : 0.0;
}

void cqp_cpu_split(double total, double user, double sys, double life_user,
		   double life_sys, double *user_out, double *sys_out)
{
	if (user + sys <= 0) {
		user = life_user;
		sys = life_sys;
	}
	if (user + sys <= 0)
		user = 1; /* as the kernel does: no samples, all user */
	*user_out = total * user / (user + sys);
	/* total - user can round below 0 (printed "-0.0") */
	*sys_out = sys > 0 && total > *user_out ? total - *user_out : 0.0;
}

/* The thread's CPU and its split from s to e, over wall_us. */
static void thread_figures(const struct cqp_cpu_snap *s,
			   const struct cqp_cpu_snap *e, double wall_us,
			   double *cpu_pct, double *user_pct, double *sys_pct)
{
	*cpu_pct = pct(delta_us(e->thread_ns, s->thread_ns) / 1e3, wall_us);
	cqp_cpu_split(*cpu_pct, delta_us(e->user_us, s->user_us),
		      delta_us(e->sys_us, s->sys_us), (double)e->user_us,
		      (double)e->sys_us, user_pct, sys_pct);
}

void cqp_acct_thread(const struct cqp_cpu_acct *a, double *cpu_pct,
		     double *user_pct, double *sys_pct)
{
	struct cqp_cpu_snap e;

	snap_self(&e, false);
	thread_figures(&a->start, &e,
		       delta_us(e.wall_ns, a->start.wall_ns) / 1e3, cpu_pct,
		       user_pct, sys_pct);
}

void cqp_acct_machine(const struct cqp_cpu_snap *s,
		      const struct cqp_cpu_snap *e, double kthread_ns,
		      long ncpu, long clk_tck, struct cqp_cost *out)
{
	double tick_us = 1e6 / (double)clk_tck;
	/* The machine's counters as rates over their own window. */
	double mach_us = delta_us(e->machine_ns, s->machine_ns) / 1e3;

	out->has_sys = s->have_sys && e->have_sys;
	if (out->has_sys) {
		double others;

		out->sys_busy_pct =
		    pct(delta_us(e->sys.busy, s->sys.busy) * tick_us, mach_us);
		out->sys_irq_pct =
		    pct(delta_us(e->sys.irq, s->sys.irq) * tick_us, mach_us);
		out->sys_softirq_pct =
		    pct(delta_us(e->sys.softirq, s->sys.softirq) * tick_us,
			mach_us);
		out->sys_kthread_pct =
		    kthread_ns >= 0 ? pct(kthread_ns / 1e3, mach_us) : 0;
		out->sys_steal_pct = pct(
		    delta_us(e->sys.steal, s->sys.steal) * tick_us, mach_us);
		others = out->sys_busy_pct - out->sys_irq_pct -
			 out->sys_softirq_pct - out->sys_kthread_pct -
			 out->proc_cpu_pct;
		/* A peer here whose CPU cannot be read leaves its share
		 * in; the figure then errs towards "noisy". */
		if (s->have_peer && e->have_peer)
			others -= pct(delta_us(e->peer_ticks, s->peer_ticks) *
					  tick_us,
				      mach_us);
		/* Tick sampling can charge one tick twice (softirq on top
		 * of our thread or of ksoftirqd): never below nothing. */
		out->others_busy_pct = others > 0 ? others : 0;
		/* Each CPU's counters may be a tick off at either end: a
		 * phase too short to tell is never flagged. */
		out->noisy = out->others_busy_pct -
				 pct(2.0 * (double)ncpu * tick_us, mach_us) >
			     CQP_NOISY_PCT;
	}
	out->has_softirqs = out->has_sys && s->have_sirqs && e->have_sirqs;
	if (out->has_softirqs)
		out->sys_softirqs_per_s =
		    mach_us > 0 ? delta_us(e->sirqs, s->sirqs) * 1e6 / mach_us
				: 0;
	out->has_cpu = s->have_cpu && e->have_cpu;
	if (out->has_cpu) {
		out->cpu_irq_pct =
		    pct(delta_us(e->cpu.irq, s->cpu.irq) * tick_us, mach_us);
		out->cpu_softirq_pct =
		    pct(delta_us(e->cpu.softirq, s->cpu.softirq) * tick_us,
			mach_us);
	}
}

void cqp_acct_end(struct cqp_cpu_acct *a, struct cqp_cost *out)
{
	const struct cqp_cpu_snap *s = &a->start;
	struct cqp_cpu_snap e;
	double wall_us;

	snap_self(&e, false);
	snap_machine(a, &e);
	a->machine_ready = false;
	wall_us = delta_us(e.wall_ns, s->wall_ns) / 1e3;
	out->seconds = wall_us / 1e6;
	thread_figures(s, &e, wall_us, &out->cpu_pct, &out->cpu_user_pct,
		       &out->cpu_sys_pct);
	out->proc_cpu_pct = pct(delta_us(e.proc_ns, s->proc_ns) / 1e3, wall_us);
	cqp_acct_machine(
	    s, &e,
	    a->have_kt && s->have_sys && e.have_sys ? (double)kthreads_ns(a)
						    : -1,
	    sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_CLK_TCK), out);
	out->sys_irqtime_measured = a->irqtime;
}
