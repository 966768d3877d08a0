/* SPDX-License-Identifier: BSD-2-Clause */
/* The open-loop schedules: exact fixed gaps, Poisson gaps of the right
 * mean and spread, bursts on their grid, on/off windows, Pareto gaps of
 * the right mean and tail, no drift and no going back. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/arrival.h"
#include "check.h"

static void fixed(void)
{
	struct cqp_arrivals a;
	uint64_t t0, t;

	cqp_arrivals_init(
	    &a, &(struct cqp_arrival_shape){.kind = CQP_ARRIVAL_FIXED}, 3000,
	    1000, 1);
	t0 = cqp_arrivals_next(&a);
	CHECK(t0 == 1000);
	for (int i = 1; i < 300001; i++)
		t = cqp_arrivals_next(&a);
	/* 300000 gaps of 333333.33 ns: exactly 100 s later, no drift. */
	CHECK(t == 1000 + 100000000000ull);
	CHECK(cqp_arrivals_cv(&a) < 1e-5);
}

static void poisson(void)
{
	struct cqp_arrivals a;
	uint64_t prev, t = 0;
	int back = 0;

	cqp_arrivals_init(
	    &a, &(struct cqp_arrival_shape){.kind = CQP_ARRIVAL_POISSON}, 10000,
	    0, 42);
	prev = cqp_arrivals_next(&a);
	CHECK(prev == 0);
	for (int i = 0; i < 200000; i++) {
		t = cqp_arrivals_next(&a);
		back += t < prev;
		prev = t;
	}
	CHECK(back == 0);
	/* 200000 gaps of mean 100 us: 20 s within 1 %. */
	CHECK_NEAR((double)t / 1e9, 20.0, 0.2);
	CHECK_NEAR(cqp_arrivals_cv(&a), 1.0, 0.02);
	/* Another seed, another draw. */
	cqp_arrivals_init(
	    &a, &(struct cqp_arrival_shape){.kind = CQP_ARRIVAL_POISSON}, 10000,
	    0, 43);
	cqp_arrivals_next(&a);
	CHECK(cqp_arrivals_next(&a) != 0);
}

static void burst(void)
{
	struct cqp_arrivals a;
	uint64_t t[9];

	cqp_arrivals_init(
	    &a,
	    &(struct cqp_arrival_shape){.kind = CQP_ARRIVAL_BURST, .burst = 4},
	    1000, 0, 1);
	for (int i = 0; i < 9; i++)
		t[i] = cqp_arrivals_next(&a);
	/* Four due at once every 4 ms. */
	CHECK(t[0] == 0 && t[3] == 0);
	CHECK(t[4] == 4000000 && t[7] == 4000000);
	CHECK(t[8] == 8000000);
	for (int i = 0; i < 40000; i++)
		cqp_arrivals_next(&a);
	/* Gaps 0 (three times) and 4/R: stdev/mean = sqrt(N - 1). */
	CHECK_NEAR(cqp_arrivals_cv(&a), sqrt(3.0), 0.01);
}

/* onoff:10,20 at rate: every time within an ON window, on a grid of 1/R
 * from each window's start; per_on in each window. */
static void onoff_at(uint64_t rate, uint64_t start, unsigned per_on)
{
	const struct cqp_arrival_shape s = {
	    .kind = CQP_ARRIVAL_ONOFF, .on_ms = 10, .off_ms = 20};
	struct cqp_arrivals a;
	unsigned count[3] = {0}, off = 0, grid = 0;

	cqp_arrivals_init(&a, &s, rate, start, 1);
	for (unsigned i = 0; i < 3 * per_on; i++) {
		uint64_t t = cqp_arrivals_next(&a) - start,
			 cycle = t / 30000000, in = t % 30000000;
		/* The i-th of its window, 1/R apart. */
		double want = (double)(i % per_on) * 1e9 / (double)rate;

		off += in >= 10000000;
		grid += fabs((double)in - want) > 0.5;
		if (cycle < 3)
			count[cycle]++;
		if (i % per_on == 0)
			CHECK(t == cycle * 30000000 && cycle == i / per_on);
	}
	CHECK(off == 0 && grid == 0);
	CHECK(count[0] == per_on && count[1] == per_on && count[2] == per_on);
}

static void onoff(void)
{
	const struct cqp_arrival_shape s = {
	    .kind = CQP_ARRIVAL_ONOFF, .on_ms = 10, .off_ms = 20};
	struct cqp_arrivals a;
	uint64_t t[12];

	cqp_arrivals_init(&a, &s, 1000, 0, 1);
	for (int i = 0; i < 12; i++)
		t[i] = cqp_arrivals_next(&a);
	/* 1 ms apart for 10 ms, then 20 ms of silence. */
	CHECK(t[0] == 0 && t[1] == 1000000 && t[9] == 9000000);
	CHECK(t[10] == 30000000 && t[11] == 31000000);
	onoff_at(1000, 0, 10);
	/* Gaps of 333333.33 ns: 30 a window, none pushed to its end. */
	onoff_at(3000, 12345, 30);
	/* No drift: the 30000th at R=3000 opens cycle 1000. */
	cqp_arrivals_init(&a, &s, 3000, 7, 1);
	for (int i = 0; i < 30000; i++)
		cqp_arrivals_next(&a);
	CHECK(cqp_arrivals_next(&a) == 7 + 1000 * 30000000ull);
}

/* pareto:ALPHA at 10000/s: gaps of mean 100 us, none below x_m, and
 * P(gap > 10 x_m) = 10^-ALPHA. */
static void pareto_at(uint32_t milli, bool mean)
{
	const struct cqp_arrival_shape s = {.kind = CQP_ARRIVAL_PARETO,
					    .pareto_milli = milli};
	double alpha = milli / 1000.0, xm = 1e5 * (alpha - 1) / alpha;
	struct cqp_arrivals a;
	uint64_t prev, t = 0, low = 0, tail = 0;
	const int n = 200000;

	cqp_arrivals_init(&a, &s, 10000, 0, 42);
	prev = cqp_arrivals_next(&a);
	CHECK(prev == 0);
	for (int i = 0; i < n; i++) {
		t = cqp_arrivals_next(&a);
		/* Times are whole ns: a gap may lose 1 to rounding. */
		low += (double)(t - prev) + 1 < xm;
		tail += (double)(t - prev) > 10 * xm;
		prev = t;
	}
	CHECK(low == 0);
	if (mean)
		CHECK_NEAR((double)t / n, 1e5, 5e3);
	CHECK_NEAR((double)tail / n / pow(10, -alpha), 1.0, 0.15);
}

static void pareto(void)
{
	pareto_at(2500, true);
	/* An infinite variance: the mean converges too slowly to check. */
	pareto_at(1500, false);
}

static void mark(void)
{
	struct cqp_arrivals a;

	cqp_arrivals_init(
	    &a,
	    &(struct cqp_arrival_shape){.kind = CQP_ARRIVAL_BURST, .burst = 8},
	    1000, 0, 1);
	for (int i = 0; i < 8; i++)
		cqp_arrivals_next(&a);
	cqp_arrivals_mark(&a);
	CHECK(isnan(cqp_arrivals_cv(&a)));
	/* Only the 8 gaps after the mark: one of 8 ms, seven of 0. */
	for (int i = 0; i < 8; i++)
		cqp_arrivals_next(&a);
	CHECK_NEAR(cqp_arrivals_cv(&a), sqrt(7.0), 1e-9);
}

int main(void)
{
	fixed();
	poisson();
	burst();
	onoff();
	pareto();
	mark();
	return check_done("test_arrival");
}
