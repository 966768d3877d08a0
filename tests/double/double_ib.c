/* SPDX-License-Identifier: BSD-2-Clause */
/* The mlx5-ib personality's fabric: an InfiniBand port with a LID, IB
 * GIDs, and LID routing.  An IB HCA addresses a peer in its subnet by
 * LID alone, with no GRH (ibv_ah_attr.is_global 0); rxe needs a GRH on
 * every packet (IBV_QPF_GRH_REQUIRED).  So each node's LID is the low 16
 * bits of its RoCE v2 IPv4 address, and an address vector without a GRH
 * is given one to the IPv4 address that LID names, in the node's /16:
 * LID routing runs end to end, between two guests too.  ibv_modify_qp,
 * interposed here for that, also bounds mlx5's READs and atomics. */
#include "double.h"

#include <arpa/inet.h>
#include <string.h>

/* The RoCE v2 IPv4 GID rxe routes by, found once. */
static void find_ipv4_gid(struct ibv_context *ctx)
{
	static ssize_t (*real)(struct ibv_context *, struct ibv_gid_entry *,
			       size_t, uint32_t, size_t);
	struct ibv_gid_entry e[64];
	ssize_t n;

	if (!real)
		real = dbl_real("_ibv_query_gid_table");
	n = real(ctx, e, 64, 0, sizeof(e[0]));
	for (ssize_t i = 0; i < n; i++) {
		const uint8_t *g = e[i].gid.raw;
		uint32_t a;

		if (e[i].port_num != 1 ||
		    e[i].gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    !IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)g))
			continue;
		memcpy(&a, g + 12, 4);
		dbl.ib_ipv4 = ntohl(a);
		dbl.ib_sgid_index = (uint8_t)e[i].gid_index;
		dbl.ib_lid = (uint16_t)(dbl.ib_ipv4 & 0xffff);
		/* Unicast LIDs are 1..0xbfff. */
		if (!dbl.ib_lid || dbl.ib_lid >= 0xc000)
			dbl.ib_lid = 1;
		return;
	}
}

void dbl_ib_open(struct ibv_context *ctx)
{
	if (!dbl.ib_lid)
		find_ipv4_gid(ctx);
}

/* An address vector without a GRH, given the one rxe needs. */
static void lid_route(struct ibv_ah_attr *ah)
{
	uint32_t ip = htonl((dbl.ib_ipv4 & 0xffff0000u) | ah->dlid);

	dbl_log("lid-route dlid %u", ah->dlid);
	ah->is_global = 1;
	memset(&ah->grh, 0, sizeof(ah->grh));
	ah->grh.dgid.raw[10] = 0xff;
	ah->grh.dgid.raw[11] = 0xff;
	memcpy(ah->grh.dgid.raw + 12, &ip, 4);
	ah->grh.sgid_index = dbl.ib_sgid_index;
	ah->grh.hop_limit = 64;
}

static bool lid_routed(const struct ibv_ah_attr *ah)
{
	return dbl.p && dbl.p->infiniband && !ah->is_global;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	static int (*real)(struct ibv_qp *, struct ibv_qp_attr *, int);

	if (!real)
		real = dbl_real("ibv_modify_qp");
	/* mlx5: more READs or atomics in flight than the device has. */
	if (dbl.p && dbl.p->max_rd_atom &&
	    (((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	      attr->max_rd_atomic > dbl.p->max_rd_atom) ||
	     ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	      attr->max_dest_rd_atomic > dbl.p->max_rd_atom))) {
		dbl_log("modify_qp rd_atom %u/%u refused", attr->max_rd_atomic,
			attr->max_dest_rd_atomic);
		/* As the kernel's refusal reaches libibverbs: errno too. */
		errno = EINVAL;
		return EINVAL;
	}
	if ((mask & IBV_QP_AV) && lid_routed(&attr->ah_attr)) {
		struct ibv_qp_attr a = *attr;

		lid_route(&a.ah_attr);
		return real(qp, &a, mask);
	}
	return real(qp, attr, mask);
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	static struct ibv_ah *(*real)(struct ibv_pd *, struct ibv_ah_attr *);

	if (!real)
		real = dbl_real("ibv_create_ah");
	if (lid_routed(attr)) {
		struct ibv_ah_attr a = *attr;

		lid_route(&a);
		return real(pd, &a);
	}
	return real(pd, attr);
}

/* On InfiniBand every GID is of type IB. */
static void ib_types(struct ibv_gid_entry *e, ssize_t n)
{
	for (ssize_t i = 0; dbl.p && dbl.p->infiniband && i < n; i++)
		e[i].gid_type = IBV_GID_TYPE_IB;
}

ssize_t _ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *e,
			     size_t max, uint32_t flags, size_t size)
{
	static ssize_t (*real)(struct ibv_context *, struct ibv_gid_entry *,
			       size_t, uint32_t, size_t);
	ssize_t n;

	if (!real)
		real = dbl_real("_ibv_query_gid_table");
	n = real(ctx, e, max, flags, size);
	ib_types(e, n);
	return n;
}

int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		      struct ibv_gid_entry *e, uint32_t flags, size_t size)
{
	static int (*real)(struct ibv_context *, uint32_t, uint32_t,
			   struct ibv_gid_entry *, uint32_t, size_t);
	int rc;

	if (!real)
		real = dbl_real("_ibv_query_gid_ex");
	rc = real(ctx, port, index, e, flags, size);
	if (!rc)
		ib_types(e, 1);
	return rc;
}
