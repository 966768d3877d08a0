/* SPDX-License-Identifier: BSD-2-Clause */
/* UD pieces that need no device: the --verify pattern and sequence
 * recovery, the delivery figures (loss, wire efficiency), their exchange
 * between the sides, how every format renders them, and the UD options'
 * bounds and conflicts. */
#include "engine/bw.h"
#include "check.h"
#include "base/error.h"
#include "base/kv.h"
#include "base/options.h"
#include "report/report.h"
#include "report/results.h"
#include "render.h"
#include "engine/ud.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_pattern(void)
{
	uint8_t buf[4096];
	uint32_t sizes[] = {1, 2, 7, 8, 9, 64, 4096};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i];
		uint64_t seq = 0x0123456789abcdefull + i;

		cqp_pattern_fill(buf, n, seq);
		CHECK(cqp_pattern_check(buf, n, seq) == -1);
		/* Every byte matters: flip each and the check points at it. */
		for (uint32_t k = 0; k<n; k += n> 64 ? 97 : 1) {
			buf[k] ^= 0x40;
			CHECK(cqp_pattern_check(buf, n, seq) == (int64_t)k);
			buf[k] ^= 0x40;
		}
		/* Another sequence's payload is told apart. */
		CHECK(cqp_pattern_check(buf, n, seq + 1) != -1);
	}
	/* Full sequences travel in 8 bytes or more. */
	cqp_pattern_fill(buf, 64, 123456789012ull);
	CHECK(cqp_pattern_seq(buf, 64, 0) == 123456789012ull);
	/* Under 8 bytes only the low bytes travel: the next sequence at or
	 * after the expected one that ends in them (gaps are losses). */
	cqp_pattern_fill(buf, 2, 0x10005);
	CHECK(cqp_pattern_seq(buf, 2, 0x10000) == 0x10005);
	CHECK(cqp_pattern_seq(buf, 2, 0x10006) == 0x20005); /* wrapped */
	cqp_pattern_fill(buf, 1, 300);
	CHECK(cqp_pattern_seq(buf, 1, 290) == 300);
}

static void test_delivery_figures(void)
{
	struct cqp_row row;

	memset(&row, 0, sizeof(row));
	CHECK(isnan(cqp_row_loss_pct(&row))); /* not a UD row */
	row.has_delivery = true;
	CHECK(isnan(cqp_row_loss_pct(&row))); /* nothing sent */
	row.sent = 1000;
	row.received = 990;
	CHECK_NEAR(cqp_row_loss_pct(&row), 1.0, 1e-12);
	/* Multicast: every server QP should get every message. */
	row.fanout = 4;
	row.received = 3000;
	CHECK_NEAR(cqp_row_loss_pct(&row), 25.0, 1e-12);
	CHECK_NEAR(cqp_wire_eff_pct(256, 64), 80.0, 1e-12);
	/* RoCE v2 over IPv4: 90 bytes besides the payload. */
	CHECK_NEAR(cqp_wire_eff_pct(4096, 90), 100.0 * 4096 / 4186, 1e-12);
	CHECK(isnan(cqp_wire_eff_pct(4096, 0)));
}

/* The client knows sent, the server received: merged both ways. */
static void test_delivery_exchange(void)
{
	struct cqp_row client, server;
	char buf[512];
	struct cqp_kv_writer w;

	memset(&client, 0, sizeof(client));
	memset(&server, 0, sizeof(server));
	client.has_delivery = server.has_delivery = true;
	client.sent = 3000;
	client.fanout = 1;
	server.received = 2900;
	server.rx_dry = 7;

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_row_figures_encode(&server, &w);
	CHECK(cqp_row_figures_decode(&client, buf, w.len) == 0);
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	client.received = 2900; /* already merged: encode what it knows */
	cqp_row_figures_encode(&client, &w);
	CHECK(cqp_row_figures_decode(&server, buf, w.len) == 0);
	CHECK(client.sent == 3000 && client.received == 2900 &&
	      client.rx_dry == 7);
	CHECK(server.sent == 3000 && server.received == 2900 &&
	      server.rx_dry == 7);
	CHECK_NEAR(cqp_row_loss_pct(&server), 100.0 / 30, 1e-12);

	/* Lost exchanges (ud_send_lat) travel alone. */
	memset(&client, 0, sizeof(client));
	memset(&server, 0, sizeof(server));
	client.has_lost = true;
	client.lost = 22;
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_row_figures_encode(&client, &w);
	CHECK(cqp_row_figures_decode(&server, buf, w.len) == 0);
	CHECK(server.has_lost && server.lost == 22 && !server.has_delivery);

	/* A malformed figure is a protocol error, not a silent zero. */
	CHECK(cqp_row_figures_decode(&server, "has_delivery=1\nsent=lots\n",
				     25) < 0);
	CHECK(cqp_errcode() == CQP_E_PROTO);
	cqp_errclear();
}

static void test_render(void)
{
	struct cqp_params p;
	struct cqp_row rows[2];
	struct cqp_report r;
	char *s;

	cqp_params_defaults(&p, CQP_TOOL_UD_SEND_BW);
	memset(rows, 0, sizeof(rows));
	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 2; i++) {
		rows[i].bytes = i ? 4096 : 256;
		rows[i].iterations = 1000;
		rows[i].has_bw = true;
		rows[i].bw_avg_gbps = rows[i].bw_peak_gbps = 1;
		rows[i].has_delivery = true;
		rows[i].sent = 1000;
		rows[i].fanout = 1;
		rows[i].client.valid = rows[i].server.valid = true;
		rows[i].server.has_rx_mem = true;
		rows[i].server.rx_mem_bytes = 512 * 4136;
		rows[i].client.has_rx_mem = true;
	}
	rows[0].received = 1000;
	rows[1].received = 950;
	rows[1].rx_dry = 3;
	r.tool = CQP_TOOL_UD_SEND_BW;
	r.title = "UD SEND bandwidth";
	r.params = &p;
	r.is_client = true;
	r.rows = rows;
	r.nrows = 2;
	/* RoCE v2 over IPv4: 90 bytes a packet besides the payload. */
	r.dev.wire_overhead = 90;
	snprintf(r.dev.wire, sizeof(r.dev.wire), "RoCE v2 over IPv4");

	s = render(&r);
	CHECK(s && strstr(s, "loss%") && strstr(s, "wire eff%"));
	CHECK(s && strstr(s, "74.0") && strstr(s, "97.8"));
	CHECK(s && strstr(s, "Wire efficiency: payload / (payload + 90 B a "
			     "packet on RoCE v2 over IPv4)"));
	CHECK(s && strstr(s, "Loss at 4096 B: 5.00%; the server's receives "
			     "ran out 3 times (raise --rx-depth)"));
	CHECK(s && !strstr(s, "Loss at 256 B"));
	CHECK(s && strstr(s, "Receive memory registered: client 0 B, server "
			     "2.0 MiB"));
	free(s);

	rows[1].rx_dry = 0;
	s = render(&r);
	CHECK(s && strstr(s, "with receives always posted: dropped by the "
			     "network or the device"));
	free(s);

	p.output = CQP_OUT_JSON;
	s = render(&r);
	CHECK(s && strstr(s, "\"sent\": 1000") &&
	      strstr(s, "\"received\": 950"));
	CHECK(s && strstr(s, "\"loss_pct\": 5,") && strstr(s, "\"rx_dry\": 0"));
	CHECK(s && strstr(s, "\"wire_eff_pct\": 73.9884393,"));
	CHECK(s && strstr(s, "\"wire\": \"RoCE v2 over IPv4\"") &&
	      strstr(s, "\"wire_overhead_bytes\": 90"));
	CHECK(s && strstr(s, "\"rx_mem_bytes\": 2117632"));
	free(s);

	p.output = CQP_OUT_CSV;
	s = render(&r);
	CHECK(s && strstr(s, ",sent,received,loss_pct,rx_dry,wire_eff_pct,"));
	CHECK(s && strstr(s, ",1000,950,5,0,97.8499761,"));
	CHECK(s && strstr(s, "server_rx_mem_bytes"));
	free(s);
}

static int parse_into(struct cqp_params *p, enum cqp_tool tool,
		      const char *args)
{
	char copy[512], *argv[32];
	int argc = 0;
	FILE *devnull = fopen("/dev/null", "w");
	int rc;

	snprintf(copy, sizeof(copy), "x %s", args);
	for (char *t = strtok(copy, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	rc = cqp_params_parse(p, tool, argc, argv, devnull);
	fclose(devnull);
	return rc;
}

static int parse(enum cqp_tool tool, const char *args)
{
	struct cqp_params p;

	return parse_into(&p, tool, args);
}

/* Bad UD options: exit-2 failures that name the option. */
static void test_options(void)
{
	static const struct {
		enum cqp_tool tool;
		const char *args, *needle;
	} bad[] = {
	    {CQP_TOOL_UD_SEND_BW, "--qkey 0x80000000", "--qkey"},
	    {CQP_TOOL_UD_SEND_BW, "--qkey key", "--qkey"},
	    {CQP_TOOL_UD_SEND_BW, "--mcast 10.0.0.1", "--mcast"},
	    {CQP_TOOL_UD_SEND_BW, "--mcast fe80::1", "--mcast"},
	    {CQP_TOOL_UD_SEND_BW, "--mcast ::ffff:10.1.1.1", "--mcast"},
	    {CQP_TOOL_UD_SEND_BW, "--mcast ff0e::1 --rdma-cm", "--rdma-cm"},
	    {CQP_TOOL_UD_SEND_BW, "--rdma-cm --qkey 5", "--qkey"},
	    {CQP_TOOL_UD_SEND_BW, "--retry-us 5000", "--retry-us"},
	    {CQP_TOOL_UD_SEND_LAT, "--retry-us 999", "--retry-us"},
	    {CQP_TOOL_UD_SEND_LAT, "--mcast ff0e::1", "--mcast"},
	    {CQP_TOOL_UD_SEND_LAT, "--post-list 4", "--post-list"},
	    {CQP_TOOL_CQ_EVENT_LAT, "--srq", "--srq"},
	    {CQP_TOOL_UD_SEND_BW, "-m 1000", "--mtu"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = parse(bad[i].tool, bad[i].args);

		CHECK(rc < 0 && cqp_errcode() == CQP_E_USAGE);
		if (rc >= 0 || !strstr(cqp_errmsg(), bad[i].needle))
			fprintf(stderr, "%s %s: '%s' should name %s\n",
				cqp_tool_name(bad[i].tool), bad[i].args,
				rc < 0 ? cqp_errmsg() : "(accepted)",
				bad[i].needle);
		CHECK(rc < 0 && strstr(cqp_errmsg(), bad[i].needle));
		cqp_errclear();
	}
	CHECK(parse(CQP_TOOL_UD_SEND_BW, "--mcast ff0e::1 -q 4 --srq") == 0);
	CHECK(parse(CQP_TOOL_UD_SEND_BW, "--mcast ::ffff:239.1.2.3") == 0);
	CHECK(parse(CQP_TOOL_UD_SEND_LAT,
		    "--retry-us 1000 --verify --rdma-cm -q 2") == 0);
	CHECK(parse(CQP_TOOL_UD_SEND_BW, "--qkey 0x7fffffff") == 0);
}

/* The server adopts what the client negotiated, strings included. */
static void test_negotiation(void)
{
	struct cqp_params c, s;
	char buf[2048];
	struct cqp_kv_writer w;

	cqp_params_defaults(&c, CQP_TOOL_UD_SEND_BW);
	snprintf(c.mcast, sizeof(c.mcast), "ff0e::42");
	c.srq = c.verify = true;
	c.qkey = 7;
	c.qps = 4;
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_params_encode(&c, CQP_TOOL_UD_SEND_BW, &w);
	cqp_params_defaults(&s, CQP_TOOL_UD_SEND_BW);
	snprintf(s.mcast, sizeof(s.mcast), "ff0e::99"); /* a stale value */
	CHECK(cqp_params_decode(&s, CQP_TOOL_UD_SEND_BW, buf, w.len) == 0);
	CHECK_STR(s.mcast, "ff0e::42");
	CHECK(s.srq && s.verify && s.qkey == 7 && s.qps == 4);
	/* A client without --mcast leaves the server unicast. */
	cqp_params_defaults(&c, CQP_TOOL_UD_SEND_BW);
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_params_encode(&c, CQP_TOOL_UD_SEND_BW, &w);
	CHECK(cqp_params_decode(&s, CQP_TOOL_UD_SEND_BW, buf, w.len) == 0);
	CHECK_STR(s.mcast, "");
	CHECK(!s.srq && s.qkey == 0x11111111);
}

/* --solicited: a receiver armed for solicited events sleeps between
 * solicited messages, so its receive queue must hold what arrives in
 * between, from every QP whose messages land in it, with their
 * countdowns running together: at most a quarter of --rx-depth. */
static void test_solicited(void)
{
	static const struct {
		enum cqp_tool tool;
		const char *args;
		uint32_t senders;
	} rows[] = {
	    {CQP_TOOL_UD_SEND_BW, "", 1},
	    {CQP_TOOL_UD_SEND_BW, "-q 8", 1},
	    {CQP_TOOL_UD_SEND_BW, "-q 8 --srq", 8},
	    {CQP_TOOL_UD_SEND_BW, "-q 4 --threads 2 --srq", 8},
	    /* Every server QP gets a copy of every message... */
	    {CQP_TOOL_UD_SEND_BW, "-q 3 --mcast ff0e::1", 3},
	    /* ... and with --srq all those copies share one queue. */
	    {CQP_TOOL_UD_SEND_BW, "-q 3 --mcast ff0e::1 --srq", 9},
	    {CQP_TOOL_CQ_POLL_BW, "-q 8 --threads 2", 1},
	};
	struct cqp_params p;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		CHECK(parse_into(&p, rows[i].tool, rows[i].args) == 0);
		CHECK(cqp_ud_rq_senders(&p) == rows[i].senders ||
		      !fprintf(stderr, "%s: %u senders a queue\n", rows[i].args,
			       cqp_ud_rq_senders(&p)));
	}
	CHECK(cqp_bw_sol_every(512, 1) == 128);
	CHECK(cqp_bw_sol_every(512, 8) == 16);
	CHECK(cqp_bw_sol_every(512, 9) == 14);
	CHECK(cqp_bw_sol_every(512, 1024) == 1);
	CHECK(cqp_bw_sol_every(2, 1) == 1);
	CHECK(cqp_bw_sol_every(512, 0) == 128);
	/* Every sender's mark due at once: what lands in between fits. */
	for (uint32_t n = 1; n <= 64; n++)
		CHECK(n * cqp_bw_sol_every(512, n) <= 128);
}

/* 24 bits on the wire name the latest request sent with them. */
static void test_seq_unwrap(void)
{
	const uint32_t m = 0xffffff;

	CHECK(cqp_seq_unwrap(10, 3, m) == 3);
	CHECK(cqp_seq_unwrap(10, 12, m) >= 10); /* never sent */
	CHECK(cqp_seq_unwrap((1ull << 24) + 5, 3, m) == (1ull << 24) + 3);
	CHECK(cqp_seq_unwrap((1ull << 24) + 5, m - 1, m) == m - 1);
	CHECK(cqp_seq_unwrap(3ull << 24, 0, m) == 2ull << 24);
	CHECK(cqp_seq_unwrap((3ull << 24) + 1, 0, m) == 3ull << 24);
}

/* --clients: which client sent a datagram, by QP number and address --
 * two nodes' clients may share a QP number -- and Jain's index. */
static void test_senders(void)
{
	struct cqp_senders t;
	union ibv_gid a = {.raw = {[10] = 0xff, [11] = 0xff, 198, 18, 0, 1}};
	union ibv_gid b = {.raw = {[10] = 0xff, [11] = 0xff, 198, 18, 0, 2}};
	uint32_t ta = cqp_endpoint_tail(&a, 0, true);
	uint32_t tb = cqp_endpoint_tail(&b, 0, true);
	uint8_t grh[40] = {0};
	struct ibv_wc wc = {.src_qp = 17, .wc_flags = IBV_WC_GRH};
	double same[3] = {2, 2, 2}, one[4] = {1, 0, 0, 0};

	CHECK(cqp_senders_init(&t, 300) == 0);
	for (uint32_t q = 0; q < 100; q++) {
		CHECK(cqp_senders_add(&t, 17 + q, ta, q) == 0);
		CHECK(cqp_senders_add(&t, 17 + q, tb, 100 + q) == 0);
	}
	CHECK(cqp_senders_add(&t, 17, ta, 7) < 0);
	CHECK(strstr(cqp_errmsg(), "clients 1 and 8") != NULL);
	CHECK(cqp_senders_find(&t, 17, ta) == 0);
	CHECK(cqp_senders_find(&t, 17, tb) == 100);
	CHECK(cqp_senders_find(&t, 116, tb) == 199);
	CHECK(cqp_senders_find(&t, 117, tb) == UINT32_MAX);
	/* RoCE v2 over IPv4: the IPv4 header in the GRH's last 20 bytes,
	 * its source address at 32..35. */
	grh[20] = 0x45;
	memcpy(grh + 32, b.raw + 12, 4);
	CHECK(cqp_senders_find(&t, wc.src_qp, cqp_sender_tail(&wc, grh)) ==
	      100);
	/* A GRH proper (IB, RoCE v1, v2 over IPv6): the source GID. */
	memset(grh, 0, sizeof(grh));
	grh[0] = 0x60;
	memcpy(grh + 8, a.raw, 16);
	CHECK(cqp_sender_tail(&wc, grh) == ta);
	/* No GRH: the LID. */
	wc.wc_flags = 0;
	wc.slid = 5;
	CHECK(cqp_sender_tail(&wc, grh) == cqp_endpoint_tail(&a, 5, false));
	cqp_senders_free(&t);

	CHECK(fabs(cqp_jain(same, 3) - 1.0) < 1e-12);
	CHECK(fabs(cqp_jain(one, 4) - 0.25) < 1e-12);
	CHECK(isnan(cqp_jain(one, 0)));
}

int main(void)
{
	test_senders();
	test_seq_unwrap();
	test_pattern();
	test_delivery_figures();
	test_delivery_exchange();
	test_render();
	test_options();
	test_negotiation();
	test_solicited();
	return check_done("test_ud");
}
