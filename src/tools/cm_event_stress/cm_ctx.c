/* SPDX-License-Identifier: BSD-2-Clause */
#include "tools/cm_event_stress/cm_ctx.h"

const char *const cm_err_keys[E_N] = {
    "addr_error",    "route_error",	    "unreachable",
    "connect_error", "rejected_unexpected", "other",
};

void cm_count(struct ctx *c, const struct cqp_cm_ev *ev, uint64_t t_call)
{
	pthread_mutex_lock(&c->mu);
	cqp_cm_stats_add(&c->st, ev->type, t_call ? ev->t_ns - t_call : 0);
	pthread_mutex_unlock(&c->mu);
}

/* An event whose latency is not "since a call" (a request: from taken to
 * answered). */
void cm_count_lat(struct ctx *c, enum rdma_cm_event_type t, uint64_t lat_ns)
{
	pthread_mutex_lock(&c->mu);
	cqp_cm_stats_add(&c->st, t, lat_ns);
	pthread_mutex_unlock(&c->mu);
}

void cm_bump(struct ctx *c, uint64_t *counter)
{
	pthread_mutex_lock(&c->mu);
	(*counter)++;
	pthread_mutex_unlock(&c->mu);
}

void cm_destroy_conn(struct ctx *c, struct conn *k)
{
	cqp_cm_conn_free_qp(k->id, k->cq);
	cqp_cm_loop_destroy_id(&c->loop, k->id);
	k->id = NULL;
	k->cq = NULL;
	cm_bump(c, &c->ids_destroyed);
}
