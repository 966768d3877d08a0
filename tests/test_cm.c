/* SPDX-License-Identifier: BSD-2-Clause */
/* cm_event_stress pieces that need no device: the private data format
 * (every length, every corruption caught, an event copy's bound), per
 * event type rows and their exchange, and how event rows and the run
 * summary render. */
#include "check.h"
#include "cm_loop.h"
#include "cm_storm.h"
#include "error.h"
#include "kv.h"
#include "report.h"
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_private_data(void)
{
	uint8_t buf[CQP_PD_REP_MAX];
	uint32_t seq;
	unsigned lengths = 0;
	uint64_t seen = 0;

	/* Lengths cycle through every size the room allows. */
	for (uint32_t s = 0; s < 200; s++) {
		uint8_t n = cqp_pd_fill(buf, CQP_PD_REQ_MAX, CQP_PD_REQ, s);

		CHECK(n >= 16 && n <= CQP_PD_REQ_MAX);
		if (!(seen & (1ull << (n - 16)))) {
			seen |= 1ull << (n - 16);
			lengths++;
		}
		/* The transport pads: the true length travels inside. */
		CHECK(cqp_pd_check(buf, CQP_PD_REQ_MAX, CQP_PD_REQ, &seq) ==
			  0 &&
		      seq == s);
	}
	CHECK(lengths == CQP_PD_REQ_MAX - 16 + 1);

	cqp_pd_fill(buf, sizeof(buf), CQP_PD_ACC, 77);
	CHECK(cqp_pd_check(buf, sizeof(buf), CQP_PD_REJ, &seq) < 0);
	CHECK(cqp_errcode() == CQP_E_PROTO && strstr(cqp_errmsg(), "kind"));
	cqp_errclear();
	CHECK(cqp_pd_check(buf, 10, CQP_PD_ACC, &seq) < 0); /* truncated */
	cqp_errclear();
	/* Any byte of the payload flipped: the checksum says so. */
	for (unsigned i = 16; i < 16u + 77u % (CQP_PD_REP_MAX - 16 + 1); i++) {
		buf[i] ^= 1;
		CHECK(cqp_pd_check(buf, sizeof(buf), CQP_PD_ACC, &seq) < 0);
		buf[i] ^= 1;
		cqp_errclear();
	}
	CHECK(cqp_pd_check(buf, sizeof(buf), CQP_PD_ACC, &seq) == 0 &&
	      seq == 77);
	/* A header claiming more than arrived. */
	buf[8] = 200;
	CHECK(cqp_pd_check(buf, sizeof(buf), CQP_PD_ACC, &seq) < 0);
	cqp_errclear();
}

/* iWARP may carry more private data than an event copy holds: it must
 * not be copied past the copy's end. */
static void test_copy_oversize(void)
{
	struct cqp_cm_ev *ev = malloc(sizeof(*ev));
	struct rdma_cm_id id = {.ps = RDMA_PS_TCP};
	struct rdma_cm_event e = {.id = &id,
				  .event = RDMA_CM_EVENT_CONNECT_REQUEST};
	uint8_t pd[255];
	uint32_t seq;

	memset(pd, 0xee, sizeof(pd));
	e.param.conn.private_data = pd;
	e.param.conn.private_data_len = sizeof(pd);
	cqp_cm_ev_copy(ev, &e, 1);
	CHECK(ev->pdata_len <= CQP_CM_PDATA_MAX);
	/* Nothing kept, and the check says why. */
	CHECK(ev->pdata_len == 0 && ev->pdata_oversize == 255);
	CHECK(cqp_pd_check_ev(ev, CQP_PD_REQ, &seq) < 0);
	CHECK(cqp_errcode() == CQP_E_PROTO &&
	      strstr(cqp_errmsg(), "private data of 255 bytes"));
	cqp_errclear();

	/* What fits is kept whole. */
	e.param.conn.private_data_len = CQP_CM_PDATA_MAX;
	cqp_cm_ev_copy(ev, &e, 1);
	CHECK(ev->pdata_len == CQP_CM_PDATA_MAX && ev->pdata_oversize == 0);
	CHECK(ev->pdata[CQP_CM_PDATA_MAX - 1] == 0xee);
	free(ev);
}

static void test_rows(void)
{
	struct cqp_cm_stats *st = malloc(sizeof(*st));
	struct cqp_row rows[8], back[8];
	char buf[8192];
	struct cqp_kv_writer w;
	unsigned n, m;

	cqp_cm_stats_init(st);
	for (uint64_t i = 1; i <= 100; i++)
		cqp_cm_stats_add(st, RDMA_CM_EVENT_ESTABLISHED, i * 1000);
	cqp_cm_stats_add(st, RDMA_CM_EVENT_DISCONNECTED, 0);
	cqp_cm_stats_add(st, RDMA_CM_EVENT_DISCONNECTED, 0);
	n = cqp_cm_stats_rows(st, "server", 2.0, rows, 0, 8);
	CHECK(n == 2);
	CHECK_STR(rows[0].label, "RDMA_CM_EVENT_ESTABLISHED");
	CHECK_STR(rows[0].side, "server");
	CHECK(rows[0].count == 100);
	CHECK_NEAR(rows[0].rate_per_s, 50, 1e-9);
	CHECK_NEAR(rows[0].lat_us.p50, 50, 50.0 / 128);
	CHECK_NEAR(rows[0].lat_us.max, 100, 100.0 / 128);
	CHECK_STR(rows[1].label, "RDMA_CM_EVENT_DISCONNECTED");
	CHECK(rows[1].count == 2 && isnan(rows[1].lat_us.p50));

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_cm_rows_encode(rows, n, &w);
	CHECK(!w.overflow);
	CHECK(cqp_cm_rows_decode(buf, w.len, "server", back, 0, 8, &m) == 0);
	CHECK(m == 2 && back[0].count == 100 && back[1].count == 2);
	CHECK_NEAR(back[0].lat_us.p99, rows[0].lat_us.p99, 1e-6);
	CHECK_STR(back[1].side, "server");
	free(st);
}

static void test_render(void)
{
	struct cqp_params p;
	struct cqp_row rows[2];
	struct cqp_figure figs[3] = {
	    {"", "connections", 700, true},
	    {"client", "events", 2800, true},
	    {"client", "ack_ns_per_event", 812.5, false},
	};
	struct cqp_report r;
	char *s;

	cqp_params_defaults(&p, CQP_TOOL_CM_EVENT_STRESS);
	memset(rows, 0, sizeof(rows));
	memset(&r, 0, sizeof(r));
	snprintf(rows[0].side, sizeof(rows[0].side), "client");
	snprintf(rows[0].label, sizeof(rows[0].label),
		 "RDMA_CM_EVENT_ESTABLISHED");
	rows[0].count = 700;
	rows[0].rate_per_s = 350;
	rows[0].has_lat = true;
	rows[0].lat_us.p50 = 12.5;
	rows[1] = rows[0];
	snprintf(rows[1].side, sizeof(rows[1].side), "server");
	rows[1].lat_us.p50 = NAN;
	r.tool = CQP_TOOL_CM_EVENT_STRESS;
	r.title = "RDMA CM event storm";
	r.params = &p;
	r.rows = rows;
	r.nrows = 2;
	r.summary = figs;
	r.nsummary = 3;

	s = render(&r);
	CHECK(s && strstr(s, "side") && strstr(s, "events/s"));
	CHECK(s && strstr(s, "RDMA CM's choice for each connection"));
	CHECK(s && !strstr(s, "#bytes") && !strstr(s, "one-way"));
	CHECK(s && strstr(s, " Summary: connections 700\n"));
	CHECK(s &&
	      strstr(s, " client: events 2800, ack_ns_per_event 812.50\n"));
	free(s);

	p.output = CQP_OUT_JSON;
	s = render(&r);
	CHECK(s && strstr(s, "\"side\": \"client\"") &&
	      strstr(s, "\"event\": \"RDMA_CM_EVENT_ESTABLISHED\""));
	CHECK(s && strstr(s, "\"count\": 700") &&
	      strstr(s, "\"rate_per_s\": 350"));
	CHECK(s && strstr(s, "\"p50\": null")); /* no causing call */
	CHECK(s && strstr(s, "\"summary\": {") &&
	      strstr(s, "\"connections\": 700") && strstr(s, "\"client\": {") &&
	      strstr(s, "\"ack_ns_per_event\": 812.5"));
	CHECK(s && !strstr(s, "\"bytes\""));
	free(s);

	p.output = CQP_OUT_CSV;
	s = render(&r);
	CHECK(s && !strncmp(s, "side,event,count,rate_per_s,lat_us_min", 38));
	CHECK(s && strstr(s, "client,RDMA_CM_EVENT_ESTABLISHED,700,350,"));
	CHECK(s && strstr(s, "# summary: connections=700 client.events=2800 "
			     "client.ack_ns_per_event=812.5\n"));
	free(s);
}

int main(void)
{
	test_private_data();
	test_rows();
	test_render();
	test_copy_oversize();
	return check_done("test_cm");
}
