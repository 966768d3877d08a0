/* SPDX-License-Identifier: BSD-2-Clause */
/* Reliable-connected queue pairs between client and server: the device,
 * one CQ per QP in the completion engine, a registered buffer per QP, the
 * endpoint exchange and the state changes.  Shared by the RC binaries. */
#ifndef CQP_RC_H
#define CQP_RC_H

#include "engine/bench.h"
#include "engine/fanin.h"
#include "engine/verb.h"
#include "verbs/completion.h"
#include "verbs/verbs.h"

/* --all stops at this size (or at the device's largest message). */
#define CQP_RC_ALL_MAX (8ull << 20)

struct cqp_rc {
	struct cqp_dev dev;
	bool dev_open;
	/* One engine per --threads thread, each over its own CQs (and
	 * channel, or the shared one); QPs are thread-major: thread t has
	 * qps[t * q ...]. */
	struct cqp_comp_set comps;
	struct ibv_qp **qps;
	struct cqp_buf *bufs;
	unsigned nqp;
	uint32_t inline_granted;
	enum ibv_mtu mtu;
	/* --verb: each QP's buffers for the verbs, the run's verbs (a
	 * mask) and the READs and atomics a QP may have in flight. */
	struct cqp_verb_qp *vq;
	uint32_t verbs;
	uint32_t rd_atom;
	/* --srq (a receiving side): one receive queue for every QP, whose
	 * completions say their QP by number (byqpn: number -> index). */
	struct ibv_srq *srq;
	struct cqp_senders byqpn;
};

/* The index of the QP a receive completed on. */
static inline unsigned cqp_rc_wc_qp(const struct cqp_rc *rc,
				    const struct ibv_wc *wc)
{
	return rc->srq ? cqp_senders_find(&rc->byqpn, wc->qp_num, 0)
		       : (unsigned)wc->wr_id;
}

/* The buffer each QP needs: the largest message the run may send. */
uint64_t cqp_rc_buf_size(const struct cqp_params *p);
/* Buffer memory one side registers, for the server's --max-mem. */
struct cqp_mem_need cqp_rc_mem_need(const struct cqp_params *p);

/* Opens the device, creates CQs, QPs and their buffers (-q per
 * --threads thread, on one device context and PD) and, on a side
 * that receives, posts rx-depth receives per QP before the peer can send;
 * then exchanges endpoints (with each buffer's address and rkey) and
 * moves every QP to RTS.  A `target` side's buffers take the remote
 * access the run's verbs need (and with --verify the pattern a READ of
 * step 1 finds).  Fills run->dev, run->max_size (at most
 * the buffer), run->comp and run->ncomp. */
int cqp_rc_setup(struct cqp_rc *rc, struct cqp_run *run, bool receiver,
		 bool target);
/* The requests a sender may have in flight per QP for `verb`: tx-depth,
 * or for READ and atomics the pair's rd_atom if fewer. */
uint32_t cqp_rc_window(const struct cqp_rc *rc, const struct cqp_params *p,
		       uint32_t verb);
void cqp_rc_teardown(struct cqp_rc *rc);

/* After a step, with write among the run's verbs: no tail of QPs
 * first..first+n-1 holds a number, so that no later SEND, READ or stale
 * byte can pass for a WRITE's (nothing is in flight between steps). */
void cqp_rc_step_done(struct cqp_rc *rc, const struct cqp_params *p,
		      unsigned first, unsigned n);

/* Posts `count` receives of the whole buffer on QP qp (with --srq, of
 * its buffer on the shared queue); wr_id = qp. */
int cqp_rc_post_recvs(struct cqp_rc *rc, unsigned qp, unsigned count);

#endif
