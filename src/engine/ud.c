/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/ud.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fabric.h"
#include "engine/path.h"
#include "engine/ud_cm.h"

#define MCAST_QPN 0xffffffu /* the "any QP" of a multicast send */

/* --verify: the next sequence expected from one sender. */
struct cqp_ud_seq {
	uint64_t sender; /* source QP; with --clients, the client above it */
	uint64_t next;
};

/* --size if it fits one packet, else the path MTU for --all. */
static uint64_t payload_want(const struct cqp_params *p)
{
	return p->all ? 4096 : p->size;
}

struct cqp_mem_need cqp_ud_mem_need(const struct cqp_params *p)
{
	uint64_t slot = payload_want(p) + CQP_UD_GRH;
	uint64_t qps = (uint64_t)p->qps * p->nthreads;
	uint64_t rqs = p->srq ? 1 : qps;
	/* A group's server sizes its ring for all of them (group_ring). */
	uint64_t rx = rqs * (uint64_t)p->rx_depth * p->clients * slot;
	uint64_t tx = qps * (p->verify ? p->tx_depth : 1) * payload_want(p);

	return (struct cqp_mem_need){rx + tx, cqp_queue_mem(p, qps, rqs, qps)};
}

uint32_t cqp_ud_rq_senders(const struct cqp_params *p)
{
	/* At most 1024 QPs in all (options.c): no overflow. */
	uint32_t qps = p->qps * p->nthreads;

	return (p->srq ? qps : 1) * (p->mcast[0] ? qps : 1);
}

/* ---- the pattern --verify checks ---- */

static uint8_t pattern_byte(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + i * 7u + 1u);
}

void cqp_pattern_fill(uint8_t *buf, uint32_t size, uint64_t seq)
{
	uint32_t i;

	for (i = 0; i < size && i < 8; i++)
		buf[i] = (uint8_t)(seq >> (8 * i));
	for (; i < size; i++)
		buf[i] = pattern_byte(seq, i);
}

uint64_t cqp_pattern_seq(const uint8_t *buf, uint32_t size, uint64_t expect)
{
	uint32_t k = size < 8 ? size : 8;
	uint64_t low = 0, mask;

	for (uint32_t i = 0; i < k; i++)
		low |= (uint64_t)buf[i] << (8 * i);
	if (k == 8)
		return low;
	/* Only the low bytes travel: the sequence at or after `expect`
	 * that ends in them. */
	mask = (1ull << (8 * k)) - 1;
	return expect + ((low - expect) & mask);
}

int64_t cqp_pattern_check(const uint8_t *buf, uint32_t size, uint64_t seq)
{
	uint32_t i;

	for (i = 0; i < size && i < 8; i++)
		if (buf[i] != (uint8_t)(seq >> (8 * i)))
			return i;
	for (; i < size; i++)
		if (buf[i] != pattern_byte(seq, i))
			return i;
	return -1;
}

/* ---- receive slots ---- */

static unsigned slot_queue(uint64_t wr_id)
{
	return (unsigned)(wr_id >> CQP_UD_WRID_QUEUE_SHIFT);
}

int cqp_ud_post_failed(int err)
{
	return cqp_fail(CQP_E_DEVICE, "posting receives: %s", strerror(err));
}

static int post_slots(struct cqp_ud *ud, unsigned q, const uint32_t *slots,
		      unsigned count)
{
	struct ibv_recv_wr wr[32];
	struct ibv_sge sge[32];

	/* Chains of up to 32: one call per chain, whatever the count. */
	while (count) {
		unsigned n = count < 32 ? count : 32;
		int rc;

		for (unsigned i = 0; i < n; i++) {
			cqp_ud_slot_recv(ud, q, slots[i], &wr[i], &sge[i]);
			if (i)
				wr[i - 1].next = &wr[i];
		}
		if ((rc = cqp_ud_post_chain(ud, q, wr, n)) < 0)
			return rc;
		slots += n;
		count -= n;
	}
	return 0;
}

static int post_all_slots(struct cqp_ud *ud)
{
	for (unsigned q = 0; q < ud->nrq; q++) {
		uint32_t *slots = ud->pend + (size_t)q * ud->rq_depth;
		int rc;

		for (uint32_t i = 0; i < ud->rq_depth; i++)
			slots[i] = q * ud->rq_depth + i;
		rc = post_slots(ud, q, slots, ud->rq_depth);
		if (rc < 0)
			return rc;
	}
	return 0;
}

unsigned cqp_ud_srq_qp_index(const struct cqp_ud *ud, const struct ibv_wc *wc)
{
	for (unsigned i = 0; i < ud->nqp; i++)
		if (ud->qps[i]->qp_num == wc->qp_num)
			return i;
	return 0;
}

void cqp_ud_recv_begin(struct cqp_ud_rx *rx)
{
	rx->received = 0;
	rx->rx_dry = 0;
	for (unsigned c = 0; c < rx->nclients; c++)
		rx->got[c] = rx->dry[c] = 0;
}

static struct cqp_ud_seq *sender_seq(struct cqp_ud_rx *rx, uint64_t sender)
{
	for (unsigned i = 0; i < rx->nseq; i++)
		if (rx->seq[i].sender == sender)
			return &rx->seq[i];
	if (rx->nseq == rx->seq_cap)
		return NULL;
	rx->seq[rx->nseq].sender = sender;
	rx->seq[rx->nseq].next = 0;
	return &rx->seq[rx->nseq++];
}

/* A group's client that sent wc (UINT32_MAX: none of them). */
static uint32_t sender_client(const struct cqp_ud *ud, const struct ibv_wc *wc)
{
	const uint8_t *grh = cqp_ud_recv_payload(ud, wc) - CQP_UD_GRH;

	return cqp_senders_find(&ud->from, wc->src_qp,
				cqp_sender_tail(wc, grh));
}

static int verify(struct cqp_ud *ud, struct cqp_ud_rx *rx,
		  const struct ibv_wc *wc, uint32_t size, uint32_t client)
{
	const uint8_t *pl = cqp_ud_recv_payload(ud, wc);
	/* Two nodes' clients may send from one QP number. */
	struct cqp_ud_seq *s =
	    sender_seq(rx, (uint64_t)(client == UINT32_MAX ? 0 : client) << 32 |
			       wc->src_qp);
	uint64_t seq;
	int64_t bad;

	if (!s)
		return cqp_fail(CQP_E_PROTO,
				"--verify: a datagram from unknown QP %u",
				wc->src_qp);
	seq = cqp_pattern_seq(pl, size, s->next);
	if (seq < s->next)
		return cqp_fail(CQP_E_PROTO,
				"--verify: message %llu from QP %u arrived "
				"after message %llu",
				(unsigned long long)seq, wc->src_qp,
				(unsigned long long)(s->next - 1));
	bad = cqp_pattern_check(pl, size, seq);
	if (bad >= 0)
		return cqp_fail(CQP_E_PROTO,
				"--verify: message %llu from QP %u: byte %lld "
				"is 0x%02x, expected 0x%02x",
				(unsigned long long)seq, wc->src_qp,
				(long long)bad, pl[bad],
				bad < 8 ? (uint8_t)(seq >> (8 * bad))
					: pattern_byte(seq, (uint32_t)bad));
	s->next = seq + 1;
	return 0;
}

/* A receive's length against the step's size: 0, or the failure. */
static int check_len(const struct ibv_wc *wc, uint32_t size)
{
	if (cqp_fabric_ud_len_ok(wc->byte_len, size, wc->wc_flags & IBV_WC_GRH))
		return 0;
	return cqp_fail(CQP_E_PROTO,
			"a datagram of %u bytes (%s) arrived; this step sends "
			"%u",
			wc->byte_len,
			wc->wc_flags & IBV_WC_GRH ? "with its GRH" : "no GRH",
			size);
}

int cqp_ud_recv_done(struct cqp_ud *ud, struct cqp_ud_rx *rx,
		     const struct ibv_wc *wc, uint32_t size, bool check)
{
	unsigned q = slot_queue(wc->wr_id);
	uint32_t client = ud->nclients ? sender_client(ud, wc) : UINT32_MAX;
	int rc = check_len(wc, size);
	bool dry;

	if (rc == 0 && check)
		rc = verify(ud, rx, wc, size, client);
	if (rc < 0)
		return rc;
	rx->received++;
	if (ud->rx_locked)
		pthread_mutex_lock(&ud->rx_lock);
	/* What arrives now finds no receive: its sender took the last. */
	dry = --ud->rq_left[q] == 0;
	rx->rx_dry += dry;
	if (client != UINT32_MAX) {
		rx->got[client]++;
		rx->dry[client] += dry;
	}
	/* Locked, the queue may be in another thread's list too: whoever
	 * flushes first posts every thread's slots of it. */
	if (!rx->listed[q]) {
		rx->listed[q] = 1;
		rx->dirty[rx->ndirty++] = q;
	}
	ud->pend[(size_t)q * ud->rq_depth + ud->npend[q]++] =
	    (uint32_t)wc->wr_id;
	if (ud->rx_locked)
		pthread_mutex_unlock(&ud->rx_lock);
	return 0;
}

int cqp_ud_recv_flush_listed(struct cqp_ud *ud, struct cqp_ud_rx *rx)
{
	int rc = 0;

	if (ud->rx_locked)
		pthread_mutex_lock(&ud->rx_lock);
	while (rx->ndirty) {
		unsigned q = rx->dirty[--rx->ndirty];

		rx->listed[q] = 0;
		if (rc == 0 && ud->npend[q])
			rc = post_slots(ud, q,
					ud->pend + (size_t)q * ud->rq_depth,
					ud->npend[q]);
		ud->npend[q] = 0;
	}
	if (ud->rx_locked)
		pthread_mutex_unlock(&ud->rx_lock);
	return rc;
}

int cqp_ud_recv_queued(struct cqp_ud *ud, struct cqp_ud_rx *rx,
		       const struct ibv_wc *wc, uint32_t size)
{
	int rc = cqp_ud_recv_done(ud, rx, wc, size, false);

	return rc < 0 ? rc : cqp_ud_recv_flush(ud, rx);
}

/* ---- sends ---- */

void cqp_ud_prep_send(const struct cqp_ud *ud, unsigned qp, uint64_t slot,
		      uint32_t size, struct ibv_send_wr *wr,
		      struct ibv_sge *sge)
{
	*sge = (struct ibv_sge){(uintptr_t)cqp_ud_send_buf(ud, qp, slot), size,
				ud->sbuf.mr->lkey};
	/* A literal, not memset: the compiler zeroes the rest in a few
	 * stores (a ping-pong's per-message path). */
	*wr = (struct ibv_send_wr){
	    .sg_list = sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_SEND,
	    .send_flags = size <= ud->inline_granted ? IBV_SEND_INLINE : 0,
	    .wr.ud = {ud->ah, ud->remote_qpn[qp], ud->qkey},
	};
}

/* ---- setup ---- */

static int alloc_rx(struct cqp_ud_rx *rx, unsigned nrq, unsigned senders,
		    unsigned nclients)
{
	unsigned k = nclients ? nclients : 1;

	rx->dirty = calloc(nrq, sizeof(*rx->dirty));
	rx->listed = calloc(nrq, sizeof(*rx->listed));
	rx->seq = calloc((size_t)senders * k, sizeof(*rx->seq));
	rx->seq_cap = senders * k;
	rx->got = calloc(k, sizeof(*rx->got));
	rx->dry = calloc(k, sizeof(*rx->dry));
	rx->nclients = nclients;
	return rx->dirty && rx->listed && rx->seq && rx->got && rx->dry ? 0
									: -1;
}

static int alloc_state(struct cqp_ud *ud, const struct cqp_params *p,
		       bool receiver)
{
	unsigned total = p->qps * p->nthreads;
	bool ok;

	ud->qps = calloc(total, sizeof(*ud->qps));
	ud->remote_qpn = calloc(total, sizeof(*ud->remote_qpn));
	ud->rx = calloc(p->nthreads, sizeof(*ud->rx));
	ok = ud->qps && ud->remote_qpn && ud->rx;
	if (ok)
		ud->nrx = p->nthreads;
	if (ok && receiver) {
		ud->nrq = p->srq ? 1 : total;
		ud->rq_depth = p->rx_depth;
		ud->rq_left = calloc(ud->nrq, sizeof(*ud->rq_left));
		ud->npend = calloc(ud->nrq, sizeof(*ud->npend));
		ud->pend =
		    calloc((size_t)ud->nrq * ud->rq_depth, sizeof(*ud->pend));
		ok = ud->rq_left && ud->npend && ud->pend;
		/* A thread hears its peer's QPs, or with --mcast all. */
		for (unsigned t = 0; ok && t < ud->nrx; t++)
			ok = alloc_rx(&ud->rx[t], ud->nrq, total,
				      ud->nclients) == 0;
		/* Queues more than one thread reaps: the one SRQ, or any
		 * queue when any thread may drain any CQ. */
		ud->rx_locked =
		    (p->srq && p->nthreads > 1) || p->shared_channel;
		if (ud->rx_locked)
			pthread_mutex_init(&ud->rx_lock, NULL);
	}
	if (!ok)
		return cqp_fail(CQP_E_NOMEM, "out of memory for %u QPs", total);
	return 0;
}

static int create_qps(struct cqp_ud *ud, const struct cqp_params *p,
		      bool receiver)
{
	for (unsigned i = 0; i < p->qps * p->nthreads; i++) {
		/* Thread-major, like the engines: thread t's are t * q... */
		struct cqp_comp *comp = &ud->comps.comp[i / p->qps];
		struct cqp_qp_req req = {
		    .type = IBV_QPT_UD,
		    .send_cq = cqp_comp_cq(comp, i % p->qps),
		    .recv_cq = cqp_comp_cq(comp, i % p->qps),
		    .srq = ud->srq,
		    .max_send_wr = p->tx_depth,
		    .max_recv_wr = receiver ? p->rx_depth : 1,
		    .inline_size = p->inline_size,
		};
		uint32_t granted;
		int rc = cqp_qp_create(&ud->dev, &req, &ud->qps[i], &granted);

		if (rc < 0)
			return rc;
		ud->nqp++;
		if (i == 0 || granted < ud->inline_granted)
			ud->inline_granted = granted;
		rc = cqp_ud_qp_init(ud->qps[i], &ud->dev, ud->qkey);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int alloc_buffers(struct cqp_ud *ud, const struct cqp_params *p,
			 bool sender, bool receiver)
{
	int rc;

	ud->rslot = ud->payload_max + CQP_UD_GRH;
	ud->tx_slots = p->verify ? p->tx_depth : 1;
	if (sender) {
		rc = cqp_buf_alloc(&ud->sbuf, &ud->dev,
				   (size_t)ud->nqp * ud->tx_slots *
				       ud->payload_max,
				   IBV_ACCESS_LOCAL_WRITE);
		if (rc < 0)
			return rc;
	}
	if (receiver) {
		rc = cqp_buf_alloc(&ud->rbuf, &ud->dev,
				   (size_t)ud->nrq * ud->rq_depth * ud->rslot,
				   IBV_ACCESS_LOCAL_WRITE);
		if (rc < 0)
			return rc;
		rc = post_all_slots(ud);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* On RoCE the kernel delivers a group's packets to the device only when
 * some socket on that interface belongs to the group at the IP layer (what
 * rdma_join_multicast does for RDMA CM users); native IB needs nothing. */
static int ip_join(struct cqp_ud *ud)
{
	struct ip_mreq m;

	ud->mcast_fd = -1;
	if (!IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)ud->mgid.raw) ||
	    !IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)ud->dev.gid.raw))
		return 0;
	memcpy(&m.imr_multiaddr.s_addr, ud->mgid.raw + 12, 4);
	memcpy(&m.imr_interface.s_addr, ud->dev.gid.raw + 12, 4);
	ud->mcast_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ud->mcast_fd < 0 || setsockopt(ud->mcast_fd, IPPROTO_IP,
					   IP_ADD_MEMBERSHIP, &m, sizeof(m)))
		return cqp_fail(CQP_E_SYS,
				"--mcast: joining the group at the IP layer: "
				"%s",
				strerror(errno));
	return 0;
}

static int join_group(struct cqp_ud *ud, const struct cqp_params *p)
{
	int rc;

	if (inet_pton(AF_INET6, p->mcast, ud->mgid.raw) != 1)
		return cqp_fail(CQP_E_USAGE, "--mcast: '%s' is not a GID",
				p->mcast);
	for (unsigned i = 0; i < ud->nqp; i++) {
		rc = ibv_attach_mcast(ud->qps[i], &ud->mgid, 0);
		if (rc)
			return cqp_fail(CQP_E_DEVICE,
					"--mcast %s: ibv_attach_mcast on QP "
					"%u: %s",
					p->mcast, ud->qps[i]->qp_num,
					strerror(rc));
		ud->mcast_attached = true;
	}
	return ip_join(ud);
}

/* QP numbers and GIDs over the oob; one AH serves every QP, since all
 * the peer's QPs sit behind one port. */
static int path_oob(struct cqp_ud *ud, struct cqp_run *run,
		    struct cqp_endpoint *local, struct cqp_endpoint *remote)
{
	int rc = cqp_session_exchange_endpoints(run->s, local, remote, ud->nqp);

	for (unsigned i = 0; rc == 0 && i < ud->nqp; i++)
		ud->remote_qpn[i] = remote[i].qpn;
	if (rc == 0 && run->is_client && run->p->mcast[0]) {
		/* Every client QP sends to the group, which every server QP
		 * joined. */
		for (unsigned i = 0; i < ud->nqp; i++)
			ud->remote_qpn[i] = MCAST_QPN;
		ud->fanout = ud->nqp;
		return cqp_ah_create(&ud->dev, &ud->mgid, 0, &ud->ah);
	}
	if (rc == 0)
		rc = cqp_ah_create(&ud->dev, &remote[0].gid, remote[0].lid,
				   &ud->ah);
	return rc;
}

/* A group's server: each client's QPs for ours, each a sender to tell
 * its datagrams by, and an address handle back to each client. */
static int path_group(struct cqp_ud *ud, struct cqp_run *run,
		      struct cqp_endpoint *local, struct cqp_endpoint *remote)
{
	struct cqp_group *g = run->group;
	int rc = cqp_senders_init(&ud->from, g->n * ud->nqp);

	if (rc == 0 && !(ud->client_ah = calloc(g->n, sizeof(*ud->client_ah))))
		rc =
		    cqp_fail(CQP_E_NOMEM, "out of memory for %u clients", g->n);
	for (unsigned i = 0; rc == 0 && i < g->n; i++) {
		rc = cqp_group_exchange_endpoints(g, i, local, remote, ud->nqp);
		for (unsigned q = 0; rc == 0 && q < ud->nqp; q++)
			rc = cqp_senders_add(&ud->from, remote[q].qpn,
					     cqp_endpoint_tail(&remote[q].gid,
							       remote[q].lid,
							       ud->dev.grh),
					     i);
		if (rc == 0)
			rc = cqp_ah_create(&ud->dev, &remote[0].gid,
					   remote[0].lid, &ud->client_ah[i]);
	}
	return rc;
}

/* A group's server takes every client's datagrams on its QPs: the ring
 * of each queue holds --rx-depth for each client, as far as the device
 * (its work requests, and the CQ that takes them with the sends) allows. */
static int group_ring(struct cqp_ud *ud, struct cqp_run *run)
{
	struct cqp_params *p = run->p;
	const struct ibv_device_attr *a = &ud->dev.attr;
	uint64_t want = (uint64_t)p->rx_depth * run->group->n;
	uint64_t cap = (uint64_t)(p->srq ? a->max_srq_wr : a->max_qp_wr);

	if (p->rdma_cm || p->mcast[0])
		return cqp_fail(CQP_E_USAGE,
				"--%s: a server of --clients %u reaches its "
				"clients over the out-of-band channel only",
				p->rdma_cm ? "rdma-cm" : "mcast",
				run->group->n);
	if ((uint64_t)a->max_cqe > p->tx_depth &&
	    (uint64_t)a->max_cqe - p->tx_depth < cap)
		cap = (uint64_t)a->max_cqe - p->tx_depth;
	p->rx_depth = (uint32_t)(want < cap ? want : cap);
	/* An explicit --cq-depth was a client's: its CQ must take the
	 * whole ring, or the clients would overrun it. */
	if (p->cq_depth && p->cq_depth < p->rx_depth + p->tx_depth)
		p->cq_depth = p->rx_depth + p->tx_depth;
	return 0;
}

static int path_cm(struct cqp_ud *ud, struct cqp_run *run,
		   struct cqp_endpoint *local, struct cqp_endpoint *remote)
{
	const struct cqp_params *p = run->p;
	int tmo = (int)p->timeout_s * 1000;
	struct ibv_ah_attr attr;
	uint32_t qkey = 0;
	int rc;

	if (!run->is_client) {
		uint32_t *qpns = calloc(ud->nqp, sizeof(*qpns));

		if (!qpns)
			return cqp_fail(CQP_E_NOMEM, "out of memory");
		for (unsigned i = 0; i < ud->nqp; i++)
			qpns[i] = ud->qps[i]->qp_num;
		rc = cqp_ud_cm_listen(&ud->cm, (uint16_t)p->port, tmo,
				      ud->dev.info.name);
		/* The client may resolve only once we listen. */
		if (rc == 0)
			rc = cqp_session_barrier(&run->s->oob, "cm-listening");
		if (rc == 0)
			rc = cqp_ud_cm_accept(ud->cm, qpns, ud->nqp, remote);
		free(qpns);
		if (rc < 0)
			return rc;
		for (unsigned i = 0; i < ud->nqp; i++)
			ud->remote_qpn[i] = remote[i].qpn;
		return cqp_ah_create(&ud->dev, &remote[0].gid, remote[0].lid,
				     &ud->ah);
	}
	rc = cqp_session_barrier(&run->s->oob, "cm-listening");
	if (rc == 0)
		rc = cqp_ud_cm_connect(
		    &ud->cm, p->cm_addr[0] ? p->cm_addr : p->host,
		    (uint16_t)p->port, tmo, ud->dev.info.name, local, ud->nqp,
		    &attr, ud->remote_qpn, &qkey);
	if (rc < 0)
		return rc;
	if (qkey != ud->qkey)
		return cqp_fail(CQP_E_PROTO,
				"RDMA CM gave Q_Key 0x%x, our QPs use 0x%x",
				qkey, ud->qkey);
	/* Our PD, RDMA CM's path: the port must be ours. */
	attr.port_num = ud->dev.port;
	/* --sl and --tclass, when given, over what the path record says. */
	if (p->sl)
		attr.sl = (uint8_t)p->sl;
	if (p->tclass)
		attr.grh.traffic_class = (uint8_t)p->tclass;
	ud->ah = ibv_create_ah(ud->dev.pd, &attr);
	if (!ud->ah)
		return cqp_fail(CQP_E_DEVICE,
				"ibv_create_ah from the RDMA CM path: %s",
				strerror(errno));
	return 0;
}

static int connect_path(struct cqp_ud *ud, struct cqp_run *run)
{
	struct cqp_endpoint *local = calloc(ud->nqp, sizeof(*local));
	struct cqp_endpoint *remote = calloc(ud->nqp, sizeof(*remote));
	int rc;

	if (!local || !remote) {
		rc = cqp_fail(CQP_E_NOMEM, "out of memory for endpoints");
		goto out;
	}
	cqp_endpoints_local(local, ud->qps, ud->nqp, &ud->dev);
	for (unsigned i = 0; i < ud->nqp; i++) {
		rc = cqp_ud_qp_rts(ud->qps[i], local[i].psn);
		if (rc < 0)
			goto out;
	}
	if (!run->is_client && run->p->mcast[0] &&
	    (rc = join_group(ud, run->p)) < 0)
		goto out;
	if (run->is_client && run->p->mcast[0] &&
	    inet_pton(AF_INET6, run->p->mcast, ud->mgid.raw) != 1) {
		rc = cqp_fail(CQP_E_USAGE, "--mcast: '%s' is not a GID",
			      run->p->mcast);
		goto out;
	}
	rc = run->group	       ? path_group(ud, run, local, remote)
	     : run->p->rdma_cm ? path_cm(ud, run, local, remote)
			       : path_oob(ud, run, local, remote);
	/* Neither side may send before the other's receives are posted. */
	if (rc == 0)
		rc = cqp_run_barrier(run, "connected");
out:
	free(local);
	free(remote);
	return rc;
}

int cqp_ud_setup(struct cqp_ud *ud, struct cqp_run *run, bool sender,
		 bool receiver)
{
	const struct cqp_params *p = run->p;
	uint32_t mtu;
	int rc;

	memset(ud, 0, sizeof(*ud));
	ud->mcast_fd = -1;
	ud->fanout = 1;
	ud->qkey = p->rdma_cm ? CQP_UD_CM_QKEY : p->qkey;
	srandom((unsigned)cqp_now_ns());
	rc = cqp_path_open(&ud->dev, run, false, &mtu);
	if (rc < 0)
		return rc;
	ud->dev_open = true;
	ud->payload_max = mtu;
	if (!p->all && p->size > ud->payload_max)
		return cqp_fail(CQP_E_USAGE,
				"--size %llu exceeds the UD path MTU of %u "
				"bytes (%s): a UD message is one packet",
				(unsigned long long)p->size, ud->payload_max,
				p->mtu ? "--mtu"
				       : "the smaller active MTU of the two "
					 "ports");
	if (!p->all)
		ud->payload_max = (uint32_t)p->size;
	run->max_size = ud->payload_max;
	/* A group's server: what each client sent is counted apart. */
	ud->nclients = run->group ? run->group->n : 0;
	if (run->group && receiver && (rc = group_ring(ud, run)) < 0)
		return rc;
	rc = cqp_bench_comps(&ud->comps, ud->dev.ctx, run, receiver);
	if (rc < 0)
		return rc;
	run->comp = ud->comps.comp;
	run->ncomp = ud->comps.n;
	if ((rc = alloc_state(ud, p, receiver)) < 0)
		return rc;
	if (receiver && p->srq &&
	    (rc = cqp_srq_create(&ud->dev, p->rx_depth, &ud->srq)) < 0)
		return rc;
	if ((rc = create_qps(ud, p, receiver)) < 0 ||
	    (rc = alloc_buffers(ud, p, sender, receiver)) < 0)
		return rc;
	run->dev.has_inline = true;
	run->dev.inline_size = ud->inline_granted;
	return connect_path(ud, run);
}

void cqp_ud_teardown(struct cqp_ud *ud)
{
	for (unsigned i = 0; ud->mcast_attached && i < ud->nqp; i++)
		ibv_detach_mcast(ud->qps[i], &ud->mgid, 0);
	if (ud->mcast_fd >= 0)
		close(ud->mcast_fd);
	if (ud->cm)
		cqp_ud_cm_close(ud->cm);
	if (ud->ah)
		ibv_destroy_ah(ud->ah);
	for (unsigned i = 0; ud->client_ah && i < ud->nclients; i++)
		if (ud->client_ah[i])
			ibv_destroy_ah(ud->client_ah[i]);
	free(ud->client_ah);
	cqp_senders_free(&ud->from);
	for (unsigned i = 0; i < ud->nqp; i++)
		ibv_destroy_qp(ud->qps[i]);
	if (ud->srq)
		ibv_destroy_srq(ud->srq);
	cqp_buf_free(&ud->sbuf);
	cqp_buf_free(&ud->rbuf);
	cqp_comp_set_destroy(&ud->comps);
	if (ud->dev_open)
		cqp_dev_close(&ud->dev);
	free(ud->qps);
	free(ud->remote_qpn);
	for (unsigned t = 0; t < ud->nrx; t++) {
		free(ud->rx[t].dirty);
		free(ud->rx[t].listed);
		free(ud->rx[t].seq);
		free(ud->rx[t].got);
		free(ud->rx[t].dry);
	}
	free(ud->rx);
	if (ud->rx_locked)
		pthread_mutex_destroy(&ud->rx_lock);
	free(ud->rq_left);
	free(ud->npend);
	free(ud->pend);
	memset(ud, 0, sizeof(*ud));
	ud->mcast_fd = -1;
}
