/* SPDX-License-Identifier: BSD-2-Clause */
/* The sending side of a bandwidth step, shared by the bandwidth mains:
 * keep every QP's send queue full (chains of --post-list, a completion
 * every --signal-every, solicited marks for a receiver armed for them),
 * mark the measured phase and the last message with immediate data, reap
 * send completions in the configured mode, and meter the rate. */
#ifndef CQP_BW_H
#define CQP_BW_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "engine/verb.h"
#include "verbs/completion.h"
#include "base/options.h"
#include "report/report.h"

struct cqp_bw_tx {
	const struct cqp_params *p;
	struct cqp_comp *comp;
	struct ibv_qp **qps;
	unsigned nqp;
	unsigned first; /* prep's qp of qps[0] (--threads: its group's) */
	/* Fills message idx of QP qp: sge, sg_list, num_sge, the inline
	 * flag and any transport fields; the caller of prep sets the rest
	 * (wr_id, opcode, immediate, signaling, chaining). */
	void (*prep)(void *arg, unsigned qp, uint64_t idx, uint32_t size,
		     struct ibv_send_wr *wr, struct ibv_sge *sge);
	void *arg;
	/* -n: sends per QP before the measured ones, in a phase of their
	 * own whose last send on QP 0 carries CQP_IMM_MEASURE; 0: none. */
	uint64_t warmup;
	/* --rate: this sender's share of it (--threads split it); 0 with
	 * --rate set means all of it. */
	uint64_t rate;
	/* Sending QPs whose messages land in one of the peer's receive
	 * queues (cqp_ud_rq_senders); 0 or 1: each QP has its own. */
	uint32_t rq_senders;
	/* RC --verb: the verb, each QP's buffers (vq[i] for qps[i]; NULL:
	 * prep builds SENDs), the QPs' inline grant and the requests a QP
	 * may have in flight (cqp_rc_window; 0: tx-depth). */
	uint32_t verb;
	struct cqp_verb_qp *vq;
	uint32_t inline_granted;
	uint32_t window;
};

/* Sends per QP from one solicited message to the next: a quarter of
 * rx_depth, divided among rq_senders QPs, whose countdowns may run
 * together: a receiver armed for solicited events then wakes before a
 * quarter of its queue is used.  At least 1. */
uint32_t cqp_bw_sol_every(uint32_t rx_depth, uint32_t rq_senders);

/* Sends one step of `size` bytes per message: --iters per QP after
 * tx->warmup, or for --duration seconds after a second of warm-up.
 * Fills the row's bandwidth figures, this side's cost and *sent (every
 * message posted, warm-up included). */
int cqp_bw_send(const struct cqp_bw_tx *tx, uint64_t size, struct cqp_row *row,
		struct cqp_cost *mine, uint64_t *sent);

#endif
