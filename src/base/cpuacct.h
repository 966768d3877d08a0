/* SPDX-License-Identifier: BSD-2-Clause */
/* Where the CPU of a measured phase went: the benchmark thread (user and
 * system apart), the whole process, and the machine (busy, interrupt and
 * softirq time from /proc/stat), with the busy time nobody here explains
 * (other processes) and a flag when that makes the figures suspect.
 *
 * Sources: CLOCK_THREAD_CPUTIME_ID and CLOCK_PROCESS_CPUTIME_ID (exact),
 * getrusage(RUSAGE_THREAD) for the ratio of the user/system split (of
 * tick samples; cqp_cpu_split applies it to the exact total), /proc/stat
 * (USER_HZ ticks, 10 ms), /proc/PID/stat of a peer on the same machine, and
 * /proc/PID/schedstat (exact) of every kernel thread (ksoftirqd, kworkers:
 * rxe's data path runs there as much as in softirq proper, and /proc/stat
 * counts that as system time), and /proc/softirqs (exact counts of the
 * data path's softirqs: how often, not how long).  A kernel with
 * CONFIG_IRQ_TIME_ACCOUNTING measures irq and softirq time; one without
 * (Debian's) samples it at the tick: the figures say which.
 */
#ifndef CQP_CPUACCT_H
#define CQP_CPUACCT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/record.h"

/* Busy time of other processes above this share of one core makes a
 * side's figures suspect. */
#define CQP_NOISY_PCT 10.0

/* One /proc/stat line, in USER_HZ ticks. */
struct cqp_stat_times {
	uint64_t busy; /* everything but idle, iowait and steal */
	uint64_t irq, softirq;
	/* A guest's time the hypervisor gave to someone else: no load on
	 * this machine, so not busy (else every VM run looks noisy). */
	uint64_t steal;
};

struct cqp_cpu_snap {
	uint64_t wall_ns, thread_ns, proc_ns;
	uint64_t user_us, sys_us; /* this thread */
	bool have_sys, have_cpu, have_peer;
	struct cqp_stat_times sys, cpu; /* the machine; --cpu's CPU */
	uint64_t peer_ticks;		/* the peer's utime + stime */
	uint64_t machine_ns; /* CLOCK_MONOTONIC when /proc/stat was read */
	bool have_sirqs;
	uint64_t sirqs; /* the data path's softirqs so far, all CPUs */
};

/* A kernel thread seen when the phase began, and its CPU then (ns). */
struct cqp_kthread {
	int pid;
	uint64_t ns;
};

struct cqp_cpu_acct {
	int cpu;      /* -1: no CPU of our own to watch */
	int peer_pid; /* 0: the peer runs on another machine */
	struct cqp_cpu_snap start;
	struct cqp_kthread *kt; /* owned */
	unsigned nkt, kt_cap;
	bool have_kt;
	bool machine_ready; /* the machine's window is open */
	bool irqtime;	    /* cqp_irqtime_measured() */
};

void cqp_acct_init(struct cqp_cpu_acct *a, int cpu);
void cqp_acct_free(struct cqp_cpu_acct *a);
/* A peer on this machine (the same boot_id): its CPU is no noise. */
void cqp_acct_set_peer(struct cqp_cpu_acct *a, int pid);
/* Opens the machine's window: /proc/stat, the peer's and every kernel
 * thread's /proc files, a millisecond or more of reads.  Taken before
 * the traffic (before a step's barrier), so that no peer waits on it;
 * the machine's figures are then rates over their own, longer window. */
void cqp_acct_begin_machine(struct cqp_cpu_acct *a);
/* Opens our own window (clocks and getrusage: microseconds), and the
 * machine's too unless cqp_acct_begin_machine already did. */
void cqp_acct_begin(struct cqp_cpu_acct *a);
/* Only our own clocks, for cqp_acct_thread. */
void cqp_acct_begin_self(struct cqp_cpu_acct *a);
/* The figures since the begins into out's CPU fields; closes both
 * windows. */
void cqp_acct_end(struct cqp_cpu_acct *a, struct cqp_cost *out);
/* The machine's figures of out (has_sys and the sys_* figures,
 * others_busy_pct, noisy; has_cpu and cpu_irq/softirq) from snapshots s
 * and e, given this process's proc_cpu_pct in out and the kernel
 * threads' CPU in ns (negative: unknown); cqp_acct_end's arithmetic,
 * apart for tests. */
void cqp_acct_machine(const struct cqp_cpu_snap *s,
		      const struct cqp_cpu_snap *e, double kthread_ns,
		      long ncpu, long clk_tck, struct cqp_cost *out);
/* Only the thread's CPU and its split since begin (idle cost). */
void cqp_acct_thread(const struct cqp_cpu_acct *a, double *pct,
		     double *user_pct, double *sys_pct);

/* The thread's exact CPU (total) split in the proportion of getrusage's
 * user and system deltas.  getrusage's own total is the scheduler's
 * runtime as of the thread's last tick or switch, up to a tick stale at
 * either end (6 points of a 70 ms phase), so its deltas are used for the
 * ratio only.  No delta (a phase within one tick): the thread's lifetime
 * ratio; no samples at all: all user, as the kernel splits it. */
void cqp_cpu_split(double total, double user, double sys, double life_user,
		   double life_sys, double *user_out, double *sys_out);

/* Parsers of /proc/stat (the "cpu" line and, cpu >= 0, "cpuN") and of
 * /proc/PID/stat (utime + stime); 0, or -1 when the text has no such
 * line or field. */
int cqp_stat_parse(const char *text, int cpu, struct cqp_stat_times *out);
int cqp_pid_stat_ticks(const char *text, uint64_t *ticks);
/* /proc/softirqs: the data path's softirqs (HI, NET_TX, NET_RX, TASKLET)
 * summed over every CPU; 0, or -1 without those rows. */
int cqp_softirqs_parse(const char *text, uint64_t *count);
/* Whether this kernel measures irq and softirq time
 * (CONFIG_IRQ_TIME_ACCOUNTING: its config file says so, or it has
 * pressure_path, /proc/pressure/irq, which only such a kernel makes)
 * rather than sampling it at the tick; config_path NULL: the running
 * kernel's /boot/config-RELEASE. */
bool cqp_irqtime_measured(const char *config_path, const char *pressure_path);
/* The same with the task's flags (PF_KTHREAD: a kernel thread). */
int cqp_pid_stat_parse(const char *text, uint64_t *ticks, unsigned *flags);
#define CQP_PF_KTHREAD 0x00200000u

#endif
