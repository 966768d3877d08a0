/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/fabric.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/kv.h"
#include "base/textfile.h"

static bool is_v4_mapped(const uint8_t *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff};
	return memcmp(g, prefix, sizeof(prefix)) == 0;
}

static bool is_link_local(const uint8_t *g)
{
	return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

/* Lower is better; -1: never by default. */
static int rank(const struct cqp_gid_cand *c, const uint8_t *local)
{
	bool v2 = c->type == IBV_GID_TYPE_ROCE_V2;

	if (local && memcmp(c->gid.raw, local, 16) == 0)
		return v2 ? 0 : 1;
	if (!v2)
		return 5;
	if (is_v4_mapped(c->gid.raw))
		return 2;
	return is_link_local(c->gid.raw) ? 4 : 3;
}

int cqp_fabric_pick_gid(const struct cqp_gid_cand *c, unsigned n,
			const uint8_t *local, bool ethernet)
{
	int best = -1, best_rank = 0;

	for (unsigned i = 0; i < n; i++) {
		int r;

		if (!c[i].valid)
			continue;
		if (!ethernet)
			return (int)i;
		r = rank(&c[i], local);
		if (best < 0 || r < best_rank) {
			best = (int)i;
			best_rank = r;
		}
	}
	return best;
}

int cqp_fabric_sgid_index_ok(int index, const char *dev)
{
	if (index >= 0 && index <= CQP_SGID_INDEX_MAX)
		return 0;
	return cqp_fail(CQP_E_USAGE,
			"GID index %d of %s: an address handle carries an "
			"8-bit source GID index (0..%d); give --gid-index an "
			"entry in that range with the address to use",
			index, dev, CQP_SGID_INDEX_MAX);
}

void cqp_gid_str(const union ibv_gid *gid, char *buf, size_t cap)
{
	char tmp[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, gid->raw, tmp, sizeof(tmp)))
		snprintf(tmp, sizeof(tmp), "?");
	snprintf(buf, cap, "%s", tmp);
}

void cqp_fabric_usable_gids(const struct cqp_gid_cand *c, unsigned n, char *buf,
			    size_t cap)
{
	size_t len = 0;

	if (cap < 8)
		return;
	buf[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		char g[INET6_ADDRSTRLEN], item[96];
		int w;

		if (!c[i].valid)
			continue;
		cqp_gid_str(&c[i].gid, g, sizeof(g));
		w = snprintf(item, sizeof(item), "%s%u (%s, %s)",
			     len ? ", " : "", i, g,
			     cqp_gid_type_name(c[i].type));
		if (len + (size_t)w + 4 > cap) {
			snprintf(buf + len, cap - len, "%s",
				 len ? ", ..." : "...");
			return;
		}
		memcpy(buf + len, item, (size_t)w + 1);
		len += (size_t)w;
	}
	if (!len)
		snprintf(buf, cap, "none");
}

const char *cqp_gid_type_name(enum ibv_gid_type t)
{
	switch (t) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	}
	return "unknown";
}

static uint32_t v4_of(const uint8_t *g)
{
	return (uint32_t)g[12] << 24 | (uint32_t)g[13] << 16 |
	       (uint32_t)g[14] << 8 | g[15];
}

bool cqp_fabric_gid_reaches(const struct cqp_gid_cand *c,
			    const union ibv_gid *peer)
{
	bool v4 = is_v4_mapped(c->gid.raw);
	uint32_t mask;

	if (v4 != is_v4_mapped(peer->raw))
		return false;
	if (!v4)
		return is_link_local(c->gid.raw) == is_link_local(peer->raw);
	if (!c->prefix_len)
		return true;
	mask =
	    c->prefix_len >= 32 ? UINT32_MAX : ~(UINT32_MAX >> c->prefix_len);
	return ((v4_of(c->gid.raw) ^ v4_of(peer->raw)) & mask) == 0;
}

bool cqp_fabric_gid_adapts(bool client, bool mine_given, bool theirs_given)
{
	return !mine_given && (client || theirs_given);
}

int cqp_fabric_gid_for_peer(const struct cqp_gid_cand *c, unsigned n,
			    int current, const union ibv_gid *peer,
			    const char *dev)
{
	char ours[INET6_ADDRSTRLEN + 8] = "none", theirs[INET6_ADDRSTRLEN];
	char usable[256];
	int best = -1, best_rank = 0;

	if (current >= 0 && (unsigned)current < n && c[current].valid &&
	    cqp_fabric_gid_reaches(&c[current], peer))
		return current;
	for (unsigned i = 0; i < n && i <= CQP_SGID_INDEX_MAX; i++) {
		int r;

		if (!c[i].valid || !cqp_fabric_gid_reaches(&c[i], peer))
			continue;
		r = rank(&c[i], NULL);
		if (best < 0 || r < best_rank) {
			best = (int)i;
			best_rank = r;
		}
	}
	if (best >= 0)
		return best;
	if (current >= 0 && (unsigned)current < n) {
		cqp_gid_str(&c[current].gid, ours, sizeof(ours));
		if (c[current].prefix_len)
			snprintf(ours + strlen(ours),
				 sizeof(ours) - strlen(ours), "/%u",
				 c[current].prefix_len);
	}
	cqp_gid_str(peer, theirs, sizeof(theirs));
	cqp_fabric_usable_gids(c, n, usable, sizeof(usable));
	return cqp_fail(CQP_E_USAGE,
			"no GID of %s reaches the peer's GID %s (ours: %s, "
			"index %d; neither side's oob address is a GID): "
			"choose GIDs of one subnet with --gid-index (usable "
			"here: %s)",
			dev, theirs, ours, current, usable);
}

void cqp_port_facts_encode(const struct cqp_port_facts *f,
			   struct cqp_kv_writer *w)
{
	char prefix[24], gid[INET6_ADDRSTRLEN];

	snprintf(prefix, sizeof(prefix), "%016" PRIx64, f->subnet_prefix);
	cqp_kv_add_u64(w, "mtu", f->active_mtu);
	cqp_kv_add_str(w, "link", f->ethernet ? "eth" : "ib");
	cqp_kv_add_u64(w, "lid", f->lid);
	cqp_kv_add_str(w, "prefix", prefix);
	if (f->has_gid) {
		cqp_gid_str(&f->gid, gid, sizeof(gid));
		cqp_kv_add_str(w, "gid", gid);
		cqp_kv_add_u64(w, "gid_given", f->gid_given);
	}
}

int cqp_port_facts_decode(struct cqp_port_facts *f, const char *text,
			  size_t len)
{
	char link[8], prefix[24], gid[INET6_ADDRSTRLEN], *end;
	uint64_t mtu, lid, given;
	int rc;

	if ((rc = cqp_kv_get_u64(text, len, "mtu", &mtu)) < 0 ||
	    (rc = cqp_kv_get_u64(text, len, "lid", &lid)) < 0 ||
	    (rc = cqp_kv_get_str(text, len, "link", link, sizeof(link))) < 0 ||
	    (rc = cqp_kv_get_str(text, len, "prefix", prefix, sizeof(prefix))) <
		0)
		return rc;
	if (mtu > 4096 || lid > 0xffff ||
	    (strcmp(link, "eth") != 0 && strcmp(link, "ib") != 0))
		return cqp_fail(
		    CQP_E_PROTO,
		    "peer's port record is out of range (mtu %" PRIu64
		    ", lid %" PRIu64 ", link '%s')",
		    mtu, lid, link);
	f->subnet_prefix = strtoull(prefix, &end, 16);
	if (end == prefix || *end)
		return cqp_fail(CQP_E_PROTO,
				"peer's port record: prefix '%s' is not hex",
				prefix);
	f->active_mtu = (uint32_t)mtu;
	f->lid = (uint16_t)lid;
	f->ethernet = link[0] == 'e';
	/* Optional: older peers send no GID. */
	f->has_gid = f->gid_given = false;
	if (cqp_kv_has(text, len, "gid") != 1)
		return 0;
	if ((rc = cqp_kv_get_str(text, len, "gid", gid, sizeof(gid))) < 0 ||
	    (rc = cqp_kv_get_u64(text, len, "gid_given", &given)) < 0)
		return rc;
	if (inet_pton(AF_INET6, gid, f->gid.raw) != 1 || given > 1)
		return cqp_fail(CQP_E_PROTO,
				"peer's port record: gid '%s' (given %" PRIu64
				") is not a GID",
				gid, given);
	f->has_gid = true;
	f->gid_given = given;
	return 0;
}

static bool mtu_valid(uint32_t b)
{
	return b >= 256 && b <= 4096 && (b & (b - 1)) == 0;
}

int cqp_fabric_path_mtu(const struct cqp_port_facts *local,
			const struct cqp_port_facts *remote, uint32_t requested,
			uint32_t *out)
{
	uint32_t lo = local->active_mtu < remote->active_mtu
			  ? local->active_mtu
			  : remote->active_mtu;

	if (!mtu_valid(local->active_mtu) || !mtu_valid(remote->active_mtu))
		return cqp_fail(CQP_E_DEVICE,
				"active MTU %u here, %u on the peer: not an "
				"IB MTU (256..4096)",
				local->active_mtu, remote->active_mtu);
	if (requested && requested > lo)
		return cqp_fail(
		    CQP_E_USAGE,
		    "--mtu %u exceeds the active MTU of the %s "
		    "port (%u here, %u on the peer; allowed: "
		    "256..%u)",
		    requested,
		    local->active_mtu < remote->active_mtu ? "local" : "peer's",
		    local->active_mtu, remote->active_mtu, lo);
	*out = requested ? requested : lo;
	return 0;
}

bool cqp_fabric_use_grh(const struct cqp_port_facts *local,
			const struct cqp_port_facts *remote, bool gid_given)
{
	if (local->ethernet || remote->ethernet || gid_given)
		return true;
	/* LIDs 0 and the permissive 0xffff route nowhere. */
	if (!local->lid || !remote->lid || local->lid >= 0xc000 ||
	    remote->lid >= 0xc000)
		return true;
	return local->subnet_prefix != remote->subnet_prefix;
}

static const char *transport_name(enum ibv_transport_type t)
{
	switch (t) {
	case IBV_TRANSPORT_IB:
		return "InfiniBand/RoCE";
	case IBV_TRANSPORT_IWARP:
		return "iWARP";
	case IBV_TRANSPORT_USNIC:
	case IBV_TRANSPORT_USNIC_UDP:
		return "usNIC";
	case IBV_TRANSPORT_UNSPECIFIED:
	case IBV_TRANSPORT_UNKNOWN:
		break;
	}
	return "unknown";
}

int cqp_fabric_transport_ok(enum ibv_transport_type t, const char *dev, bool rc,
			    bool ud)
{
	if (t == IBV_TRANSPORT_IB)
		return 0;
	if (t == IBV_TRANSPORT_IWARP)
		return cqp_fail(CQP_E_USAGE,
				"%s is an iWARP device: it has no UD QPs, "
				"and its RC QPs are connected only by RDMA "
				"CM, so this tool cannot run on it%s",
				dev, ud ? "" : " (cm_event_stress can)");
	return cqp_fail(CQP_E_USAGE,
			"%s has transport %s: cqperf needs InfiniBand or "
			"RoCE for its %s QPs",
			dev, transport_name(t), rc ? "RC" : "UD");
}

int cqp_fabric_mcast_ok(bool ethernet, const char *dev)
{
	if (ethernet)
		return 0;
	return cqp_fail(CQP_E_USAGE,
			"--mcast: %s is InfiniBand, where a multicast group "
			"needs a subnet manager join for its MLID, which "
			"cqperf does not make (use a RoCE port)",
			dev);
}

int cqp_fabric_cm_device_ok(const char *routed, const char *ours,
			    const char *addr, bool client)
{
	if (strcmp(routed, ours) == 0)
		return 0;
	if (client)
		return cqp_fail(CQP_E_USAGE,
				"--rdma-cm: RDMA CM reaches %s through %s, but "
				"the queue pairs are on %s (-d): give "
				"--cm-addr the server's address on %s's "
				"network, or -d %s",
				addr, routed, ours, ours, routed);
	return cqp_fail(CQP_E_USAGE,
			"--rdma-cm: the client's request came in on %s, but "
			"the queue pairs are on %s (-d): serve with -d %s, or "
			"have the client use --cm-addr with this host's "
			"address on %s's network",
			routed, ours, routed, ours);
}

bool cqp_fabric_async_fatal(enum ibv_event_type t, unsigned ev_port,
			    unsigned port)
{
	/* A dual-port NIC's other port may flap: not this run's. */
	if (t == IBV_EVENT_PORT_ERR)
		return ev_port == port;
	switch (t) {
	case IBV_EVENT_CQ_ERR:
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_WQ_FATAL:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_DEVICE_FATAL:
		return true;
	default:
		return false;
	}
}

bool cqp_fabric_async_on_qp(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return true;
	default:
		return false;
	}
}

uint32_t cqp_fabric_ud_overhead(const struct cqp_wire *w, const char **name)
{
	/* BTH 12 + DETH 8 + ICRC 4 on every fabric. */
	const uint32_t transport = 12 + 8 + 4;
	/* [v1, v2 IPv4, v2 IPv6][tagged] */
	static const char *const names[3][2] = {
	    {"RoCE v1", "RoCE v1, VLAN"},
	    {"RoCE v2 over IPv4", "RoCE v2 over IPv4, VLAN"},
	    {"RoCE v2 over IPv6", "RoCE v2 over IPv6, VLAN"}};

	if (w->ethernet) {
		int k = w->gid_type == IBV_GID_TYPE_ROCE_V1 ? 0
			: w->ipv4			    ? 1
							    : 2;
		/* RoCE v1 carries the GRH itself; in v2 the IP header is
		 * the GRH, and UDP follows. */
		uint32_t l3 = k == 0 ? 40 : k == 1 ? 20 + 8 : 40 + 8;

		*name = names[k][w->vlan];
		/* Ethernet 14 + FCS 4 + preamble 8 + gap 12 (+ tag 4). */
		return transport + 14 + 4 + 8 + 12 + (w->vlan ? 4 : 0) + l3;
	}
	*name = w->grh ? "InfiniBand with GRH" : "InfiniBand";
	return transport + 8 + 2 + (w->grh ? 40 : 0); /* LRH, VCRC */
}

bool cqp_fabric_gid_vlan(const char *root, const char *dev, unsigned port,
			 unsigned index)
{
	char path[512], ndev[64], text[1024];

	snprintf(path, sizeof(path),
		 "%s/class/infiniband/%s/ports/%u/gid_attrs/ndevs/%u", root,
		 dev, port, index);
	if (!cqp_read_line(path, ndev, sizeof(ndev)) || strchr(ndev, '/'))
		return false;
	snprintf(path, sizeof(path), "%s/class/net/%s/uevent", root, ndev);
	if (cqp_read_text(path, text, sizeof(text)) <= 0)
		return false;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		if (!strcmp(l, "DEVTYPE=vlan"))
			return true;
	return false;
}

int cqp_fabric_cq_mod_ok(uint32_t count, uint32_t usec, uint16_t max_count,
			 uint16_t max_period, const char *dev)
{
	if ((max_count && count > max_count) ||
	    (max_period && usec > max_period))
		return cqp_fail(CQP_E_USAGE,
				"--cq-mod %u,%u: %s moderates at most %u "
				"completions and %u us",
				count, usec, dev, max_count, max_period);
	return 0;
}

uint32_t cqp_fabric_bisect(uint32_t hi, bool (*fits)(void *arg, uint32_t v),
			   void *arg)
{
	uint32_t lo = 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (fits(arg, mid))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

void cqp_endpoints_encode(const struct cqp_endpoint *eps, unsigned n,
			  struct cqp_kv_writer *w)
{
	char key[32], gid[64];

	cqp_kv_add_u64(w, "count", n);
	for (unsigned i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "qp%u_qpn", i);
		cqp_kv_add_u64(w, key, eps[i].qpn);
		snprintf(key, sizeof(key), "qp%u_psn", i);
		cqp_kv_add_u64(w, key, eps[i].psn);
		snprintf(key, sizeof(key), "qp%u_lid", i);
		cqp_kv_add_u64(w, key, eps[i].lid);
		snprintf(key, sizeof(key), "qp%u_gid_index", i);
		cqp_kv_add_u64(w, key, eps[i].gid_index);
		snprintf(key, sizeof(key), "qp%u_gid", i);
		cqp_gid_str(&eps[i].gid, gid, sizeof(gid));
		cqp_kv_add_str(w, key, gid);
		if (eps[i].rkey || eps[i].addr) {
			snprintf(key, sizeof(key), "qp%u_addr", i);
			cqp_kv_add_u64(w, key, eps[i].addr);
			snprintf(key, sizeof(key), "qp%u_rkey", i);
			cqp_kv_add_u64(w, key, eps[i].rkey);
		}
		if (eps[i].rd_atom) {
			snprintf(key, sizeof(key), "qp%u_rd_atom", i);
			cqp_kv_add_u64(w, key, eps[i].rd_atom);
		}
	}
}

static int get_u32(const char *text, size_t len, const char *key, uint32_t max,
		   uint32_t *out)
{
	uint64_t v;
	int rc = cqp_kv_get_u64(text, len, key, &v);

	if (rc < 0)
		return rc;
	if (v > max)
		return cqp_fail(CQP_E_PROTO,
				"endpoint field %s=%" PRIu64 " is out of range",
				key, v);
	*out = (uint32_t)v;
	return 0;
}

/* An optional field qpN_name: 0 when absent. */
static int get_opt(const char *text, size_t len, unsigned i, const char *name,
		   uint64_t max, uint64_t *out)
{
	char key[32];
	int rc;

	snprintf(key, sizeof(key), "qp%u_%s", i, name);
	*out = 0;
	if (!cqp_kv_has(text, len, key))
		return 0;
	if ((rc = cqp_kv_get_u64(text, len, key, out)) < 0)
		return rc;
	if (*out > max)
		return cqp_fail(CQP_E_PROTO,
				"endpoint field %s=%" PRIu64 " is out of range",
				key, *out);
	return 0;
}

int cqp_endpoints_decode(struct cqp_endpoint *eps, unsigned n, const char *text,
			 size_t len)
{
	char key[32], gid[64];
	uint32_t count = 0, lid = 0;
	uint64_t v;
	int rc;

	rc = get_u32(text, len, "count", UINT32_MAX, &count);
	if (rc < 0)
		return rc;
	if (count != n)
		return cqp_fail(CQP_E_PROTO,
				"peer has %u queue pairs, we have %u", count,
				n);
	for (unsigned i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "qp%u_qpn", i);
		if ((rc = get_u32(text, len, key, 0xffffff, &eps[i].qpn)) < 0)
			return rc;
		snprintf(key, sizeof(key), "qp%u_psn", i);
		if ((rc = get_u32(text, len, key, 0xffffff, &eps[i].psn)) < 0)
			return rc;
		snprintf(key, sizeof(key), "qp%u_lid", i);
		if ((rc = get_u32(text, len, key, 0xffff, &lid)) < 0)
			return rc;
		eps[i].lid = (uint16_t)lid;
		snprintf(key, sizeof(key), "qp%u_gid_index", i);
		if ((rc = get_u32(text, len, key, 255, &eps[i].gid_index)) < 0)
			return rc;
		snprintf(key, sizeof(key), "qp%u_gid", i);
		rc = cqp_kv_get_str(text, len, key, gid, sizeof(gid));
		if (rc < 0)
			return rc;
		if (inet_pton(AF_INET6, gid, eps[i].gid.raw) != 1)
			return cqp_fail(CQP_E_PROTO,
					"endpoint field %s='%s' is not a GID",
					key, gid);
		if ((rc = get_opt(text, len, i, "addr", UINT64_MAX,
				  &eps[i].addr)) < 0)
			return rc;
		if ((rc = get_opt(text, len, i, "rkey", UINT32_MAX, &v)) < 0)
			return rc;
		eps[i].rkey = (uint32_t)v;
		if ((rc = get_opt(text, len, i, "rd_atom", 255, &v)) < 0)
			return rc;
		eps[i].rd_atom = (uint32_t)v;
	}
	return 0;
}
