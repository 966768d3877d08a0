/* SPDX-License-Identifier: BSD-2-Clause */
/* The clock every timestamp reads.
 *
 * On x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in
 * /proc/cpuinfo) that the kernel still uses (its current clocksource is
 * tsc: it drops a TSC its watchdog found unstable) cqp_now_ns() reads the
 * TSC, its rate calibrated against CLOCK_MONOTONIC_RAW when the clock is
 * set up, so a timestamp costs no system call.  Elsewhere, or asked to,
 * it is clock_gettime(CLOCK_MONOTONIC), and the report says why.
 * --clock force-tsc reads the TSC even where clock_gettime is a system
 * call (the HPET or acpi_pm: an emulated guest, some VMs).  aarch64's
 * cntvct_el0 is not used yet.
 */
#ifndef CQP_CLOCK_H
#define CQP_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The words of --clock, in order. */
enum cqp_clock_mode {
	CQP_CLOCK_AUTO,	     /* the TSC where trusted, else monotonic */
	CQP_CLOCK_TSC,	     /* the TSC; refused unless trusted */
	CQP_CLOCK_MONOTONIC, /* clock_gettime(CLOCK_MONOTONIC) */
	CQP_CLOCK_TSC_FORCE, /* the TSC without the checks */
};

struct cqp_clock_info {
	bool tsc;	    /* false: CLOCK_MONOTONIC */
	bool invariant_tsc; /* /proc/cpuinfo promises an invariant TSC */
	double hz;	    /* counts per second of the source */
	const char *kernel_clocksource; /* "" when unreadable */
	const char *why_not_tsc;	/* NULL when tsc */
};

/* Picks and calibrates the source (the TSC: about 10 ms).  --clock tsc
 * without a trusted TSC is a CQP_E_USAGE failure naming --clock. */
int cqp_clock_init(uint32_t mode);
/* The same with the files it reads under root ("": the real ones), for
 * tests. */
int cqp_clock_init_at(uint32_t mode, const char *root);
void cqp_clock_get(struct cqp_clock_info *out);

/* Nanoseconds from the chosen source (CLOCK_MONOTONIC's epoch; the TSC
 * ticks at CLOCK_MONOTONIC_RAW's rate from there). */
uint64_t cqp_now_ns(void);
/* clock_gettime(CLOCK_MONOTONIC), whatever the source. */
uint64_t cqp_monotonic_ns(void);
/* clock_gettime of any clock id (CPU-time clocks too), in ns. */
uint64_t cqp_clock_ns(clockid_t id);

/* Whether /proc/cpuinfo text says the TSC is invariant; the function
 * the check runs, apart for tests. */
bool cqp_cpuinfo_invariant_tsc(const char *text);
/* Whether to trust the TSC: invariant, and the kernel's clocksource
 * (its first word) is "tsc"; else false and why (a sentence). */
bool cqp_tsc_trusted(bool invariant, const char *clocksource, char *why,
		     size_t cap);
/* Counts per second of the TSC, measured against CLOCK_MONOTONIC_RAW
 * over window_ns; 0 where there is no TSC to read. */
double cqp_tsc_calibrate(uint64_t window_ns);

#endif
