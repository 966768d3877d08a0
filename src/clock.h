/* SPDX-License-Identifier: BSD-2-Clause */
/* The clock every timestamp reads.
 *
 * On x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in
 * /proc/cpuinfo) cqp_now_ns() reads the TSC, calibrated against
 * CLOCK_MONOTONIC when the clock is set up, so a timestamp costs no system
 * call even where the kernel's clocksource is the HPET or acpi_pm (an
 * emulated guest, some VMs), where clock_gettime is one.  Elsewhere, or
 * asked to, it is clock_gettime(CLOCK_MONOTONIC).  aarch64's cntvct_el0
 * is not used yet.
 */
#ifndef CQP_CLOCK_H
#define CQP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* The words of --clock, in order. */
enum cqp_clock_mode {
	CQP_CLOCK_AUTO,	     /* the TSC where invariant, else monotonic */
	CQP_CLOCK_TSC,	     /* the TSC; refused unless invariant */
	CQP_CLOCK_MONOTONIC, /* clock_gettime(CLOCK_MONOTONIC) */
	CQP_CLOCK_TSC_FORCE, /* the TSC without the invariance check */
};

struct cqp_clock_info {
	bool tsc;	    /* false: CLOCK_MONOTONIC */
	bool invariant_tsc; /* /proc/cpuinfo promises an invariant TSC */
	double hz;	    /* counts per second of the source */
};

/* Picks and calibrates the source (the TSC: about 10 ms).  --clock tsc
 * without an invariant TSC is a CQP_E_USAGE failure naming --clock. */
int cqp_clock_init(uint32_t mode);
/* The same with the files it reads under root ("": the real ones), for
 * tests. */
int cqp_clock_init_at(uint32_t mode, const char *root);
void cqp_clock_get(struct cqp_clock_info *out);

/* Nanoseconds from the chosen source (CLOCK_MONOTONIC's epoch). */
uint64_t cqp_now_ns(void);
/* clock_gettime(CLOCK_MONOTONIC), whatever the source. */
uint64_t cqp_monotonic_ns(void);
/* clock_gettime of any clock id (CPU-time clocks too), in ns. */
uint64_t cqp_clock_ns(clockid_t id);

/* Whether /proc/cpuinfo text says the TSC is invariant; the function
 * the check runs, apart for tests. */
bool cqp_cpuinfo_invariant_tsc(const char *text);
/* Counts per second of the TSC, measured against CLOCK_MONOTONIC over
 * window_ns; 0 where there is no TSC to read. */
double cqp_tsc_calibrate(uint64_t window_ns);

#endif
