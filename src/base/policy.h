/* SPDX-License-Identifier: BSD-2-Clause */
/* Completion policies: after an empty poll, keep polling, nap on a
 * timer, or arm the CQ and sleep?  Pure functions of the idle time, the
 * empty polls, the gaps seen between completions and the measured CPU
 * cost of a wakeup, so that each rule is tested without a device (the
 * engine, verbs/completion.c, only feeds and obeys them).  cqperf(7)
 * POLICIES says where each comes from:
 *
 *  hybrid    spin spin_ns after the last completion, then sleep;
 *  empty:N   sleep after N empty polls in a row (NAPI, DPDK);
 *  timer     nap half the mean gap, poll until a whole mean passed,
 *            then sleep (the block layer's hybrid polling);
 *  ski       spin for what a wakeup costs, then sleep (2-competitive);
 *  ski:rand  a budget drawn on [0, cost] with density e^(x/B) (e/(e-1));
 *  adaptive  the budget of least expected CPU over the recent gaps (the
 *            ski-rental problem with the gaps known); with --p99-target,
 *            at most CQP_POLICY_TAIL of the completions delayed by a
 *            sleep.
 */
#ifndef CQP_POLICY_H
#define CQP_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* Quarter-octave buckets from 64 ns (bucket 0: below) to 2^37 ns. */
#define CQP_GAPS_SUB	 4
#define CQP_GAPS_LO_LOG2 6
#define CQP_GAPS_N	 (1 + CQP_GAPS_SUB * (37 - CQP_GAPS_LO_LOG2))

/* A histogram of durations: weights (decayed for gaps), and the sum of
 * the values in each bucket, so means need no midpoints. */
struct cqp_gaps {
	double w[CQP_GAPS_N], sum[CQP_GAPS_N];
	double total;
	uint64_t added; /* since the last halving */
};

unsigned cqp_gaps_bucket(uint64_t ns);
/* The bucket's upper edge: every value in it is below. */
uint64_t cqp_gaps_edge(unsigned b);
void cqp_gaps_add(struct cqp_gaps *g, uint64_t ns, double weight);
/* The smallest edge below which at least share (0..1) of the weight
 * lies; 0 when empty. */
uint64_t cqp_gaps_quantile(const struct cqp_gaps *g, double share);
double cqp_gaps_mean(const struct cqp_gaps *g);

/* Gaps halve their weight every this many: the recent ones count. */
#define CQP_POLICY_HALFLIFE 512
/* The share of completions adaptive may delay by a sleep when there is a
 * --p99-target: half the 1 % above the p99, so the p99 stays one caught
 * spinning.  Whatever the target: a wakeup's measured CPU is only a
 * lower bound of the latency it adds. */
#define CQP_POLICY_TAIL 0.005
/* Adaptive chooses again after this many gaps... */
#define CQP_POLICY_RECHOOSE 32
/* ...and spins the ski budget until it has seen this many. */
#define CQP_POLICY_WARM 64
/* A wakeup's cost is the median of this many last ones: under TCG a
 * wakeup now and then reads milliseconds (the guest's clock jumps), which
 * would drag a mean. */
#define CQP_POLICY_WAKES 15
/* ...once there are this many: until then the guess stands in for the
 * missing ones, so that one cold wakeup cannot set it. */
#define CQP_POLICY_WAKES_MIN 3
/* A wakeup's cost before the first is measured. */
#define CQP_POLICY_WAKE_GUESS_NS 20000u
/* timer: the longest nap (a rate that stops must not stall a wait). */
#define CQP_POLICY_NAP_MAX_NS 100000000u
/* --poll-batch auto (perftest 6.27's dynamic CQE polling). */
#define CQP_BATCH_AUTO_MIN 16u
#define CQP_BATCH_AUTO_MAX 1024u

enum cqp_policy_act {
	CQP_POLICY_POLL, /* poll again */
	CQP_POLICY_NAP,	 /* sleep *nap_ns on a timer (not armed), then poll */
	CQP_POLICY_ARM,	 /* arm the CQs and sleep until an event */
};

/* The median of the last CQP_POLICY_WAKES samples (ns). */
struct cqp_median_ring {
	uint32_t v[CQP_POLICY_WAKES];
	uint64_t n; /* samples taken */
};

/* Adds one sample (ns, saturating at 2^32 - 1). */
void cqp_median_ring_add(struct cqp_median_ring *r, uint64_t ns);
/* The median of the last samples; 0 before the first. */
uint32_t cqp_median_ring_get(const struct cqp_median_ring *r);

struct cqp_policy {
	uint32_t mode; /* enum cqp_cq_mode */
	uint32_t empty_n;
	uint64_t spin_ns;   /* hybrid */
	uint64_t target_ns; /* adaptive: --p99-target; 0 none */
	double wake_ns;	    /* CPU per wakeup: the median of the last ones */
	uint64_t wakes_measured;
	struct cqp_median_ring wake_cpu;
	double mean_gap_ns;	 /* timer: a running mean */
	struct cqp_gaps gaps;	 /* a weight a gap, 0 for a batch's rest */
	struct cqp_gaps delayed; /* each gap weighed by the batch after it */
	uint64_t gaps_seen, since_choice;
	uint64_t chosen_ns; /* adaptive's budget */
	uint64_t budget_ns; /* the idle spell's, drawn at its start */
	bool napped;	    /* timer: this spell's nap is taken */
	uint64_t rng;
};

void cqp_policy_init(struct cqp_policy *p, uint32_t mode, uint32_t empty_n,
		     uint32_t spin_us, uint32_t target_us);
/* Whether the engine must read the clock at each completion (gaps). */
bool cqp_policy_wants_gaps(const struct cqp_policy *p);
/* Whether the engine must time each wakeup's CPU. */
bool cqp_policy_wants_wake_cost(const struct cqp_policy *p);
/* n completions found, the first gap_ns after the one before (the rest
 * of a batch came with it). */
void cqp_policy_gap(struct cqp_policy *p, uint64_t gap_ns, uint32_t n);
/* One wakeup's CPU time, from arming to the events taken. */
void cqp_policy_wake_cost(struct cqp_policy *p, uint64_t cpu_ns);
/* An idle spell starts (the first empty poll after a completion): draws
 * its budget, returned (ns; 0 for modes without one). */
uint64_t cqp_policy_spell(struct cqp_policy *p);
/* After the empty_run-th empty poll of a spell, idle_ns after the last
 * completion: what to do (nap_ns set for CQP_POLICY_NAP). */
enum cqp_policy_act cqp_policy_next(struct cqp_policy *p, uint64_t idle_ns,
				    uint64_t empty_run, uint64_t *nap_ns);

/* adaptive's rule (cqperf(7) POLICIES): over the gaps g, the budget s
 * among 0 and the bucket edges that minimises
 *   E[min(G, s)] + P(G > s) * wake_ns      (CPU per gap)
 * and, with a target_ns, subject to the share of completions a sleep
 * delays (delayed: each gap weighed by the batch that ends it) being at
 * most CQP_POLICY_TAIL.  Below CQP_POLICY_WARM gaps the policy spins
 * wake_ns (ski). */
uint64_t cqp_policy_adaptive(const struct cqp_gaps *g,
			     const struct cqp_gaps *delayed, double wake_ns,
			     uint64_t target_ns);
/* ski:rand's budget for u uniform in (0, 1]: B ln(1 + u (e - 1)). */
uint64_t cqp_policy_ski_rand(double wake_ns, double u);
/* --poll-batch auto: the next batch after a poll that asked for `asked`
 * (the batch, or less when the caller's room was smaller) and got `got`:
 * doubles on a full batch, halves below 85 % of what it asked. */
uint32_t cqp_batch_next(uint32_t batch, uint32_t asked, int got);

#endif
