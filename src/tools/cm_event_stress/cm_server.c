/* SPDX-License-Identifier: BSD-2-Clause */
/* cm_event_stress's server: accept, or reject exactly --reject-pct of
 * the requests, checking each request's private data; serve until the
 * client has sent its results or died, then let its last disconnects
 * arrive. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cm_event_stress/cm_ctx.h"
#include "base/error.h"

static bool reject_next(struct ctx *c, uint64_t k)
{
	/* Exactly floor(requests * P / 100) of the requests. */
	return (k + 1) * c->p->reject_pct / 100 > k * c->p->reject_pct / 100;
}

/* A request whose private data is not ours (the check's failure is the
 * last error): rejected at once, or its peer would wait for its CM
 * timeout, and its id destroyed; then the run fails, as on any private
 * data mismatch.  The reject carries no private data: ours would name a
 * connection, and rdma_reject gives no reason of our choosing. */
static int refuse(struct ctx *c, const struct cqp_cm_ev *ev)
{
	char peer[INET6_ADDRSTRLEN] = "an unknown peer";
	struct sockaddr *sa = rdma_get_peer_addr(ev->id);

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, peer,
			  sizeof(peer));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr,
			  peer, sizeof(peer));
	cm_count_lat(c, ev->type, cqp_now_ns() - ev->t_ns);
	rdma_reject(ev->id, NULL, 0);
	cqp_cm_loop_destroy_id(&c->loop, ev->id);
	cm_bump(c, &c->ids_destroyed);
	cm_bump(c, &c->sv.rejected);
	return cqp_fail_wrap(CQP_E_PROTO, "a connect request from %s, rejected",
			     peer);
}

static int on_request(struct ctx *c, const struct cqp_cm_ev *ev)
{
	uint8_t pd[CQP_PD_REP_MAX];
	struct rdma_conn_param cp;
	struct conn *k;
	uint32_t seq;
	uint64_t idx;
	int rc = cqp_pd_check_ev(ev, CQP_PD_REQ, &seq);

	if (c->sv.spoke) {
		/* Queued before a client died: not worth a QP any more. */
		rdma_reject(ev->id, NULL, 0);
		cqp_cm_loop_destroy_id(&c->loop, ev->id);
		cqp_errclear();
		return 0;
	}
	pthread_mutex_lock(&c->mu);
	idx = c->sv.requests++;
	c->ids_created++; /* RDMA CM made the request's id */
	pthread_mutex_unlock(&c->mu);
	if (rc < 0)
		return refuse(c, ev);
	if ((rc = cm_device_check(c, ev->id)) < 0) {
		rdma_reject(ev->id, NULL, 0);
		cqp_cm_loop_destroy_id(&c->loop, ev->id);
		return rc;
	}
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.responder_resources = cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	if (reject_next(c, idx)) {
		uint8_t len = cqp_pd_fill(pd, sizeof(pd), CQP_PD_REJ, seq);

		cm_count_lat(c, ev->type, cqp_now_ns() - ev->t_ns);
		rc = rdma_reject(ev->id, pd, len) ? errno : 0;
		cqp_cm_loop_destroy_id(&c->loop, ev->id);
		cm_bump(c, &c->ids_destroyed);
		cm_bump(c, &c->sv.rejected);
		return rc ? cqp_fail(CQP_E_NET, "rdma_reject: %s", strerror(rc))
			  : 0;
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	k->id = ev->id;
	k->seq = seq;
	cqp_cm_loop_set_ctx(&c->loop, ev->id, k);
	pthread_mutex_lock(&c->mu);
	c->sv.live++;
	k->next = c->sv.live_list;
	if (k->next)
		k->next->prev = k;
	c->sv.live_list = k;
	pthread_mutex_unlock(&c->mu);
	if (!c->p->no_qp &&
	    (rc = cqp_cm_qp_create(&c->verbs, &c->mu, ev->id, c->p->msgs, true,
				   &k->cq)) < 0)
		return rc;
	cp.private_data_len = cqp_pd_fill(pd, sizeof(pd), CQP_PD_ACC, seq);
	cp.qp_num = 0x200000 | (seq & 0xfffff);
	k->t_call = cqp_now_ns();
	cm_count_lat(c, ev->type, k->t_call - ev->t_ns);
	if (rdma_accept(ev->id, &cp))
		return cqp_fail(CQP_E_NET, "rdma_accept: %s", strerror(errno));
	cm_bump(c, &c->sv.accepted);
	return 0;
}

void cm_server_drop(struct ctx *c, struct conn *k)
{
	cm_destroy_conn(c, k);
	pthread_mutex_lock(&c->mu);
	c->sv.live--;
	if (k->prev)
		k->prev->next = k->next;
	else
		c->sv.live_list = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&c->mu);
	free(k);
}

int cm_server_event(void *arg, const struct cqp_cm_ev *ev)
{
	struct ctx *c = arg;
	struct conn *k = ev->ctx;

	switch (ev->type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return on_request(c, ev);
	case RDMA_CM_EVENT_ESTABLISHED:
		cm_count(c, ev, k->t_call);
		k->established = true;
		cm_bump(c, &c->sv.established);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
		cm_count(c, ev, 0);
		cm_bump(c, &c->sv.disconnected);
		cm_server_drop(c, k);
		return 0;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		cm_count(c, ev, k ? k->t_call : 0);
		cm_bump(c, &c->errors[ev->type == RDMA_CM_EVENT_UNREACHABLE
					  ? E_UNREACH
					  : E_CONNECT]);
		if (k)
			cm_server_drop(c, k);
		return 0;
	default:
		cm_count(c, ev, 0);
		return 0;
	}
}

/* The client has sent its results (or died): looked at every 50 ms,
 * busy or not, since a dying client's connections keep events coming. */
static bool client_spoke(void *arg)
{
	struct ctx *c = arg;
	uint64_t now = cqp_now_ns();

	if (c->sv.spoke || now - c->sv.oob_checked < 50000000)
		return c->sv.spoke;
	c->sv.oob_checked = now;
	c->sv.spoke = cqp_oob_pending(&c->run->s->oob);
	return c->sv.spoke;
}

static bool none_live(void *arg)
{
	struct ctx *c = arg;
	bool done;

	pthread_mutex_lock(&c->mu);
	done = c->sv.live == 0;
	pthread_mutex_unlock(&c->mu);
	return done;
}

/* Serves until the client, done, sends its results; then lets its last
 * disconnects arrive (a client that died leaves them to us). */
int cm_serve(struct ctx *c, double *seconds)
{
	uint64_t t0 = cqp_now_ns(), last = t0;
	bool quiet;
	int rc;

	for (;;) {
		uint64_t before = c->loop.events;

		rc = cqp_cm_loop_run(&c->loop, client_spoke, QUIET_MS, &quiet);
		if (rc < 0)
			return rc;
		if (c->loop.events != before)
			last = cqp_now_ns();
		if (!quiet || client_spoke(c))
			break;
		if (cqp_now_ns() - last >
		    (uint64_t)c->p->timeout_s * 1000000000)
			return cqp_fail(CQP_E_TIMEOUT,
					"no RDMA CM event and no word from "
					"client %s for %u s",
					c->run->s->oob.peer, c->p->timeout_s);
	}
	*seconds = (double)(last - t0) / 1e9;
	/* The last disconnects may still be on their way; a dead client's
	 * connections may never end, and teardown destroys them. */
	for (int i = 0; i < 20 && !none_live(c); i++)
		if ((rc = cqp_cm_loop_run(&c->loop, none_live, 100, &quiet)) <
		    0)
			return rc;
	return 0;
}
