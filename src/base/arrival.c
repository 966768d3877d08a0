/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/arrival.h"

#include <math.h>

#include "base/rng.h"

void cqp_arrivals_init(struct cqp_arrivals *a,
		       const struct cqp_arrival_shape *s, uint64_t rate,
		       uint64_t start_ns, uint64_t seed)
{
	double alpha = s->pareto_milli / 1000.0, gap = 1e9 / (double)rate;

	*a = (struct cqp_arrivals){
	    .kind = s->kind,
	    .burst = s->burst ? s->burst : 1,
	    .gap_ns = gap,
	    .rate = rate,
	    .on_ms = s->on_ms ? s->on_ms : 1,
	    .off_ms = s->off_ms,
	    /* The scale whose mean x_m * ALPHA / (ALPHA - 1) is 1/R. */
	    .xm_ns = alpha > 1 ? gap * (alpha - 1) / alpha : gap,
	    .inv_alpha = alpha > 1 ? 1 / alpha : 1,
	    .start_ns = start_ns,
	    .rng = seed ? seed : 0x9e3779b97f4a7c15ull,
	    .last = start_ns,
	};
}

/* Offsets from start, not sums of rounded gaps: no drift over a run. */
static double offset_ns(struct cqp_arrivals *a)
{
	switch (a->kind) {
	case CQP_ARRIVAL_POISSON:
		if (a->n)
			a->t_ns += -log(cqp_uniform(&a->rng)) * a->gap_ns;
		return a->t_ns;
	case CQP_ARRIVAL_BURST:
		return (double)(a->n / a->burst) * a->burst * a->gap_ns;
	case CQP_ARRIVAL_ONOFF: {
		/* n/R of ON time, in ms * R units: the cycle is exact in
		 * integers, so none lands at an ON window's end by rounding. */
		uint64_t on = a->n * 1000, per = a->rate * a->on_ms,
			 cycle = on / per;

		return (double)cycle * (a->on_ms + a->off_ms) * 1e6 +
		       (double)(on - cycle * per) * 1e6 / (double)a->rate;
	}
	case CQP_ARRIVAL_PARETO:
		if (a->n)
			a->t_ns +=
			    a->xm_ns / pow(cqp_uniform(&a->rng), a->inv_alpha);
		return a->t_ns;
	default:
		return (double)a->n * a->gap_ns;
	}
}

uint64_t cqp_arrivals_next(struct cqp_arrivals *a)
{
	uint64_t t = a->start_ns + (uint64_t)llround(offset_ns(a));

	if (t < a->last)
		t = a->last;
	if (a->n) {
		double gap = (double)(t - a->last), d = gap - a->mean;

		a->gaps++;
		a->mean += d / (double)a->gaps;
		a->m2 += d * (gap - a->mean);
	}
	a->n++;
	a->last = t;
	return t;
}

void cqp_arrivals_mark(struct cqp_arrivals *a)
{
	a->gaps = 0;
	a->mean = a->m2 = 0;
}

double cqp_arrivals_cv(const struct cqp_arrivals *a)
{
	if (a->gaps < 2 || a->mean <= 0)
		return NAN;
	return sqrt(a->m2 / (double)a->gaps) / a->mean;
}
