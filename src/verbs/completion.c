/* SPDX-License-Identifier: BSD-2-Clause */
/* The completion engine's hot path: poll, event and hybrid reaping of one
 * side's CQs and the policies between, with the counters the reports cost
 * them by.  The modes share a poll pass, a wakeup and a drain and their
 * bookkeeping, which stay one piece so that what is counted is what ran;
 * a side's CQs, channels and cost are in completion_setup.c. */
#include "verbs/completion_impl.h"

#include <poll.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "base/error.h"
#include "base/fabric.h"

/* Empty poll passes between two looks at the clock in poll mode: keeps
 * clock_gettime off the hot path while still noticing a dead peer. */
#define CLOCK_EVERY 1024
/* ... and between two looks at the stop flags (CLOCK_EVERY's divisor). */
#define LOOK_EVERY 32

CQP_COLD static int bad_completion(const struct ibv_wc *wc)
{
	return cqp_fail(CQP_E_COMPLETION,
			"work completion error on QP %u: %s (status %d, "
			"vendor error 0x%x, wr_id %" PRIu64 ")%s",
			wc->qp_num, ibv_wc_status_str(wc->status), wc->status,
			wc->vendor_err, (uint64_t)wc->wr_id,
			wc->status == IBV_WC_RETRY_EXC_ERR
			    ? ": the peer stopped answering"
			    : "");
}

/* --shared-channel: the CQ's lock, timed only when another thread holds
 * it, so that an uncontended poll reads no clock. */
static void lock_cq(struct cqp_comp *c, struct cqp_comp_cq *q)
{
	uint64_t t0;

	if (pthread_mutex_trylock(&q->lock) == 0)
		return;
	t0 = cqp_now_ns();
	pthread_mutex_lock(&q->lock);
	c->cnt.lock_waits++;
	c->cnt.lock_wait_ns += cqp_now_ns() - t0;
}

static int poll_cq(struct cqp_comp *c, struct cqp_comp_cq *q, int want,
		   struct ibv_wc *wc)
{
	int r;

	if (!c->shared)
		return ibv_poll_cq(q->cq, want, wc);
	lock_cq(c, q);
	r = ibv_poll_cq(q->cq, want, wc);
	pthread_mutex_unlock(&q->lock);
	return r;
}

/* ibv_poll_cq's failure r (< 0), said. */
static int poll_failed(int r)
{
	return cqp_fail(CQP_E_DEVICE, "ibv_poll_cq: %s", strerror(-r));
}

/* One ibv_poll_cq of q, counted: the entries, or a failure. */
static int poll_counted(struct cqp_comp *c, struct cqp_comp_cq *q, int want,
			struct ibv_wc *wc)
{
	int r = poll_cq(c, q, want, wc);

	c->cnt.polls++;
	if (r < 0)
		return poll_failed(r);
	if (r == 0)
		c->cnt.empty_polls++;
	return r;
}

static int check_statuses(struct cqp_comp *c, const struct ibv_wc *wc, int n)
{
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			return bad_completion(&wc[i]);
	c->cnt.completions += (uint64_t)n;
	return n;
}

/* --poll-batch auto: a poll that found work sets the next batch. */
static void batch_auto(struct cqp_comp *c, int asked, int got)
{
	c->cnt.batch_polls++;
	c->cnt.batch_sum += (uint64_t)asked;
	if ((uint64_t)asked > c->cnt.batch_max)
		c->cnt.batch_max = (uint64_t)asked;
	c->batch = cqp_batch_next(c->batch, (uint32_t)asked, got);
}

/* One pass over every CQ, starting where the last pass left off so no CQ
 * is starved when max is small. */
static int poll_pass(struct cqp_comp *c, struct ibv_wc *wc, int max)
{
	int n = 0;

	/* No division on this path: it runs once per poll in a spin loop. */
	for (unsigned k = 0, i = c->next; k < c->ncq && n < max; k++) {
		int want = max - n < (int)c->batch ? max - n : (int)c->batch;
		int r = poll_counted(c, &c->cqs[i], want, wc + n);

		if (r < 0)
			return r;
		if (r > 0 && !c->cfg.poll_batch)
			batch_auto(c, want, r);
		n += r;
		if (++i == c->ncq)
			i = 0;
	}
	if (++c->next == c->ncq)
		c->next = 0;
	return check_statuses(c, wc, n);
}

CQP_COLD static int stopped(const struct cqp_comp *c)
{
	if (c->cfg.stop && *c->cfg.stop)
		return cqp_fail(CQP_E_INTERRUPTED, "interrupted");
	return cqp_fail(CQP_E_INTERRUPTED, "stopped: another thread failed");
}

/* SIGINT/SIGTERM, or another thread of the step failed: 0 when neither.
 * Inline, the message apart: it is asked on every reap. */
static inline int stopping(const struct cqp_comp *c)
{
	if ((c->cfg.stop && *c->cfg.stop) ||
	    (c->cfg.abort && atomic_load(c->cfg.abort)))
		return stopped(c);
	return 0;
}

static int timed_out(const struct cqp_comp *c)
{
	return cqp_fail(CQP_E_TIMEOUT,
			"no completion for %d s: %s is gone or stalled",
			c->cfg.timeout_ms / 1000, c->peer_who);
}

/* The clock, read only when idle; progress seen since the last read moves
 * the no-progress deadline, off by at most one poll pass. */
static uint64_t tick(struct cqp_comp *c)
{
	uint64_t now = cqp_now_ns();

	if (c->progressed) {
		c->last_ns = now;
		c->progressed = false;
	}
	return now;
}

/* Milliseconds left before the no-progress deadline; 0 when passed. */
static int remaining_ms(const struct cqp_comp *c, uint64_t now)
{
	uint64_t deadline = c->last_ns + (uint64_t)c->cfg.timeout_ms * 1000000u;

	if (c->cfg.timeout_ms <= 0)
		return -1;
	if (now >= deadline)
		return 0;
	return (int)((deadline - now + 999999u) / 1000000u);
}

/* The peer watch, due after a quiet spell since the last completion or
 * the last look, whichever is later. */
static uint64_t peer_due(const struct cqp_comp *c)
{
	uint64_t from =
	    c->last_ns > c->peer_looked_ns ? c->last_ns : c->peer_looked_ns;

	return from + CQP_COMP_PEER_NS;
}

/* The device's async events: a CQ overrun or a fatal QP, SRQ, port or
 * device event ends the run by its name, instead of a timeout later. */
static int async_events(struct cqp_comp *c)
{
	struct ibv_async_event ev;

	while (c->ctx && ibv_get_async_event(c->ctx, &ev) == 0) {
		enum ibv_event_type t = ev.event_type;
		uint32_t qpn = cqp_fabric_async_on_qp(t) && ev.element.qp
				   ? ev.element.qp->qp_num
				   : 0;

		unsigned ev_port = ev.element.port_num;

		ibv_ack_async_event(&ev);
		if (!cqp_fabric_async_fatal(t, ev_port, c->cfg.port)) {
			if (t == IBV_EVENT_PORT_ERR)
				fprintf(stderr,
					"note: %s port %u reported an error; "
					"this run is on port %u\n",
					ibv_get_device_name(c->ctx->device),
					ev_port, c->cfg.port);
			continue;
		}
		if (qpn)
			return cqp_fail(CQP_E_DEVICE,
					"the device reported %s on QP %u",
					ibv_event_type_str(t), qpn);
		return cqp_fail(CQP_E_DEVICE, "the device reported %s%s",
				ibv_event_type_str(t),
				t == IBV_EVENT_CQ_ERR
				    ? " (a CQ overran: completions were lost)"
				    : "");
	}
	return 0;
}

static int look_at_peer(struct cqp_comp *c, uint64_t now)
{
	int rc = async_events(c);

	c->peer_looked_ns = now;
	return rc < 0 ? rc : c->peer_check(c->peer_arg);
}

/* Called when idle, with the clock just read. */
static int peer_after_silence(struct cqp_comp *c, uint64_t now)
{
	if (!c->peer_check || now < peer_due(c))
		return 0;
	return look_at_peer(c, now);
}

int cqp_comp_check_peer(struct cqp_comp *c, uint64_t now_ns)
{
	if (!c->peer_check || now_ns < c->peer_looked_ns + CQP_COMP_PEER_NS)
		return 0;
	return look_at_peer(c, now_ns);
}

void cqp_comp_watch_peer(struct cqp_comp *c, int (*check)(void *arg), void *arg,
			 const char *name)
{
	c->peer_check = check;
	c->peer_arg = arg;
	snprintf(c->peer_who, sizeof(c->peer_who), "%s%s",
		 name ? "peer " : "the peer", name ? name : "");
	c->peer_looked_ns = 0;
}

/* A failed completion is often a dead peer seen late (retries ran out):
 * then that is the cause.  A peer that only reported a failure of its
 * own may be telling of ours, so both are said.  A killed peer's QP can
 * fail ours (remote operation error) a moment before its closed channel
 * shows, so a silent peer is asked again for up to PEER_GRACE_MS. */
#define PEER_GRACE_MS 200
CQP_COLD static int completion_failed(struct cqp_comp *c, int rc)
{
	struct timespec ms10 = {0, 10 * 1000 * 1000};
	struct cqp_error ours;
	int why;

	if (rc != -CQP_E_COMPLETION || !c->peer_check)
		return rc;
	cqp_error_save(&ours);
	why = c->peer_check(c->peer_arg);
	for (int t = 0; why == 0 && t < PEER_GRACE_MS / 10; t++) {
		nanosleep(&ms10, NULL);
		why = c->peer_check(c->peer_arg);
	}
	if (why == -CQP_E_PEER_CLOSED)
		return why;
	if (why < 0)
		return cqp_fail_wrap(CQP_E_COMPLETION, "%s; the peer said",
				     ours.msg);
	return cqp_error_restore(&ours);
}

static int take_event(struct cqp_comp *c, struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq;
	void *ctx;
	struct cqp_comp_cq *q;

	if (ibv_get_cq_event(ch, &cq, &ctx)) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		return cqp_fail(CQP_E_DEVICE, "ibv_get_cq_event: %s",
				strerror(errno));
	}
	q = ctx;
	if (c->shared)
		lock_cq(c, q);
	q->armed = false;
	if (++q->unacked >= c->cfg.ack_batch)
		cqp_comp_ack(c, q);
	if (c->shared) {
		pthread_mutex_unlock(&q->lock);
		/* Another thread's CQ: this one drains and rearms it. */
		if (q->owner != c)
			c->woke = q;
	}
	return 1;
}

/* Takes what a ready channel holds: one event when blocking, everything
 * up to EAGAIN when non-blocking. */
static int drain_channel(struct cqp_comp *c, struct ibv_comp_channel *ch)
{
	int rc, got = 0;

	do {
		rc = take_event(c, ch);
		if (rc < 0)
			return rc;
		got += rc;
	} while (rc > 0 && c->cfg.nonblock);
	return got;
}

/* A blocking channel of several CQs: after the event that woke us, the
 * others' events already queued are taken too (without blocking).  The
 * pass that follows reaps their completions; left queued, each would
 * end the next wait at once and count as a wakeup that never slept. */
static int drain_queued(struct cqp_comp *c, struct ibv_comp_channel *ch)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	int got = 0, rc;

	while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
		if ((rc = take_event(c, ch)) <= 0)
			return rc < 0 ? rc : got;
		got++;
	}
	return got;
}

/* Whatever a ready channel holds, for one wakeup: drain_channel, and on
 * a blocking channel of several CQs the others' events already queued
 * (drain_queued), whichever way the wait slept (a read, epoll, ppoll). */
static int take_channel(struct cqp_comp *c, struct ibv_comp_channel *ch)
{
	int got = drain_channel(c, ch), more;

	if (got > 0 && !c->cfg.nonblock && c->nch < c->ncq && !c->shared) {
		if ((more = drain_queued(c, ch)) < 0)
			return more;
		got += more;
	}
	return got;
}

static bool step_over(const struct cqp_comp *c)
{
	return c->cfg.over && atomic_load(c->cfg.over);
}

/* 0 after a wakeup, 1 when the step ended meanwhile (cfg.over), 2 when
 * the residue timer (--cq-mod COUNT,0) says to poll again. */
static int wait_event(struct cqp_comp *c)
{
	uint64_t residue_at = c->residue_ns ? cqp_now_ns() + c->residue_ns : 0;

	for (;;) {
		uint64_t now = tick(c), wake = 0;
		int ms = remaining_ms(c, now);
		int r, got = 0;

		if ((r = peer_after_silence(c, now)) < 0)
			return r;
		if (ms == 0)
			return timed_out(c);
		/* The deadline itself, not now + whole ms: it stays put from
		 * wait to wait, so the watchdog need not be woken for it. */
		if (ms > 0)
			wake =
			    c->last_ns + (uint64_t)c->cfg.timeout_ms * 1000000u;
		/* Wake for the next look at the peer too. */
		if (c->peer_check && (!wake || peer_due(c) < wake))
			wake = peer_due(c);
		if (residue_at && now >= residue_at)
			return 2;
		if (residue_at && (!wake || residue_at < wake))
			wake = residue_at;
		if (c->epfd < 0) {
			/* One blocking read per wakeup; the watchdog breaks it
			 * with EINTR once the deadline passes. */
			if (!c->wd.running &&
			    (r = cqp_watchdog_start(&c->wd)) < 0)
				return r;
			if (wake)
				cqp_watchdog_arm(&c->wd, wake);
			r = got = take_channel(c, c->chans[0]);
			cqp_watchdog_disarm(&c->wd);
			if (got < 0)
				return got;
		} else {
			struct epoll_event ev[16];

			if (wake)
				ms = wake > now ? (int)((wake - now + 999999u) /
							1000000u)
						: 0;
			r = epoll_wait(c->epfd, ev, 16, ms);
			for (int i = 0; i < r && got >= 0; i++) {
				int g =
				    take_channel(c, c->chans[ev[i].data.u32]);
				got = g < 0 ? g : got + g;
			}
		}
		if (r < 0 && errno != EINTR)
			return cqp_fail(CQP_E_SYS,
					"waiting for a completion "
					"event: %s",
					strerror(errno));
		if (got < 0)
			return got;
		if ((r = stopping(c)) < 0)
			return r;
		if (got > 0) {
			c->cnt.wakeups++;
			return 0;
		}
		if (step_over(c))
			return 1;
	}
}

static int arm_cq(struct cqp_comp *c, struct cqp_comp_cq *q)
{
	int rc = 0;

	if (c->shared)
		lock_cq(c, q);
	if (!q->armed) {
		if (ibv_req_notify_cq(q->cq, c->cfg.solicited))
			rc = cqp_fail(CQP_E_DEVICE, "ibv_req_notify_cq: %s",
				      strerror(errno));
		else
			q->armed = true;
	}
	if (c->shared)
		pthread_mutex_unlock(&q->lock);
	return rc;
}

static int arm(struct cqp_comp *c)
{
	for (unsigned i = 0; i < c->ncq; i++) {
		int rc = arm_cq(c, &c->cqs[i]);

		if (rc < 0)
			return rc;
	}
	return 0;
}

/* --shared-channel: the other thread's CQ whose event this one took, to
 * empty; then rearmed (its owner may be asleep) and looked at once more,
 * for what landed before the arm. */
static int drain_woken(struct cqp_comp *c, struct ibv_wc *wc, int max)
{
	struct cqp_comp_cq *q = c->woke;
	int want = max < (int)c->batch ? max : (int)c->batch;
	int n = poll_counted(c, q, want, wc);

	if (n == 0 && (n = arm_cq(c, q)) == 0 &&
	    (n = poll_counted(c, q, want, wc)) == 0)
		c->woke = NULL;
	if (n <= 0)
		return n;
	c->cnt.foreign_completions += (uint64_t)n;
	return check_statuses(c, wc, n);
}

static inline int found(struct cqp_comp *c, int n)
{
	if (c->after_wake)
		c->cnt.sleep_completions += (uint64_t)n;
	else
		c->cnt.spin_completions += (uint64_t)n;
	/* Caught spinning: the spell's time to its last empty poll. */
	if (c->in_spell) {
		/* (A nap moves the spell's start past its last poll.) */
		if (c->spell_last_ns > c->spell_ns)
			c->cnt.spin_ns += c->spell_last_ns - c->spell_ns;
		c->in_spell = false;
	}
	/* No clock read here on the hot path, but for the policies that
	 * learn from gaps or time a wakeup (one read for both): the next
	 * look at the clock dates the progress (see tick). */
	if (c->gaps || c->wake_ev_ns) {
		uint64_t now = cqp_now_ns();

		if (c->wake_ev_ns) {
			cqp_median_ring_add(&c->cnt.wake_reap,
					    now - c->wake_ev_ns);
			c->wake_ev_ns = 0;
		}
		if (c->gaps) {
			if (c->last_comp_ns)
				cqp_policy_gap(&c->pol, now - c->last_comp_ns,
					       (uint32_t)n);
			c->last_comp_ns = now;
		}
	}
	c->progressed = true;
	return n;
}

/* Every CLOCK_EVERY empty looks of a spinning wait: the clock, the peer
 * and the no-progress deadline. */
static int spinning_idle(struct cqp_comp *c)
{
	uint64_t now = tick(c);
	int rc = peer_after_silence(c, now);

	if (rc < 0)
		return rc;
	return remaining_ms(c, now) == 0 ? timed_out(c) : 0;
}

/* Before arming: this thread's CPU clock when the policy learns what a
 * wakeup costs; the wall clock too, for the wakeup's latency. */
static uint64_t wake_begin(struct cqp_comp *c)
{
	c->wake_ev_ns = 0;
	if (!cqp_policy_wants_wake_cost(&c->pol))
		return 0;
	c->wake_arm_ns = cqp_now_ns();
	return cqp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The event came: its CPU, its wait from the arm; found() times the
 * rest, to the completion reaped. */
static void wake_end(struct cqp_comp *c, uint64_t cpu0)
{
	uint64_t cpu1;

	if (!cpu0)
		return;
	if ((cpu1 = cqp_clock_ns(CLOCK_THREAD_CPUTIME_ID)) > cpu0)
		cqp_policy_wake_cost(&c->pol, cpu1 - cpu0);
	c->wake_ev_ns = cqp_now_ns();
	cqp_median_ring_add(&c->cnt.wake_wait, c->wake_ev_ns - c->wake_arm_ns);
}

/* A timer nap (timer), not armed: ends early on a signal. */
static void nap(struct cqp_comp *c, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u),
			      (long)(ns % 1000000000u)};

	c->cnt.naps++;
	nanosleep(&ts, NULL);
	/* A nap is not spinning. */
	c->spell_ns += ns;
}

/* After an empty pass (at `now`, the clock just read) in a mode that may
 * sleep: whether to arm and sleep now, as the policy says; it may nap
 * on a timer first, never past `until`.  Counts the spell's spin. */
static bool policy_arms(struct cqp_comp *c, uint64_t now, uint64_t until)
{
	uint64_t ns = 0;

	if (!c->in_spell) {
		uint64_t budget = cqp_policy_spell(&c->pol);

		c->in_spell = true;
		c->spell_ns = now;
		c->empty_run = 0;
		if (c->cfg.mode != CQP_CQ_EVENT && c->cfg.mode != CQP_CQ_EMPTY)
			cqp_gaps_add(&c->cnt.budgets, budget, 1);
	}
	c->spell_last_ns = now;
	switch (
	    cqp_policy_next(&c->pol, now - c->last_ns, ++c->empty_run, &ns)) {
	case CQP_POLICY_POLL:
		return false;
	case CQP_POLICY_NAP:
		nap(c, now + ns > until ? (until > now ? until - now : 0) : ns);
		return false;
	default:
		if (now > c->spell_ns)
			c->cnt.spin_ns += now - c->spell_ns;
		c->in_spell = false;
		return true;
	}
}

/* Poll mode on one CQ of this thread's own, the common case of a
 * latency run: a loop as tight as perftest's (ibv_poll_cq, nothing
 * else), since a completion waits on average half a pass to be seen.
 * The flags, the clock and the counters every LOOK_EVERY empty polls. */
static int spin_one(struct cqp_comp *c, struct ibv_wc *wc, int max)
{
	struct ibv_cq *cq = c->cqs[0].cq;
	int want = max < (int)c->batch ? max : (int)c->batch;
	uint64_t empty = 0;
	int n, rc = 0;

	while ((n = ibv_poll_cq(cq, want, wc)) == 0) {
		if (++empty % LOOK_EVERY)
			continue;
		if ((rc = stopping(c)) < 0 || step_over(c))
			break;
		if (empty % CLOCK_EVERY == 0 && (rc = spinning_idle(c)) < 0)
			break;
	}
	c->cnt.polls += empty + (n != 0);
	c->cnt.empty_polls += empty;
	if (empty)
		c->after_wake = false;
	if (n == 0)
		return rc;
	if (n < 0)
		return completion_failed(c, poll_failed(n));
	if (!c->cfg.poll_batch)
		batch_auto(c, want, n);
	n = check_statuses(c, wc, n);
	return n < 0 ? completion_failed(c, n) : found(c, n);
}

int cqp_comp_reap(struct cqp_comp *c, struct ibv_wc *wc, int max)
{
	unsigned empty = 0;
	uint64_t cpu0;
	int n, rc;

	/* Checked on every call, not only when idle: a busy stream must
	 * stop on SIGINT too. */
	if ((rc = stopping(c)) < 0)
		return rc;
	if (cqp_cq_mode_polls(c->cfg.mode) && c->ncq == 1 && !c->shared &&
	    !c->woke)
		return spin_one(c, wc, max);
	for (;;) {
		n = c->woke ? drain_woken(c, wc, max) : 0;
		if (n == 0)
			n = poll_pass(c, wc, max);
		if (n != 0)
			return n < 0 ? completion_failed(c, n) : found(c, n);
		c->after_wake = false;
		if ((rc = stopping(c)) < 0)
			return rc;
		if (step_over(c))
			return 0;
		if (cqp_cq_mode_polls(c->cfg.mode)) {
			if (++empty % CLOCK_EVERY == 0 &&
			    (rc = spinning_idle(c)) < 0)
				return rc;
			continue;
		}
		if (!policy_arms(c, tick(c), UINT64_MAX))
			continue;
		cpu0 = wake_begin(c);
		rc = arm(c);
		if (rc < 0)
			return rc;
		/* Completions that landed before the CQ was armed raise no
		 * event: look once more before sleeping. */
		n = poll_pass(c, wc, max);
		if (n != 0)
			return n < 0 ? completion_failed(c, n) : found(c, n);
		rc = wait_event(c);
		if (rc < 0)
			return rc;
		if (rc == 0)
			wake_end(c, cpu0);
		/* A residue poll's finds were asleep too. */
		c->after_wake = rc != 1;
	}
}

int cqp_comp_spin(struct cqp_comp *c, int (*look)(void *arg), void *arg)
{
	unsigned empty = 0;
	int n, rc;

	if ((rc = stopping(c)) < 0)
		return rc;
	for (;;) {
		c->cnt.polls++;
		if ((n = look(arg)) != 0) {
			if (n > 0) {
				c->cnt.completions += (uint64_t)n;
				found(c, n);
			}
			return n;
		}
		c->cnt.empty_polls++;
		if (++empty % CLOCK_EVERY == 0 &&
		    ((rc = stopping(c)) < 0 || (rc = spinning_idle(c)) < 0))
			return rc;
	}
}

int cqp_comp_poll(struct cqp_comp *c, struct ibv_wc *wc, int max)
{
	int n;

	if ((n = stopping(c)) < 0)
		return n;
	n = poll_pass(c, wc, max);
	if (n == 0)
		c->after_wake = false;
	return n < 0 ? completion_failed(c, n) : n ? found(c, n) : 0;
}

/* Sleeps on every channel until one is readable or deadline_ns passes;
 * takes what each readable channel holds.  Returns the events taken. */
static int sleep_until(struct cqp_comp *c, uint64_t now, uint64_t deadline_ns)
{
	/* --cq-mod COUNT,0: see residue_ns. */
	uint64_t left = c->residue_ns && deadline_ns - now > c->residue_ns
			    ? c->residue_ns
			    : deadline_ns - now;
	struct timespec ts = {(time_t)(left / 1000000000u),
			      (long)(left % 1000000000u)};
	int r, got = 0;

	if (!c->pfd && !(c->pfd = calloc(c->nch, sizeof(*c->pfd))))
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	for (unsigned i = 0; i < c->nch; i++)
		c->pfd[i] =
		    (struct pollfd){.fd = c->chans[i]->fd, .events = POLLIN};
	r = ppoll(c->pfd, c->nch, &ts, NULL);
	if (r < 0 && errno != EINTR)
		return cqp_fail(CQP_E_SYS,
				"ppoll on the completion channels: %s",
				strerror(errno));
	for (unsigned i = 0; r > 0 && i < c->nch; i++) {
		int g;

		if (!(c->pfd[i].revents & POLLIN))
			continue;
		if ((g = take_channel(c, c->chans[i])) < 0)
			return g;
		got += g;
	}
	return got;
}

int cqp_comp_wait_until(struct cqp_comp *c, struct ibv_wc *wc, int max,
			uint64_t deadline_ns)
{
	for (;;) {
		int n = cqp_comp_poll(c, wc, max), rc;
		uint64_t now, cpu0;

		if (n)
			return n;
		now = tick(c);
		if (now >= deadline_ns)
			return 0;
		if (cqp_cq_mode_polls(c->cfg.mode) || !c->nch ||
		    !policy_arms(c, now, deadline_ns))
			continue;
		cpu0 = wake_begin(c);
		if ((rc = arm(c)) < 0)
			return rc;
		/* What landed before the arm raises no event. */
		if ((n = cqp_comp_poll(c, wc, max)) != 0)
			return n;
		if ((rc = sleep_until(c, now, deadline_ns)) < 0)
			return rc;
		if (rc > 0) {
			c->cnt.wakeups++;
			c->after_wake = true;
			wake_end(c, cpu0);
		}
	}
}

/* For a wait on our own sends: poll instead of sleeping on a channel
 * armed for solicited events only (polling keeps the deadline and the
 * look at the peer).  Returns the mode to restore. */
static uint32_t spin_for_sends(struct cqp_comp *c)
{
	uint32_t mode = c->cfg.mode;

	if (c->cfg.solicited)
		c->cfg.mode = CQP_CQ_POLL;
	return mode;
}

int cqp_comp_reap_sends(struct cqp_comp *c, struct ibv_wc *wc, int max)
{
	uint32_t mode = spin_for_sends(c);
	int n = cqp_comp_reap(c, wc, max);

	c->cfg.mode = mode;
	return n;
}

int cqp_comp_reap_sends_from(struct cqp_comp *c, struct ibv_wc *wc, int max,
			     uint64_t since_ns, uint32_t wait_ms)
{
	uint32_t mode = spin_for_sends(c);
	int n = cqp_comp_reap_from(c, wc, max, since_ns, wait_ms);

	c->cfg.mode = mode;
	return n;
}

int cqp_comp_reap_from(struct cqp_comp *c, struct ibv_wc *wc, int max,
		       uint64_t since_ns, uint32_t wait_ms)
{
	int saved = c->cfg.timeout_ms, rc;
	int (*check)(void *) = c->peer_check;

	c->cfg.timeout_ms = wait_ms ? (int)wait_ms : 1;
	c->last_ns = since_ns;
	c->progressed = false;
	/* No looks during the wait (they would wake an idle wait), one
	 * after it if it ended in silence. */
	c->peer_check = NULL;
	rc = cqp_comp_reap(c, wc, max);
	c->peer_check = check;
	c->cfg.timeout_ms = saved;
	if (rc < 0 && cqp_errcode() == CQP_E_TIMEOUT) {
		cqp_errclear();
		return cqp_comp_check_peer(c, cqp_now_ns());
	}
	return rc;
}

/* Whether a batch holds a receive completion. */
static bool has_recv(const struct ibv_wc *wc, int n)
{
	for (int i = 0; i < n; i++)
		if (wc[i].opcode & IBV_WC_RECV)
			return true;
	return false;
}

/* cqp_comp_reap_recv_from's spin: spin_one's loop, which goes on past
 * our own send completions (kept in wc) and ends at the deadline.  Sends
 * do not date progress: the deadline stays the caller's. */
static int spin_recv(struct cqp_comp *c, struct ibv_wc *wc, int max,
		     uint32_t wait_ms)
{
	struct ibv_cq *cq = c->cqs[0].cq;
	uint64_t empty = 0, finds = 0, now;
	int n = 0, r, rc = 0;

	for (;;) {
		int want = max - n < (int)c->batch ? max - n : (int)c->batch;

		/* As tight as spin_one's: the looks every LOOK_EVERY. */
		while ((r = ibv_poll_cq(cq, want, wc + n)) == 0) {
			if (++empty % LOOK_EVERY)
				continue;
			if ((rc = stopping(c)) < 0 || step_over(c))
				goto out;
			if (empty % CLOCK_EVERY)
				continue;
			now = tick(c);
			if (now >=
			    c->last_ns +
				(uint64_t)(wait_ms ? wait_ms : 1) * 1000000u) {
				/* A look at the peer when the wait ends in
				 * silence, as reap_from's. */
				rc = n ? 0 : cqp_comp_check_peer(c, now);
				goto out;
			}
		}
		finds++;
		if (r < 0) {
			rc = poll_failed(r);
			break;
		}
		if (!c->cfg.poll_batch)
			batch_auto(c, want, r);
		if ((rc = check_statuses(c, wc + n, r)) < 0)
			break;
		n += r;
		if (n == max || has_recv(wc + n - r, r))
			break;
	}
out:
	c->cnt.polls += empty + finds;
	c->cnt.empty_polls += empty;
	if (rc < 0)
		return completion_failed(c, rc);
	return n ? found(c, n) : 0;
}

int cqp_comp_reap_recv_from(struct cqp_comp *c, struct ibv_wc *wc, int max,
			    uint64_t since_ns, uint32_t wait_ms)
{
	int n = 0, r;

	if (since_ns) {
		c->last_ns = since_ns;
		c->progressed = false;
	}
	if (c->cfg.mode == CQP_CQ_POLL && c->ncq == 1 && !c->shared) {
		if ((r = stopping(c)) < 0)
			return r;
		return spin_recv(c, wc, max, wait_ms);
	}
	/* Any other mode: reaps until a receive is among them. */
	do {
		r = cqp_comp_reap_from(c, wc + n, max - n,
				       since_ns	       ? since_ns
				       : c->progressed ? cqp_now_ns()
						       : c->last_ns,
				       wait_ms);
		if (r <= 0)
			return r < 0 ? r : n;
		n += r;
	} while (n < max && !has_recv(wc + n - r, r));
	return n;
}

int cqp_comp_reap_within(struct cqp_comp *c, struct ibv_wc *wc, int max,
			 uint32_t wait_ms)
{
	return cqp_comp_reap_from(c, wc, max, cqp_now_ns(), wait_ms);
}
