/* SPDX-License-Identifier: BSD-2-Clause */
/* Timestamps, latency statistics and bandwidth metering. */
#ifndef CQP_STATS_H
#define CQP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/clock.h" /* cqp_now_ns */

/* Summary of a latency distribution, all in the unit of the samples. */
struct cqp_summary {
	uint64_t count;
	double min, max, avg, stdev;
	double p50, p99, p99_9, p99_99;
};

/* Exact statistics from every stored sample (nanoseconds or any unit). */
struct cqp_samples {
	double *v;
	size_t n, cap;
};

int cqp_samples_init(struct cqp_samples *s, size_t cap); /* 0 or -ENOMEM */
void cqp_samples_free(struct cqp_samples *s);
/* Adds a sample; past cap the sample is dropped and false returned. */
static inline bool cqp_samples_add(struct cqp_samples *s, double v)
{
	if (s->n >= s->cap)
		return false;
	s->v[s->n++] = v;
	return true;
}
/* Appends every sample of src, growing dst: 0 or -ENOMEM. */
int cqp_samples_append(struct cqp_samples *dst, const struct cqp_samples *src);
/* Sorts in place.  Percentile p is the nearest-rank value: the smallest
 * sample with at least p% of samples <= it.  stdev is the population
 * standard deviation.  An empty set gives an all-zero summary. */
void cqp_samples_summary(struct cqp_samples *s, struct cqp_summary *out);

/* Log-linear histogram for runs too long to store every sample: values
 * (non-negative integers, e.g. ns) are bucketed by power of two, each
 * power split into CQP_HIST_SUB linear sub-buckets, so a reported
 * percentile is within 1/(2 * CQP_HIST_SUB) (0.8 %) of the true sample value
 * (values below CQP_HIST_SUB are exact).  min, max, avg and stdev are
 * exact (kept alongside). */
#define CQP_HIST_SUB_BITS 6
#define CQP_HIST_SUB	  (1u << CQP_HIST_SUB_BITS)
#define CQP_HIST_BUCKETS  ((64 - CQP_HIST_SUB_BITS + 1) * CQP_HIST_SUB)

struct cqp_hist {
	uint64_t count[CQP_HIST_BUCKETS];
	uint64_t n;
	uint64_t min, max;
	double sum, sumsq;
};

void cqp_hist_init(struct cqp_hist *h);
void cqp_hist_add(struct cqp_hist *h, uint64_t v);
/* Adds every sample of src to dst: the histogram of both sets. */
void cqp_hist_merge(struct cqp_hist *dst, const struct cqp_hist *src);
/* Percentiles use the bucket midpoint, clamped to [min, max]. */
void cqp_hist_summary(const struct cqp_hist *h, struct cqp_summary *out);
/* The same summary in microseconds, from one in nanoseconds. */
void cqp_summary_ns_to_us(const struct cqp_summary *ns, struct cqp_summary *us);
/* Lower bound and width of bucket i, for rendering. */
void cqp_hist_bucket_range(unsigned i, uint64_t *lo, uint64_t *width);

/* Bandwidth meter: average over the whole run and peak over fixed
 * intervals.  Feed it completed bytes with a timestamp; intervals that
 * the run does not fill completely are not counted as peaks, so a run
 * shorter than one interval reports peak = average. */
struct cqp_bw_meter {
	uint64_t interval_ns;
	uint64_t start_ns, last_ns;
	uint64_t total_bytes, total_msgs;
	uint64_t win_start_ns, win_bytes;
	double peak_bps; /* bytes per second */
};

void cqp_bw_start(struct cqp_bw_meter *m, uint64_t now_ns,
		  uint64_t interval_ns);
void cqp_bw_add(struct cqp_bw_meter *m, uint64_t now_ns, uint64_t bytes,
		uint64_t msgs);
struct cqp_bw_result {
	double seconds;
	uint64_t bytes, msgs;
	double avg_bps, peak_bps; /* bytes per second */
	double msg_rate;	  /* messages per second */
};
void cqp_bw_finish(const struct cqp_bw_meter *m, struct cqp_bw_result *r);

#endif
