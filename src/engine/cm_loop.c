/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/cm_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/options.h"
#include "base/stats.h"

#define QUEUE_CAP 1024

struct cqp_cm_worker {
	struct cqp_cm_loop *l;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t more, drained;
	struct cqp_cm_ev q[QUEUE_CAP];
	unsigned head, count;
	bool busy, quit;
};

/* One id's record, its context (cm_loop.h says why). */
struct cqp_cm_ref {
	struct rdma_cm_id *id;
	void *ctx;
	unsigned copies; /* taken, not yet handled or released; holds */
	bool gone;	 /* cqp_cm_loop_destroy_id was called */
};

static void ref_destroy(struct cqp_cm_ref *r)
{
	rdma_destroy_id(r->id);
	free(r);
}

/* A copy is done with: the last of a gone id destroys it. */
static void ref_put(struct cqp_cm_loop *l, struct cqp_cm_ref *r)
{
	bool last;

	pthread_mutex_lock(&l->ref_mu);
	last = --r->copies == 0 && r->gone;
	pthread_mutex_unlock(&l->ref_mu);
	if (last)
		ref_destroy(r);
}

int cqp_cm_loop_create_id(struct cqp_cm_loop *l, struct rdma_cm_id **id,
			  void *ctx, enum rdma_port_space ps)
{
	struct cqp_cm_ref *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return cqp_fail(CQP_E_NOMEM, "out of memory for an id");
	r->ctx = ctx;
	if (rdma_create_id(l->ch, id, r, ps)) {
		err = errno;
		free(r);
		return cqp_fail(CQP_E_DEVICE, "rdma_create_id: %s",
				strerror(err));
	}
	r->id = *id;
	return 0;
}

void cqp_cm_loop_set_ctx(struct cqp_cm_loop *l, struct rdma_cm_id *id,
			 void *ctx)
{
	struct cqp_cm_ref *r = id->context;

	pthread_mutex_lock(&l->ref_mu);
	r->ctx = ctx;
	pthread_mutex_unlock(&l->ref_mu);
}

void cqp_cm_loop_destroy_id(struct cqp_cm_loop *l, struct rdma_cm_id *id)
{
	struct cqp_cm_ref *r = id->context;
	bool now;

	pthread_mutex_lock(&l->ref_mu);
	r->gone = true;
	now = r->copies == 0;
	pthread_mutex_unlock(&l->ref_mu);
	if (now)
		ref_destroy(r);
}

struct cqp_cm_ref *cqp_cm_loop_hold(struct cqp_cm_loop *l,
				    struct rdma_cm_id *id)
{
	struct cqp_cm_ref *r = id->context;

	pthread_mutex_lock(&l->ref_mu);
	r->copies++;
	pthread_mutex_unlock(&l->ref_mu);
	return r;
}

void cqp_cm_loop_unhold(struct cqp_cm_loop *l, struct cqp_cm_ref *r)
{
	ref_put(l, r);
}

/* A copy let go unhandled (after a failure, or at the end): a request
 * that no handler saw has no owner to destroy its id, so it is rejected
 * and destroyed here. */
static void release(struct cqp_cm_loop *l, struct cqp_cm_ev *ev)
{
	if (ev->type == RDMA_CM_EVENT_CONNECT_REQUEST && ev->listen_id) {
		rdma_reject(ev->id, NULL, 0);
		pthread_mutex_lock(&l->ref_mu);
		ev->ref->gone = true;
		pthread_mutex_unlock(&l->ref_mu);
	}
	ref_put(l, ev->ref);
}

/* A worker's failure, for the event thread to report (error messages are
 * per thread). */
static void note_error(struct cqp_cm_loop *l, int code, const char *msg)
{
	pthread_mutex_lock(&l->err_mu);
	if (!l->err_code) {
		l->err_code = code;
		snprintf(l->err_msg, sizeof(l->err_msg), "%s", msg);
	}
	pthread_mutex_unlock(&l->err_mu);
}

static int take_error(struct cqp_cm_loop *l)
{
	int rc = 0;

	if (!l->nworkers)
		return 0;
	pthread_mutex_lock(&l->err_mu);
	if (l->err_code) {
		rc = cqp_fail(l->err_code, "%s", l->err_msg);
		l->err_code = 0;
	}
	pthread_mutex_unlock(&l->err_mu);
	return rc;
}

/* Hands a copy to the handler unless its id is gone, then releases it. */
static int deliver(struct cqp_cm_loop *l, struct cqp_cm_ev *ev)
{
	struct cqp_cm_ref *r = ev->ref;
	bool gone;
	int rc = 0;

	pthread_mutex_lock(&l->ref_mu);
	gone = r->gone;
	ev->ctx = r->ctx;
	if (gone)
		l->dropped++;
	pthread_mutex_unlock(&l->ref_mu);
	if (!gone) {
		if (l->delay_us && ev->type == RDMA_CM_EVENT_DISCONNECTED)
			nanosleep(
			    &(struct timespec){l->delay_us / 1000000,
					       l->delay_us % 1000000 * 1000L},
			    NULL);
		rc = l->handle(l->arg, ev);
	}
	ref_put(l, r);
	return rc;
}

static void *work(void *arg)
{
	struct cqp_cm_worker *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct cqp_cm_ev ev;
		int rc;

		while (!w->count && !w->quit)
			pthread_cond_wait(&w->more, &w->mu);
		if (w->quit)
			break; /* what is queued, cqp_cm_loop_stop releases */
		ev = w->q[w->head];
		w->head = (w->head + 1) % QUEUE_CAP;
		w->count--;
		w->busy = true;
		pthread_cond_broadcast(&w->drained); /* room in the queue */
		pthread_mutex_unlock(&w->mu);
		rc = deliver(w->l, &ev);
		if (rc < 0)
			note_error(w->l, cqp_errcode(), cqp_errmsg());
		pthread_mutex_lock(&w->mu);
		w->busy = false;
		pthread_cond_broadcast(&w->drained);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int start_workers(struct cqp_cm_loop *l)
{
	pthread_mutex_init(&l->err_mu, NULL);
	l->err_made = true;
	l->workers = calloc(l->cfg.threads, sizeof(*l->workers));
	if (!l->workers)
		return cqp_fail(CQP_E_NOMEM, "out of memory for workers");
	for (unsigned i = 0; i < l->cfg.threads; i++) {
		struct cqp_cm_worker *w = &l->workers[i];
		int err;

		w->l = l;
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->more, NULL);
		pthread_cond_init(&w->drained, NULL);
		l->nworkers++;
		err = pthread_create(&w->thread, NULL, work, w);
		if (err)
			return cqp_fail(CQP_E_SYS, "starting worker %u: %s", i,
					strerror(err));
		w->started = true;
	}
	return 0;
}

int cqp_cm_loop_create(struct cqp_cm_loop *l, const struct cqp_cm_loop_cfg *cfg,
		       cqp_cm_handler handle, void *arg)
{
	/* Test hook (tests/integration/cm_event_stress.sh): sleep this many
	 * microseconds before handling each DISCONNECTED, so that the id's
	 * TIMEWAIT_EXIT is likely taken before the id is destroyed. */
	const char *delay = getenv("CQPERF_TEST_CM_HANDLER_DELAY_US");

	memset(l, 0, sizeof(*l));
	l->cfg = *cfg;
	/* As before issue 31: off a single CPU the caller has. */
	l->wd.keep_off = true;
	l->handle = handle;
	l->arg = arg;
	l->epfd = -1;
	if (delay)
		l->delay_us = (uint32_t)strtoul(delay, NULL, 10);
	pthread_mutex_init(&l->ref_mu, NULL);
	l->ref_made = true;
	l->ch = rdma_create_event_channel();
	if (!l->ch)
		return cqp_fail(errno == ENODEV ? CQP_E_NODEV : CQP_E_DEVICE,
				"rdma_create_event_channel: %s",
				strerror(errno));
	if (cfg->mode != CQP_CM_BLOCK) {
		int fl = fcntl(l->ch->fd, F_GETFL);

		if (fl < 0 || fcntl(l->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
			return cqp_fail(CQP_E_SYS,
					"O_NONBLOCK on the event channel: %s",
					strerror(errno));
	}
	if (cfg->mode == CQP_CM_BATCH &&
	    !(l->batch = calloc(cfg->batch, sizeof(*l->batch))))
		return cqp_fail(CQP_E_NOMEM, "out of memory for a batch");
	return cfg->threads ? start_workers(l) : 0;
}

void cqp_cm_loop_stop(struct cqp_cm_loop *l)
{
	for (unsigned i = 0; i < l->nworkers; i++) {
		struct cqp_cm_worker *w = &l->workers[i];

		if (!w->started)
			continue;
		pthread_mutex_lock(&w->mu);
		w->quit = true;
		pthread_cond_signal(&w->more);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		w->started = false;
		for (; w->count; w->count--) {
			release(l, &w->q[w->head]);
			w->head = (w->head + 1) % QUEUE_CAP;
		}
	}
}

void cqp_cm_loop_destroy(struct cqp_cm_loop *l)
{
	cqp_cm_loop_stop(l);
	for (unsigned i = 0; i < l->nworkers; i++) {
		struct cqp_cm_worker *w = &l->workers[i];

		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->more);
		pthread_cond_destroy(&w->drained);
	}
	if (l->err_made)
		pthread_mutex_destroy(&l->err_mu);
	if (l->ref_made)
		pthread_mutex_destroy(&l->ref_mu);
	cqp_watchdog_stop(&l->wd);
	if (l->ch)
		rdma_destroy_event_channel(l->ch);
	free(l->workers);
	free(l->batch);
	memset(l, 0, sizeof(*l));
	l->epfd = -1;
}

void cqp_cm_ev_copy(struct cqp_cm_ev *out, const struct rdma_cm_event *e,
		    uint64_t t_ns)
{
	const void *pd = e->id && e->id->ps == RDMA_PS_UDP
			     ? e->param.ud.private_data
			     : e->param.conn.private_data;
	uint8_t len = e->id && e->id->ps == RDMA_PS_UDP
			  ? e->param.ud.private_data_len
			  : e->param.conn.private_data_len;

	out->type = e->event;
	out->status = e->status;
	out->id = e->id;
	out->listen_id = e->listen_id;
	out->t_ns = t_ns;
	out->pdata_len = 0;
	out->pdata_oversize = 0;
	if (!pd || !len)
		return;
	/* Checked here, not trusted to the transport: iWARP carries more,
	 * and a peer that is not cqperf may send it. */
	if (len > sizeof(out->pdata)) {
		out->pdata_oversize = len;
		return;
	}
	memcpy(out->pdata, pd, len);
	out->pdata_len = len;
}

/* Counts the event against its id (before the ack: see cm_loop.h),
 * copies and acks it.  1: *out is to be handled; 0: its id is gone, the
 * event dropped. */
static int take_one(struct cqp_cm_loop *l, struct rdma_cm_event *e,
		    struct cqp_cm_ev *out)
{
	uint64_t t0 = cqp_now_ns(), t1;
	struct cqp_cm_ref *r;
	bool gone;

	l->events++;
	if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST && e->listen_id) {
		/* A new id, with the listener's context for now. */
		struct rdma_cm_id *id = e->id;

		if (!(r = calloc(1, sizeof(*r)))) {
			rdma_ack_cm_event(e);
			l->acked++;
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
			return cqp_fail(CQP_E_NOMEM,
					"out of memory for a connect request");
		}
		r->id = id;
		id->context = r;
	}
	r = e->id->context;
	pthread_mutex_lock(&l->ref_mu);
	gone = r->gone;
	if (gone)
		l->dropped++;
	else
		r->copies++;
	pthread_mutex_unlock(&l->ref_mu);
	if (!gone) {
		cqp_cm_ev_copy(out, e, t0);
		out->ref = r;
	}
	t1 = cqp_now_ns();
	rdma_ack_cm_event(e);
	l->copy_ns += t1 - t0;
	l->ack_ns += cqp_now_ns() - t1;
	l->acked++;
	return !gone;
}

static void dispatch(struct cqp_cm_loop *l, const struct cqp_cm_ev *ev)
{
	/* One id, one worker: its events stay in order. */
	struct cqp_cm_worker *w =
	    &l->workers[((uintptr_t)ev->id >> 6) % l->nworkers];

	pthread_mutex_lock(&w->mu);
	while (w->count == QUEUE_CAP)
		pthread_cond_wait(&w->drained, &w->mu);
	w->q[(w->head + w->count) % QUEUE_CAP] = *ev;
	w->count++;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->mu);
}

static void drain_workers(struct cqp_cm_loop *l)
{
	for (unsigned i = 0; i < l->nworkers; i++) {
		struct cqp_cm_worker *w = &l->workers[i];

		pthread_mutex_lock(&w->mu);
		while (w->count || w->busy)
			pthread_cond_wait(&w->drained, &w->mu);
		pthread_mutex_unlock(&w->mu);
	}
}

static int handle(struct cqp_cm_loop *l, struct cqp_cm_ev *ev)
{
	if (l->nworkers) {
		dispatch(l, ev);
		return take_error(l);
	}
	return deliver(l, ev);
}

/* One event, or 0 when none came by deadline (block) or none is ready
 * (the others).  1 when *e holds one. */
static int get_event(struct cqp_cm_loop *l, uint64_t deadline,
		     struct rdma_cm_event **e)
{
	if (l->cfg.mode == CQP_CM_BLOCK) {
		int rc;

		if (!l->wd.running && (rc = cqp_watchdog_start(&l->wd)) < 0)
			return rc;
		cqp_watchdog_arm(&l->wd, deadline);
		rc = rdma_get_cm_event(l->ch, e);
		cqp_watchdog_disarm(&l->wd);
		if (rc == 0)
			return 1;
	} else if (rdma_get_cm_event(l->ch, e) == 0) {
		return 1;
	}
	if (errno == EINTR || errno == EAGAIN)
		return 0;
	return cqp_fail(CQP_E_DEVICE, "rdma_get_cm_event: %s", strerror(errno));
}

/* Waits for the channel to be readable (non-blocking modes). */
static int wait_readable(struct cqp_cm_loop *l, uint64_t deadline)
{
	struct pollfd pfd = {.fd = l->ch->fd, .events = POLLIN};
	uint64_t now = cqp_now_ns();
	int ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000) + 1;
	int r = poll(&pfd, 1, ms);

	if (r < 0 && errno != EINTR)
		return cqp_fail(CQP_E_SYS, "poll: %s", strerror(errno));
	return r > 0;
}

/* Takes what is there (batch: up to --cm-batch, all acked before any is
 * handled) and handles it.  Returns how many events it took. */
static int take_some(struct cqp_cm_loop *l, uint64_t deadline)
{
	struct rdma_cm_event *e;
	struct cqp_cm_ev ev;
	unsigned n = 0, kept = 0;
	int rc;

	if (l->cfg.mode != CQP_CM_BLOCK &&
	    (rc = wait_readable(l, deadline)) <= 0)
		return rc;
	if (l->cfg.mode == CQP_CM_BATCH) {
		unsigned i = 0;

		while (n < l->cfg.batch &&
		       (rc = get_event(l, deadline, &e)) > 0) {
			n++;
			if ((rc = take_one(l, e, &l->batch[kept])) < 0)
				break;
			kept += (unsigned)rc;
		}
		while (rc >= 0 && i < kept)
			rc = handle(l, &l->batch[i++]);
		/* After a failure, the copies left are let go unhandled. */
		while (i < kept)
			release(l, &l->batch[i++]);
		return rc < 0 ? rc : (int)n;
	}
	/* block: one event; nonblock: everything up to EAGAIN. */
	while ((rc = get_event(l, deadline, &e)) > 0) {
		n++;
		if ((rc = take_one(l, e, &ev)) < 0)
			return rc;
		if (rc && (rc = handle(l, &ev)) < 0)
			return rc;
		if (l->cfg.mode == CQP_CM_BLOCK)
			break;
	}
	return rc < 0 ? rc : (int)n;
}

int cqp_cm_loop_run(struct cqp_cm_loop *l, bool (*done)(void *arg),
		    uint32_t quiet_ms, bool *quiet)
{
	uint64_t deadline = cqp_now_ns() + (uint64_t)quiet_ms * 1000000;

	*quiet = false;
	for (;;) {
		int n;

		if (l->cfg.stop && *l->cfg.stop)
			return cqp_fail(CQP_E_INTERRUPTED, "interrupted");
		n = take_some(l, deadline);
		if (n < 0)
			return n;
		if (n > 0) {
			deadline = cqp_now_ns() + (uint64_t)quiet_ms * 1000000;
			if (!done(l->arg))
				continue;
		} else if (cqp_now_ns() < deadline) {
			continue;
		}
		/* Done, or quiet: let the workers catch up first. */
		drain_workers(l);
		if ((n = take_error(l)) < 0)
			return n;
		if (done(l->arg))
			return 0;
		if (cqp_now_ns() >= deadline) {
			*quiet = true;
			return 0;
		}
	}
}
