/* SPDX-License-Identifier: BSD-2-Clause */
/* cm_event_stress's client: each round a connect phase and a disconnect
 * phase, --concurrency connections in flight, each one resolve address,
 * resolve route, CQ and QP (unless --no-qp), connect, --msgs sends. */
#include <errno.h>
#include <string.h>

#include "tools/cm_event_stress/cm_ctx.h"
#include "base/error.h"

/* Called from any worker: the id is held over the call (cm_loop.h). */
static int start_resolve(struct ctx *c, struct conn *k)
{
	struct rdma_cm_id *id;
	struct cqp_cm_ref *r;
	int rc = cqp_cm_loop_create_id(&c->loop, &id, k, RDMA_PS_TCP);

	if (rc < 0)
		return rc;
	cm_bump(c, &c->ids_created);
	r = cqp_cm_loop_hold(&c->loop, id);
	k->id = id;
	k->t_call = cqp_now_ns();
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&c->cl.dst,
			      (int)c->p->cm_timeout_ms))
		rc = cqp_fail(CQP_E_NET, "rdma_resolve_addr: %s",
			      strerror(errno));
	cqp_cm_loop_unhold(&c->loop, r);
	return rc;
}

/* Starts the next connect or disconnect of the phase, if any is left. */
static int start_next(struct ctx *c)
{
	struct conn *k = NULL;
	struct rdma_cm_id *id;
	struct cqp_cm_ref *r;
	int rc = 0;

	pthread_mutex_lock(&c->mu);
	while (c->cl.next < c->cl.n) {
		k = &c->cl.conns[c->cl.next++];
		if (c->cl.phase == PH_CONNECT || k->established)
			break;
		c->cl.finished++; /* nothing to tear down */
		k = NULL;
	}
	if (k && c->cl.phase == PH_CONNECT) {
		memset(k, 0, sizeof(*k));
		k->seq = c->cl.seq++;
		c->cl.attempts++;
	}
	pthread_mutex_unlock(&c->mu);
	if (!k)
		return 0;
	if (c->cl.phase == PH_CONNECT)
		return start_resolve(c, k);
	/* Its DISCONNECTED may be handled (and the id let go) by another
	 * worker before rdma_disconnect returns: held over the call. */
	id = k->id;
	r = cqp_cm_loop_hold(&c->loop, id);
	k->t_call = cqp_now_ns();
	if (rdma_disconnect(id))
		rc =
		    cqp_fail(CQP_E_NET, "rdma_disconnect: %s", strerror(errno));
	cqp_cm_loop_unhold(&c->loop, r);
	return rc;
}

/* A connection's connect (or disconnect) is over: start another. */
static int finish(struct ctx *c, uint64_t *outcome)
{
	pthread_mutex_lock(&c->mu);
	if (outcome)
		(*outcome)++;
	c->cl.finished++;
	pthread_mutex_unlock(&c->mu);
	return start_next(c);
}

static int connect_conn(struct ctx *c, struct conn *k)
{
	uint8_t pd[CQP_PD_REQ_MAX];
	struct rdma_conn_param cp;
	int rc;

	if (!c->p->no_qp &&
	    (rc = cqp_cm_qp_create(&c->verbs, &c->mu, k->id, c->p->msgs, false,
				   &k->cq)) < 0)
		return rc;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = cqp_pd_fill(pd, sizeof(pd), CQP_PD_REQ, k->seq);
	cp.responder_resources = cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	/* --no-qp: a number no QP and no server connection uses, or the CM
	 * takes the REP for a stale connection. */
	cp.qp_num = 0x100000 | (k->seq & 0xfffff);
	k->t_call = cqp_now_ns();
	if (rdma_connect(k->id, &cp))
		return cqp_fail(CQP_E_NET, "rdma_connect: %s", strerror(errno));
	return 0;
}

/* A resolution failed: retry it on a fresh id, or give the connection
 * up. */
static int resolve_failed(struct ctx *c, struct conn *k, enum err e)
{
	cm_bump(c, &c->errors[e]);
	cm_destroy_conn(c, k);
	if (k->tries < c->p->retries) {
		k->tries++;
		cm_bump(c, &c->cl.retries);
		return start_resolve(c, k);
	}
	return finish(c, &c->cl.failed);
}

static int on_established(struct ctx *c, struct conn *k,
			  const struct cqp_cm_ev *ev)
{
	uint32_t seq;
	int rc = cqp_pd_check_ev(ev, CQP_PD_ACC, &seq);

	if (rc == 0 && seq != k->seq)
		rc = cqp_fail(CQP_E_PROTO, "connection %u was accepted as %u",
			      k->seq, seq);
	if (rc == 0 && c->p->msgs) {
		rc = cqp_cm_send_msgs(&c->verbs, k->id, k->cq, c->p->msgs,
				      (int)c->p->timeout_s * 1000);
		if (rc == 0) {
			pthread_mutex_lock(&c->mu);
			c->cl.msgs_sent += c->p->msgs;
			pthread_mutex_unlock(&c->mu);
		}
	}
	if (rc < 0)
		return rc;
	k->established = true;
	return finish(c, &c->cl.established);
}

static int on_rejected(struct ctx *c, struct conn *k,
		       const struct cqp_cm_ev *ev)
{
	uint32_t seq;

	cm_destroy_conn(c, k);
	/* Ours carries our private data; any other reject is an error. */
	if (ev->pdata_len &&
	    cqp_pd_check(ev->pdata, ev->pdata_len, CQP_PD_REJ, &seq) == 0) {
		if (seq != k->seq)
			return cqp_fail(CQP_E_PROTO,
					"connection %u was rejected as %u",
					k->seq, seq);
		return finish(c, &c->cl.rejected);
	}
	cqp_errclear();
	cm_bump(c, &c->errors[E_REJECT]);
	return finish(c, &c->cl.failed);
}

int cm_client_event(void *arg, const struct cqp_cm_ev *ev)
{
	struct ctx *c = arg;
	struct conn *k = ev->ctx;
	int rc;

	cm_count(c, ev,
		 ev->type == RDMA_CM_EVENT_TIMEWAIT_EXIT ? 0 : k->t_call);
	switch (ev->type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if ((rc = cm_device_check(c, k->id)) < 0)
			return rc;
		k->t_call = cqp_now_ns();
		if (rdma_resolve_route(k->id, (int)c->p->cm_timeout_ms))
			return cqp_fail(CQP_E_NET, "rdma_resolve_route: %s",
					strerror(errno));
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return connect_conn(c, k);
	case RDMA_CM_EVENT_ADDR_ERROR:
		return resolve_failed(c, k, E_ADDR);
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return resolve_failed(c, k, E_ROUTE);
	case RDMA_CM_EVENT_ESTABLISHED:
		return on_established(c, k, ev);
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		/* --no-qp: the application completes the handshake. */
		if (rdma_establish(k->id))
			return cqp_fail(CQP_E_NET, "rdma_establish: %s",
					strerror(errno));
		return on_established(c, k, ev);
	case RDMA_CM_EVENT_REJECTED:
		return on_rejected(c, k, ev);
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		cm_bump(c, &c->errors[ev->type == RDMA_CM_EVENT_UNREACHABLE
					  ? E_UNREACH
					  : E_CONNECT]);
		cm_destroy_conn(c, k);
		return finish(c, &c->cl.failed);
	case RDMA_CM_EVENT_DISCONNECTED:
		if (c->cl.phase != PH_DISCONNECT || !k->established) {
			uint16_t type;
			/* A server that died closed its channel too: say so. */
			int r = cqp_oob_peek(&c->run->s->oob, &type);

			if (r < 0)
				return r;
			return cqp_fail(CQP_E_PROTO,
					"the server %s dropped connection %u",
					c->run->s->oob.peer, k->seq);
		}
		k->established = false;
		cm_destroy_conn(c, k);
		return finish(c, &c->cl.disconnected);
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		cm_bump(c, &c->errors[E_OTHER]);
		return 0;
	}
}

static bool phase_done(void *arg)
{
	struct ctx *c = arg;
	bool done;

	pthread_mutex_lock(&c->mu);
	done = c->cl.finished == c->cl.n;
	pthread_mutex_unlock(&c->mu);
	return done;
}

/* One phase: up to --concurrency at once until every connection is
 * through.  Returns its duration. */
int cm_run_phase(struct ctx *c, enum phase ph, double *seconds)
{
	uint64_t t0 = cqp_now_ns(), last = t0;
	bool quiet;
	int rc = 0;

	c->cl.phase = ph;
	c->cl.next = 0;
	c->cl.finished = 0;
	for (unsigned i = 0; i < c->p->concurrency && rc == 0; i++)
		rc = start_next(c);
	while (rc == 0 && !phase_done(c)) {
		uint64_t before = c->loop.events;

		rc = cqp_cm_loop_run(&c->loop, phase_done, QUIET_MS, &quiet);
		if (c->loop.events != before)
			last = cqp_now_ns();
		if (rc == 0 && quiet &&
		    cqp_now_ns() - last >
			(uint64_t)c->p->timeout_s * 1000000000)
			rc = cqp_fail(CQP_E_TIMEOUT,
				      "no RDMA CM event for %u s (%u of %u "
				      "connections through): server %s is gone "
				      "or stalled",
				      c->p->timeout_s, c->cl.finished, c->cl.n,
				      c->run->s->oob.peer);
	}
	*seconds += (double)(cqp_now_ns() - t0) / 1e9;
	return rc;
}
