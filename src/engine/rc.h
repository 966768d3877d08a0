/* SPDX-License-Identifier: BSD-2-Clause */
/* Reliable-connected queue pairs between client and server: the device,
 * one CQ per QP in the completion engine, a registered buffer per QP, the
 * endpoint exchange and the state changes.  Shared by the RC binaries. */
#ifndef CQP_RC_H
#define CQP_RC_H

#include "engine/bench.h"
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
};

/* The buffer each QP needs: the largest message the run may send. */
uint64_t cqp_rc_buf_size(const struct cqp_params *p);
/* Buffer memory one side registers, for the server's --max-mem. */
struct cqp_mem_need cqp_rc_mem_need(const struct cqp_params *p);

/* Opens the device, creates CQs, QPs and their buffers (-q per
 * --threads thread, on one device context and PD) and, on a side
 * that receives, posts rx-depth receives per QP before the peer can send;
 * then exchanges endpoints and moves every QP to RTS.  Fills run->dev,
 * run->max_size (at most the buffer), run->comp and run->ncomp. */
int cqp_rc_setup(struct cqp_rc *rc, struct cqp_run *run, bool receiver);
void cqp_rc_teardown(struct cqp_rc *rc);

/* Posts `count` receives of the whole buffer on QP qp; wr_id = qp. */
int cqp_rc_post_recvs(struct cqp_rc *rc, unsigned qp, unsigned count);

#endif
