/* SPDX-License-Identifier: BSD-2-Clause */
/* The completion engine: how a thread learns that work finished.
 *
 *  poll   ibv_poll_cq in a loop, poll_batch entries per call;
 *  event  arm, sleep on the completion channel, ack (in batches), then
 *         drain the CQ to empty before arming again;
 *  hybrid like event, but after a wakeup keep polling until no completion
 *         has arrived for spin_us, then arm and sleep;
 *  mem    (--verb write's target) no CQ to wait on: cqp_comp_spin looks
 *         at memory; CQs, where there are some, are polled;
 *  empty:N, timer, ski, ski:rand, adaptive: like hybrid, with the spin
 *         (or nap) that base/policy.h decides.
 *
 * The engine owns the CQs (one per QP) and their channel(s) so it can tell
 * CQs apart by the context an event returns, and it counts everything it
 * does: the counters are the "cost" columns of every report.
 */
#ifndef CQP_COMPLETION_H
#define CQP_COMPLETION_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct pollfd;

#include "base/cpuacct.h"
#include "base/policy.h"
#include "base/record.h"
#include "verbs/watchdog.h"

struct cqp_comp_cfg {
	uint32_t mode; /* enum cqp_cq_mode */
	uint32_t poll_batch;
	uint32_t ack_batch;
	uint32_t spin_us;
	uint32_t empty_n;	/* empty:N */
	uint32_t p99_target_us; /* adaptive */
	bool solicited;		/* arm for solicited completions only */
	bool nonblock;		/* O_NONBLOCK channels served with epoll */
	bool channel_per_cq;	/* else all CQs share one channel */
	int32_t comp_vector;	/* -1: CQ i on vector (first_cq + i) mod N */
	unsigned first_cq;	/* this engine's first CQ in the step's count */
	int cpu;	/* --cpu: its irq and softirq are reported; -1 none */
	int timeout_ms; /* no completion for this long: CQP_E_TIMEOUT */
	unsigned port;	/* -i: errors of other ports are not the run's */
	volatile sig_atomic_t *stop; /* set by a signal handler; may be NULL */
	/* --threads: set when another thread of the step failed (the
	 * waiter is woken by a signal); may be NULL. */
	atomic_int *abort;
	/* --shared-channel: the channel every thread's CQs are on, made by
	 * cqp_comp_set_create (NULL: the engine makes its own); count_shared
	 * says this engine reports it in `channels` (thread 0's). */
	struct ibv_comp_channel *shared;
	bool count_shared;
	/* Set when the step is over for every thread (--shared-channel:
	 * another thread may have reaped this one's last message); a reap
	 * with nothing left then returns 0.  May be NULL. */
	atomic_int *over;
};

struct cqp_comp_counters {
	uint64_t polls, empty_polls, completions;
	uint64_t wakeups, events_acked;
	uint64_t spin_completions, sleep_completions;
	/* --shared-channel: completions of another engine's CQ, and the
	 * time spent waiting for a CQ another thread was draining. */
	uint64_t foreign_completions;
	uint64_t lock_waits, lock_wait_ns;
	/* The policy's (cqp_cost's has_policy figures). */
	uint64_t spin_ns, naps;
	struct cqp_gaps budgets; /* each spell's, unweighted */
	/* --poll-batch auto: polls that found work, and their batches. */
	uint64_t batch_polls, batch_sum, batch_max;
	/* A wakeup's wall-clock time when the policy times its CPU: from
	 * arming to the event, and from the event to the completion it
	 * woke for reaped (the medians of the last ones). */
	struct cqp_median_ring wake_wait, wake_reap;
};

struct cqp_comp;

struct cqp_comp_cq {
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	unsigned unacked;
	bool armed;
	struct cqp_comp *owner;
	/* --shared-channel: makes draining, arming and acking the CQ
	 * exclusive, since any thread may take its event. */
	pthread_mutex_t lock;
};

struct cqp_comp {
	struct cqp_comp_cfg cfg;
	struct ibv_context *ctx; /* its async events are read when idle */
	struct cqp_comp_cq *cqs;
	unsigned ncq;
	struct ibv_comp_channel **chans;
	unsigned nch;
	int epfd;
	struct pollfd *pfd; /* cqp_comp_wait_until's, one per channel */
	unsigned next;	    /* round-robin start of the next poll pass */
	bool shared;	    /* on the step's one channel */
	/* --shared-channel: another engine's CQ whose event this thread
	 * took, drained before its own; NULL: none. */
	struct cqp_comp_cq *woke;
	bool after_wake;  /* draining right after a wakeup */
	uint64_t last_ns; /* time of the last completion (or start) */
	bool progressed;  /* completions since the clock was last read */
	struct cqp_comp_counters cnt;
	struct cqp_cpu_acct acct; /* the measured phase's CPU */
	struct cqp_watchdog
	    wd; /* blocking waits: breaks them at the deadline */
	/* The peer watch (see cqp_comp_watch_peer); NULL: none. */
	int (*peer_check)(void *arg);
	void *peer_arg;
	/* Who a wait that times out names: "peer ADDR:PORT" (set by
	 * cqp_comp_watch_peer), else "the peer". */
	char peer_who[96];
	uint64_t peer_looked_ns; /* the last look */
	/* --cq-mod COUNT,0: fewer than COUNT completions raise no event
	 * (mlx5 has no timer then), so a sleep lasts at most this long
	 * before the CQs are polled again; 0: sleeps end by events. */
	uint64_t residue_ns;
	/* The policy and its idle spell: started at spell_ns, its last
	 * empty poll at spell_last_ns, empty_run polls so far. */
	struct cqp_policy pol;
	bool in_spell;
	uint64_t spell_ns, spell_last_ns, empty_run;
	uint64_t last_comp_ns; /* gaps: the last completion's time */
	/* The wakeup being timed (see wake_wait): its arm and its event,
	 * 0 when none. */
	uint64_t wake_arm_ns, wake_ev_ns;
	bool gaps;	/* the policy learns from gaps (asked per find) */
	uint32_t batch; /* the poll batch (auto: its current size) */
};

/* How often the peer watch looks: after this much silence, then at this
 * pace while the silence lasts. */
#define CQP_COMP_PEER_NS (200ull * 1000 * 1000)

/* The residue poll of --cq-mod COUNT,0 (see residue_ns). */
#define CQP_COMP_RESIDUE_NS (1000ull * 1000)

/* The completion vector of CQ g (of the step's, counted over every
 * thread) for --comp-vector `want` (-1: auto, round robin) on a device
 * with `vectors` of them. */
static inline int cqp_comp_vector_for(int32_t want, unsigned g, int vectors)
{
	return want >= 0 ? want
			 : (int)(g % (unsigned)(vectors > 0 ? vectors : 1));
}

/* Creates ncq CQs of `depth` entries (and channels when the mode needs
 * them). */
int cqp_comp_create(struct cqp_comp *c, struct ibv_context *ctx,
		    const struct cqp_comp_cfg *cfg, unsigned ncq,
		    unsigned depth);
void cqp_comp_destroy(struct cqp_comp *c);

static inline struct ibv_cq *cqp_comp_cq(const struct cqp_comp *c, unsigned i)
{
	return c->cqs[i].cq;
}

/* Hardware CQ moderation on every CQ; a device that refuses it is a
 * CQP_E_DEVICE failure saying so. */
int cqp_comp_moderate(struct cqp_comp *c, uint32_t count, uint32_t usec);

/* Waits, in the configured mode, until at least one completion is
 * available and returns how many were written to wc (<= max, max >= 1).
 * A completion with an error status is a CQP_E_COMPLETION failure; no
 * completion for cfg.timeout_ms is CQP_E_TIMEOUT; *cfg.stop set is
 * CQP_E_INTERRUPTED. */
int cqp_comp_reap(struct cqp_comp *c, struct ibv_wc *wc, int max);
/* One pass over the CQs, never waiting: 0 when nothing was there.  For
 * loops that must act at a time of their own (an open-loop sender's
 * schedule); they keep their own deadline and look at the peer with
 * cqp_comp_check_peer. */
int cqp_comp_poll(struct cqp_comp *c, struct ibv_wc *wc, int max);
/* mem: spins calling look(arg), which returns the messages it found in
 * memory (0: none yet) or a failure, until it finds some: counted as
 * polls, empty polls and completions, with cqp_comp_reap's stop, peer
 * watch and no-progress deadline.  Returns look's count or a failure. */
int cqp_comp_spin(struct cqp_comp *c, int (*look)(void *arg), void *arg);
/* Waits in the configured mode for a completion, but only until
 * deadline_ns (a nanosecond deadline, unlike the millisecond waits
 * below): 0 when it passed first.  Event and hybrid modes sleep on the
 * channels with ppoll.  For an open-loop sender that must be awake when
 * its next request is due. */
int cqp_comp_wait_until(struct cqp_comp *c, struct ibv_wc *wc, int max,
			uint64_t deadline_ns);
/* The same for completions that raise no solicited event (our own
 * sends): armed for solicited events only (--solicited), a sleep would
 * last until the deadline, so it spins instead. */
int cqp_comp_reap_sends(struct cqp_comp *c, struct ibv_wc *wc, int max);
/* reap_from's counterpart. */
int cqp_comp_reap_sends_from(struct cqp_comp *c, struct ibv_wc *wc, int max,
			     uint64_t since_ns, uint32_t wait_ms);

/* Like cqp_comp_reap, but returns 0 when no completion arrived within
 * wait_ms (the blocking event wait may notice up to 500 ms late after a
 * stream of waits that ended in time: see watchdog.h).  For protocols
 * that must act on silence: UD retries, ends. */
int cqp_comp_reap_within(struct cqp_comp *c, struct ibv_wc *wc, int max,
			 uint32_t wait_ms);
/* The same with the wait counted from since_ns (a time the caller has
 * already read), so the hot path reads no clock. */
int cqp_comp_reap_from(struct cqp_comp *c, struct ibv_wc *wc, int max,
		       uint64_t since_ns, uint32_t wait_ms);

/* A wait for a receive: like cqp_comp_reap_from, but a reap that found
 * only our own send completions does not end it.  Returns once a receive
 * is among the completions written (the sends found before it too), wc
 * is full, or the wait ended in silence (0, or the sends found).
 * since_ns 0: the wait counts from the last completion, dated at the
 * next look at the clock (a server's, which reads none per message).
 * Poll mode on one CQ of its own spins without leaving the engine: one
 * return per message, as lean as perftest's loop. */
int cqp_comp_reap_recv_from(struct cqp_comp *c, struct ibv_wc *wc, int max,
			    uint64_t since_ns, uint32_t wait_ms);

/* A dead peer raises no completion: without a look elsewhere a wait for
 * one ends only at the timeout.  cqp_comp_reap calls check(arg) after
 * CQP_COMP_PEER_NS without a completion, then at that pace, and when a
 * completion fails (cqp_comp_reap only); check returns 0 (the peer is fine as
 * far as it can tell) or a failure that ends the wait.  reap_within/reap_from
 * look once when their wait ends in silence, at most every CQP_COMP_PEER_NS (a
 * silent return stays 0 unless the peer is gone).  name, the peer's
 * address, goes into the message of a wait that times out. */

void cqp_comp_watch_peer(struct cqp_comp *c, int (*check)(void *arg), void *arg,
			 const char *name);

/* --threads: one engine per thread over `ncq` CQs each, and with
 * --shared-channel the one channel they all sleep on.  Created in
 * order; destroyed with cqp_comp_set_destroy whatever was made. */
struct cqp_comp_set {
	struct cqp_comp *comp;
	unsigned n; /* created */
	struct ibv_comp_channel *shared;
};

struct cqp_comp_set_req {
	const struct cqp_params *p;
	bool receiver;
	unsigned ncq;
	uint32_t depth;
	volatile sig_atomic_t *stop;
	atomic_int *abort, *over;
};

int cqp_comp_set_create(struct cqp_comp_set *s, struct ibv_context *ctx,
			const struct cqp_comp_set_req *req);
void cqp_comp_set_destroy(struct cqp_comp_set *s);

/* The same look at most every CQP_COMP_PEER_NS, silence or not, for
 * loops that never fall silent (a UD sender's own completions keep
 * coming when the receiver is gone).  now_ns: a time the caller read. */
int cqp_comp_check_peer(struct cqp_comp *c, uint64_t now_ns);

/* Zeroes the counters and starts the CPU and wall clocks of the measured
 * phase; cqp_comp_cost() reports them since then (cpuacct.h). */
void cqp_comp_begin(struct cqp_comp *c);
void cqp_comp_cost(struct cqp_comp *c, struct cqp_cost *out);
/* Opens the machine's window of the next phase (cpuacct.h), milliseconds
 * of /proc reads: called before a step's barrier, so that cqp_comp_begin
 * at the measure mark costs microseconds and no peer waits on it. */
void cqp_comp_prepare(struct cqp_comp *c);

struct cqp_params;
/* The engine settings a parameter set asks for.  `receiver` decides
 * whether --solicited applies: send completions are never solicited, so
 * a sender arming for solicited-only events would never wake. */
void cqp_comp_cfg_from_params(struct cqp_comp_cfg *cfg,
			      const struct cqp_params *p, bool receiver,
			      volatile sig_atomic_t *stop);

/* The peer runs on this machine as process pid (0: elsewhere): its CPU
 * is not counted as other processes' load. */
void cqp_comp_account_peer(struct cqp_comp *c, int pid);

/* Switches the reaping mode (and hybrid's spin budget) of the same CQs
 * between measured phases. */
void cqp_comp_set_mode(struct cqp_comp *c, uint32_t mode);
void cqp_comp_set_spin(struct cqp_comp *c, uint32_t spin_us);

/* Waits `seconds` with no traffic, in the current mode, and reports the
 * thread's CPU share meanwhile (and its user/system split) in out's idle
 * figures: what idling costs in that mode.  A completion arriving
 * meanwhile is a protocol failure. */
int cqp_comp_idle(struct cqp_comp *c, unsigned seconds, struct cqp_cost *out);

#endif
