/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/policy.h"

#include <math.h>
#include <string.h>

#include "base/options.h"
#include "base/rng.h"

unsigned cqp_gaps_bucket(uint64_t ns)
{
	unsigned lg, b;

	if (ns < 1ull << CQP_GAPS_LO_LOG2)
		return 0;
	lg = 63u - (unsigned)__builtin_clzll(ns);
	/* The two bits below the leading one pick the quarter. */
	b = 1 + CQP_GAPS_SUB * (lg - CQP_GAPS_LO_LOG2) +
	    (unsigned)((ns >> (lg - 2)) & 3u);
	return b < CQP_GAPS_N ? b : CQP_GAPS_N - 1;
}

uint64_t cqp_gaps_edge(unsigned b)
{
	unsigned lg, q;

	if (b == 0)
		return 1ull << CQP_GAPS_LO_LOG2;
	lg = (b - 1) / CQP_GAPS_SUB + CQP_GAPS_LO_LOG2;
	q = (b - 1) % CQP_GAPS_SUB;
	return (1ull << lg) + ((uint64_t)(q + 1) << (lg - 2));
}

void cqp_gaps_add(struct cqp_gaps *g, uint64_t ns, double weight)
{
	unsigned b = cqp_gaps_bucket(ns);

	g->w[b] += weight;
	g->sum[b] += weight * (double)ns;
	g->total += weight;
}

uint64_t cqp_gaps_quantile(const struct cqp_gaps *g, double share)
{
	double acc = 0;

	if (g->total <= 0)
		return 0;
	for (unsigned b = 0; b < CQP_GAPS_N; b++) {
		acc += g->w[b];
		if (acc >= share * g->total * (1 - 1e-12))
			return cqp_gaps_edge(b);
	}
	return cqp_gaps_edge(CQP_GAPS_N - 1);
}

double cqp_gaps_mean(const struct cqp_gaps *g)
{
	double s = 0;

	if (g->total <= 0)
		return NAN;
	for (unsigned b = 0; b < CQP_GAPS_N; b++)
		s += g->sum[b];
	return s / g->total;
}

static void halve(struct cqp_gaps *g)
{
	for (unsigned b = 0; b < CQP_GAPS_N; b++) {
		g->w[b] *= 0.5;
		g->sum[b] *= 0.5;
	}
	g->total *= 0.5;
	g->added = 0;
}

void cqp_policy_init(struct cqp_policy *p, uint32_t mode, uint32_t empty_n,
		     uint32_t spin_us, uint32_t target_us)
{
	double wake = p->wakes_measured ? p->wake_ns : CQP_POLICY_WAKE_GUESS_NS;
	uint64_t measured = p->wakes_measured;
	struct cqp_median_ring ring = p->wake_cpu;

	/* A wakeup's cost is the machine's: it outlives a mode switch. */
	memset(p, 0, sizeof(*p));
	p->wake_cpu = ring;
	p->mode = mode;
	p->empty_n = empty_n ? empty_n : 1;
	p->spin_ns = (uint64_t)spin_us * 1000u;
	p->target_ns = (uint64_t)target_us * 1000u;
	p->wake_ns = wake;
	p->wakes_measured = measured;
	p->rng = 0x2545f4914f6cdd1dull;
}

bool cqp_policy_wants_gaps(const struct cqp_policy *p)
{
	return p->mode == CQP_CQ_TIMER || p->mode == CQP_CQ_ADAPTIVE;
}

bool cqp_policy_wants_wake_cost(const struct cqp_policy *p)
{
	return p->mode == CQP_CQ_SKI || p->mode == CQP_CQ_SKI_RAND ||
	       p->mode == CQP_CQ_ADAPTIVE;
}

void cqp_policy_gap(struct cqp_policy *p, uint64_t gap_ns, uint32_t n)
{
	/* A running mean over about the last 16 gaps. */
	p->mean_gap_ns =
	    p->gaps_seen
		? p->mean_gap_ns + ((double)gap_ns - p->mean_gap_ns) / 16.0
		: (double)gap_ns;
	for (uint32_t i = 1; i < n && i < 64; i++)
		p->mean_gap_ns -= p->mean_gap_ns / 16.0;
	if (p->mode != CQP_CQ_ADAPTIVE) {
		p->gaps_seen += n;
		return;
	}
	cqp_gaps_add(&p->gaps, gap_ns, 1);
	if (n > 1)
		cqp_gaps_add(&p->gaps, 0, n - 1);
	/* A sleep through this gap delays all n of the batch after it. */
	cqp_gaps_add(&p->delayed, gap_ns, n);
	p->gaps.added += n;
	if (p->gaps.added >= CQP_POLICY_HALFLIFE) {
		halve(&p->gaps);
		halve(&p->delayed);
	}
	p->gaps_seen += n;
	p->since_choice += n;
	if (p->since_choice >= CQP_POLICY_RECHOOSE) {
		p->since_choice = 0;
		p->chosen_ns =
		    p->gaps_seen < CQP_POLICY_WARM
			? (uint64_t)p->wake_ns
			: cqp_policy_adaptive(&p->gaps, &p->delayed, p->wake_ns,
					      p->target_ns);
	}
}

void cqp_median_ring_add(struct cqp_median_ring *r, uint64_t ns)
{
	r->v[r->n++ % CQP_POLICY_WAKES] =
	    ns < UINT32_MAX ? (uint32_t)ns : UINT32_MAX;
}

uint32_t cqp_median_ring_get(const struct cqp_median_ring *r)
{
	uint32_t v[CQP_POLICY_WAKES];
	unsigned n;

	if (!r->n)
		return 0;
	n = r->n < CQP_POLICY_WAKES ? (unsigned)r->n : CQP_POLICY_WAKES;
	memcpy(v, r->v, n * sizeof(v[0]));
	/* Insertion sort: at most 15, once a wakeup. */
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint32_t t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[(n - 1) / 2];
}

void cqp_policy_wake_cost(struct cqp_policy *p, uint64_t cpu_ns)
{
	struct cqp_median_ring r;

	cqp_median_ring_add(&p->wake_cpu, cpu_ns);
	p->wakes_measured++;
	/* Below CQP_POLICY_WAKES_MIN samples the guess fills in: a first
	 * wakeup runs cold code (under TCG, code translated the first time)
	 * and once read milliseconds, which alone made ski spin that long
	 * and never sleep again to learn better. */
	r = p->wake_cpu;
	while (r.n < CQP_POLICY_WAKES_MIN)
		cqp_median_ring_add(&r, CQP_POLICY_WAKE_GUESS_NS);
	p->wake_ns = cqp_median_ring_get(&r);
}

uint64_t cqp_policy_ski_rand(double wake_ns, double u)
{
	return (uint64_t)(wake_ns * log(1.0 + u * (M_E - 1.0)));
}

uint64_t cqp_policy_spell(struct cqp_policy *p)
{
	p->napped = false;
	switch (p->mode) {
	case CQP_CQ_HYBRID:
		p->budget_ns = p->spin_ns;
		break;
	case CQP_CQ_SKI:
		p->budget_ns = (uint64_t)p->wake_ns;
		break;
	case CQP_CQ_SKI_RAND:
		p->budget_ns =
		    cqp_policy_ski_rand(p->wake_ns, cqp_uniform(&p->rng));
		break;
	case CQP_CQ_ADAPTIVE:
		p->budget_ns = p->gaps_seen < CQP_POLICY_WARM
				   ? (uint64_t)p->wake_ns
				   : p->chosen_ns;
		break;
	case CQP_CQ_TIMER:
		/* What the nap will be: the spell's own budget. */
		p->budget_ns = (uint64_t)(p->mean_gap_ns / 2);
		if (p->budget_ns > CQP_POLICY_NAP_MAX_NS)
			p->budget_ns = CQP_POLICY_NAP_MAX_NS;
		break;
	default:
		p->budget_ns = 0;
		break;
	}
	return p->budget_ns;
}

enum cqp_policy_act cqp_policy_next(struct cqp_policy *p, uint64_t idle_ns,
				    uint64_t empty_run, uint64_t *nap_ns)
{
	switch (p->mode) {
	case CQP_CQ_POLL:
	case CQP_CQ_MEM:
		return CQP_POLICY_POLL;
	case CQP_CQ_EMPTY:
		return empty_run < p->empty_n ? CQP_POLICY_POLL
					      : CQP_POLICY_ARM;
	case CQP_CQ_TIMER:
		if (!p->napped && idle_ns < p->budget_ns) {
			p->napped = true;
			*nap_ns = p->budget_ns - idle_ns;
			return CQP_POLICY_NAP;
		}
		return idle_ns < (uint64_t)p->mean_gap_ns ? CQP_POLICY_POLL
							  : CQP_POLICY_ARM;
	case CQP_CQ_HYBRID:
	case CQP_CQ_SKI:
	case CQP_CQ_SKI_RAND:
	case CQP_CQ_ADAPTIVE:
		return idle_ns < p->budget_ns ? CQP_POLICY_POLL
					      : CQP_POLICY_ARM;
	default: /* event */
		return CQP_POLICY_ARM;
	}
}

/* The share of d's weight above budget s (the completions a sleep after
 * spinning s delays). */
static double share_above(const struct cqp_gaps *d, double s)
{
	double above = 0;

	if (d->total <= 0)
		return 0;
	for (unsigned b = 0; b < CQP_GAPS_N; b++)
		if ((double)cqp_gaps_edge(b) > s)
			above += d->w[b];
	return above / d->total;
}

uint64_t cqp_policy_adaptive(const struct cqp_gaps *g,
			     const struct cqp_gaps *delayed, double wake_ns,
			     uint64_t target_ns)
{
	double below_w = 0, below_sum = 0, best = INFINITY;
	uint64_t best_s = 0;

	if (g->total <= 0)
		return (uint64_t)wake_ns;
	/* s = 0: every gap slept through, every completion delayed. */
	if (!target_ns) {
		best = wake_ns;
		best_s = 0;
	}
	for (unsigned b = 0; b < CQP_GAPS_N; b++) {
		double s, cost;

		if (g->w[b] <= 0)
			continue;
		below_w += g->w[b];
		below_sum += g->sum[b];
		s = (double)cqp_gaps_edge(b);
		/* With a target, a wakeup's latency (of which its CPU is
		 * only a lower bound) may reach it: few may pay one. */
		if (target_ns && share_above(delayed, s) > CQP_POLICY_TAIL)
			continue;
		cost = (below_sum + (g->total - below_w) * (s + wake_ns)) /
		       g->total;
		if (cost < best) {
			best = cost;
			best_s = (uint64_t)s;
		}
	}
	return best_s;
}

uint32_t cqp_batch_next(uint32_t batch, uint32_t asked, int got)
{
	if (got <= 0)
		return batch;
	if ((uint32_t)got == asked && asked == batch)
		return batch * 2 <= CQP_BATCH_AUTO_MAX ? batch * 2
						       : CQP_BATCH_AUTO_MAX;
	if ((uint64_t)got * 100 < (uint64_t)asked * 85)
		return batch / 2 >= CQP_BATCH_AUTO_MIN ? batch / 2
						       : CQP_BATCH_AUTO_MIN;
	return batch;
}
