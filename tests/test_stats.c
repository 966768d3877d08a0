/* SPDX-License-Identifier: BSD-2-Clause */
/* stats: exact percentiles, the histogram's error bound, the bw meter. */
#include "check.h"
#include "base/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64*: reproducible data without libc's global rand() state. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static void test_samples_known(void)
{
	struct cqp_samples s;
	struct cqp_summary sum;
	uint64_t seed = 42;
	double v[100];
	int i;

	/* 1..100 in shuffled order: sorting is the summary's job. */
	for (i = 0; i < 100; i++)
		v[i] = i + 1;
	for (i = 99; i > 0; i--) {
		int k = (int)(rng_next(&seed) % (uint64_t)(i + 1));
		double t = v[i];

		v[i] = v[k];
		v[k] = t;
	}
	CHECK(cqp_samples_init(&s, 100) == 0);
	for (i = 0; i < 100; i++)
		CHECK(cqp_samples_add(&s, v[i]));
	CHECK(!cqp_samples_add(&s, 1000)); /* past cap: dropped */
	cqp_samples_summary(&s, &sum);
	CHECK(sum.count == 100);
	CHECK_NEAR(sum.min, 1, 0);
	CHECK_NEAR(sum.max, 100, 0);
	CHECK_NEAR(sum.avg, 50.5, 1e-12);
	CHECK_NEAR(sum.stdev, 28.866070047722118, 1e-12);
	CHECK_NEAR(sum.p50, 50, 0);
	CHECK_NEAR(sum.p99, 99, 0);
	CHECK_NEAR(sum.p99_9, 100, 0);
	CHECK_NEAR(sum.p99_99, 100, 0);
	cqp_samples_free(&s);
	CHECK(s.v == NULL);
}

static void test_samples_ranks(void)
{
	struct cqp_samples s;
	struct cqp_summary sum;
	int i;

	/* 1..1000 and 1..10000 pin the nearest rank at 99.9 and 99.99,
	 * where p/100*n is exact in decimal but not in binary. */
	CHECK(cqp_samples_init(&s, 10000) == 0);
	for (i = 1000; i >= 1; i--)
		cqp_samples_add(&s, i);
	cqp_samples_summary(&s, &sum);
	CHECK_NEAR(sum.p50, 500, 0);
	CHECK_NEAR(sum.p99, 990, 0);
	CHECK_NEAR(sum.p99_9, 999, 0);
	CHECK_NEAR(sum.p99_99, 1000, 0);
	s.n = 0;
	for (i = 1; i <= 10000; i++)
		cqp_samples_add(&s, i);
	cqp_samples_summary(&s, &sum);
	CHECK_NEAR(sum.p50, 5000, 0);
	CHECK_NEAR(sum.p99, 9900, 0);
	CHECK_NEAR(sum.p99_9, 9990, 0);
	CHECK_NEAR(sum.p99_99, 9999, 0);
	cqp_samples_free(&s);
}

static void test_samples_small(void)
{
	struct cqp_samples s;
	struct cqp_summary sum;

	/* Empty: all zero. */
	CHECK(cqp_samples_init(&s, 0) == 0);
	CHECK(!cqp_samples_add(&s, 1));
	cqp_samples_summary(&s, &sum);
	CHECK(sum.count == 0);
	CHECK(sum.min == 0 && sum.max == 0 && sum.avg == 0 && sum.stdev == 0 &&
	      sum.p50 == 0 && sum.p99_99 == 0);
	cqp_samples_free(&s);

	/* One sample: every statistic is that sample. */
	CHECK(cqp_samples_init(&s, 4) == 0);
	cqp_samples_add(&s, 7.25);
	cqp_samples_summary(&s, &sum);
	CHECK(sum.count == 1);
	CHECK_NEAR(sum.min, 7.25, 0);
	CHECK_NEAR(sum.max, 7.25, 0);
	CHECK_NEAR(sum.avg, 7.25, 0);
	CHECK_NEAR(sum.stdev, 0, 0);
	CHECK_NEAR(sum.p50, 7.25, 0);
	CHECK_NEAR(sum.p99_99, 7.25, 0);

	/* Duplicates: {5, 1, 5, 5} sorts to 1 5 5 5. */
	s.n = 0;
	cqp_samples_add(&s, 5);
	cqp_samples_add(&s, 1);
	cqp_samples_add(&s, 5);
	cqp_samples_add(&s, 5);
	cqp_samples_summary(&s, &sum);
	CHECK_NEAR(sum.min, 1, 0);
	CHECK_NEAR(sum.p50, 5, 0);
	CHECK_NEAR(sum.p99, 5, 0);
	CHECK_NEAR(sum.avg, 4, 1e-12);
	CHECK_NEAR(sum.stdev, sqrt(3.0), 1e-12);

	/* Two samples: p50 is the lower (rank ceil(0.5*2) = 1). */
	s.n = 0;
	cqp_samples_add(&s, 20);
	cqp_samples_add(&s, 10);
	cqp_samples_summary(&s, &sum);
	CHECK_NEAR(sum.p50, 10, 0);
	CHECK_NEAR(sum.p99, 20, 0);
	cqp_samples_free(&s);
}

/* Every value maps to the bucket whose range holds it, and the ranges
 * tile [0, 2^64) without gaps. */
static void test_hist_buckets(void)
{
	static struct cqp_hist h;
	uint64_t lo, width, next = 0;
	unsigned i;
	int bad = 0;

	cqp_hist_init(&h);
	for (i = 0; i < CQP_HIST_BUCKETS; i++) {
		cqp_hist_bucket_range(i, &lo, &width);
		if (lo != next || width == 0)
			bad++;
		/* lo's error bound: a bucket is at most lo/SUB wide. */
		if (i >= CQP_HIST_SUB && width > lo / CQP_HIST_SUB)
			bad++;
		cqp_hist_add(&h, lo);
		cqp_hist_add(&h, lo + (width - 1));
		next = lo + width;
	}
	CHECK(bad == 0);
	CHECK(next == 0); /* wrapped: the last bucket ends at 2^64 */
	CHECK(lo + (width - 1) == UINT64_MAX);
	for (i = 0; i < CQP_HIST_BUCKETS; i++)
		if (h.count[i] != 2)
			bad++;
	CHECK(bad == 0);
	CHECK(h.min == 0 && h.max == UINT64_MAX);
}

/* Values below 2 * SUB have buckets of width one: exact answers. */
static void test_hist_known(void)
{
	static struct cqp_hist h;
	struct cqp_summary sum;
	uint64_t v;

	cqp_hist_init(&h);
	cqp_hist_summary(&h, &sum);
	CHECK(sum.count == 0 && sum.p50 == 0 && sum.max == 0);
	for (v = 100; v >= 1; v--)
		cqp_hist_add(&h, v);
	cqp_hist_summary(&h, &sum);
	CHECK(sum.count == 100);
	CHECK_NEAR(sum.min, 1, 0);
	CHECK_NEAR(sum.max, 100, 0);
	CHECK_NEAR(sum.avg, 50.5, 1e-12);
	CHECK_NEAR(sum.stdev, 28.866070047722118, 1e-9);
	CHECK_NEAR(sum.p50, 50, 0);
	CHECK_NEAR(sum.p99, 99, 0);
	CHECK_NEAR(sum.p99_9, 100, 0);

	/* One large value: the clamp to [min, max] makes it exact. */
	cqp_hist_init(&h);
	cqp_hist_add(&h, 123456789);
	cqp_hist_summary(&h, &sum);
	CHECK_NEAR(sum.p50, 123456789, 0);
	CHECK_NEAR(sum.p99_99, 123456789, 0);
	CHECK_NEAR(sum.stdev, 0, 0);
}

enum dist { D_SMALL, D_UNIFORM, D_LOG, D_HUGE, D_SKEWED };

static uint64_t draw(enum dist d, uint64_t *seed)
{
	uint64_t r = rng_next(seed);

	switch (d) {
	case D_SMALL: /* all below SUB: must be exact */
		return r % CQP_HIST_SUB;
	case D_UNIFORM: /* typical latencies in ns */
		return r % 2000000;
	case D_LOG: /* every magnitude from 0 to 2^63 */
		return r >> (rng_next(seed) % 64);
	case D_HUGE: /* close to 2^63 and beyond */
		return ((uint64_t)1 << 63) - (r % 100000) +
		       (rng_next(seed) % 2 ? r % ((uint64_t)1 << 62) : 0);
	case D_SKEWED: /* mostly small, a long tail */
	default:
		return r % 100 < 95 ? 1000 + r % 500 : r % 100000000;
	}
}

static int pct_ok(double est, double exact)
{
	/* Doubles hold 53 bits; the 1e-12 covers their rounding of the
	 * huge values, not the histogram's own error. */
	return fabs(est - exact) <= exact / CQP_HIST_SUB + exact * 1e-12;
}

static void test_hist_random(void)
{
	static struct cqp_hist h;
	struct cqp_samples s;
	struct cqp_summary e, a;
	uint64_t seed = 0x9e3779b97f4a7c15ull, v;
	const size_t n = 20000;
	enum dist d;
	size_t i;

	CHECK(cqp_samples_init(&s, n) == 0);
	for (d = D_SMALL; d <= D_SKEWED; d++) {
		long double exact_sum = 0;

		cqp_hist_init(&h);
		s.n = 0;
		for (i = 0; i < n; i++) {
			v = draw(d, &seed);
			cqp_hist_add(&h, v);
			cqp_samples_add(&s, (double)v);
			exact_sum += v;
		}
		cqp_samples_summary(&s, &e);
		cqp_hist_summary(&h, &a);
		CHECK(a.count == n);
		CHECK(pct_ok(a.p50, e.p50));
		CHECK(pct_ok(a.p99, e.p99));
		CHECK(pct_ok(a.p99_9, e.p99_9));
		CHECK(pct_ok(a.p99_99, e.p99_99));
		CHECK(a.min == e.min && a.max == e.max);
		CHECK_NEAR(a.avg, (double)(exact_sum / n), a.avg * 1e-12);
		if (d == D_SMALL)
			CHECK(a.p50 == e.p50 && a.p99 == e.p99 &&
			      a.p99_9 == e.p99_9);
		/* sum of squares loses digits on huge data; the
		 * moderate distributions keep stdev to a part in 1e9. */
		if (d == D_SMALL || d == D_UNIFORM || d == D_SKEWED)
			CHECK_NEAR(a.stdev, e.stdev, e.stdev * 1e-9);
	}
	cqp_samples_free(&s);
}

#define MS 1000000ull

static void test_bw_constant(void)
{
	struct cqp_bw_meter m;
	struct cqp_bw_result r;
	uint64_t t0 = 123456789, i;

	/* 1000 bytes every ms for 10 s, 100 ms windows. */
	cqp_bw_start(&m, t0, 100 * MS);
	for (i = 1; i <= 10000; i++)
		cqp_bw_add(&m, t0 + i * MS, 1000, 1);
	cqp_bw_finish(&m, &r);
	CHECK_NEAR(r.seconds, 10, 1e-12);
	CHECK(r.bytes == 10000000 && r.msgs == 10000);
	CHECK_NEAR(r.avg_bps, 1e6, 1e-6);
	CHECK_NEAR(r.peak_bps, 1e6, 1e-6);
	CHECK_NEAR(r.msg_rate, 1000, 1e-9);
}

static void test_bw_burst(void)
{
	struct cqp_bw_meter m;
	struct cqp_bw_result r;
	uint64_t t0 = 5 * MS, i;

	/* As above, plus 100 extra messages inside [300, 400) ms: that
	 * window carries 200 messages, twice the steady rate. */
	cqp_bw_start(&m, t0, 100 * MS);
	for (i = 1; i <= 10000; i++) {
		cqp_bw_add(&m, t0 + i * MS, 1000, 1);
		if (i == 350)
			cqp_bw_add(&m, t0 + i * MS, 100 * 1000, 100);
	}
	cqp_bw_finish(&m, &r);
	CHECK_NEAR(r.peak_bps, 2e6, 1e-6);
	CHECK(r.peak_bps > r.avg_bps);
	CHECK_NEAR(r.avg_bps, 10100000 / 10.0, 1e-6);
}

static void test_bw_short_and_gaps(void)
{
	struct cqp_bw_meter m;
	struct cqp_bw_result r;
	uint64_t t0 = 777;

	/* Shorter than two intervals: peak not measured. */
	cqp_bw_start(&m, t0, 1000 * MS);
	cqp_bw_add(&m, t0 + 100 * MS, 4096, 1);
	cqp_bw_add(&m, t0 + 500 * MS, 4096, 1);
	cqp_bw_finish(&m, &r);
	CHECK_NEAR(r.seconds, 0.5, 1e-12);
	CHECK_NEAR(r.avg_bps, 8192 / 0.5, 1e-9);
	CHECK(isnan(r.peak_bps));
	/* 1.99 intervals: still not; 2: measured. */
	cqp_bw_start(&m, t0, 100 * MS);
	cqp_bw_add(&m, t0 + 150 * MS, 1000, 1);
	cqp_bw_add(&m, t0 + 199 * MS, 1000, 1);
	cqp_bw_finish(&m, &r);
	CHECK(isnan(r.peak_bps));
	cqp_bw_add(&m, t0 + 200 * MS, 1000, 1);
	cqp_bw_finish(&m, &r);
	CHECK_NEAR(r.peak_bps, 2000 / 0.1, 1e-9); /* [100, 200) ms */

	/* A silent gap spanning many windows: the first window counts,
	 * the empty ones do not drag anything, the last is partial. */
	cqp_bw_start(&m, t0, 100 * MS);
	cqp_bw_add(&m, t0 + 50 * MS, 1000, 1);
	cqp_bw_add(&m, t0 + 5010 * MS, 1000, 1);
	cqp_bw_finish(&m, &r);
	CHECK_NEAR(r.peak_bps, 10000, 1e-9);
	CHECK_NEAR(r.avg_bps, 2000 / 5.01, 1e-9);

	/* Nothing at all: zeros, no division by zero. */
	cqp_bw_start(&m, t0, 100 * MS);
	cqp_bw_finish(&m, &r);
	CHECK(r.seconds == 0 && r.avg_bps == 0 && isnan(r.peak_bps) &&
	      r.msg_rate == 0);
}

/* --threads: two threads' sets merged give the statistics of the union,
 * samples exactly, histograms bucket for bucket. */
static void test_merge(void)
{
	struct cqp_samples a, b;
	struct cqp_hist ha, hb, hall;
	struct cqp_summary sum;

	CHECK(cqp_samples_init(&a, 3) == 0 && cqp_samples_init(&b, 5) == 0);
	cqp_hist_init(&ha);
	cqp_hist_init(&hb);
	cqp_hist_init(&hall);
	for (int i = 1; i <= 3; i++) {
		cqp_samples_add(&a, 10.0 * i);
		cqp_hist_add(&ha, 10u * (unsigned)i);
		cqp_hist_add(&hall, 10u * (unsigned)i);
	}
	for (int i = 4; i <= 8; i++) {
		cqp_samples_add(&b, 10.0 * i);
		cqp_hist_add(&hb, 1000u * (unsigned)i);
		cqp_hist_add(&hall, 1000u * (unsigned)i);
	}
	CHECK(cqp_samples_append(&a, &b) == 0);
	CHECK(a.n == 8 && a.cap >= 8);
	cqp_samples_summary(&a, &sum);
	CHECK(sum.min == 10 && sum.max == 80 && sum.p50 == 40 && sum.avg == 45);
	cqp_hist_merge(&ha, &hb);
	CHECK(ha.n == 8 && ha.min == 10 && ha.max == 8000 &&
	      ha.sum == hall.sum && ha.sumsq == hall.sumsq &&
	      memcmp(ha.count, hall.count, sizeof(ha.count)) == 0);
	cqp_hist_init(&hb);
	cqp_hist_merge(&ha, &hb); /* an empty set changes nothing */
	CHECK(ha.n == 8 && ha.min == 10);
	cqp_samples_free(&a);
	cqp_samples_free(&b);
}

int main(void)
{
	test_merge();
	test_samples_known();
	test_samples_ranks();
	test_samples_small();
	test_hist_buckets();
	test_hist_known();
	test_hist_random();
	test_bw_constant();
	test_bw_burst();
	test_bw_short_and_gaps();
	return check_done("test_stats");
}
