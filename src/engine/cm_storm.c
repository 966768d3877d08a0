/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/cm_storm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "report/results.h"

struct pd_head {
	uint32_t kind;
	uint32_t seq;
	uint16_t len; /* the true length: the transport pads what it hands */
	uint16_t zero;
	uint32_t csum;
} __attribute__((packed));

static uint32_t fnv1a(const uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t h = 2166136261u ^ seed;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

uint8_t cqp_pd_fill(uint8_t *buf, uint8_t cap, uint32_t kind, uint32_t seq)
{
	struct pd_head h = {.kind = kind, .seq = seq};
	uint8_t room = (uint8_t)(cap - sizeof(h));
	uint8_t n = (uint8_t)(seq % (room + 1u)); /* every length in turn */

	for (uint8_t i = 0; i < n; i++)
		buf[sizeof(h) + i] = (uint8_t)(seq * 31u + i);
	h.len = (uint16_t)(sizeof(h) + n);
	h.csum = fnv1a(buf + sizeof(h), n, seq ^ kind);
	memcpy(buf, &h, sizeof(h));
	return (uint8_t)h.len;
}

int cqp_pd_check(const uint8_t *buf, uint8_t len, uint32_t kind, uint32_t *seq)
{
	struct pd_head h;

	if (len < sizeof(h))
		return cqp_fail(CQP_E_PROTO,
				"private data of %u bytes: too short for ours",
				len);
	memcpy(&h, buf, sizeof(h));
	if (h.kind != kind)
		return cqp_fail(CQP_E_PROTO,
				"private data of kind 0x%08x, expected 0x%08x",
				h.kind, kind);
	if (h.len < sizeof(h) || h.len > len)
		return cqp_fail(CQP_E_PROTO,
				"private data says %u bytes, %u arrived", h.len,
				len);
	if (fnv1a(buf + sizeof(h), h.len - sizeof(h), h.seq ^ kind) != h.csum)
		return cqp_fail(CQP_E_PROTO,
				"private data of connection %u: checksum "
				"mismatch",
				h.seq);
	*seq = h.seq;
	return 0;
}

int cqp_pd_check_ev(const struct cqp_cm_ev *ev, uint32_t kind, uint32_t *seq)
{
	if (ev->pdata_oversize)
		return cqp_fail(CQP_E_PROTO,
				"private data of %u bytes: more than the %u "
				"InfiniBand and RoCE carry, not ours",
				ev->pdata_oversize, CQP_CM_PDATA_MAX);
	return cqp_pd_check(ev->pdata, ev->pdata_len, kind, seq);
}

void cqp_cm_stats_init(struct cqp_cm_stats *s)
{
	memset(s->count, 0, sizeof(s->count));
	for (unsigned i = 0; i < CQP_CM_NEV; i++)
		cqp_hist_init(&s->lat[i]);
}

void cqp_cm_stats_add(struct cqp_cm_stats *s, enum rdma_cm_event_type t,
		      uint64_t lat_ns)
{
	unsigned i = (unsigned)t < CQP_CM_NEV ? (unsigned)t : CQP_CM_NEV - 1;

	s->count[i]++;
	if (lat_ns)
		cqp_hist_add(&s->lat[i], lat_ns);
}

unsigned cqp_cm_stats_rows(const struct cqp_cm_stats *s, const char *side,
			   double seconds, struct cqp_row *rows, unsigned n,
			   unsigned cap)
{
	for (unsigned t = 0; t < CQP_CM_NEV && n < cap; t++) {
		struct cqp_row *row = &rows[n];
		struct cqp_summary sum;

		if (!s->count[t])
			continue;
		memset(row, 0, sizeof(*row));
		snprintf(row->side, sizeof(row->side), "%s", side);
		snprintf(row->label, sizeof(row->label), "%s",
			 rdma_event_str((enum rdma_cm_event_type)t));
		row->count = s->count[t];
		row->rate_per_s =
		    seconds > 0 ? (double)row->count / seconds : NAN;
		row->has_lat = true;
		if (s->lat[t].n) {
			cqp_hist_summary(&s->lat[t], &sum);
			cqp_summary_ns_to_us(&sum, &row->lat_us);
		} else {
			/* No call causes it (a peer's disconnect): a count. */
			row->lat_us.min = row->lat_us.max = NAN;
			row->lat_us.avg = row->lat_us.stdev = NAN;
			row->lat_us.p50 = row->lat_us.p99 = NAN;
			row->lat_us.p99_9 = row->lat_us.p99_99 = NAN;
		}
		n++;
	}
	return n;
}

void cqp_cm_rows_encode(const struct cqp_row *rows, unsigned n,
			struct cqp_kv_writer *w)
{
	char prefix[16];

	cqp_kv_add_u64(w, "nrows", n);
	for (unsigned i = 0; i < n; i++) {
		snprintf(prefix, sizeof(prefix), "r%u_", i);
		cqp_event_row_encode(&rows[i], prefix, w);
	}
}

int cqp_cm_rows_decode(const char *text, size_t len, const char *side,
		       struct cqp_row *rows, unsigned n, unsigned cap,
		       unsigned *out)
{
	uint64_t count;
	char prefix[16];
	int rc = cqp_kv_get_u64(text, len, "nrows", &count);

	if (rc < 0)
		return rc;
	for (uint64_t i = 0; i < count && n < cap; i++, n++) {
		memset(&rows[n], 0, sizeof(rows[n]));
		snprintf(prefix, sizeof(prefix), "r%u_", (unsigned)i);
		if ((rc = cqp_event_row_decode(&rows[n], prefix, text, len)) <
		    0)
			return rc;
		snprintf(rows[n].side, sizeof(rows[n].side), "%s", side);
	}
	*out = n;
	return 0;
}

static int verbs_ready(struct cqp_cm_verbs *v, pthread_mutex_t *mu,
		       struct ibv_context *ctx)
{
	int rc = 0;

	pthread_mutex_lock(mu);
	if (!v->pd) {
		v->ctx = ctx;
		v->pd = ibv_alloc_pd(ctx);
		if (v->pd)
			v->mr = ibv_reg_mr(v->pd, v->buf, sizeof(v->buf),
					   IBV_ACCESS_LOCAL_WRITE);
		if (!v->pd || !v->mr)
			rc = cqp_fail(CQP_E_DEVICE, "PD or MR on %s: %s",
				      ibv_get_device_name(ctx->device),
				      strerror(errno));
	}
	pthread_mutex_unlock(mu);
	return rc;
}

int cqp_cm_qp_create(struct cqp_cm_verbs *v, pthread_mutex_t *mu,
		     struct rdma_cm_id *id, uint32_t msgs, bool receives,
		     struct ibv_cq **cq)
{
	struct ibv_qp_init_attr a;
	int rc = verbs_ready(v, mu, id->verbs);

	if (rc < 0)
		return rc;
	*cq = ibv_create_cq(id->verbs, (int)msgs + 1, NULL, NULL, 0);
	if (!*cq)
		return cqp_fail(CQP_E_DEVICE, "ibv_create_cq: %s",
				strerror(errno));
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = *cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = msgs + 1;
	a.cap.max_recv_wr = msgs + 1;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, v->pd, &a))
		return cqp_fail(CQP_E_DEVICE, "rdma_create_qp: %s",
				strerror(errno));
	for (uint32_t i = 0; receives && i < msgs; i++) {
		struct ibv_sge sge = {(uintptr_t)v->buf, sizeof(v->buf),
				      v->mr->lkey};
		struct ibv_recv_wr wr = {.sg_list = &sge, .num_sge = 1}, *bad;

		if ((rc = ibv_post_recv(id->qp, &wr, &bad)))
			return cqp_fail(CQP_E_DEVICE, "ibv_post_recv: %s",
					strerror(rc));
	}
	return 0;
}

int cqp_cm_send_msgs(struct cqp_cm_verbs *v, struct rdma_cm_id *id,
		     struct ibv_cq *cq, uint32_t msgs, int timeout_ms)
{
	uint64_t deadline = cqp_now_ns() + (uint64_t)timeout_ms * 1000000;
	uint32_t done = 0;

	for (uint32_t i = 0; i < msgs; i++) {
		struct ibv_sge sge = {(uintptr_t)v->buf, 16, v->mr->lkey};
		struct ibv_send_wr wr = {.sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;
		int err = ibv_post_send(id->qp, &wr, &bad);

		if (err)
			return cqp_fail(CQP_E_DEVICE, "ibv_post_send: %s",
					strerror(err));
	}
	while (done < msgs) {
		struct ibv_wc wc[8];
		int n = ibv_poll_cq(cq, 8, wc);

		if (n < 0)
			return cqp_fail(CQP_E_DEVICE, "ibv_poll_cq failed");
		for (int k = 0; k < n; k++)
			if (wc[k].status != IBV_WC_SUCCESS)
				return cqp_fail(
				    CQP_E_COMPLETION,
				    "a send on a fresh connection: "
				    "%s",
				    ibv_wc_status_str(wc[k].status));
		done += (uint32_t)n;
		if (!n && cqp_now_ns() > deadline)
			return cqp_fail(CQP_E_TIMEOUT,
					"sends on a fresh connection did not "
					"complete in %d ms",
					timeout_ms);
	}
	return 0;
}

void cqp_cm_conn_free_qp(struct rdma_cm_id *id, struct ibv_cq *cq)
{
	if (id->qp)
		rdma_destroy_qp(id);
	if (cq)
		ibv_destroy_cq(cq);
}

void cqp_cm_verbs_free(struct cqp_cm_verbs *v)
{
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	v->mr = NULL;
	v->pd = NULL;
}
