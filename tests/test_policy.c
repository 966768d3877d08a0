/* SPDX-License-Identifier: BSD-2-Clause */
/* The completion policies' rules over synthetic gaps and polls: empty:N
 * arms after exactly N empty polls, timer naps half the mean, ski spins
 * the measured wakeup cost, ski:rand draws from e^(x/B), adaptive picks
 * cqperf(7)'s budget for bimodal and Poisson gaps, and --poll-batch auto
 * follows perftest's rule. */
#include <math.h>
#include <stdint.h>

#include "base/options.h"
#include "base/policy.h"
#include "check.h"

static void buckets(void)
{
	uint64_t prev = 0;

	CHECK(cqp_gaps_bucket(0) == 0 && cqp_gaps_bucket(63) == 0);
	CHECK(cqp_gaps_bucket(64) == 1);
	for (unsigned b = 1; b < CQP_GAPS_N - 1; b++) {
		uint64_t lo = cqp_gaps_edge(b - 1), hi = cqp_gaps_edge(b);

		CHECK(hi > prev);
		prev = hi;
		CHECK(cqp_gaps_bucket(lo) == b && cqp_gaps_bucket(hi - 1) == b);
		/* A quarter octave: within 25 % of the bucket's bottom. */
		CHECK((double)hi <= 1.25 * (double)lo + 1);
	}
}

static void empty_n(void)
{
	struct cqp_policy p = {0};
	uint64_t nap = 0;

	cqp_policy_init(&p, CQP_CQ_EMPTY, 5, 0, 0);
	cqp_policy_spell(&p);
	for (uint64_t k = 1; k < 5; k++)
		CHECK(cqp_policy_next(&p, 1000000000ull, k, &nap) ==
		      CQP_POLICY_POLL);
	CHECK(cqp_policy_next(&p, 0, 5, &nap) == CQP_POLICY_ARM);
}

static void timer(void)
{
	struct cqp_policy p = {0};
	uint64_t nap = 0;

	cqp_policy_init(&p, CQP_CQ_TIMER, 0, 0, 0);
	for (int i = 0; i < 100; i++)
		cqp_policy_gap(&p, 100000, 1);
	CHECK(cqp_policy_spell(&p) == 50000);
	CHECK(cqp_policy_next(&p, 10000, 1, &nap) == CQP_POLICY_NAP);
	CHECK(nap == 40000);
	/* One nap a spell; then polls until a whole mean passed. */
	CHECK(cqp_policy_next(&p, 50000, 2, &nap) == CQP_POLICY_POLL);
	CHECK(cqp_policy_next(&p, 99999, 3, &nap) == CQP_POLICY_POLL);
	CHECK(cqp_policy_next(&p, 100000, 4, &nap) == CQP_POLICY_ARM);
	/* A new spell naps again. */
	cqp_policy_spell(&p);
	CHECK(cqp_policy_next(&p, 0, 1, &nap) == CQP_POLICY_NAP);
}

static void ski(void)
{
	struct cqp_policy p = {0};
	uint64_t nap = 0;
	double sum = 0;
	int n = 100000, out = 0;

	cqp_policy_init(&p, CQP_CQ_SKI, 0, 0, 0);
	CHECK(cqp_policy_spell(&p) == CQP_POLICY_WAKE_GUESS_NS);
	/* One wakeup alone does not set it (a cold one read 9.6 ms under
	 * TCG, and ski then spun that long and never slept again). */
	cqp_policy_wake_cost(&p, 9600000);
	CHECK(cqp_policy_spell(&p) == CQP_POLICY_WAKE_GUESS_NS);
	p.wake_cpu = (struct cqp_median_ring){0};
	p.wakes_measured = 0;
	cqp_policy_wake_cost(&p, 30000);
	CHECK(cqp_policy_spell(&p) == CQP_POLICY_WAKE_GUESS_NS);
	cqp_policy_wake_cost(&p, 30000);
	CHECK(cqp_policy_spell(&p) == 30000);
	CHECK(cqp_policy_next(&p, 29999, 1, &nap) == CQP_POLICY_POLL);
	CHECK(cqp_policy_next(&p, 30000, 2, &nap) == CQP_POLICY_ARM);
	/* The median of the last 15: an outlier (a TCG clock jump) does
	 * not move it, and the oldest fall out. */
	cqp_policy_wake_cost(&p, 90000000);
	CHECK(cqp_policy_spell(&p) == 30000);
	for (int i = 0; i < CQP_POLICY_WAKES; i++)
		cqp_policy_wake_cost(&p, 40000);
	CHECK(cqp_policy_spell(&p) == 40000);
	for (int i = 0; i < 7; i++)
		cqp_policy_wake_cost(&p, 31000);
	CHECK(cqp_policy_spell(&p) == 40000);
	cqp_policy_wake_cost(&p, 31000);
	CHECK(cqp_policy_spell(&p) == 31000);
	/* The ring alone: 0 before a sample, saturating at 32 bits. */
	{
		struct cqp_median_ring ring = {0};

		CHECK(cqp_median_ring_get(&ring) == 0);
		cqp_median_ring_add(&ring, 1ull << 40);
		CHECK(cqp_median_ring_get(&ring) == UINT32_MAX);
		cqp_median_ring_add(&ring, 5);
		cqp_median_ring_add(&ring, 7);
		CHECK(cqp_median_ring_get(&ring) == 7);
	}
	/* A mode switch keeps the machine's wakeup cost. */
	cqp_policy_init(&p, CQP_CQ_SKI_RAND, 0, 0, 0);
	CHECK(p.wake_ns == 31000);
	cqp_policy_wake_cost(&p, 31000);
	CHECK(p.wake_ns == 31000);
	/* ski:rand: on [0, B], mean B / (e - 1). */
	for (int i = 0; i < n; i++) {
		uint64_t b = cqp_policy_spell(&p);

		out += b > 31000;
		sum += (double)b;
	}
	CHECK(out == 0);
	CHECK_NEAR(sum / n / 31000.0, 1.0 / (M_E - 1.0), 0.01);
	CHECK(cqp_policy_ski_rand(1000, 1.0) == 1000);
	CHECK(cqp_policy_ski_rand(1000, 1e-9) == 0);
}

/* 90 % of gaps 2 us, 10 % 10 ms; a wakeup costs 50 us. */
static void bimodal(void)
{
	struct cqp_gaps g = {0};
	uint64_t s;

	cqp_gaps_add(&g, 2000, 900);
	cqp_gaps_add(&g, 10000000, 100);
	/* The least CPU spins just past the short gaps: 0.9 * 2 + 0.1 *
	 * (2.05 + 50) us a gap, against 50 for sleeping at once and 1000
	 * for spinning through. */
	s = cqp_policy_adaptive(&g, &g, 50000, 0);
	CHECK(s == cqp_gaps_edge(cqp_gaps_bucket(2000)));
	CHECK(s == 2048);
	/* Any target: at most 0.5 % of completions may pay a wakeup, so it
	 * spins through the long gaps too; also with a target above the
	 * wakeup's CPU, which is only a lower bound of the latency a sleep
	 * adds (the rule compared the two before). */
	CHECK(cqp_policy_adaptive(&g, &g, 50000, 10000) ==
	      cqp_gaps_edge(cqp_gaps_bucket(10000000)));
	CHECK(cqp_policy_adaptive(&g, &g, 50000, 100000) ==
	      cqp_gaps_edge(cqp_gaps_bucket(10000000)));
}

/* Batches: 995 gaps of 2 us end one completion each, 5 gaps of 10 ms a
 * batch of 16.  The long gaps are 0.5 % of the gaps, but a sleep through
 * them delays 80 of 1075 completions, 7.4 %: with a target the policy
 * spins through them, weighing each gap by the completions it delays. */
static void batches(void)
{
	struct cqp_gaps g = {0}, d = {0};
	struct cqp_policy p = {0};

	cqp_gaps_add(&g, 2000, 995);
	cqp_gaps_add(&g, 10000000, 5);
	cqp_gaps_add(&g, 0, 5 * 15);
	cqp_gaps_add(&d, 2000, 995);
	cqp_gaps_add(&d, 10000000, 5 * 16);
	CHECK(cqp_policy_adaptive(&g, &d, 50000, 100000) ==
	      cqp_gaps_edge(cqp_gaps_bucket(10000000)));
	/* Counted by gaps, the long ones would pass for 0.47 %. */
	CHECK(cqp_policy_adaptive(&g, &g, 50000, 100000) == 2048);
	/* Without a target, CPU alone: sleep through them. */
	CHECK(cqp_policy_adaptive(&g, &d, 50000, 0) == 2048);
	/* The policy weighs each gap by the batch that ends it. */
	cqp_policy_init(&p, CQP_CQ_ADAPTIVE, 0, 0, 100);
	cqp_policy_gap(&p, 10000000, 16);
	cqp_policy_gap(&p, 2000, 1);
	CHECK(p.delayed.total == 17 && p.gaps.total == 17 &&
	      p.delayed.w[cqp_gaps_bucket(10000000)] == 16);
}

/* Exponential gaps of mean 100 us. */
static void poisson(void)
{
	struct cqp_gaps g = {0};
	uint64_t x = 88172645463325252ull, q, s;

	for (int i = 0; i < 200000; i++) {
		double u;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		u = ((double)(x >> 11) + 1.0) / 9007199254740992.0;
		cqp_gaps_add(&g, (uint64_t)(-log(u) * 100000.0), 1);
	}
	/* Memoryless: a wakeup cheaper than the mean gap is best taken at
	 * once, a dearer one never (spin through every gap). */
	CHECK(cqp_policy_adaptive(&g, &g, 50000, 0) == 0);
	CHECK(cqp_policy_adaptive(&g, &g, 200000, 0) ==
	      cqp_gaps_quantile(&g, 1.0));
	/* A target: the cheapest budget that sleeps through at most
	 * 0.5 %, the smallest such one (here the cost rises with the
	 * budget): the 99.5th percentile, 100 us * ln 200 = 530 us, to a
	 * bucket; whether the target is below the wakeup's CPU or not. */
	q = cqp_gaps_quantile(&g, 1 - CQP_POLICY_TAIL);
	s = cqp_policy_adaptive(&g, &g, 50000, 10000);
	CHECK(s == q);
	CHECK(s >= 530000 && s <= 530000 * 5 / 4);
	CHECK(cqp_policy_adaptive(&g, &g, 50000, 1000000) == q);
}

/* The policy learns: the ski budget until warm, then the rule's. */
static void adaptive_learns(void)
{
	struct cqp_policy p = {0};

	cqp_policy_init(&p, CQP_CQ_ADAPTIVE, 0, 0, 0);
	for (int i = 0; i < CQP_POLICY_WAKES_MIN; i++)
		cqp_policy_wake_cost(&p, 50000);
	for (int i = 0; i < CQP_POLICY_WARM - 1; i++)
		cqp_policy_gap(&p, i % 10 ? 2000 : 10000000, 1);
	CHECK(cqp_policy_spell(&p) == 50000);
	for (int i = 0; i < 1000; i++)
		cqp_policy_gap(&p, i % 10 ? 2000 : 10000000, 1);
	CHECK(cqp_policy_spell(&p) == 2048);
	/* A batch of completions: one gap, the rest of it at once. */
	cqp_policy_gap(&p, 2000, 16);
	CHECK(p.gaps.w[0] > 0);
}

static void batch(void)
{
	uint32_t b = CQP_BATCH_AUTO_MIN;

	/* Full polls double it up to 1024. */
	for (int i = 0; i < 10; i++)
		b = cqp_batch_next(b, b, (int)b);
	CHECK(b == CQP_BATCH_AUTO_MAX);
	/* At 85 % or more it stays; below, it halves, down to 16. */
	CHECK(cqp_batch_next(1024, 1024, 871) == 1024);
	CHECK(cqp_batch_next(1024, 1024, 870) == 512);
	CHECK(cqp_batch_next(16, 16, 1) == 16);
	/* Empty polls say nothing; a poll cut short by the caller's room
	 * does not grow it. */
	CHECK(cqp_batch_next(64, 64, 0) == 64);
	CHECK(cqp_batch_next(64, 10, 10) == 64);
}

int main(void)
{
	buckets();
	empty_n();
	timer();
	ski();
	bimodal();
	poisson();
	adaptive_learns();
	batches();
	batch();
	return check_done("test_policy");
}
