/* SPDX-License-Identifier: BSD-2-Clause */
/* The open-loop schedules: exact fixed gaps, Poisson gaps of the right
 * mean and spread, bursts on their grid, no drift and no going back. */
#include <math.h>
#include <stdint.h>

#include "base/arrival.h"
#include "check.h"

static void fixed(void)
{
	struct cqp_arrivals a;
	uint64_t t0, t;

	cqp_arrivals_init(&a, CQP_ARRIVAL_FIXED, 1, 3000, 1000, 1);
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

	cqp_arrivals_init(&a, CQP_ARRIVAL_POISSON, 1, 10000, 0, 42);
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
	cqp_arrivals_init(&a, CQP_ARRIVAL_POISSON, 1, 10000, 0, 43);
	cqp_arrivals_next(&a);
	CHECK(cqp_arrivals_next(&a) != 0);
}

static void burst(void)
{
	struct cqp_arrivals a;
	uint64_t t[9];

	cqp_arrivals_init(&a, CQP_ARRIVAL_BURST, 4, 1000, 0, 1);
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

static void mark(void)
{
	struct cqp_arrivals a;

	cqp_arrivals_init(&a, CQP_ARRIVAL_BURST, 8, 1000, 0, 1);
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
	mark();
	return check_done("test_arrival");
}
