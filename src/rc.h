/* Reliable-connected queue pairs between client and server: the device,
 * one CQ per QP in the completion engine, a registered buffer per QP, the
 * endpoint exchange and the state changes.  Shared by the RC binaries. */
#ifndef CQP_RC_H
#define CQP_RC_H

#include "bench.h"
#include "completion.h"
#include "verbs.h"

struct cqp_rc {
	struct cqp_dev dev;
	bool dev_open;
	struct cqp_comp comp;
	bool comp_created;
	struct ibv_qp **qps;
	struct cqp_buf *bufs;
	unsigned nqp;
	uint32_t inline_granted;
	enum ibv_mtu mtu;
};

/* Opens the device, creates CQs, QPs and buf_size buffers, and — before
 * the peer can send — calls prepare (e.g. to post receives), then
 * exchanges endpoints and moves every QP to RTS.  Fills run->dev and
 * run->max_size. */
int cqp_rc_setup(struct cqp_rc *rc, struct cqp_run *run, uint64_t buf_size,
		 bool receiver, int (*prepare)(struct cqp_rc *rc, void *arg),
		 void *arg);
void cqp_rc_teardown(struct cqp_rc *rc);

/* Posts `count` receives of the whole buffer on QP qp; wr_id = qp. */
int cqp_rc_post_recvs(struct cqp_rc *rc, unsigned qp, unsigned count);

#endif
