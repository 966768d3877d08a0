/* SPDX-License-Identifier: BSD-2-Clause */
/* What one timestamp costs with each --clock source: "tsc NS monotonic
 * NS", nanoseconds per cqp_now_ns() over 100000 reads.  A clocksource
 * the kernel reads by trapping (the HPET in a TCG guest) costs
 * microseconds a read, the TSC tens of nanoseconds: a ratio no run-to-run
 * noise hides, unlike a latency that carries it. */
#include <stdio.h>

#include "base/clock.h"
#include "base/error.h"

#define READS 100000

static double per_read(void)
{
	volatile uint64_t sink = 0;
	uint64_t t0 = cqp_monotonic_ns();

	for (int i = 0; i < READS; i++)
		sink += cqp_now_ns();
	(void)sink;
	return (double)(cqp_monotonic_ns() - t0) / READS;
}

int main(void)
{
	double tsc, mono;

	if (cqp_clock_init(CQP_CLOCK_TSC_FORCE) < 0) {
		fprintf(stderr, "clockcost: %s\n", cqp_errmsg());
		return 1;
	}
	tsc = per_read();
	if (cqp_clock_init(CQP_CLOCK_MONOTONIC) < 0) {
		fprintf(stderr, "clockcost: %s\n", cqp_errmsg());
		return 1;
	}
	mono = per_read();
	printf("tsc %.1f monotonic %.1f\n", tsc, mono);
	return 0;
}
