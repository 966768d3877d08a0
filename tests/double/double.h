/* SPDX-License-Identifier: BSD-2-Clause */
/* The device double: a preloaded shared object that gives rxe the
 * behaviour of another provider, so the real binaries run the paths a
 * real NIC takes.  Test code, never installed.
 *
 *   LD_PRELOAD=.../libcqpdouble.so CQPERF_TEST_DEVICE=mlx5-roce cmd...
 *
 * Personalities (CQPERF_TEST_DEVICE): mlx5-roce, mlx5-ib, bnxt_re,
 * irdma.  Faults on demand (CQPERF_TEST_FAULT, comma separated):
 *   port_err:P@MS   IBV_EVENT_PORT_ERR on port P, MS ms after open
 *   qp_fatal@MS     IBV_EVENT_QP_FATAL on the first QP made
 *   cq_err@MS       IBV_EVENT_CQ_ERR (a CQ overran) on the first CQ
 *   send_enomem@N   the Nth ibv_post_send fails with ENOMEM
 *   wc_rnr@N        the Nth completion reads IBV_WC_RNR_RETRY_EXC_ERR
 *   no_relaxed_ordering  ibv_reg_mr with IBV_ACCESS_RELAXED_ORDERING
 *                   fails with EINVAL
 *   no_rd_atom      query_device reports max_qp_rd_atom and
 *                   max_qp_init_rd_atom 0: no READ or atomic in flight
 *   send_late       a send's completion is held back until a receive's
 *                   is polled, and returned behind it (or after 20 ms):
 *                   rxe's completer and responder are separate tasks
 *                   (kernel drivers/infiniband/sw/rxe/rxe_comp.c,
 *                   rxe_resp.c), so on a CQ both share, a send's entry
 *                   can land behind a receive that came later
 * CQPERF_TEST_DOUBLE_LOG=FILE appends one line per call the double
 * counts (create_qp, modify_cq, events) for tests to read.
 *
 * Interposed: the exported verbs (ibv_open_device, ibv_create_cq, ...)
 * by symbol; the inline ones (ibv_poll_cq, ibv_req_notify_cq,
 * ibv_post_send, ibv_modify_cq, ibv_query_port, ibv_query_device_ex) by
 * patching the opened context's ops.  One process-wide state: the
 * interposed symbols carry no context of their own. */
#ifndef CQP_DOUBLE_H
#define CQP_DOUBLE_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct dbl_personality {
	const char *name;
	bool moderation;   /* ibv_modify_cq with mlx5's semantics */
	bool own_channels; /* events through channels the double owns */
	/* An arm finding CQEs not yet polled raises the event at once
	 * (mlx5, see double_cq.c); rxe waits for the next completion. */
	bool arm_sees_unpolled;
	uint8_t ports;		/* port 2.. are down */
	bool infiniband;	/* link layer IB, LIDs, no GRH needed */
	bool iwarp;		/* transport iWARP */
	uint32_t max_inline;	/* 0: the device's own */
	bool inline_errno_kept; /* above it: NULL, errno as it was (bnxt_re) */
	uint16_t max_cq_count, max_cq_period;
	/* READs and atomics in flight per QP, each way; 0: the device's.
	 * Above it ibv_modify_qp fails with EINVAL (mlx5). */
	uint8_t max_rd_atom;
	bool no_atomics; /* atomic_cap IBV_ATOMIC_NONE */
};

/* A CQ the double watches: moderated ones keep their completions in a
 * ring the pump fills, so that arrivals since arming are counted. */
struct dbl_cq {
	struct ibv_cq *cq;
	struct dbl_chan *chan; /* NULL: not on a double-owned channel */
	bool app_armed;
	uint16_t count, period; /* moderation; both 0: none */
	uint32_t since_arm;	/* completions since the app armed */
	uint64_t first_ns;	/* the period's start: the last event */
	uint64_t event_ns;	/* the last event raised (0: none yet) */
	struct ibv_wc *ring;
	uint32_t cap, head, len;
	/* send_late: the send completions held back, since late_ns. */
	struct ibv_wc late[16];
	uint32_t nlate;
	uint64_t late_ns;
	struct dbl_cq *next;
};

/* A channel the double owns: the app reads events from a pipe; the real
 * CQs report to a hidden channel the pump watches. */
struct dbl_chan {
	struct ibv_comp_channel pub; /* what the app holds */
	struct ibv_comp_channel *hidden;
	int wfd;
	struct dbl_chan *next;
};

struct dbl_fault {
	int port_err_port;
	int64_t port_err_ms, qp_fatal_ms, cq_err_ms; /* -1: none */
	uint64_t send_enomem_at, wc_rnr_at;	     /* 0: none */
	bool no_relaxed_ordering, send_late, no_rd_atom;
	bool port_err_sent, qp_fatal_sent, cq_err_sent;
};

struct dbl_state {
	const struct dbl_personality *p;
	struct dbl_fault fault;
	pthread_mutex_t lock;
	struct dbl_cq *cqs;
	struct dbl_chan *chans;
	struct ibv_qp *first_qp;
	struct ibv_cq *first_cq;
	uint64_t opened_ns;
	uint64_t sends, completions; /* for the counted faults */
	int epfd, wake[2];	     /* the pump's */
	/* mlx5-ib: this node's LID and the IPv4 GID rxe routes by. */
	uint32_t ib_ipv4;
	uint16_t ib_lid;
	uint8_t ib_sgid_index;
	bool pump_running;
	pthread_t pump;
	/* The provider's own ops, saved before patching (one device). */
	int (*poll_cq)(struct ibv_cq *, int, struct ibv_wc *);
	int (*req_notify_cq)(struct ibv_cq *, int);
	int (*post_send)(struct ibv_qp *, struct ibv_send_wr *,
			 struct ibv_send_wr **);
	int (*query_port)(struct ibv_context *, uint8_t, struct ibv_port_attr *,
			  size_t);
	int (*query_device_ex)(struct ibv_context *,
			       const struct ibv_query_device_ex_input *,
			       struct ibv_device_attr_ex *, size_t);
};

extern struct dbl_state dbl;

/* The next definition of an interposed symbol; aborts when missing. */
void *dbl_real(const char *sym);
uint64_t dbl_now_ns(void);
void dbl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* double_ib.c: LID routing for the mlx5-ib personality. */
void dbl_ib_open(struct ibv_context *ctx);

/* double_cq.c: channels, CQs, moderation and the pump. */
void dbl_cq_patch(struct ibv_context *ctx);
struct dbl_cq *dbl_cq_find(struct ibv_cq *cq);
/* Applies the counted completion fault to wc[0..n). */
void dbl_fault_wc(struct ibv_wc *wc, int n);

#endif
