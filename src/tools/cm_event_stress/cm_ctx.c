/* SPDX-License-Identifier: BSD-2-Clause */
#include "tools/cm_event_stress/cm_ctx.h"

#include <string.h>

#include "base/error.h"

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

int cm_device_check(const struct ctx *c, struct rdma_cm_id *id)
{
	const char *want = c->p ? c->p->ib_dev : "", *got;

	if (!want[0] || !id || !id->verbs)
		return 0;
	got = ibv_get_device_name(id->verbs->device);
	if (got && strcmp(got, want) == 0)
		return 0;
	if (!got)
		got = "another device";
	if (!c->run || c->run->is_client)
		return cqp_fail(CQP_E_USAGE,
				"-d %s: RDMA CM reaches %s through %s (it "
				"picks the device from the address); give an "
				"address on %s, or leave -d out",
				want, c->p->host, got, want);
	return cqp_fail(CQP_E_USAGE,
			"-d %s: a request from %s came in on %s (RDMA CM "
			"picks the device from the address); serve with -d "
			"%s, or without -d",
			want, c->run->s ? c->run->s->oob.peer : "a client", got,
			got);
}

void cm_destroy_conn(struct ctx *c, struct conn *k)
{
	cqp_cm_conn_free_qp(k->id, k->cq);
	cqp_cm_loop_destroy_id(&c->loop, k->id);
	k->id = NULL;
	k->cq = NULL;
	cm_bump(c, &c->ids_destroyed);
}
