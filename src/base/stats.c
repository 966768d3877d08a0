/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- exact statistics from stored samples ---- */

int cqp_samples_init(struct cqp_samples *s, size_t cap)
{
	s->n = 0;
	s->cap = 0;
	/* calloc checks cap * sizeof for overflow; one element at least so
	 * that a zero cap still yields a pointer we can free. */
	s->v = calloc(cap ? cap : 1, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	s->cap = cap;
	return 0;
}

void cqp_samples_free(struct cqp_samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

int cqp_samples_append(struct cqp_samples *dst, const struct cqp_samples *src)
{
	if (dst->n + src->n > dst->cap) {
		size_t cap = dst->n + src->n;
		double *v = realloc(dst->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		dst->v = v;
		dst->cap = cap;
	}
	if (src->n)
		memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
	dst->n += src->n;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* 1-based nearest rank for percentile p of n values: ceil(p/100 * n),
 * within [1, n].  The small slack keeps 99.9 * 1000 from becoming
 * 999.0000000000001 and rounding up to the next rank. */
static uint64_t nearest_rank(double p, uint64_t n)
{
	double r = ceil(p / 100.0 * (double)n - 1e-9);

	if (r < 1)
		return 1;
	if (r > (double)n)
		return n;
	return (uint64_t)r;
}

void cqp_samples_summary(struct cqp_samples *s, struct cqp_summary *out)
{
	double sum = 0, dev = 0, avg;
	size_t i, n = s->n;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(s->v, n, sizeof(*s->v), cmp_double);
	for (i = 0; i < n; i++)
		sum += s->v[i];
	avg = sum / (double)n;
	/* Second pass around the mean: no cancellation as with sum of
	 * squares minus squared sum. */
	for (i = 0; i < n; i++)
		dev += (s->v[i] - avg) * (s->v[i] - avg);
	out->count = n;
	out->min = s->v[0];
	out->max = s->v[n - 1];
	out->avg = avg;
	out->stdev = sqrt(dev / (double)n);
	out->p50 = s->v[nearest_rank(50, n) - 1];
	out->p99 = s->v[nearest_rank(99, n) - 1];
	out->p99_9 = s->v[nearest_rank(99.9, n) - 1];
	out->p99_99 = s->v[nearest_rank(99.99, n) - 1];
}

/* ---- log-linear histogram ----
 *
 * Values below CQP_HIST_SUB get a bucket each (index = value).  A larger
 * value with its top bit at position msb keeps its CQP_HIST_SUB_BITS + 1
 * leading bits: shift = msb - CQP_HIST_SUB_BITS drops the rest, so the
 * bucket width is 2^shift while the value is at least CQP_HIST_SUB *
 * 2^shift.  The midpoint is then within 2^shift / 2, i.e. a relative
 * error of at most 1 / (2 * CQP_HIST_SUB), half the documented bound.
 * Shifts 0..63-SUB_BITS follow the exact range, hence
 * (64 - SUB_BITS + 1) * SUB buckets.
 */
static unsigned hist_index(uint64_t v)
{
	unsigned msb, shift;

	if (v < CQP_HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	shift = msb - CQP_HIST_SUB_BITS;
	return (shift + 1) * CQP_HIST_SUB +
	       (unsigned)((v >> shift) - CQP_HIST_SUB);
}

void cqp_hist_bucket_range(unsigned i, uint64_t *lo, uint64_t *width)
{
	unsigned shift;

	if (i >= CQP_HIST_BUCKETS)
		i = CQP_HIST_BUCKETS - 1;
	if (i < CQP_HIST_SUB) {
		*lo = i;
		*width = 1;
		return;
	}
	shift = i / CQP_HIST_SUB - 1;
	*lo = (uint64_t)(CQP_HIST_SUB + i % CQP_HIST_SUB) << shift;
	*width = (uint64_t)1 << shift;
}

void cqp_hist_init(struct cqp_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void cqp_hist_add(struct cqp_hist *h, uint64_t v)
{
	double d = (double)v;

	h->count[hist_index(v)]++;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (h->n == 0 || v > h->max)
		h->max = v;
	h->n++;
	h->sum += d;
	h->sumsq += d * d;
}

void cqp_hist_merge(struct cqp_hist *dst, const struct cqp_hist *src)
{
	if (!src->n)
		return;
	for (unsigned i = 0; i < CQP_HIST_BUCKETS; i++)
		dst->count[i] += src->count[i];
	if (dst->n == 0 || src->min < dst->min)
		dst->min = src->min;
	if (dst->n == 0 || src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
}

/* Value reported for the bucket holding the sample of 1-based rank. */
static double hist_rank_value(const struct cqp_hist *h, uint64_t rank)
{
	uint64_t seen = 0, lo, width, mid;
	unsigned i;

	for (i = 0; i < CQP_HIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen >= rank)
			break;
	}
	cqp_hist_bucket_range(i, &lo, &width);
	mid = lo + width / 2;
	/* The true sample lies in [min, max]; clamping only brings the
	 * estimate closer (and makes one-bucket data exact at the ends). */
	if (mid < h->min)
		mid = h->min;
	if (mid > h->max)
		mid = h->max;
	return (double)mid;
}

void cqp_hist_summary(const struct cqp_hist *h, struct cqp_summary *out)
{
	double n = (double)h->n, var;

	memset(out, 0, sizeof(*out));
	if (h->n == 0)
		return;
	out->count = h->n;
	out->min = (double)h->min;
	out->max = (double)h->max;
	out->avg = h->sum / n;
	var = h->sumsq / n - out->avg * out->avg;
	out->stdev = var > 0 ? sqrt(var) : 0; /* rounding can dip below 0 */
	out->p50 = hist_rank_value(h, nearest_rank(50, h->n));
	out->p99 = hist_rank_value(h, nearest_rank(99, h->n));
	out->p99_9 = hist_rank_value(h, nearest_rank(99.9, h->n));
	out->p99_99 = hist_rank_value(h, nearest_rank(99.99, h->n));
}

/* ---- bandwidth meter ----
 *
 * Windows are [start + k*interval, start + (k+1)*interval).  Bytes count
 * in the window of the timestamp they are reported with.  A window is
 * judged when a later timestamp shows it is over; the one still open at
 * the end is partial and never a peak candidate.
 */
void cqp_bw_start(struct cqp_bw_meter *m, uint64_t now_ns, uint64_t interval_ns)
{
	memset(m, 0, sizeof(*m));
	m->interval_ns = interval_ns;
	m->start_ns = m->last_ns = m->win_start_ns = now_ns;
}

void cqp_bw_add(struct cqp_bw_meter *m, uint64_t now_ns, uint64_t bytes,
		uint64_t msgs)
{
	/* A timestamp from before the last one (another thread's clock
	 * read, say) is treated as "now" rather than rewinding windows. */
	if (now_ns < m->last_ns)
		now_ns = m->last_ns;
	if (m->interval_ns && now_ns - m->win_start_ns >= m->interval_ns) {
		double rate =
		    (double)m->win_bytes * 1e9 / (double)m->interval_ns;

		if (rate > m->peak_bps)
			m->peak_bps = rate;
		/* Skipped windows held no bytes: they cannot be peaks. */
		m->win_start_ns = m->start_ns + (now_ns - m->start_ns) /
						    m->interval_ns *
						    m->interval_ns;
		m->win_bytes = 0;
	}
	m->win_bytes += bytes;
	m->total_bytes += bytes;
	m->total_msgs += msgs;
	m->last_ns = now_ns;
}

void cqp_bw_finish(const struct cqp_bw_meter *m, struct cqp_bw_result *r)
{
	memset(r, 0, sizeof(*r));
	r->seconds = (double)(m->last_ns - m->start_ns) / 1e9;
	r->bytes = m->total_bytes;
	r->msgs = m->total_msgs;
	if (r->seconds > 0) {
		r->avg_bps = (double)m->total_bytes / r->seconds;
		r->msg_rate = (double)m->total_msgs / r->seconds;
	}
	/* A run shorter than two windows has no peak to speak of (1000 x
	 * 64 KiB at 200 Gb/s is 2.6 ms): not measured, not the average.  A
	 * peak below the average (slow complete windows, a fast partial
	 * tail) would only confuse a reader. */
	if (!m->interval_ns || m->last_ns - m->start_ns < 2 * m->interval_ns)
		r->peak_bps = NAN;
	else
		r->peak_bps =
		    m->peak_bps > r->avg_bps ? m->peak_bps : r->avg_bps;
}

void cqp_summary_ns_to_us(const struct cqp_summary *ns, struct cqp_summary *us)
{
	*us = *ns;
	us->min = ns->min / 1e3;
	us->max = ns->max / 1e3;
	us->avg = ns->avg / 1e3;
	us->stdev = ns->stdev / 1e3;
	us->p50 = ns->p50 / 1e3;
	us->p99 = ns->p99 / 1e3;
	us->p99_9 = ns->p99_9 / 1e3;
	us->p99_99 = ns->p99_99 / 1e3;
}
