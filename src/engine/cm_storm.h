/* SPDX-License-Identifier: BSD-2-Clause */
/* Pieces the two sides of cm_event_stress share: the private data every
 * connect, accept and reject carries (a sequence number, its true length
 * and a checksum, since the delivered length is padded by the transport),
 * per event type counts and latencies, and the connection's verbs: one
 * CQ and QP per connection, with --msgs small sends. */
#ifndef CQP_CM_STORM_H
#define CQP_CM_STORM_H

#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/cm_loop.h"
#include "base/kv.h"
#include "report/report.h"
#include "base/stats.h"

enum cqp_pd_kind {
	CQP_PD_REQ = 0x43515231, /* "CQR1": connect */
	CQP_PD_ACC = 0x43514131, /* accept */
	CQP_PD_REJ = 0x43514a31, /* reject */
};

#define CQP_PD_REQ_MAX 56 /* what rdma_connect carries on RDMA_PS_TCP */
#define CQP_PD_REP_MAX 64

/* Writes the private data of kind for seq into buf (cap bytes at most);
 * returns its length, which varies with seq. */
uint8_t cqp_pd_fill(uint8_t *buf, uint8_t cap, uint32_t kind, uint32_t seq);
/* Checks private data of kind; *seq gets its sequence number.  A CQP_E_PROTO
 * failure names what is wrong. */
int cqp_pd_check(const uint8_t *buf, uint8_t len, uint32_t kind, uint32_t *seq);
/* The same on an event's copy, which may have been too long to keep. */
int cqp_pd_check_ev(const struct cqp_cm_ev *ev, uint32_t kind, uint32_t *seq);

#define CQP_CM_NEV 32 /* RDMA_CM_EVENT_* fit below this */

/* Counts and latencies per event type, guarded by the owner's lock. */
struct cqp_cm_stats {
	uint64_t count[CQP_CM_NEV];
	struct cqp_hist lat[CQP_CM_NEV]; /* ns from the call that caused it */
};

void cqp_cm_stats_init(struct cqp_cm_stats *s);
/* lat_ns 0: the event has no causing call (counted only). */
void cqp_cm_stats_add(struct cqp_cm_stats *s, enum rdma_cm_event_type t,
		      uint64_t lat_ns);
/* Appends a row per event type seen, side "client" or "server", rates
 * over seconds; returns the new row count (at most cap). */
unsigned cqp_cm_stats_rows(const struct cqp_cm_stats *s, const char *side,
			   double seconds, struct cqp_row *rows, unsigned n,
			   unsigned cap);
/* Rows of one side as kv ("nrows", "r0_event", ...) and back. */
void cqp_cm_rows_encode(const struct cqp_row *rows, unsigned n,
			struct cqp_kv_writer *w);
int cqp_cm_rows_decode(const char *text, size_t len, const char *side,
		       struct cqp_row *rows, unsigned n, unsigned cap,
		       unsigned *out);

/* Verbs one side shares across its connections: a PD and a small buffer
 * on the device RDMA CM chose, made when the first connection needs it. */
struct cqp_cm_verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t buf[64];
};

/* A CQ and an RC QP on id (msgs receives posted when `receives`). */
int cqp_cm_qp_create(struct cqp_cm_verbs *v, pthread_mutex_t *mu,
		     struct rdma_cm_id *id, uint32_t msgs, bool receives,
		     struct ibv_cq **cq);
/* Sends msgs small messages on id's QP and waits for their completions
 * (at most timeout_ms). */
int cqp_cm_send_msgs(struct cqp_cm_verbs *v, struct rdma_cm_id *id,
		     struct ibv_cq *cq, uint32_t msgs, int timeout_ms);
/* Destroys id's QP and cq (if any); the id is its loop's to destroy. */
void cqp_cm_conn_free_qp(struct rdma_cm_id *id, struct ibv_cq *cq);
void cqp_cm_verbs_free(struct cqp_cm_verbs *v);

#endif
