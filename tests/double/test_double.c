/* SPDX-License-Identifier: BSD-2-Clause */
/* Proof that the device double behaves as it claims, on rxe, run under
 * LD_PRELOAD with CQPERF_TEST_DEVICE set (tests/integration/double.sh):
 *   test_double DEVICE GID_INDEX CHECK
 * CHECK: mlx5-ports, mlx5-count, mlx5-period, mlx5-plain,
 * mlx5-arm-unpolled, port-err,
 * bnxt-inline, irdma-transport, mlx5-ib-lid.  Prints "ok"/"not ok" lines; exits
 * 0 when every one passed.  Traffic: UD sends to the QP itself, so each
 * signaled send is one completion on the CQ under test. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

static void check(int cond, const char *what)
{
	printf("%s - %s\n", cond ? "ok" : "not ok", what);
	failures += !cond;
}

struct rig {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	char buf[128]; /* sends from the start, a receive at 64 */
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.pkey_index = 0,
				.port_num = 1,
				.qkey = 0x11111111};

	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int rig_up(struct rig *r, const char *dev, int gid_index)
{
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_UD,
				      .cap = {.max_send_wr = 64,
					      .max_recv_wr = 1,
					      .max_send_sge = 1,
					      .max_recv_sge = 1}};
	struct ibv_ah_attr ah = {.port_num = 1, .is_global = 1};

	memset(r, 0, sizeof(*r));
	if (!(r->ctx = open_dev(dev)) || !(r->pd = ibv_alloc_pd(r->ctx)) ||
	    !(r->ch = ibv_create_comp_channel(r->ctx)) ||
	    !(r->cq = ibv_create_cq(r->ctx, 64, r, r->ch, 0)))
		return -1;
	qa.send_cq = qa.recv_cq = r->cq;
	if (!(r->qp = ibv_create_qp(r->pd, &qa)) || to_rts(r->qp))
		return -1;
	ah.grh.sgid_index = (uint8_t)gid_index;
	ah.grh.hop_limit = 1;
	if (ibv_query_gid(r->ctx, 1, gid_index, &ah.grh.dgid) ||
	    !(r->ah = ibv_create_ah(r->pd, &ah)))
		return -1;
	r->mr =
	    ibv_reg_mr(r->pd, r->buf, sizeof(r->buf), IBV_ACCESS_LOCAL_WRITE);
	return r->mr ? 0 : -1;
}

static int send_n(struct rig *r, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = {(uintptr_t)r->buf, 16, r->mr->lkey};
		struct ibv_send_wr wr = {.sg_list = &sge,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;

		wr.wr.ud.ah = r->ah;
		wr.wr.ud.remote_qpn = r->qp->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
		if (ibv_post_send(r->qp, &wr, &bad))
			return -1;
	}
	return 0;
}

/* Whether the channel holds an event within ms: a deadline far past
 * the milliseconds an event takes, so that a host stall cannot fail it. */
static int event_within(struct rig *r, int ms)
{
	struct pollfd p = {.fd = r->ch->fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

static int take_event(struct rig *r)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(r->ch, &cq, &ctx) || cq != r->cq || ctx != r)
		return -1;
	ibv_ack_cq_events(cq, 1);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls until n completions are in, for up to a few seconds. */
static int reap(struct rig *r, int n)
{
	struct ibv_wc wc[16];

	for (double end = now_s() + 5; n > 0 && now_s() < end;) {
		int got = ibv_poll_cq(r->cq, 16, wc);

		if (got < 0)
			return -1;
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				return -1;
		n -= got;
	}
	return n == 0 ? 0 : -1;
}

static int moderate(struct rig *r, uint16_t count, uint16_t period)
{
	struct ibv_modify_cq_attr a = {.attr_mask = IBV_CQ_ATTR_MODERATE,
				       .moderate = {count, period}};

	return ibv_modify_cq(r->cq, &a);
}

static void mlx5_ports(struct rig *r)
{
	struct ibv_device_attr_ex ax;
	struct ibv_port_attr pa;

	check(ibv_query_device_ex(r->ctx, NULL, &ax) == 0 &&
		  ax.orig_attr.phys_port_cnt == 2,
	      "mlx5: two ports");
	check(ax.cq_mod_caps.max_cq_count == 0xffff &&
		  ax.cq_mod_caps.max_cq_period == 0xfff,
	      "mlx5: moderation caps 65535 completions, 4095 us");
	check(ibv_query_port(r->ctx, 2, &pa) == 0 && pa.state == IBV_PORT_DOWN,
	      "mlx5: port 2 is down");
	check(ibv_query_port(r->ctx, 1, &pa) == 0 &&
		  pa.state == IBV_PORT_ACTIVE,
	      "mlx5: port 1 is rxe's, active");
	check(moderate(r, 1, 4096) == EINVAL,
	      "mlx5: a period above 4095 us is refused (EINVAL)");
}

static void mlx5_count(struct rig *r)
{
	check(moderate(r, 8, 0) == 0, "mlx5: ibv_modify_cq 8,0 accepted");
	check(ibv_req_notify_cq(r->cq, 0) == 0, "armed");
	check(send_n(r, 7) == 0 && reap(r, 7) == 0, "7 completions polled");
	check(!event_within(r, 300), "no event after 7 of COUNT 8");
	check(send_n(r, 1) == 0 && event_within(r, 10000),
	      "the event comes with the 8th completion");
	check(take_event(r) == 0, "ibv_get_cq_event returns the CQ and its "
				  "context");
	check(reap(r, 1) == 0, "the 8th completion polled");
}

static void mlx5_period(struct rig *r)
{
	check(moderate(r, 0, 2000) == 0, "mlx5: ibv_modify_cq 0,2000 accepted");
	check(ibv_req_notify_cq(r->cq, 0) == 0, "armed");
	check(!event_within(r, 100), "no event before a completion");
	check(send_n(r, 1) == 0 && event_within(r, 10000),
	      "one completion: the event after the period");
	check(take_event(r) == 0 && reap(r, 1) == 0, "event taken, polled");
}

static void mlx5_plain(struct rig *r)
{
	check(ibv_req_notify_cq(r->cq, 0) == 0, "armed (no moderation)");
	check(send_n(r, 1) == 0 && event_within(r, 10000),
	      "an event at the first completion, as rxe");
	check(take_event(r) == 0 && reap(r, 1) == 0, "event taken, polled");
}

/* mlx5 reports the CQE index the arm names (the consumer index): one
 * already there raises the event at once; rxe would wait for the next. */
static void mlx5_arm_unpolled(struct rig *r)
{
	check(send_n(r, 1) == 0, "a completion, not polled");
	/* rxe's completer runs apart: give it time to post the CQE. */
	poll(NULL, 0, 500);
	check(ibv_req_notify_cq(r->cq, 0) == 0, "armed with it unpolled");
	if (!event_within(r, 2000)) {
		/* ibv_get_cq_event would block for ever. */
		check(0, "the event at once, for the CQE there");
		return;
	}
	check(take_event(r) == 0 && reap(r, 1) == 0,
	      "the event at once, for the CQE there; taken, polled");
	check(ibv_req_notify_cq(r->cq, 0) == 0 && !event_within(r, 300),
	      "armed on an empty CQ: no event");
}

static void port_err(struct rig *r)
{
	struct ibv_async_event ev;
	int got = -1;

	for (int i = 0; i < 100 && got; i++) {
		got = ibv_get_async_event(r->ctx, &ev);
		if (got)
			poll(NULL, 0, 10);
	}
	check(got == 0 && ev.event_type == IBV_EVENT_PORT_ERR &&
		  ev.element.port_num == 2,
	      "PORT_ERR on port 2 on demand");
	if (got == 0)
		ibv_ack_async_event(&ev);
}

static void bnxt_inline(struct rig *r)
{
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_UD,
				      .send_cq = r->cq,
				      .recv_cq = r->cq,
				      .cap = {.max_send_wr = 4,
					      .max_recv_wr = 1,
					      .max_send_sge = 1,
					      .max_recv_sge = 1,
					      .max_inline_data = 97}};
	struct ibv_qp *qp;

	errno = 12345;
	qp = ibv_create_qp(r->pd, &qa);
	check(!qp && errno == 12345,
	      "bnxt_re: 97 bytes inline: NULL, errno as it was");
	qa.cap.max_inline_data = 96;
	qp = ibv_create_qp(r->pd, &qa);
	check(qp != NULL, "bnxt_re: 96 bytes inline: granted");
	if (qp)
		ibv_destroy_qp(qp);
}

/* InfiniBand: a LID, IB GIDs, and a datagram sent by LID alone (no
 * GRH) that reaches its QP. */
static void ib_lid(struct rig *r)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	struct ibv_ah_attr aa = {.port_num = 1, .is_global = 0};
	struct ibv_sge sge = {(uintptr_t)(r->buf + 64), 64, r->mr->lkey};
	struct ibv_recv_wr rw = {.sg_list = &sge, .num_sge = 1}, *bad;
	struct ibv_wc wc;
	int got = 0;

	check(ibv_query_port(r->ctx, 1, &pa) == 0 &&
		  pa.link_layer == IBV_LINK_LAYER_INFINIBAND && pa.lid > 0 &&
		  pa.lid < 0xc000,
	      "mlx5-ib: link layer InfiniBand, a unicast LID");
	check(ibv_query_gid_ex(r->ctx, 1, 0, &e, 0) == 0 &&
		  e.gid_type == IBV_GID_TYPE_IB,
	      "mlx5-ib: GID 0 is an IB GID");
	aa.dlid = pa.lid;
	ibv_destroy_ah(r->ah);
	r->ah = ibv_create_ah(r->pd, &aa);
	check(r->ah != NULL, "mlx5-ib: an AH without a GRH");
	check(ibv_post_recv(r->qp, &rw, &bad) == 0 && send_n(r, 1) == 0,
	      "a receive posted, a datagram sent by LID");
	for (double end = now_s() + 5; got < 2 && now_s() < end;) {
		int n = ibv_poll_cq(r->cq, 1, &wc);

		if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS))
			break;
		got += n;
	}
	check(got == 2, "the datagram sent by LID reached its QP");
}

static void irdma_transport(struct rig *r)
{
	check(r->ctx->device->transport_type == IBV_TRANSPORT_IWARP,
	      "irdma: transport iWARP");
	check(ibv_modify_cq(r->cq,
			    &(struct ibv_modify_cq_attr){
				.attr_mask = IBV_CQ_ATTR_MODERATE,
				.moderate = {4, 0}}) != 0,
	      "irdma: no CQ moderation");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(struct rig *);
	} checks[] = {{"mlx5-ports", mlx5_ports},
		      {"mlx5-count", mlx5_count},
		      {"mlx5-period", mlx5_period},
		      {"mlx5-plain", mlx5_plain},
		      {"mlx5-arm-unpolled", mlx5_arm_unpolled},
		      {"port-err", port_err},
		      {"bnxt-inline", bnxt_inline},
		      {"irdma-transport", irdma_transport},
		      {"mlx5-ib-lid", ib_lid}};
	struct rig r;

	if (argc != 4) {
		fprintf(stderr, "usage: test_double DEVICE GID_INDEX CHECK\n");
		return 2;
	}
	if (rig_up(&r, argv[1], atoi(argv[2]))) {
		fprintf(stderr, "test_double: cannot set up on %s: %s\n",
			argv[1], strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (!strcmp(argv[3], checks[i].name)) {
			checks[i].fn(&r);
			return failures ? 1 : 0;
		}
	fprintf(stderr, "test_double: no check %s\n", argv[3]);
	return 2;
}
