/* SPDX-License-Identifier: BSD-2-Clause */
/* Unreliable-datagram queue pairs between client and server: the device,
 * one CQ per QP in the completion engine, UD QPs with a Q_Key, receive
 * slots of payload + 40 bytes (the GRH lands first), an optional shared
 * receive queue, the address handle towards the peer (or a multicast
 * group), and receive accounting that tells dropped packets from a
 * receive queue that ran dry.  Shared by the UD binaries. */
#ifndef CQP_UD_H
#define CQP_UD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/fabric.h"
#include "engine/bench.h"
#include "engine/fanin.h"
#include "verbs/completion.h"
#include "verbs/verbs.h"

#define CQP_UD_GRH 40 /* bytes before the payload in every receive */

struct cqp_ud_cm;
struct cqp_ud_seq;

/* One receiving thread's accounting (--threads: one each; thread t's
 * QPs are t * q ... t * q + q - 1, the receive queues theirs or, with
 * --srq, the one shared queue). */
struct cqp_ud_rx {
	uint32_t *dirty; /* queues with slots to repost */
	uint8_t *listed; /* per queue: in dirty already */
	uint32_t ndirty;
	uint64_t received;	/* receive completions since the step began */
	uint64_t rx_dry;	/* times a queue's receives were all used */
	struct cqp_ud_seq *seq; /* --verify: next sequence per sender */
	unsigned nseq, seq_cap;
	/* --clients: received and rx_dry by client (nclients each). */
	uint64_t *got, *dry;
	unsigned nclients;
};

struct cqp_ud {
	struct cqp_dev dev;
	bool dev_open;
	struct cqp_comp_set comps; /* one engine (--threads: one each) */
	struct ibv_qp **qps;
	unsigned nqp;
	struct ibv_srq *srq;
	struct cqp_buf sbuf, rbuf;
	uint32_t payload_max; /* the largest payload a step may send */
	uint32_t rslot;	      /* bytes per receive slot: payload + GRH */
	uint32_t nrq;	      /* receive queues: nqp, or 1 with --srq */
	uint32_t rq_depth;    /* receives each queue keeps posted */
	uint32_t tx_slots;    /* send slots per QP */
	uint32_t inline_granted;
	uint32_t qkey;
	struct ibv_ah *ah;    /* towards the peer, or the group */
	uint32_t *remote_qpn; /* per QP */
	uint32_t fanout;      /* copies of each message the server gets */
	bool mcast_attached;
	union ibv_gid mgid;
	int mcast_fd; /* IP-level membership on RoCE; -1 = none */
	struct cqp_ud_cm *cm;
	/* A server's --clients group (nclients > 0): who sent each
	 * datagram, and an address handle back to each client. */
	unsigned nclients;
	struct cqp_senders from;
	struct ibv_ah **client_ah;
	/* Receive accounting. */
	uint32_t *rq_left;    /* posted and not yet consumed, per queue */
	uint32_t *pend;	      /* slots to repost, rq_depth per queue */
	uint32_t *npend;      /* per queue */
	struct cqp_ud_rx *rx; /* per thread */
	unsigned nrx;
	/* --srq with --threads, or --shared-channel: a queue's slots are
	 * more than one thread's, so their bookkeeping takes the lock. */
	bool rx_locked;
	pthread_mutex_t rx_lock;
};

/* Copies of each client QP's messages that one server receive queue
 * takes, summed over the client's QPs: with --srq every QP's (of every
 * thread), with --mcast every QP's copy, both with both; else 1. */
uint32_t cqp_ud_rq_senders(const struct cqp_params *p);

/* Memory one side registers, for the server's --max-mem. */
struct cqp_mem_need cqp_ud_mem_need(const struct cqp_params *p);

/* Opens the device, checks the size against the path MTU, creates CQs,
 * QPs (and the SRQ), buffers, posts every receive on a side that
 * receives, and sets the path up: QP numbers over the oob, or with
 * --rdma-cm through RDMA CM.  `sender`/`receiver` say which buffers this
 * side needs.  Fills run->dev, run->max_size and run->comp. */
int cqp_ud_setup(struct cqp_ud *ud, struct cqp_run *run, bool sender,
		 bool receiver);
void cqp_ud_teardown(struct cqp_ud *ud);

/* A send of `size` bytes from QP qp's send slot `slot` (mod tx_slots),
 * inline when the QP allows it.  wr and sge are the caller's. */
void cqp_ud_prep_send(const struct cqp_ud *ud, unsigned qp, uint64_t slot,
		      uint32_t size, struct ibv_send_wr *wr,
		      struct ibv_sge *sge);
static inline uint8_t *cqp_ud_send_buf(const struct cqp_ud *ud, unsigned qp,
				       uint64_t slot)
{
	/* One slot unless --verify: no division per message then. */
	uint64_t i = ud->tx_slots > 1 ? slot % ud->tx_slots : 0;

	return (uint8_t *)ud->sbuf.addr +
	       ((uint64_t)qp * ud->tx_slots + i) * ud->payload_max;
}

/* The payload of the receive that completed as wc. */
static inline const uint8_t *cqp_ud_recv_payload(const struct cqp_ud *ud,
						 const struct ibv_wc *wc)
{
	/* The low 32 bits of wr_id are the slot. */
	return (const uint8_t *)ud->rbuf.addr +
	       (uint64_t)(uint32_t)wc->wr_id * ud->rslot + CQP_UD_GRH;
}

/* A receive's wr_id: its queue above bit 32, its slot below, so the hot
 * path needs no division to tell them apart. */
#define CQP_UD_WRID_QUEUE_SHIFT 32

/* cqp_ud_qp_index with --srq: the QP, by number. */
unsigned cqp_ud_srq_qp_index(const struct cqp_ud *ud, const struct ibv_wc *wc);
/* The index of the QP a receive completed on. */
static inline unsigned cqp_ud_qp_index(const struct cqp_ud *ud,
				       const struct ibv_wc *wc)
{
	return ud->srq ? cqp_ud_srq_qp_index(ud, wc)
		       : (unsigned)(wc->wr_id >> CQP_UD_WRID_QUEUE_SHIFT);
}

/* Accounts a receive completion: checks its length (and with --verify its
 * pattern and that sequences only move forward) and queues its slot for
 * reposting.  A mismatch is a CQP_E_PROTO failure. */
int cqp_ud_recv_done(struct cqp_ud *ud, struct cqp_ud_rx *rx,
		     const struct ibv_wc *wc, uint32_t size, bool verify);
/* Posts the receives cqp_ud_recv_done queued (cqp_ud_recv_flush's
 * work when this thread listed some). */
int cqp_ud_recv_flush_listed(struct cqp_ud *ud, struct cqp_ud_rx *rx);
static inline int cqp_ud_recv_flush(struct cqp_ud *ud, struct cqp_ud_rx *rx)
{
	/* Nothing listed by this thread (its rx is its own): nothing to
	 * post, and no lock to take; a ping-pong's common case. */
	return rx->ndirty ? cqp_ud_recv_flush_listed(ud, rx) : 0;
}

/* The receive of slot on queue q (wr->next: NULL). */
static inline void cqp_ud_slot_recv(const struct cqp_ud *ud, unsigned q,
				    uint32_t slot, struct ibv_recv_wr *wr,
				    struct ibv_sge *sge)
{
	*sge = (struct ibv_sge){(uintptr_t)ud->rbuf.addr +
				    (uint64_t)slot * ud->rslot,
				ud->rslot, ud->rbuf.mr->lkey};
	*wr = (struct ibv_recv_wr){
	    .wr_id = (uint64_t)q << CQP_UD_WRID_QUEUE_SHIFT | slot,
	    .sg_list = sge,
	    .num_sge = 1};
}

/* ibv_post_recv's failure err, said. */
int cqp_ud_post_failed(int err);

/* A chain of n receives posted on queue q, in one call. */
static inline int cqp_ud_post_chain(struct cqp_ud *ud, unsigned q,
				    struct ibv_recv_wr *wr, unsigned n)
{
	struct ibv_recv_wr *bad;
	int err = ud->srq ? ibv_post_srq_recv(ud->srq, wr, &bad)
			  : ibv_post_recv(ud->qps[q], wr, &bad);

	if (err)
		return cqp_ud_post_failed(err);
	ud->rq_left[q] += n;
	return 0;
}

/* cqp_ud_recv_done (no --verify), then cqp_ud_recv_flush. */
int cqp_ud_recv_queued(struct cqp_ud *ud, struct cqp_ud_rx *rx,
		       const struct ibv_wc *wc, uint32_t size);

/* cqp_ud_recv_done (no --verify) and the slot posted again at once: a
 * ping-pong's receive, where batching gathers nothing.  Inline, with no
 * call of ours on its common path (under TCG a return costs more than
 * its instructions).  A queue another thread's slots may be listed for,
 * or a length to complain of, takes the queued path. */
static inline int cqp_ud_recv_again(struct cqp_ud *ud, struct cqp_ud_rx *rx,
				    const struct ibv_wc *wc, uint32_t size)
{
	unsigned q = (unsigned)(wc->wr_id >> CQP_UD_WRID_QUEUE_SHIFT);
	struct ibv_recv_wr wr;
	struct ibv_sge sge;

	if (ud->rx_locked || rx->ndirty || ud->nclients ||
	    !cqp_fabric_ud_len_ok(wc->byte_len, size,
				  wc->wc_flags & IBV_WC_GRH))
		return cqp_ud_recv_queued(ud, rx, wc, size);
	rx->received++;
	if (--ud->rq_left[q] == 0)
		rx->rx_dry++;
	cqp_ud_slot_recv(ud, q, (uint32_t)wc->wr_id, &wr, &sge);
	return cqp_ud_post_chain(ud, q, &wr, 1);
}
/* Zeroes the receive counters for a new step. */
void cqp_ud_recv_begin(struct cqp_ud_rx *rx);

/* --verify: payload pattern for sequence seq, and its check.  The first
 * min(8, size) bytes hold seq (little-endian), the rest a function of
 * seq and position. */
void cqp_pattern_fill(uint8_t *buf, uint32_t size, uint64_t seq);
/* The full sequence a payload carries, given the next one expected
 * (payloads under 8 bytes carry only its low bytes). */
uint64_t cqp_pattern_seq(const uint8_t *buf, uint32_t size, uint64_t expect);
/* The first byte that differs from the pattern for seq, or -1. */
int64_t cqp_pattern_check(const uint8_t *buf, uint32_t size, uint64_t seq);

/* The sequence number of a request whose low bits (under mask, 2^k - 1)
 * came back on the wire: the latest one below `sent` with those bits;
 * `sent` or more when no request sent had them. */
static inline uint64_t cqp_seq_unwrap(uint64_t sent, uint32_t low,
				      uint32_t mask)
{
	uint64_t seq = (sent & ~(uint64_t)mask) | (low & mask);

	if (seq >= sent && seq >= (uint64_t)mask + 1)
		seq -= (uint64_t)mask + 1;
	return seq;
}

#endif
