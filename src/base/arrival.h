/* SPDX-License-Identifier: BSD-2-Clause */
/* Open-loop schedules: when each request of a load at a given rate is
 * due, drawn before it is sent, so that a stalled service cannot slow
 * the load down (no coordinated omission: latency counts from here). */
#ifndef CQP_ARRIVAL_H
#define CQP_ARRIVAL_H

#include <stdint.h>

enum cqp_arrival_kind {
	CQP_ARRIVAL_FIXED,   /* one every 1/R seconds */
	CQP_ARRIVAL_POISSON, /* exponential gaps of mean 1/R */
	CQP_ARRIVAL_BURST,   /* N at once every N/R seconds */
	CQP_ARRIVAL_ONOFF,   /* every 1/R seconds for ON ms, then OFF ms none */
	CQP_ARRIVAL_PARETO,  /* Pareto gaps of shape ALPHA and mean 1/R */
};

/* onoff:ON_MS,OFF_MS: each 1..CQP_ONOFF_MS_MAX. */
#define CQP_ONOFF_MS_MAX 60000
/* pareto:ALPHA in thousandths, so that it travels exactly: 1.1..10
 * (ALPHA <= 1 has no finite mean). */
#define CQP_PARETO_MILLI_MIN 1100
#define CQP_PARETO_MILLI_MAX 10000

/* What shapes a schedule besides its rate: --arrival's fields. */
struct cqp_arrival_shape {
	uint32_t kind;		/* enum cqp_arrival_kind */
	uint32_t burst;		/* burst:N */
	uint32_t on_ms, off_ms; /* onoff:ON_MS,OFF_MS */
	uint32_t pareto_milli;	/* pareto:ALPHA, ALPHA * 1000 */
};

struct cqp_arrivals {
	uint32_t kind, burst;
	double gap_ns; /* mean gap: 1e9 / rate */
	uint64_t rate;
	uint32_t on_ms, off_ms;
	double xm_ns, inv_alpha; /* pareto: scale and 1 / shape */
	uint64_t start_ns;
	uint64_t n;    /* requests scheduled so far */
	double t_ns;   /* poisson, pareto: the last one's time after start */
	uint64_t rng;  /* xorshift64* state */
	uint64_t last; /* the last time handed out */
	/* The gaps handed out since the last mark (Welford). */
	uint64_t gaps;
	double mean, m2;
};

/* rate > 0 per second; s's fields of other kinds are ignored, those of
 * its own in range (a burst of 0 is 1); the first request is due at
 * start_ns. */
void cqp_arrivals_init(struct cqp_arrivals *a,
		       const struct cqp_arrival_shape *s, uint64_t rate,
		       uint64_t start_ns, uint64_t seed);
/* When the next request is due (ns, never before the previous one). */
uint64_t cqp_arrivals_next(struct cqp_arrivals *a);
/* Forgets the gaps so far: the next one handed out starts the count. */
void cqp_arrivals_mark(struct cqp_arrivals *a);
/* Coefficient of variation (stdev / mean) of the gaps since the mark:
 * 0 for fixed arrivals, about 1 for Poisson; NaN below two gaps. */
double cqp_arrivals_cv(const struct cqp_arrivals *a);

#endif
