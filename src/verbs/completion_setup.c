/* SPDX-License-Identifier: BSD-2-Clause */
/* A side's completion engine around its hot path: its CQs and channels
 * (create, moderate, destroy), its configuration from the parameters,
 * and the cost it reports (cqp_comp_cost, the idle phase). */
#include "verbs/completion_impl.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "base/error.h"
#include "base/fabric.h"

static int set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return cqp_fail(CQP_E_SYS,
				"fcntl(O_NONBLOCK) on a completion "
				"channel: %s",
				strerror(errno));
	return 0;
}

/* Waits on the channels with epoll from now on. */
static int watch_channels(struct cqp_comp *c)
{
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0)
		return cqp_fail(CQP_E_SYS, "epoll_create1: %s",
				strerror(errno));
	for (unsigned i = 0; i < c->nch; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};

		if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->chans[i]->fd, &ev))
			return cqp_fail(CQP_E_SYS, "epoll_ctl: %s",
					strerror(errno));
	}
	return 0;
}

static int create_channels(struct cqp_comp *c, struct ibv_context *ctx)
{
	c->nch = c->cfg.channel_per_cq ? c->ncq : 1;
	c->chans = calloc(c->nch, sizeof(*c->chans));
	if (!c->chans)
		return cqp_fail(CQP_E_NOMEM, "out of memory for channels");
	if (c->shared) {
		/* Blocking (--nonblock is refused): one event per wakeup, the
		 * one this thread takes. */
		c->chans[0] = c->cfg.shared;
		return 0;
	}
	for (unsigned i = 0; i < c->nch; i++) {
		c->chans[i] = ibv_create_comp_channel(ctx);
		if (!c->chans[i])
			return cqp_fail(CQP_E_DEVICE,
					"ibv_create_comp_channel: %s",
					strerror(errno));
		if (c->cfg.nonblock) {
			int rc = set_nonblock(c->chans[i]->fd);
			if (rc < 0)
				return rc;
		}
	}
	return c->cfg.nonblock || c->nch > 1 ? watch_channels(c) : 0;
}

/* A new mode learns afresh (but for the machine's wakeup cost). */
static void policy_reset(struct cqp_comp *c)
{
	cqp_policy_init(&c->pol, c->cfg.mode, c->cfg.empty_n, c->cfg.spin_us,
			c->cfg.p99_target_us);
	c->in_spell = false;
	c->last_comp_ns = 0;
	c->gaps = cqp_policy_wants_gaps(&c->pol);
	c->batch = c->cfg.poll_batch ? c->cfg.poll_batch : CQP_BATCH_AUTO_MIN;
}

int cqp_comp_create(struct cqp_comp *c, struct ibv_context *ctx,
		    const struct cqp_comp_cfg *cfg, unsigned ncq,
		    unsigned depth)
{
	int rc = 0;
	int vectors = ctx->num_comp_vectors > 0 ? ctx->num_comp_vectors : 1;

	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	/* Off the caller's CPU only where --cpu put it there. */
	c->wd.keep_off = cfg->cpu >= 0;
	c->ctx = ctx;
	c->epfd = -1;
	c->shared = cfg->shared != NULL;
	snprintf(c->peer_who, sizeof(c->peer_who), "the peer");
	/* Read when idle, never waited on. */
	fcntl(ctx->async_fd, F_SETFL,
	      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	c->ncq = ncq;
	if (cfg->comp_vector >= vectors)
		return cqp_fail(CQP_E_USAGE,
				"--comp-vector %d: the device has completion "
				"vectors 0..%d",
				cfg->comp_vector, vectors - 1);
	c->cqs = calloc(ncq, sizeof(*c->cqs));
	if (!c->cqs)
		return cqp_fail(CQP_E_NOMEM, "out of memory for %u CQs", ncq);
	for (unsigned i = 0; i < ncq; i++) {
		c->cqs[i].owner = c;
		pthread_mutex_init(&c->cqs[i].lock, NULL);
	}
	/* Channels exist in every mode, so a run can switch modes on the
	 * same CQs (--compare-modes); poll mode simply never arms them. */
	rc = create_channels(c, ctx);
	if (rc < 0)
		goto fail;
	for (unsigned i = 0; i < ncq; i++) {
		struct cqp_comp_cq *q = &c->cqs[i];

		q->ch = c->nch ? c->chans[cfg->channel_per_cq ? i : 0] : NULL;
		q->cq = ibv_create_cq(ctx, (int)depth, q, q->ch,
				      cqp_comp_vector_for(cfg->comp_vector,
							  cfg->first_cq + i,
							  vectors));
		if (!q->cq) {
			struct ibv_device_attr a;
			int err = errno;

			if (ibv_query_device(ctx, &a) == 0 &&
			    depth > (unsigned)a.max_cqe)
				rc =
				    cqp_fail(CQP_E_USAGE,
					     "--cq-depth %u: the device allows "
					     "at most %d CQ entries",
					     depth, a.max_cqe);
			else
				rc = cqp_fail(CQP_E_DEVICE,
					      "ibv_create_cq (%u entries, CQ "
					      "%u of %u): %s",
					      depth, i + 1, ncq, strerror(err));
			goto fail;
		}
	}
	c->last_ns = cqp_now_ns();
	policy_reset(c);
	cqp_acct_init(&c->acct, cfg->cpu);
	return 0;
fail:
	cqp_comp_destroy(c);
	return rc;
}

void cqp_comp_destroy(struct cqp_comp *c)
{
	int err;

	for (unsigned i = 0; c->cqs && i < c->ncq; i++) {
		struct cqp_comp_cq *q = &c->cqs[i];

		pthread_mutex_destroy(&q->lock);
		if (!q->cq)
			continue;
		/* ibv_destroy_cq waits for every event to be acked. */
		cqp_comp_ack(c, q);
		err = ibv_destroy_cq(q->cq);
		/* Teardown goes on; a CQ left behind is a bug worth a line. */
		if (err)
			fprintf(stderr, "warning: ibv_destroy_cq (CQ %u): %s\n",
				i, strerror(err));
	}
	for (unsigned i = 0; !c->shared && c->chans && i < c->nch; i++)
		if (c->chans[i])
			ibv_destroy_comp_channel(c->chans[i]);
	cqp_watchdog_stop(&c->wd);
	cqp_acct_free(&c->acct);
	if (c->epfd >= 0)
		close(c->epfd);
	free(c->cqs);
	free(c->chans);
	free(c->pfd);
	c->cqs = NULL;
	c->chans = NULL;
	c->pfd = NULL;
	c->epfd = -1;
}

/* --cq-mod COUNT,0: the last completions of a burst (fewer than COUNT)
 * raise no event, so sleeps end on a timer too.  epoll keeps that timer
 * exact (the watchdog may be late); a shared channel, which threads read
 * one event each with a blocking read, cannot be watched by several
 * epolls, so it is refused. */
static int residue_polls(struct cqp_comp *c)
{
	if (c->shared)
		return cqp_fail(CQP_E_USAGE,
				"--cq-mod COUNT,0 and --shared-channel "
				"conflict: without a moderation period the "
				"last completions raise no event; give USEC "
				"1..65535");
	c->residue_ns = CQP_COMP_RESIDUE_NS;
	return c->epfd >= 0 ? 0 : watch_channels(c);
}

int cqp_comp_moderate(struct cqp_comp *c, uint32_t count, uint32_t usec)
{
	struct ibv_device_attr_ex ax;

	/* Checked against the device's limits first, to name them: mlx5's
	 * period has 12 bits, and mlx5_ib_modify_cq refuses a larger one
	 * with EINVAL, saying nothing of why. */
	if (c->ncq &&
	    ibv_query_device_ex(c->cqs[0].cq->context, NULL, &ax) == 0) {
		int rc = cqp_fabric_cq_mod_ok(
		    count, usec, ax.cq_mod_caps.max_cq_count,
		    ax.cq_mod_caps.max_cq_period,
		    ibv_get_device_name(c->cqs[0].cq->context->device));

		if (rc < 0)
			return rc;
	}
	for (unsigned i = 0; i < c->ncq; i++) {
		struct ibv_modify_cq_attr a = {
		    .attr_mask = IBV_CQ_ATTR_MODERATE,
		    .moderate = {.cq_count = (uint16_t)count,
				 .cq_period = (uint16_t)usec},
		};
		int rc = ibv_modify_cq(c->cqs[i].cq, &a);

		if (rc)
			return cqp_fail(CQP_E_DEVICE,
					"--cq-mod %u,%u: the device refuses CQ "
					"moderation (ibv_modify_cq: %s)",
					count, usec, strerror(rc));
	}
	return usec ? 0 : residue_polls(c);
}

void cqp_comp_begin(struct cqp_comp *c)
{
	memset(&c->cnt, 0, sizeof(c->cnt));
	cqp_acct_begin(&c->acct);
	c->last_ns = cqp_now_ns();
	c->progressed = false;
}

void cqp_comp_prepare(struct cqp_comp *c)
{
	cqp_acct_begin_machine(&c->acct);
}

/* The policy's figures of cqp_cost (has_policy, has_batch). */
static void policy_cost(const struct cqp_comp *c, struct cqp_cost *out)
{
	const struct cqp_gaps *b = &c->cnt.budgets;

	out->has_batch = !c->cfg.poll_batch;
	out->batch_max = c->cnt.batch_max;
	out->batch_mean = c->cnt.batch_polls ? (double)c->cnt.batch_sum /
						   (double)c->cnt.batch_polls
					     : 0;
	out->has_policy = c->cfg.mode >= CQP_CQ_EMPTY;
	if (!out->has_policy)
		return;
	out->spin_us = (double)c->cnt.spin_ns / 1e3;
	out->naps = c->cnt.naps;
	if (b->total > 0) {
		out->budget_mean_us = cqp_gaps_mean(b) / 1e3;
		out->budget_p50_us = (double)cqp_gaps_quantile(b, 0.5) / 1e3;
		out->budget_p99_us = (double)cqp_gaps_quantile(b, 0.99) / 1e3;
	}
	out->wake_cpu_us =
	    cqp_policy_wants_wake_cost(&c->pol) && c->pol.wakes_measured
		? c->pol.wake_ns / 1e3
		: 0;
	out->wake_wait_us = cqp_median_ring_get(&c->cnt.wake_wait) / 1e3;
	out->wake_reap_us = cqp_median_ring_get(&c->cnt.wake_reap) / 1e3;
}

void cqp_comp_cost(struct cqp_comp *c, struct cqp_cost *out)
{
	memset(out, 0, sizeof(*out));
	out->valid = true;
	cqp_acct_end(&c->acct, out);
	out->completions = c->cnt.completions;
	out->polls = c->cnt.polls;
	out->empty_polls = c->cnt.empty_polls;
	out->wakeups = c->cnt.wakeups;
	out->events_acked = c->cnt.events_acked;
	out->spin_completions = c->cnt.spin_completions;
	out->sleep_completions = c->cnt.sleep_completions;
	out->has_shared = c->shared;
	out->foreign_completions = c->cnt.foreign_completions;
	out->lock_waits = c->cnt.lock_waits;
	out->lock_wait_us = (double)c->cnt.lock_wait_ns / 1e3;
	out->channels = c->shared ? c->cfg.count_shared : c->nch;
	policy_cost(c, out);
}

void cqp_comp_cfg_from_params(struct cqp_comp_cfg *cfg,
			      const struct cqp_params *p, bool receiver,
			      volatile sig_atomic_t *stop)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = p->cq_mode;
	cfg->poll_batch = p->poll_batch;
	cfg->ack_batch = p->ack_batch;
	cfg->spin_us = p->spin_us;
	cfg->empty_n = cqp_params_empty_n(p);
	cfg->p99_target_us = p->p99_target_us;
	cfg->solicited = p->solicited && receiver;
	cfg->nonblock = p->nonblock;
	cfg->channel_per_cq = p->channel_per_cq;
	cfg->comp_vector = p->comp_vector;
	cfg->cpu = p->cpu;
	cfg->timeout_ms = (int)p->timeout_s * 1000;
	cfg->port = p->ib_port;
	cfg->stop = stop;
}

/* Thread t's part of cfg: its CPU of --cpu LIST, its first CQ, the
 * step's flags and the shared channel. */
static void cfg_thread(struct cqp_comp_cfg *cfg,
		       const struct cqp_comp_set_req *req, unsigned t,
		       struct ibv_comp_channel *shared)
{
	const struct cqp_params *p = req->p;

	cfg->cpu = t < p->ncpu ? p->cpus[t] : -1;
	cfg->first_cq = t * req->ncq;
	cfg->abort = req->abort;
	cfg->over = req->over;
	cfg->shared = shared;
	cfg->count_shared = shared && t == 0;
}

int cqp_comp_set_create(struct cqp_comp_set *s, struct ibv_context *ctx,
			const struct cqp_comp_set_req *req)
{
	const struct cqp_params *p = req->p;
	struct cqp_comp_cfg cfg;
	int rc;

	memset(s, 0, sizeof(*s));
	if (!(s->comp = calloc(p->nthreads, sizeof(*s->comp))))
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	/* Spreading over one vector is no spreading: said, not refused. */
	if (p->comp_vector < 0 && ctx->num_comp_vectors <= 1)
		fprintf(stderr,
			"note: --comp-vector auto: %s has 1 completion vector; "
			"every CQ is on vector 0\n",
			ibv_get_device_name(ctx->device));
	/* Only a receiver shares: a sender's completions are its own
	 * flow control (the QPs' sends in flight). */
	if (p->shared_channel && req->receiver &&
	    !(s->shared = ibv_create_comp_channel(ctx)))
		return cqp_fail(CQP_E_DEVICE, "ibv_create_comp_channel: %s",
				strerror(errno));
	for (unsigned t = 0; t < p->nthreads; t++) {
		cqp_comp_cfg_from_params(&cfg, p, req->receiver, req->stop);
		cfg_thread(&cfg, req, t, s->shared);
		rc = cqp_comp_create(&s->comp[t], ctx, &cfg, req->ncq,
				     req->depth);
		if (rc < 0)
			return rc;
		s->n++;
		if (p->cq_mod_count &&
		    (rc = cqp_comp_moderate(&s->comp[t], p->cq_mod_count,
					    p->cq_mod_usec)) < 0)
			return rc;
	}
	return 0;
}

void cqp_comp_set_destroy(struct cqp_comp_set *s)
{
	for (unsigned t = 0; t < s->n; t++)
		cqp_comp_destroy(&s->comp[t]);
	if (s->shared)
		ibv_destroy_comp_channel(s->shared);
	free(s->comp);
	memset(s, 0, sizeof(*s));
}

void cqp_comp_account_peer(struct cqp_comp *c, int pid)
{
	cqp_acct_set_peer(&c->acct, pid);
}

void cqp_comp_set_mode(struct cqp_comp *c, uint32_t mode)
{
	c->cfg.mode = mode;
	policy_reset(c);
}

void cqp_comp_set_spin(struct cqp_comp *c, uint32_t spin_us)
{
	c->cfg.spin_us = spin_us;
	c->pol.spin_ns = (uint64_t)spin_us * 1000u;
}

int cqp_comp_idle(struct cqp_comp *c, unsigned seconds, struct cqp_cost *out)
{
	struct ibv_wc wc[4];
	struct cqp_cpu_acct a;
	int rc;

	/* Its own window: the measured phase's stays as it was. */
	cqp_acct_init(&a, c->cfg.cpu);
	cqp_acct_begin_self(&a);
	/* The wait ends by the no-progress deadline, which is the point. */
	rc = cqp_comp_reap_within(c, wc, 4, seconds * 1000u);
	if (rc > 0)
		return cqp_fail(CQP_E_PROTO, "a completion arrived while the "
					     "connection should be idle");
	if (rc < 0)
		return rc;
	cqp_acct_thread(&a, &out->idle_cpu_pct, &out->idle_cpu_user_pct,
			&out->idle_cpu_sys_pct);
	out->has_idle = true;
	return 0;
}
