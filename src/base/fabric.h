/* SPDX-License-Identifier: BSD-2-Clause */
/* The choices that depend on the fabric (which GID, which path MTU, GRH or
 * LID addressing, which transports work, what a packet carries on the
 * wire), as pure functions over what the devices report, so that tables of
 * real devices' attributes can test them without the hardware. */
#ifndef CQP_FABRIC_H
#define CQP_FABRIC_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One GID table entry as ibv_query_gid_ex reports it. */
struct cqp_gid_cand {
	union ibv_gid gid;
	enum ibv_gid_type type;
	bool valid; /* the query succeeded and the GID is not zero */
	/* IPv4-mapped: the address's prefix length on its netdev; 0:
	 * unknown (taken to reach every IPv4 peer). */
	uint8_t prefix_len;
};

/* The default GID: the entry whose address is `local` (the oob socket's
 * own address as an IPv6 or IPv4-mapped GID; NULL: unknown), RoCE v2
 * before v1; else RoCE v2 IPv4-mapped, v2 global IPv6, v2 link-local,
 * then any v1; on InfiniBand the first valid entry.  -1: none. */
int cqp_fabric_pick_gid(const struct cqp_gid_cand *c, unsigned n,
			const uint8_t *local, bool ethernet);
/* An address handle's grh.sgid_index (ibv_ah_attr, and the QP's path) has
 * 8 bits, while a GID table may be longer (rxe's has 1024 entries). */
#define CQP_SGID_INDEX_MAX 255
/* 0 when GID index fits an address handle, else a CQP_E_USAGE failure
 * naming the index, 0..255 and --gid-index: never truncated. */
int cqp_fabric_sgid_index_ok(int index, const char *dev);
/* "IB", "RoCE v1", "RoCE v2". */
const char *cqp_gid_type_name(enum ibv_gid_type t);
/* Text GID "fe80::..." for messages and reports. */
void cqp_gid_str(const union ibv_gid *gid, char *buf, size_t cap);
/* The usable entries of a GID table for a message, "0 (fe80::1, RoCE
 * v1), 1 (::ffff:198.18.0.1, RoCE v2)", or "none"; truncated to cap
 * with "...". */
void cqp_fabric_usable_gids(const struct cqp_gid_cand *c, unsigned n, char *buf,
			    size_t cap);

/* Whether entry c reaches the peer's GID without a router: both IPv4 and
 * the peer inside c's subnet (by c's prefix_len; unknown: yes), or both
 * IPv6 of one scope (link-local or not).  Another family: never. */
bool cqp_fabric_gid_reaches(const struct cqp_gid_cand *c,
			    const union ibv_gid *peer);
/* Once the sides know each other's GID, one may move towards the other's:
 * never a side given --gid-index; of two default choices the client's;
 * else the default one. */
bool cqp_fabric_gid_adapts(bool client, bool mine_given, bool theirs_given);
/* On the side that adapts, the entry to use towards the peer's GID:
 * `current` when it reaches it, else the best one that does (in
 * cqp_fabric_pick_gid's order, index up to CQP_SGID_INDEX_MAX), as with a
 * VLAN or secondary address the first RoCE v2 IPv4 GID of each side may
 * sit in another subnet.  None: a CQP_E_USAGE failure naming both GIDs and
 * --gid-index.  Returns the index. */
int cqp_fabric_gid_for_peer(const struct cqp_gid_cand *c, unsigned n,
			    int current, const union ibv_gid *peer,
			    const char *dev);

/* What each side tells the other about its port before anything is
 * created: the choices below are made from both, identically. */
struct cqp_port_facts {
	uint32_t active_mtu; /* bytes */
	bool ethernet;
	uint16_t lid;
	uint64_t subnet_prefix; /* first 8 bytes of GID 0, network order */
	/* The GID chosen and whether --gid-index chose it; a peer that
	 * sends neither leaves has_gid false. */
	bool has_gid, gid_given;
	union ibv_gid gid;
};

struct cqp_kv_writer;

/* One QP's side of the connection, as the oob carries it. */
struct cqp_endpoint {
	uint32_t qpn;
	uint32_t psn;
	uint16_t lid;
	union ibv_gid gid;
	uint32_t gid_index;
	/* The QP's buffer for the peer's RDMA (0 and 0: none), and the
	 * RDMA READs and atomics this side can have in flight as requester
	 * and serve as responder (0: not said; taken as 1). */
	uint64_t addr;
	uint32_t rkey;
	uint32_t rd_atom;
};
/* kv keys qpN_qpn, qpN_psn, qpN_lid, qpN_gid, qpN_addr, qpN_rkey,
 * qpN_rd_atom (the last three optional) plus "count". */
void cqp_endpoints_encode(const struct cqp_endpoint *eps, unsigned n,
			  struct cqp_kv_writer *w);
int cqp_endpoints_decode(struct cqp_endpoint *eps, unsigned n, const char *text,
			 size_t len);

/* kv keys mtu, link ("eth"/"ib"), lid, prefix, and gid and gid_given when
 * has_gid (optional): the record each side sends the other.  decode:
 * CQP_E_PROTO naming a missing or bad field. */
void cqp_port_facts_encode(const struct cqp_port_facts *f,
			   struct cqp_kv_writer *w);
int cqp_port_facts_decode(struct cqp_port_facts *f, const char *text,
			  size_t len);

/* The path MTU in bytes: `requested` (0: the smaller active MTU of the
 * two ports).  A request above either side's active MTU is a CQP_E_USAGE
 * failure that names --mtu and both values. */
int cqp_fabric_path_mtu(const struct cqp_port_facts *local,
			const struct cqp_port_facts *remote, uint32_t requested,
			uint32_t *out);
/* Whether packets carry a GRH: always on Ethernet; on InfiniBand only
 * when asked for (--gid-index), across subnets, or without a LID. */
bool cqp_fabric_use_grh(const struct cqp_port_facts *local,
			const struct cqp_port_facts *remote, bool gid_given);

/* 0 when the device's transport can run this tool's QPs (rc: RC QPs
 * connected by hand; ud: UD QPs), else a CQP_E_USAGE failure naming the
 * device and the transport.  iWARP has neither. */
int cqp_fabric_transport_ok(enum ibv_transport_type t, const char *dev, bool rc,
			    bool ud);

/* --mcast needs, on InfiniBand, a join through the subnet administrator
 * for the group's MLID, which cqperf does not make: a CQP_E_USAGE failure
 * there, 0 on Ethernet (the group's IP address maps to its MAC). */
int cqp_fabric_mcast_ok(bool ethernet, const char *dev);

/* RDMA CM bound an id for `addr` to device `routed` (the one that owns
 * the route), while our queue pairs live on `ours` (-d): 0 when they are
 * the same, else a CQP_E_USAGE failure naming both and the way out
 * (--cm-addr on the client, -d on either side). */
int cqp_fabric_cm_device_ok(const char *routed, const char *ours,
			    const char *addr, bool client);

/* Async events that end a run (a CQ overrun; a QP, SRQ, WQ or device
 * error; an error of `port`, the run's, not of ev_port, another), and
 * those whose element is a QP. */
bool cqp_fabric_async_fatal(enum ibv_event_type t, unsigned ev_port,
			    unsigned port);
bool cqp_fabric_async_on_qp(enum ibv_event_type t);

/* The link a UD packet travels, as cqp_fabric_ud_overhead needs it. */
struct cqp_wire {
	bool ethernet;
	enum ibv_gid_type gid_type; /* Ethernet: RoCE v1 or v2 */
	bool ipv4;		    /* RoCE v2: the GID is IPv4-mapped */
	bool grh;		    /* InfiniBand: packets carry a GRH */
	bool vlan;		    /* Ethernet: the GID's netdev is a VLAN */
};

/* Bytes one UD SEND packet carries besides its payload on the wire, for
 * the link used: RoCE v2 over IPv4 or IPv6 (Ethernet, IP, UDP, BTH, DETH,
 * ICRC, FCS; no GRH on the wire), RoCE v1 (Ethernet, GRH, BTH, DETH,
 * ICRC, FCS), 4 more for an 802.1Q tag, InfiniBand (LRH, GRH when global,
 * BTH, DETH, ICRC, VCRC).  `*name` says which. */
uint32_t cqp_fabric_ud_overhead(const struct cqp_wire *w, const char **name);

/* Whether GID `index` of dev's port sits on a VLAN netdev, read from the
 * sysfs tree at root ("/sys"): gid_attrs/ndevs/INDEX names the netdev,
 * whose uevent says DEVTYPE=vlan.  No netdev or no file: false. */
bool cqp_fabric_gid_vlan(const char *root, const char *dev, unsigned port,
			 unsigned index);

/* Whether a UD receive of byte_len is the message of `size` bytes: with
 * the GRH flag the length includes the 40-byte GRH; without it some
 * providers count the GRH room anyway and some the payload alone. */
static inline bool cqp_fabric_ud_len_ok(uint32_t byte_len, uint32_t size,
					bool wc_grh)
{
	/* Without the flag the 40 bytes of GRH room may or may not be in
	 * the count, by provider. */
	return byte_len == size + 40 || (!wc_grh && byte_len == size);
}

/* --cq-mod COUNT / USEC against the device's caps (0 caps: not
 * reported, allowed); a CQP_E_USAGE failure names the limits. */
int cqp_fabric_cq_mod_ok(uint32_t count, uint32_t usec, uint16_t max_count,
			 uint16_t max_period, const char *dev);

/* The largest v in 0..hi with fits(arg, v), for a limit the device does
 * not report (inline data): bisection, assuming fits is monotone. */
uint32_t cqp_fabric_bisect(uint32_t hi, bool (*fits)(void *arg, uint32_t v),
			   void *arg);

#endif
