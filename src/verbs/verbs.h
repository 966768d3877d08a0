/* SPDX-License-Identifier: BSD-2-Clause */
/* Verbs setup: device, port and GID choice, PD, registered buffers, RC QPs
 * and their state changes.  Capability limits become clear messages. */
#ifndef CQP_VERBS_H
#define CQP_VERBS_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/fabric.h"
#include "base/record.h"

struct cqp_gid_cand;
struct cqp_kv_writer;
struct cqp_params;

struct cqp_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	struct ibv_port_attr port_attr;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	enum ibv_gid_type gid_type;
	struct cqp_gid_cand *gids; /* the port's GID table, ngids entries */
	unsigned ngids;
	bool grh;	     /* packets carry a GRH (cqp_path_open decides) */
	uint8_t sl, tclass;  /* --sl, --tclass */
	uint16_t pkey_index; /* --pkey-index */
	struct cqp_device_info info;
	/* What this context has created: QPs, SRQs, receive slots and
	 * registered memory (cqp_qp_create, cqp_srq_create, cqp_buf_alloc);
	 * its CQs are the completion engine's. */
	struct cqp_held held;
	/* Auto inline: the grant bisected for QPs of one shape, so that the
	 * probe runs once a run, not once per QP (cqp_qp_create). */
	struct {
		bool known;
		enum ibv_qp_type type;
		uint32_t send_wr, recv_wr;
		bool srq;
		uint32_t grant;
	} inline_auto;
};

/* Opens device `name` ("" = the first one), checks the port is active,
 * picks the GID (gid_index -1: cqp_fabric_pick_gid's choice, preferring
 * the entry of local_addr, a 16-byte GID or NULL) and allocates a PD.
 * No device at all: CQP_E_NODEV. */
int cqp_dev_open(struct cqp_dev *d, const char *name, unsigned port,
		 int gid_index, const uint8_t *local_addr);
void cqp_dev_close(struct cqp_dev *d);

/* The queue pairs, queue depths and CQ depth of p against what the device
 * reports (max_qp and max_cq against -q times --threads, max_qp_wr, with
 * --srq max_srq and max_srq_wr, max_cqe), checked before anything is
 * created: a CQP_E_USAGE failure naming the option, its value and the
 * device's limit, instead of a bare EINVAL from the create call.  Reads
 * d->attr and d->info.name only (tests fill them). */
int cqp_dev_check_limits(const struct cqp_dev *d, const struct cqp_params *p);

/* 256..4096 <-> IBV_MTU_*; 0 for a size that is not a valid MTU. */
enum ibv_mtu cqp_mtu_enum(uint32_t bytes);
uint32_t cqp_mtu_bytes(enum ibv_mtu mtu);
/* What the peer needs to know about our port to agree on the path. */
struct cqp_port_facts;
void cqp_dev_port_facts(const struct cqp_dev *d, struct cqp_port_facts *f);
/* Moves d to the GID that reaches the peer's (cqp_fabric_gid_for_peer),
 * or fails saying to choose with --gid-index. */
int cqp_dev_gid_toward(struct cqp_dev *d, const union ibv_gid *peer);

/* A page-aligned buffer registered with the PD. */
struct cqp_buf {
	void *addr;
	size_t len;
	struct ibv_mr *mr;
};
/* In cqp_buf_alloc's access: the CPU polls this buffer's memory, so the
 * device must write it in order (no relaxed ordering). */
#define CQP_BUF_POLLED (1 << 30)
int cqp_buf_alloc(struct cqp_buf *b, struct cqp_dev *d, size_t len, int access);
void cqp_buf_free(struct cqp_buf *b);

/* What the peer needs to reach one of our QPs. */
/* Our side of n QPs: each number, a random starting PSN (24 bits), the
 * port's LID and the GID in use. */
void cqp_endpoints_local(struct cqp_endpoint *ep, struct ibv_qp *const *qps,
			 unsigned n, const struct cqp_dev *d);
struct cqp_qp_req {
	enum ibv_qp_type type;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_srq *srq;
	uint32_t max_send_wr, max_recv_wr;
	int32_t inline_size; /* -1: the device's grant up to 236, else exact */
	uint32_t max_send_sge; /* 0: 1 */
};
/* Creates the QP; an explicit inline size the device refuses becomes a
 * CQP_E_USAGE failure that says how much it grants, and in auto mode any
 * refusal bisects down to the grant, once per device and QP shape: later
 * QPs of that shape ask for the grant at once.  *granted_inline is what
 * the QP really got. */
int cqp_qp_create(struct cqp_dev *d, const struct cqp_qp_req *req,
		  struct ibv_qp **qp, uint32_t *granted_inline);
/* RESET -> INIT with the remote access flags given: receives may be
 * posted from here on. */
int cqp_qp_init(struct ibv_qp *qp, const struct cqp_dev *d, int access);
/* The RDMA READs and atomics in flight the device allows a QP, as both
 * requester and responder (at least 1). */
uint32_t cqp_dev_rd_atom(const struct cqp_dev *d);
/* What a requester may have in flight towards remote (see below). */
uint32_t cqp_rd_atom_agreed(const struct cqp_endpoint *local,
			    const struct cqp_endpoint *remote);
/* INIT -> RTR -> RTS for an RC QP towards remote: it serves
 * local->rd_atom READs and atomics and sends at most the smaller of
 * both sides' figures (a side that says none: 1). */
int cqp_rc_qp_connect(struct ibv_qp *qp, const struct cqp_dev *d,
		      const struct cqp_endpoint *local,
		      const struct cqp_endpoint *remote, enum ibv_mtu mtu);

/* RESET -> INIT for a UD QP with Q_Key qkey: receives may be posted. */
int cqp_ud_qp_init(struct ibv_qp *qp, const struct cqp_dev *d, uint32_t qkey);
/* INIT -> RTR -> RTS for a UD QP: no peer, only the send PSN. */
int cqp_ud_qp_rts(struct ibv_qp *qp, uint32_t psn);
/* An address handle towards gid or lid: a GRH when d->grh, or towards a
 * multicast GID (lid 0). */
int cqp_ah_create(struct cqp_dev *d, const union ibv_gid *gid, uint16_t lid,
		  struct ibv_ah **ah);
/* A shared receive queue of max_wr receives; a depth the device refuses
 * (or no SRQ support) becomes a failure naming its limit. */
int cqp_srq_create(struct cqp_dev *d, uint32_t max_wr, struct ibv_srq **srq);

#endif
