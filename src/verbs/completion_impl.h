/* SPDX-License-Identifier: BSD-2-Clause */
/* What completion.c (the hot path) and completion_setup.c (a side's CQs'
 * life and its cost) share, and nothing else includes. */
#ifndef CQP_COMPLETION_IMPL_H
#define CQP_COMPLETION_IMPL_H

#include "verbs/completion.h"

/* Acks a CQ's events taken so far (ibv_destroy_cq waits for them). */
static inline void cqp_comp_ack(struct cqp_comp *c, struct cqp_comp_cq *q)
{
	if (!q->unacked)
		return;
	ibv_ack_cq_events(q->cq, q->unacked);
	c->cnt.events_acked += q->unacked;
	q->unacked = 0;
}

#endif
