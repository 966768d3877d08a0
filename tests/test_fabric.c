/* SPDX-License-Identifier: BSD-2-Clause */
/* The fabric choices against tables of what real devices report: mlx5 on
 * InfiniBand and RoCE, bnxt_re, irdma (RoCE and iWARP), cxgb4 and rxe.
 * GID tables follow the kernel's layout: a RoCE v1 and a v2 entry per
 * address, link-local first, VLAN and secondary addresses in the order
 * they were added. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "check.h"
#include "base/error.h"
#include "base/fabric.h"
#include "base/kv.h"

#define V1 IBV_GID_TYPE_ROCE_V1
#define V2 IBV_GID_TYPE_ROCE_V2
#define IB IBV_GID_TYPE_IB

struct gid_row {
	const char *addr; /* NULL: an empty slot */
	enum ibv_gid_type type;
};

static unsigned load(const struct gid_row *rows, struct cqp_gid_cand *c)
{
	unsigned n = 0;

	for (; rows[n].addr || rows[n].type; n++) {
		memset(&c[n], 0, sizeof(c[n]));
		c[n].type = rows[n].type;
		c[n].valid = rows[n].addr && rows[n].addr[0];
		if (c[n].valid)
			CHECK(inet_pton(AF_INET6, rows[n].addr, c[n].gid.raw) ==
			      1);
	}
	return n;
}

/* The oob socket's local address as cqp_fabric_pick_gid wants it. */
static const uint8_t *addr(const char *text, uint8_t *buf)
{
	CHECK(inet_pton(AF_INET6, text, buf) == 1);
	return buf;
}

static int pick(const struct gid_row *rows, const char *local, bool eth)
{
	struct cqp_gid_cand c[32];
	uint8_t buf[16];
	unsigned n = load(rows, c);

	return cqp_fabric_pick_gid(c, n, local ? addr(local, buf) : NULL, eth);
}

#define END                                                                    \
	{                                                                      \
		NULL, 0                                                        \
	}

static void test_gid_choice(void)
{
	/* mlx5 (ConnectX-6) on RoCE: a VLAN address added before the
	 * interface's own, then a global IPv6 address. */
	static const struct gid_row mlx5_roce[] = {
	    {"fe80::b8ce:f6ff:fea1:b2c4", V1},
	    {"fe80::b8ce:f6ff:fea1:b2c4", V2},
	    {"::ffff:10.10.100.10", V1},
	    {"::ffff:10.10.100.10", V2},
	    {"::ffff:192.168.1.10", V1},
	    {"::ffff:192.168.1.10", V2},
	    {"2001:db8::10", V1},
	    {"2001:db8::10", V2},
	    END};
	/* bnxt_re on an IPv6-only host; an empty slot in the middle. */
	static const struct gid_row bnxt_v6[] = {
	    {"fe80::20a:f7ff:fe11:2233", V1},
	    {"fe80::20a:f7ff:fe11:2233", V2},
	    {"", V1},
	    {"2001:db8:1::5", V1},
	    {"2001:db8:1::5", V2},
	    END};
	/* bnxt_re with only link-local entries (no address yet). */
	static const struct gid_row bnxt_ll[] = {
	    {"fe80::20a:f7ff:fe11:2233", V1},
	    {"fe80::20a:f7ff:fe11:2233", V2},
	    END};
	/* An old RoCE v1-only device. */
	static const struct gid_row v1_only[] = {
	    {"fe80::202:c9ff:fe00:1", V1}, {"::ffff:10.0.0.7", V1}, END};
	/* irdma in RoCE mode: v2 entries only. */
	static const struct gid_row irdma[] = {
	    {"fe80::3efd:feff:fe9b:1", V2}, {"::ffff:172.16.0.3", V2}, END};
	/* rxe in the test guest. */
	static const struct gid_row rxe[] = {{"fe80::44c4:50ff:fe2c:2db5", V2},
					     {"::ffff:198.18.0.1", V2},
					     {"::ffff:198.18.3.1", V2},
					     END};
	/* mlx5 on InfiniBand: GID 0 is the subnet prefix and port GUID. */
	static const struct gid_row mlx5_ib[] = {
	    {"", IB}, {"fe80::b8ce:f603:a1:b2c4", IB}, END};

	/* The address the oob runs over wins, v2 before v1. */
	CHECK(pick(mlx5_roce, "::ffff:192.168.1.10", true) == 5);
	CHECK(pick(mlx5_roce, "::ffff:10.10.100.10", true) == 3);
	CHECK(pick(mlx5_roce, "2001:db8::10", true) == 7);
	/* Unknown (loopback oob): the first v2 IPv4-mapped entry. */
	CHECK(pick(mlx5_roce, "::ffff:127.0.0.1", true) == 3);
	CHECK(pick(mlx5_roce, NULL, true) == 3);
	/* IPv6 only: v2 global, not GID 0 (v1 link-local). */
	CHECK(pick(bnxt_v6, NULL, true) == 4);
	CHECK(pick(bnxt_v6, "2001:db8:1::5", true) == 4);
	CHECK(pick(bnxt_ll, NULL, true) == 1);
	/* v1 last, but the oob's own address in v1 beats other v1s. */
	CHECK(pick(v1_only, NULL, true) == 0);
	CHECK(pick(v1_only, "::ffff:10.0.0.7", true) == 1);
	CHECK(pick(irdma, NULL, true) == 1);
	CHECK(pick(rxe, NULL, true) == 1);
	CHECK(pick(rxe, "::ffff:198.18.3.1", true) == 2);
	/* InfiniBand: the first valid entry, whatever the oob says. */
	CHECK(pick(mlx5_ib, NULL, false) == 1);
	CHECK(pick(mlx5_ib, "::ffff:10.0.0.1", false) == 1);
	{
		static const struct gid_row none[] = {{"", V2}, {"", V1}, END};

		CHECK(pick(none, NULL, true) == -1);
	}
	CHECK_STR(cqp_gid_type_name(V2), "RoCE v2");
	CHECK_STR(cqp_gid_type_name(V1), "RoCE v1");
	CHECK_STR(cqp_gid_type_name(IB), "IB");
}

/* Every IPv4-mapped entry's netdev prefix is len. */
static void prefix_all(struct cqp_gid_cand *c, unsigned n, uint8_t len)
{
	for (unsigned i = 0; i < n; i++)
		if (c[i].valid && c[i].gid.raw[10] == 0xff)
			c[i].prefix_len = len;
}

static union ibv_gid gid_of(const char *text)
{
	union ibv_gid g;

	CHECK(inet_pton(AF_INET6, text, g.raw) == 1);
	return g;
}

/* The GID towards the peer's (cqp_fabric_gid_for_peer), on the side that
 * adapts: with the oob over a management network neither side's GID is
 * its oob address, and each side's first RoCE v2 IPv4 GID may sit in
 * another subnet, here one untagged and one on a VLAN. */
static void test_gid_for_peer(void)
{
	/* mlx5: 198.18.0.1/24 on the netdev, then 198.19.5.1/24 on its VLAN
	 * 100; the peer got its VLAN address first (prefixes set below). */
	static const struct gid_row a_rows[] = {
	    {"fe80::b8ce:f6ff:fea1:b2c4", V1},
	    {"fe80::b8ce:f6ff:fea1:b2c4", V2},
	    {"::ffff:198.18.0.1", V1},
	    {"::ffff:198.18.0.1", V2},
	    {"::ffff:198.19.5.1", V1},
	    {"::ffff:198.19.5.1", V2},
	    END};
	static const struct gid_row b_rows[] = {
	    {"fe80::b8ce:f6ff:fea1:9911", V1},
	    {"fe80::b8ce:f6ff:fea1:9911", V2},
	    {"::ffff:198.19.5.2", V1},
	    {"::ffff:198.19.5.2", V2},
	    {"::ffff:198.18.0.2", V1},
	    {"::ffff:198.18.0.2", V2},
	    END};
	/* rxe with no prefix known: nothing to judge by. */
	static const struct gid_row rxe[] = {
	    {"fe80::44c4:50ff:fe2c:2db5", V2}, {"::ffff:198.18.0.1", V2}, END};
	struct cqp_gid_cand a[16], b[16], r[16];
	unsigned na = load(a_rows, a), nb = load(b_rows, b), nr = load(rxe, r);
	int ia = cqp_fabric_pick_gid(a, na, NULL, true);
	int ib = cqp_fabric_pick_gid(b, nb, NULL, true);
	union ibv_gid peer;

	prefix_all(a, na, 24);
	prefix_all(b, nb, 24);
	/* Each side alone: its first v2 IPv4 entry, in different subnets. */
	CHECK(ia == 3 && ib == 3);
	CHECK(!cqp_fabric_gid_reaches(&b[ib], &a[ia].gid));
	/* The side that adapts takes its entry in the peer's subnet. */
	CHECK(cqp_fabric_gid_for_peer(b, nb, ib, &a[ia].gid, "mlx5_1") == 5);
	CHECK(cqp_fabric_gid_for_peer(a, na, ia, &b[ib].gid, "mlx5_0") == 5);
	/* One already in the peer's subnet stays. */
	peer = gid_of("::ffff:198.18.0.77");
	CHECK(cqp_fabric_gid_for_peer(a, na, 3, &peer, "mlx5_0") == 3);
	CHECK(cqp_fabric_gid_reaches(&a[3], &peer));
	/* No entry in the peer's subnet: refused, telling the user to pick
	 * one with -x. */
	peer = gid_of("::ffff:10.1.1.1");
	cqp_errclear();
	CHECK(cqp_fabric_gid_for_peer(a, na, 3, &peer, "mlx5_0") ==
	      -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "10.1.1.1") != NULL);
	CHECK(strstr(cqp_errmsg(), "198.18.0.1") != NULL);
	CHECK(strstr(cqp_errmsg(), "--gid-index") != NULL);
	/* Another family: an IPv6 global GID against IPv4 and link-local
	 * entries only. */
	peer = gid_of("2001:db8::2");
	CHECK(!cqp_fabric_gid_reaches(&a[3], &peer));
	CHECK(!cqp_fabric_gid_reaches(&a[1], &peer));
	CHECK(cqp_fabric_gid_for_peer(a, na, 3, &peer, "mlx5_0") ==
	      -CQP_E_USAGE);
	peer = gid_of("fe80::1");
	CHECK(cqp_fabric_gid_reaches(&a[1], &peer));
	/* A wider prefix holds more. */
	{
		static const struct gid_row wide[] = {{"::ffff:198.18.0.1", V2},
						      END};
		struct cqp_gid_cand w[2];
		unsigned nw = load(wide, w);

		prefix_all(w, nw, 16);
		peer = gid_of("::ffff:198.18.7.7");
		CHECK(cqp_fabric_gid_for_peer(w, nw, 0, &peer, "x") == 0);
		peer = gid_of("::ffff:198.19.0.1");
		CHECK(!cqp_fabric_gid_reaches(&w[0], &peer));
	}
	/* Prefix unknown: assumed to reach (no change, no failure). */
	peer = gid_of("::ffff:198.51.100.9");
	CHECK(cqp_fabric_gid_for_peer(r, nr, 1, &peer, "rxe0") == 1);
	/* Who adapts: not a side given -x; the client when neither was,
	 * else the side that was not. */
	CHECK(cqp_fabric_gid_adapts(true, false, false));
	CHECK(!cqp_fabric_gid_adapts(false, false, false));
	CHECK(cqp_fabric_gid_adapts(false, false, true));
	CHECK(!cqp_fabric_gid_adapts(true, true, false));
	CHECK(cqp_fabric_gid_adapts(true, false, true));
	CHECK(!cqp_fabric_gid_adapts(false, true, true));
}

/* An address handle's sgid_index has 8 bits: a table longer than 256
 * entries (rxe has 1024) may hold the chosen GID past 255. */
static void test_sgid_index(void)
{
	struct cqp_gid_cand c[300];
	uint8_t local[16];

	memset(c, 0, sizeof(c));
	c[0].valid = true;
	c[0].type = V2;
	CHECK(inet_pton(AF_INET6, "fe80::1", c[0].gid.raw) == 1);
	c[280].valid = true;
	c[280].type = V2;
	CHECK(inet_pton(AF_INET6, "::ffff:198.18.9.1", c[280].gid.raw) == 1);
	memcpy(local, c[280].gid.raw, 16);
	CHECK(cqp_fabric_pick_gid(c, 300, local, true) == 280);
	CHECK(cqp_fabric_sgid_index_ok(255, "rxe0") == 0);
	cqp_errclear();
	CHECK(cqp_fabric_sgid_index_ok(280, "rxe0") == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "GID index 280") != NULL);
	CHECK(strstr(cqp_errmsg(), "0..255") != NULL);
	CHECK(strstr(cqp_errmsg(), "--gid-index") != NULL);
}

/* What a refused --gid-index lists: the usable entries only, in order,
 * and a table too long for the message cut with "...". */
static void test_usable_gids(void)
{
	static const struct gid_row bnxt_v6[] = {
	    {"fe80::20a:f7ff:fe11:2233", V1},
	    {"", V2},
	    {"2001:db8:1::5", V2},
	    END};
	static const struct gid_row none[] = {{"", V2}, {"", V1}, END};
	struct cqp_gid_cand c[64];
	char buf[512], small[48];
	unsigned n;

	n = load(bnxt_v6, c);
	cqp_fabric_usable_gids(c, n, buf, sizeof(buf));
	CHECK_STR(buf, "0 (fe80::20a:f7ff:fe11:2233, RoCE v1), "
		       "2 (2001:db8:1::5, RoCE v2)");
	cqp_fabric_usable_gids(c, n, small, sizeof(small));
	CHECK_STR(small, "0 (fe80::20a:f7ff:fe11:2233, RoCE v1), ...");
	n = load(none, c);
	cqp_fabric_usable_gids(c, n, buf, sizeof(buf));
	CHECK_STR(buf, "none");
}

static struct cqp_port_facts port(uint32_t mtu, bool eth, uint16_t lid,
				  uint64_t prefix)
{
	struct cqp_port_facts f = {.active_mtu = mtu,
				   .ethernet = eth,
				   .lid = lid,
				   .subnet_prefix = prefix};
	return f;
}

static void test_path_mtu(void)
{
	/* mlx5 RoCE on a 9000-byte netdev, bnxt_re on a 1500-byte one. */
	struct cqp_port_facts jumbo = port(4096, true, 0, 0);
	struct cqp_port_facts std = port(1024, true, 0, 0);
	struct cqp_port_facts ib = port(4096, false, 3, 0xfe80);
	uint32_t mtu = 0;

	CHECK(cqp_fabric_path_mtu(&jumbo, &std, 0, &mtu) == 0 && mtu == 1024);
	CHECK(cqp_fabric_path_mtu(&std, &jumbo, 0, &mtu) == 0 && mtu == 1024);
	CHECK(cqp_fabric_path_mtu(&jumbo, &jumbo, 0, &mtu) == 0 && mtu == 4096);
	CHECK(cqp_fabric_path_mtu(&jumbo, &jumbo, 2048, &mtu) == 0 &&
	      mtu == 2048);
	CHECK(cqp_fabric_path_mtu(&ib, &ib, 0, &mtu) == 0 && mtu == 4096);
	CHECK(cqp_fabric_path_mtu(&jumbo, &std, 1024, &mtu) == 0 &&
	      mtu == 1024);
	/* Above the peer's: usage, naming --mtu and both sides. */
	CHECK(cqp_fabric_path_mtu(&jumbo, &std, 2048, &mtu) == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "--mtu 2048") != NULL);
	CHECK(strstr(cqp_errmsg(), "4096 here, 1024 on the peer") != NULL);
	CHECK(strstr(cqp_errmsg(), "peer's") != NULL);
	CHECK(cqp_fabric_path_mtu(&std, &jumbo, 4096, &mtu) == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "local") != NULL);
	{
		struct cqp_port_facts bad = port(1500, true, 0, 0);

		CHECK(cqp_fabric_path_mtu(&jumbo, &bad, 0, &mtu) ==
		      -CQP_E_DEVICE);
	}
}

static void test_grh(void)
{
	const uint64_t fe80 = 0xfe80000000000000ull,
		       site = 0xfec0000000000001ull;
	struct cqp_port_facts a = port(4096, false, 3, fe80);
	struct cqp_port_facts b = port(4096, false, 7, fe80);
	struct cqp_port_facts other = port(4096, false, 9, site);
	struct cqp_port_facts nolid = port(4096, false, 0, fe80);
	struct cqp_port_facts roce = port(1024, true, 0, fe80);

	/* Same IB subnet, LIDs on both: LID routing, as perftest does. */
	CHECK(!cqp_fabric_use_grh(&a, &b, false));
	CHECK(cqp_fabric_use_grh(&a, &b, true));
	CHECK(cqp_fabric_use_grh(&a, &other, false));
	CHECK(cqp_fabric_use_grh(&a, &nolid, false));
	CHECK(cqp_fabric_use_grh(&roce, &roce, false));
	/* A multicast LID is no unicast destination. */
	{
		struct cqp_port_facts mc = port(4096, false, 0xc001, fe80);

		CHECK(cqp_fabric_use_grh(&a, &mc, false));
	}
}

static void test_transport(void)
{
	CHECK(cqp_fabric_transport_ok(IBV_TRANSPORT_IB, "mlx5_0", true,
				      false) == 0);
	/* cxgb4 and irdma in iWARP mode. */
	CHECK(cqp_fabric_transport_ok(IBV_TRANSPORT_IWARP, "cxgb4_0", true,
				      false) == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "cxgb4_0 is an iWARP device") != NULL);
	CHECK(strstr(cqp_errmsg(), "cm_event_stress can") != NULL);
	CHECK(cqp_fabric_transport_ok(IBV_TRANSPORT_IWARP, "irdma0", false,
				      true) == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "no UD") != NULL);
	CHECK(cqp_fabric_transport_ok(IBV_TRANSPORT_USNIC_UDP, "usnic_0", false,
				      true) == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "usNIC") != NULL);
}

static void test_mcast(void)
{
	CHECK(cqp_fabric_mcast_ok(true, "mlx5_1") == 0);
	CHECK(cqp_fabric_mcast_ok(false, "mlx5_0") == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "--mcast: mlx5_0 is InfiniBand") != NULL);
}

static void test_cm_device(void)
{
	CHECK(cqp_fabric_cm_device_ok("mlx5_1", "mlx5_1", "10.0.0.2", true) ==
	      0);
	/* The oob host name resolves to the management network's NIC. */
	CHECK(cqp_fabric_cm_device_ok("mlx5_0", "mlx5_1", "node2", true) ==
	      -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "reaches node2 through mlx5_0, but the "
				   "queue pairs are on mlx5_1") != NULL);
	CHECK(strstr(cqp_errmsg(), "--cm-addr") != NULL);
	CHECK(cqp_fabric_cm_device_ok("mlx5_0", "mlx5_1", "", false) ==
	      -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "came in on mlx5_0") != NULL);
}

static void test_async(void)
{
	CHECK(cqp_fabric_async_fatal(IBV_EVENT_CQ_ERR, 0, 1));
	CHECK(cqp_fabric_async_fatal(IBV_EVENT_QP_FATAL, 0, 1));
	CHECK(cqp_fabric_async_fatal(IBV_EVENT_PORT_ERR, 1, 1));
	/* The other port of a dual-port NIC: not this run's. */
	CHECK(!cqp_fabric_async_fatal(IBV_EVENT_PORT_ERR, 2, 1));
	CHECK(cqp_fabric_async_fatal(IBV_EVENT_DEVICE_FATAL, 0, 1));
	/* What a healthy fabric says now and then. */
	CHECK(!cqp_fabric_async_fatal(IBV_EVENT_COMM_EST, 0, 1));
	CHECK(!cqp_fabric_async_fatal(IBV_EVENT_PORT_ACTIVE, 0, 1));
	CHECK(!cqp_fabric_async_fatal(IBV_EVENT_GID_CHANGE, 0, 1));
	CHECK(!cqp_fabric_async_fatal(IBV_EVENT_SRQ_LIMIT_REACHED, 0, 1));
	CHECK(!cqp_fabric_async_fatal(IBV_EVENT_QP_LAST_WQE_REACHED, 0, 1));
	CHECK(cqp_fabric_async_on_qp(IBV_EVENT_QP_FATAL));
	CHECK(!cqp_fabric_async_on_qp(IBV_EVENT_CQ_ERR));
	CHECK(!cqp_fabric_async_on_qp(IBV_EVENT_PORT_ERR));
}

static uint32_t overhead(bool eth, enum ibv_gid_type type, bool ipv4, bool grh,
			 bool vlan, const char **name)
{
	struct cqp_wire w = {.ethernet = eth,
			     .gid_type = type,
			     .ipv4 = ipv4,
			     .grh = grh,
			     .vlan = vlan};

	return cqp_fabric_ud_overhead(&w, name);
}

static void test_overhead(void)
{
	const char *name = NULL;

	/* 14 Eth + 20 IPv4 + 8 UDP + 12 BTH + 8 DETH + 4 ICRC + 4 FCS + 20
	 * preamble and gap. */
	CHECK(overhead(true, V2, true, true, false, &name) == 90);
	CHECK_STR(name, "RoCE v2 over IPv4");
	CHECK(overhead(true, V2, false, true, false, &name) == 110);
	CHECK_STR(name, "RoCE v2 over IPv6");
	/* RoCE v1: Ethernet, then the 40-byte GRH; no IP, no UDP, whatever
	 * the GID's address looks like. */
	CHECK(overhead(true, V1, true, true, false, &name) == 102);
	CHECK_STR(name, "RoCE v1");
	CHECK(overhead(true, V1, false, true, false, &name) == 102);
	/* A GID on a VLAN netdev: 4 bytes of 802.1Q tag a frame. */
	CHECK(overhead(true, V2, true, true, true, &name) == 94);
	CHECK_STR(name, "RoCE v2 over IPv4, VLAN");
	CHECK(overhead(true, V2, false, true, true, &name) == 114);
	CHECK_STR(name, "RoCE v2 over IPv6, VLAN");
	CHECK(overhead(true, V1, false, true, true, &name) == 106);
	CHECK_STR(name, "RoCE v1, VLAN");
	/* 8 LRH + 12 BTH + 8 DETH + 4 ICRC + 2 VCRC (+ 40 GRH). */
	CHECK(overhead(false, IB, false, false, false, &name) == 34);
	CHECK_STR(name, "InfiniBand");
	CHECK(overhead(false, IB, false, true, false, &name) == 74);
	CHECK_STR(name, "InfiniBand with GRH");
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* mkdir -p of the file's folder. */
	for (slash = strchr(path + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Which GIDs sit on a VLAN netdev, from a sysfs tree as the kernel lays
 * it out: gid_attrs/ndevs/N names the netdev, its uevent says vlan. */
static void test_vlan(void)
{
	char root[] = "/tmp/cqperf-sysfs.XXXXXX";
	char cmd[64];

	CHECK(mkdtemp(root) != NULL);
	put(root, "class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0",
	    "enp1s0f1\n");
	put(root, "class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/3",
	    "enp1s0f1\n");
	put(root, "class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/5",
	    "enp1s0f1.100\n");
	put(root, "class/net/enp1s0f1/uevent",
	    "INTERFACE=enp1s0f1\nIFINDEX=3\n");
	put(root, "class/net/enp1s0f1.100/uevent",
	    "DEVTYPE=vlan\nINTERFACE=enp1s0f1.100\nIFINDEX=7\n");
	CHECK(!cqp_fabric_gid_vlan(root, "mlx5_1", 1, 3));
	CHECK(cqp_fabric_gid_vlan(root, "mlx5_1", 1, 5));
	/* No ndev (InfiniBand, an empty entry, no sysfs): no tag. */
	CHECK(!cqp_fabric_gid_vlan(root, "mlx5_1", 1, 9));
	CHECK(!cqp_fabric_gid_vlan(root, "mlx5_0", 1, 5));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

static void test_ud_len(void)
{
	CHECK(cqp_fabric_ud_len_ok(1064, 1024, true));
	CHECK(!cqp_fabric_ud_len_ok(1024, 1024, true));
	CHECK(cqp_fabric_ud_len_ok(1024, 1024, false));
	CHECK(cqp_fabric_ud_len_ok(1064, 1024, false));
	CHECK(!cqp_fabric_ud_len_ok(1063, 1024, false));
	CHECK(!cqp_fabric_ud_len_ok(1000, 1024, false));
}

static void test_cq_mod(void)
{
	/* mlx5: count 16 bits, period 12 bits (4095 us). */
	CHECK(cqp_fabric_cq_mod_ok(64, 4095, 65535, 4095, "mlx5_0") == 0);
	CHECK(cqp_fabric_cq_mod_ok(64, 5000, 65535, 4095, "mlx5_0") ==
	      -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "--cq-mod 64,5000") != NULL);
	CHECK(strstr(cqp_errmsg(), "4095 us") != NULL);
	/* Caps not reported: leave it to ibv_modify_cq. */
	CHECK(cqp_fabric_cq_mod_ok(64, 5000, 0, 0, "rxe0") == 0);
}

/* A device that grants at most `limit` bytes inline and fails above it
 * without setting errno, as bnxt_re does. */
static bool fits(void *arg, uint32_t v)
{
	return v <= *(uint32_t *)arg;
}

static void test_bisect(void)
{
	uint32_t bnxt = 96, rxe = 512, none = 0, mlx5 = 220;

	CHECK(cqp_fabric_bisect(236, fits, &bnxt) == 96);
	CHECK(cqp_fabric_bisect(236, fits, &rxe) == 236);
	CHECK(cqp_fabric_bisect(236, fits, &none) == 0);
	CHECK(cqp_fabric_bisect(236, fits, &mlx5) == 220);
	CHECK(cqp_fabric_bisect(0, fits, &rxe) == 0);
}

static void test_port_record(void)
{
	struct cqp_port_facts a =
	    port(2048, false, 0x1234, 0xfe80000000000000ull);
	struct cqp_port_facts b;
	struct cqp_kv_writer w;
	char buf[256];

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_port_facts_encode(&a, &w);
	memset(&b, 0, sizeof(b));
	CHECK(cqp_port_facts_decode(&b, buf, w.len) == 0);
	CHECK(b.active_mtu == 2048 && !b.ethernet && b.lid == 0x1234 &&
	      b.subnet_prefix == 0xfe80000000000000ull);
	CHECK(!b.has_gid);
	/* The GID travels, and whether -x chose it; a peer that does not
	 * send them leaves has_gid false. */
	a.ethernet = true;
	a.has_gid = true;
	a.gid_given = true;
	CHECK(inet_pton(AF_INET6, "::ffff:198.19.5.1", a.gid.raw) == 1);
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_port_facts_encode(&a, &w);
	memset(&b, 0, sizeof(b));
	CHECK(cqp_port_facts_decode(&b, buf, w.len) == 0);
	CHECK(b.has_gid && b.gid_given &&
	      memcmp(a.gid.raw, b.gid.raw, 16) == 0);
	CHECK(cqp_port_facts_decode(&b, "mtu=1024\n", 9) < 0);
	{
		const char *bad = "mtu=1024\nlink=x\nlid=1\nprefix=0\n";

		CHECK(cqp_port_facts_decode(&b, bad, strlen(bad)) ==
		      -CQP_E_PROTO);
	}
	{
		const char *bad = "mtu=1024\nlink=eth\nlid=1\nprefix=zz\n";

		CHECK(cqp_port_facts_decode(&b, bad, strlen(bad)) ==
		      -CQP_E_PROTO);
	}
}

/* The endpoint record: each QP's buffer and rd_atom travel; a peer that
 * sends none (an older one) leaves them 0; a bad one is named. */
static void test_endpoints(void)
{
	struct cqp_endpoint e[2] = {{.qpn = 17,
				     .psn = 5,
				     .addr = 0x7f0012345000ull,
				     .rkey = 0xabcd,
				     .rd_atom = 16},
				    {.qpn = 18, .psn = 6}},
			    got[2];
	char buf[1024], old[] = "count=1\nqp0_qpn=3\nqp0_psn=4\nqp0_lid=0\n"
				"qp0_gid_index=1\nqp0_gid=::1\n";
	struct cqp_kv_writer w;

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_endpoints_encode(e, 2, &w);
	CHECK(cqp_endpoints_decode(got, 2, buf, w.len) == 0);
	CHECK(got[0].addr == e[0].addr && got[0].rkey == 0xabcd &&
	      got[0].rd_atom == 16 && got[1].qpn == 18 && got[1].addr == 0 &&
	      got[1].rkey == 0 && got[1].rd_atom == 0);
	CHECK(cqp_endpoints_decode(got, 1, old, strlen(old)) == 0);
	CHECK(got[0].qpn == 3 && got[0].addr == 0 && got[0].rd_atom == 0);
	snprintf(buf, sizeof(buf), "%sqp0_rd_atom=300\n", old);
	CHECK(cqp_endpoints_decode(got, 1, buf, strlen(buf)) < 0 &&
	      strstr(cqp_errmsg(), "qp0_rd_atom"));
	cqp_errclear();
}

int main(void)
{
	test_endpoints();
	test_port_record();
	test_gid_choice();
	test_usable_gids();
	test_gid_for_peer();
	test_sgid_index();
	test_path_mtu();
	test_grh();
	test_transport();
	test_mcast();
	test_cm_device();
	test_async();
	test_overhead();
	test_vlan();
	test_ud_len();
	test_cq_mod();
	test_bisect();
	return check_done("test_fabric");
}
