/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of the option table: strict numbers, ranges, unknown
 * options, conflicts, negotiation and --help coverage.
 * `test_options --list` prints "tool option" pairs for the man-page test. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/error.h"
#include "base/kv.h"
#include "base/options.h"

#define TOOL CQP_TOOL_CQ_POLL_BW

/* The descriptor: one bit and one name each, every bit in CQP_TOOL_ALL,
 * the class masks and defaults where the rows put them. */
static void test_tools(void)
{
	unsigned bits = 0;
	struct cqp_params p;

	for (unsigned i = 0; i < CQP_TOOL__N; i++) {
		const struct cqp_tool_desc *d = &cqp_tools[i];

		CHECK(d->tool && !(d->tool & (d->tool - 1)) &&
		      !(bits & d->tool));
		bits |= d->tool;
		CHECK(cqp_tool_desc(d->tool) == d);
		CHECK(strcmp(cqp_tool_name(d->tool), d->name) == 0);
		for (unsigned j = 0; j < i; j++)
			CHECK(strcmp(cqp_tools[j].name, d->name) != 0);
		cqp_params_defaults(&p, d->tool);
		CHECK(!d->size || p.size == d->size);
		CHECK(!d->warmup || p.warmup == d->warmup);
		CHECK(!d->depth ||
		      (p.tx_depth == d->depth && p.rx_depth == d->depth));
	}
	CHECK(bits == CQP_TOOL_ALL);
	CHECK(cqp_tool_desc(0) == NULL);
	CHECK(strcmp(cqp_tool_name(0), "cqperf") == 0);
	CHECK(CQP_TOOLS_WITH(CQP_TC_LAT | CQP_TC_UD) == CQP_TOOL_UD_SEND_LAT);
	CHECK((CQP_TOOLS_WITH(CQP_TC_RDMA) & CQP_TOOL_CM_EVENT_STRESS) == 0);
	CHECK(CQP_TOOLS_WITH(0) == CQP_TOOL_ALL);
}

static int parse_for(struct cqp_params *p, enum cqp_tool tool, const char *line)
{
	char buf[512], *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s %s", cqp_tool_name(tool), line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	cqp_errclear();
	return cqp_params_parse(p, tool, argc, argv, stdout);
}

static int parse(struct cqp_params *p, const char *line)
{
	return parse_for(p, TOOL, line);
}

/* A bad line must fail as a usage error whose message names `needle`. */
static void bad(const char *line, const char *needle)
{
	struct cqp_params p;
	int rc = parse(&p, line);

	check_count++;
	if (rc != -CQP_E_USAGE || !strstr(cqp_errmsg(), needle)) {
		check_failures++;
		fprintf(stderr, "'%s': rc %d, message '%s' (wanted '%s')\n",
			line, rc, cqp_errmsg(), needle);
	}
	CHECK(cqp_exit_status(cqp_errcode()) == 2);
}

static void test_good(void)
{
	struct cqp_params p;

	CHECK(parse(&p, "") == 0);
	CHECK(p.host[0] == '\0');
	CHECK(p.size == 65536 && p.iters == 1000 && p.port == CQP_DEFAULT_PORT);
	CHECK(p.cq_mode == CQP_CQ_POLL && p.gid_index == -1);

	CHECK(parse(&p, "-s 4K -n 20 --cq-mode event 198.18.0.1") == 0);
	CHECK(p.size == 4096 && p.iters == 20 && p.cq_mode == CQP_CQ_EVENT);
	CHECK_STR(p.host, "198.18.0.1");
	CHECK(parse(&p, "--size=2G --tx-depth 0x10 -x 3") == 0);
	CHECK(p.size == 2ull << 30 && p.tx_depth == 16 && p.gid_index == 3);
	CHECK(parse(&p, "-s 1m") == 0 && p.size == 1 << 20);
	CHECK(parse(&p, "-a --cq-mode hybrid --spin-us 0 --solicited") == 0);
	CHECK(p.all && p.cq_mode == CQP_CQ_HYBRID && p.spin_us == 0);
	CHECK(p.solicited);
	CHECK(parse(&p, "--cq-mod 16,10") == 0);
	CHECK(p.cq_mod_count == 16 && p.cq_mod_usec == 10);
	CHECK(parse(&p, "--cq-mod 4") == 0);
	CHECK(p.cq_mod_count == 4 && p.cq_mod_usec == 0);
	CHECK(parse(&p, "-D 5 --output json --report-gbits -q 4") == 0);
	CHECK(p.duration_s == 5 && p.output == CQP_OUT_JSON && p.qps == 4);
	CHECK(parse(&p, "-d rxe0 -i 1 -p 20000 --timeout 5 --persistent") == 0);
	CHECK_STR(p.ib_dev, "rxe0");
	CHECK(p.port == 20000 && p.timeout_s == 5 && p.persistent);
	CHECK(parse(&p, "-m 1024 -I 64 -l 8 --signal-every 4 --cpu 0") == 0);
	CHECK(p.mtu == 1024 && p.inline_size == 64 && p.post_list == 8);
	CHECK(p.signal_every == 4 && p.cpu == 0);
	CHECK(parse(&p, "--help") == CQP_PARSE_HELP);
	CHECK(parse(&p, "-V") == CQP_PARSE_VERSION);
}

static void test_bad(void)
{
	bad("-s 12x", "--size");
	bad("-s 1.5", "--size");
	bad("-s -5", "--size");
	bad("-t 0x0x10", "--tx-depth");
	bad("--tx-d", "--tx-depth");
	bad("-s 0", "--size");
	bad("-s 3G", "1..2G");
	bad("-s 4Q", "--size");
	bad("-s 18446744073709551616", "--size");
	bad("-n 0", "--iters");
	bad("-n 10k", "--iters"); /* iterations take no size suffix */
	bad("--tx-depth 0", "1..32768");
	bad("--tx-depth 32769", "--tx-depth");
	bad("-p 0", "--port");
	bad("-p 65536", "1..65535");
	bad("-m 100", "--mtu");
	bad("-m 3000", "--mtu");
	bad("-m 8192", "256..4096");
	bad("-x -2", "--gid-index");
	bad("-I -1", "--inline");
	bad("--cq-mode spin", "poll, event, hybrid, mem, empty:N (N "
			      "1..1000000), timer, ski, ski:rand or adaptive");
	bad("--output xml", "human, json or csv");
	bad("--cq-mod 0", "--cq-mod");
	bad("--cq-mod 5,x", "--cq-mod");
	bad("--cq-mod 70000", "--cq-mod");
	bad("--cq-mod ,5", "--cq-mod");
	bad("--bogus", "--bogus");
	bad("-Z", "-Z");
	bad("--all=1", "--all");
	bad("-s", "--size");
	bad("--size", "--size");
	bad("host1 host2", "host2");
	bad("-a -s 64", "--all");
	bad("-n 5 -D 5", "--duration");
	bad("--signal-every 200 -t 100", "--signal-every");
	bad("-l 64 -t 32", "--post-list");
	/* A post call chains at most 64: more was cut to 64 without a word
	 * while the report showed the value asked for. */
	bad("-l 65 -t 128", "--post-list");
	bad("-l 65 -t 128", "1..64");
	bad("-l 1024 -t 1024", "1..64");
	bad("--cq-depth 10 -t 64", "--cq-depth");
	bad("--poll-batch 0", "--poll-batch");
	bad("--qps 0", "--qps");
	bad("--max-mem 1K", "--max-mem");
	bad("--timeout 0", "--timeout");
	{
		struct cqp_params p;
		const struct cqp_option *o = cqp_option_find("tx-depth");

		cqp_params_defaults(&p, TOOL);
		CHECK(cqp_option_set(o, &p, " 5") == -CQP_E_USAGE);
		CHECK(cqp_option_set(o, &p, "+5") == -CQP_E_USAGE);
		CHECK(cqp_option_set(o, &p, "5 ") == -CQP_E_USAGE);
		CHECK(cqp_option_set(o, &p, "") == -CQP_E_USAGE);
		CHECK(cqp_option_set(o, &p, "0x") == -CQP_E_USAGE);
		CHECK(cqp_option_set(o, &p, "5") == 0 && p.tx_depth == 5);
	}
}

static void test_negotiation(void)
{
	struct cqp_params client, server;
	char rec[2048];
	struct cqp_kv_writer w;
	const char *bad1 = "tx-depth=0\n", *bad2 = "port=1\n",
		   *bad3 = "no-such=1\n";

	CHECK(parse(&client, "-s 4K -n 77 --cq-mode hybrid --spin-us 9 "
			     "--solicited -q 3 --cq-mod 8,2 -d mine x") == 0);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&client, TOOL, &w);
	CHECK(!w.overflow);
	CHECK(strstr(rec, "ib-dev") == NULL); /* local options stay home */

	CHECK(parse(&server, "-d theirs --tx-depth 5 --persistent") == 0);
	CHECK(cqp_params_decode(&server, TOOL, w.buf, w.len) == 0);
	CHECK(server.size == 4096 && server.iters == 77 && server.qps == 3);
	CHECK(server.cq_mode == CQP_CQ_HYBRID && server.spin_us == 9);
	CHECK(server.solicited);
	CHECK(server.cq_mod_count == 8 && server.cq_mod_usec == 2);
	/* Negotiated fields the client left at default are reset. */
	CHECK(server.tx_depth == 128);
	CHECK_STR(server.ib_dev, "theirs");
	CHECK(server.persistent);

	CHECK(cqp_params_decode(&server, TOOL, bad1, strlen(bad1)) ==
	      -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "--tx-depth") != NULL);
	CHECK(cqp_params_decode(&server, TOOL, bad2, strlen(bad2)) ==
	      -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "port") != NULL);
	CHECK(cqp_params_decode(&server, TOOL, bad3, strlen(bad3)) ==
	      -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "no-such") != NULL);
}

/* The latency tool's own options and defaults. */
static void test_latency_tool(void)
{
	struct cqp_params p;
	char a0[] = "cq_event_lat", a1[16], a2[32];
	char *argv[] = {a0, a1, a2, NULL};
	struct {
		const char *opt, *val;
		int rc;
	} cases[] = {
	    {"--project", "100g", 0},
	    {"--project", "25G", 0},
	    {"--project", "1.5g", -CQP_E_USAGE},
	    {"--project", "100x", -CQP_E_USAGE},
	    {"--project", "g", -CQP_E_USAGE},
	    {"--project", "999", -CQP_E_USAGE},
	    {"--idle-sec", "0", -CQP_E_USAGE},
	    {"--idle-sec", "5", 0},
	    {"--warmup", "0", 0},
	    {"--warmup", "-1", -CQP_E_USAGE},
	    {"--qps", "2", -CQP_E_USAGE}, /* one QP ping-pongs */
	    {"--signal-every", "8", 0},
	    {"--signal-every", "17", -CQP_E_USAGE}, /* above --tx-depth 16 */
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		snprintf(a1, sizeof(a1), "%s", cases[i].opt);
		snprintf(a2, sizeof(a2), "%s", cases[i].val);
		cqp_errclear();
		rc = cqp_params_parse(&p, CQP_TOOL_CQ_EVENT_LAT, 3, argv,
				      stdout);
		check_count++;
		if (rc != cases[i].rc) {
			check_failures++;
			fprintf(stderr, "cq_event_lat %s %s: rc %d (%s)\n", a1,
				a2, rc, cqp_errmsg());
		}
	}
	snprintf(a1, sizeof(a1), "--project");
	snprintf(a2, sizeof(a2), "100g");
	CHECK(cqp_params_parse(&p, CQP_TOOL_CQ_EVENT_LAT, 3, argv, stdout) ==
	      0);
	CHECK(p.project_bps == 100000000000ull);
	CHECK(p.size == 2 && p.warmup == 100 && p.tx_depth == 16);
	cqp_params_defaults(&p, CQP_TOOL_CQ_POLL_BW);
	CHECK(p.size == 65536 && p.warmup == 128 && p.tx_depth == 128);
	cqp_params_defaults(&p, CQP_TOOL_UD_SEND_BW);
	CHECK(p.warmup == 0); /* UD counts every datagram sent */
}

/* --rate and --arrival: parsed, formatted back and negotiated. */
static void test_open_loop(void)
{
	struct cqp_params c, srv;
	char a0[] = "cq_event_lat", a1[] = "--rate", a2[] = "20k",
	     a3[] = "--arrival", a4[16], rec[2048], v[32];
	char *argv[] = {a0, a1, a2, a3, a4, NULL};
	struct cqp_kv_writer w;
	const struct cqp_option *o = cqp_option_find("arrival");

	snprintf(a4, sizeof(a4), "burst:32");
	CHECK(cqp_params_parse(&c, CQP_TOOL_CQ_EVENT_LAT, 5, argv, stdout) ==
	      0);
	CHECK(c.rate == 20000 && c.arrival == 2 && c.burst == 32);
	cqp_option_format(o, &c, v, sizeof(v));
	CHECK_STR(v, "burst:32");
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&c, CQP_TOOL_CQ_EVENT_LAT, &w);
	cqp_params_defaults(&srv, CQP_TOOL_CQ_EVENT_LAT);
	CHECK(cqp_params_decode(&srv, CQP_TOOL_CQ_EVENT_LAT, w.buf, w.len) ==
	      0);
	CHECK(srv.rate == 20000 && srv.arrival == 2 && srv.burst == 32);
	/* A later client without them gets the defaults back. */
	CHECK(cqp_params_decode(&srv, CQP_TOOL_CQ_EVENT_LAT, "", 0) == 0);
	CHECK(srv.rate == 0 && srv.arrival == 0 && srv.burst == 1);
	snprintf(a4, sizeof(a4), "poisson");
	CHECK(cqp_params_parse(&c, CQP_TOOL_CQ_EVENT_LAT, 5, argv, stdout) ==
	      0);
	cqp_option_format(o, &c, v, sizeof(v));
	CHECK_STR(v, "poisson");
	/* Without a rate there is no schedule to shape. */
	CHECK(cqp_params_parse(&c, CQP_TOOL_CQ_EVENT_LAT, 1, argv, stdout) ==
	      0);
	c.arrival = 1;
	CHECK(cqp_params_validate(&c, CQP_TOOL_CQ_EVENT_LAT) == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "--arrival needs --rate") != NULL);
}

/* --arrival onoff:ON_MS,OFF_MS and pareto:ALPHA: what parses formats
 * back the same, travels in the record (comma included), and the
 * malformed and out-of-range ones are refused naming the form. */
static void test_arrival_kinds(void)
{
	static const char *const ok[][2] = {
	    {"onoff:10,20", "onoff:10,20"}, {"onoff:1,60000", "onoff:1,60000"},
	    {"pareto:1.5", "pareto:1.5"},   {"pareto:2", "pareto:2"},
	    {"pareto:1.25", "pareto:1.25"}, {"pareto:1.100", "pareto:1.1"},
	    {"pareto:10", "pareto:10"},	    {"pareto:2.005", "pareto:2.005"},
	};
	static const char *const bad[] = {
	    "onoff:5",	  "onoff:0,5",	   "onoff:5,",	    "onoff:,5",
	    "onoff:5,0",  "onoff:60001,5", "onoff:5,10,",   "onoff",
	    "pareto:0.5", "pareto:1",	   "pareto:x",	    "pareto:",
	    "pareto",	  "pareto:1.09",   "pareto:10.001", "pareto:1.2345",
	    "pareto:.5",  "pareto:2.",	   "pareto:-2",	    "pareto:1.5.1",
	};
	const struct cqp_option *o = cqp_option_find("arrival");
	struct cqp_params c, srv;
	struct cqp_kv_writer w;
	char v[64], rec[2048];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cqp_params_defaults(&c, CQP_TOOL_CQ_EVENT_LAT);
		c.rate = 1000;
		CHECK(cqp_option_set(o, &c, ok[i][0]) == 0);
		cqp_option_format(o, &c, v, sizeof(v));
		CHECK_STR(v, ok[i][1]);
		cqp_kv_writer_init(&w, rec, sizeof(rec));
		cqp_params_encode(&c, CQP_TOOL_CQ_EVENT_LAT, &w);
		cqp_params_defaults(&srv, CQP_TOOL_CQ_EVENT_LAT);
		CHECK(!w.overflow &&
		      cqp_params_decode(&srv, CQP_TOOL_CQ_EVENT_LAT, w.buf,
					w.len) == 0);
		CHECK(srv.arrival == c.arrival && srv.on_ms == c.on_ms &&
		      srv.off_ms == c.off_ms &&
		      srv.pareto_milli == c.pareto_milli);
	}
	cqp_params_defaults(&c, CQP_TOOL_CQ_EVENT_LAT);
	CHECK(cqp_option_set(o, &c, "onoff:10,20") == 0);
	CHECK(c.arrival == 3 && c.on_ms == 10 && c.off_ms == 20);
	CHECK(cqp_option_set(o, &c, "pareto:1.5") == 0);
	CHECK(c.arrival == 4 && c.pareto_milli == 1500 && c.on_ms == 0);
	/* A later client without them gets the defaults back. */
	CHECK(cqp_params_decode(&c, CQP_TOOL_CQ_EVENT_LAT, "", 0) == 0);
	CHECK(c.arrival == 0 && c.pareto_milli == 0 && c.off_ms == 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool refused = cqp_option_set(o, &c, bad[i]) == -CQP_E_USAGE;

		CHECK(refused && strstr(cqp_errmsg(), "--arrival: '") &&
		      strstr(cqp_errmsg(), bad[i]));
		if (!refused)
			fprintf(stderr, "accepted: %s\n", bad[i]);
	}
	CHECK(cqp_option_set(o, &c, "onoff:5") == -CQP_E_USAGE);
	CHECK_STR(cqp_errmsg(), "--arrival: 'onoff:5' is not "
				"onoff:ON_MS,OFF_MS (each 1..60000)");
	CHECK(cqp_option_set(o, &c, "pareto:0.5") == -CQP_E_USAGE);
	CHECK_STR(cqp_errmsg(), "--arrival: 'pareto:0.5': ALPHA of "
				"pareto:ALPHA must be 1.1..10 (a finite mean "
				"needs ALPHA > 1)");
}

/* --spin-us LIST: the first budget is the one used, all travel. */
static void test_spins(void)
{
	struct cqp_params c, srv;
	char rec[2048], v[64];
	struct cqp_kv_writer w;
	const struct cqp_option *o = cqp_option_find("spin-us");

	CHECK(parse(&c, "--spin-us 0,50,2000") == 0);
	CHECK(c.nspin == 3 && c.spin_us == 0 && c.spin_list[2] == 2000);
	cqp_option_format(o, &c, v, sizeof(v));
	CHECK_STR(v, "0,50,2000");
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&c, TOOL, &w);
	cqp_params_defaults(&srv, TOOL);
	CHECK(cqp_params_decode(&srv, TOOL, w.buf, w.len) == 0);
	CHECK(srv.nspin == 3 && srv.spin_us == 0 && srv.spin_list[1] == 50);
	CHECK(cqp_params_decode(&srv, TOOL, "", 0) == 0);
	CHECK(srv.nspin == 1 && srv.spin_us == 50);
	CHECK(parse(&c, "--spin-us 7") == 0);
	CHECK(c.nspin == 1 && c.spin_us == 7);
	bad("--spin-us 5,5", "twice");
	bad("--spin-us 1,,2", "USEC[,USEC...]");
	bad("--spin-us 1,2,3,4,5,6,7,8,9", "at most 8");
	bad("--spin-us 0,10000001", "0..10000000");
}

/* --threads travels, --cpu stays home; the name --threads is
 * cm_event_stress's too, with its own row and range. */
static void test_threads(void)
{
	struct cqp_params client, server, cm;
	char rec[2048];
	struct cqp_kv_writer w;
	char a0[] = "cm_event_stress", a1[] = "--threads", a2[] = "0";
	char *argv[] = {a0, a1, a2, NULL};

	CHECK(parse(&client, "--threads 2 --cpu 0-1 -q 4 x") == 0);
	CHECK(client.nthreads == 2 && client.ncpu == 2 && client.cpus[0] == 0 &&
	      client.cpus[1] == 1 && client.cpu == 0);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&client, TOOL, &w);
	CHECK(strstr(rec, "threads=2") != NULL && strstr(rec, "cpu") == NULL);
	CHECK(parse(&server, "--cpu 1") == 0);
	CHECK(cqp_params_decode(&server, TOOL, w.buf, w.len) < 0);
	CHECK(strstr(cqp_errmsg(), "--cpu lists 1 CPUs for --threads 2"));
	CHECK(parse(&server, "") == 0);
	CHECK(cqp_params_decode(&server, TOOL, w.buf, w.len) == 0);
	CHECK(server.nthreads == 2 && server.qps == 4 && server.cpu == -1);
	CHECK(parse(&client, "--cpu 1 x") == 0 && client.ncpu == 1 &&
	      client.cpu == 1 && client.nthreads == 1);
	CHECK(cqp_params_parse(&cm, CQP_TOOL_CM_EVENT_STRESS, 3, argv,
			       stdout) == 0 &&
	      cm.threads == 0 && cm.nthreads == 1);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_str(&w, "threads", "3");
	CHECK(cqp_params_decode(&cm, CQP_TOOL_CM_EVENT_STRESS, w.buf, w.len) ==
		  0 &&
	      cm.threads == 3 && cm.nthreads == 1);
}

/* The --max-mem estimate of queue memory (cqperf(7)): each queue its
 * requests' bytes rounded up to a page. */
static void test_queue_mem(void)
{
	struct cqp_params p;

	CHECK(parse(&p, "-s 1024 --tx-depth 8192 --rx-depth 8192 x") == 0);
	/* 8192 x (64 + 256) + 8192 x 64 + 16384 x 64 */
	CHECK(cqp_queue_mem(&p, 1, 1, 1) == 4194304);
	CHECK(cqp_queue_mem(&p, 2, 1, 2) == 2 * 4194304 - 524288);
	CHECK(parse(&p, "-t 1 -r 1 --inline 0 x") == 0);
	CHECK(cqp_queue_mem(&p, 1, 1, 1) == 3 * 4096);
	CHECK(parse(&p, "-t 64 -r 1 --inline 100 --cq-depth 128 x") == 0);
	/* 64 x (64 + 128) = 12288, three pages exactly */
	CHECK(cqp_queue_mem(&p, 1, 0, 1) == 12288 + 8192);
}

static void test_help(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cqp_params_usage(TOOL, f);
	fclose(f);
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		char needle[64];

		snprintf(needle, sizeof(needle), "--%s", o->name);
		check_count++;
		if (!o->help || !o->help[0]) {
			check_failures++;
			fprintf(stderr, "--%s has no help text\n", o->name);
		}
		if (!(o->tools & TOOL))
			continue;
		if (!strstr(text, needle)) {
			check_failures++;
			fprintf(stderr, "--help lacks %s\n", needle);
		}
	}
	free(text);
}

static void list_options(void)
{
	for (unsigned t = 1; t < CQP_TOOL_ALL; t <<= 1)
		for (const struct cqp_option *o = cqp_options; o->name; o++)
			if (o->tools & t)
				printf("%s %s\n", cqp_tool_name(t), o->name);
}

/* --verb and --verbs: a verb's own defaults, its limits, and the server
 * adopting both. */
static void test_verbs(void)
{
	struct cqp_params c, srv;
	const struct cqp_option *o = cqp_option_find("verbs");
	char rec[1024], v[64];
	struct cqp_kv_writer w;

	CHECK(parse(&c, "x") == 0 && c.verb == CQP_VERB_SEND && !c.verbs);
	CHECK(cqp_params_verbs(&c) == 1u << CQP_VERB_SEND);
	CHECK(parse(&c, "--verb atomic x") == 0 && c.size == 8);
	CHECK(parse(&c, "--verb write x") == 0 && c.cq_mode == CQP_CQ_MEM);
	CHECK(parse(&c, "--verb write --cq-mode mem -s 8 x") == 0);
	CHECK(parse(&c, "--verb write -s 8 x") == 0);
	CHECK(parse(&c, "--verb read --cq-mode event x") == 0 &&
	      c.cq_mode == CQP_CQ_EVENT);
	CHECK(parse(&c, "--verbs write,send,read x") == 0 &&
	      c.verbs == (1u << CQP_VERB_SEND | 1u << CQP_VERB_WRITE |
			  1u << CQP_VERB_READ) &&
	      c.cq_mode == CQP_CQ_POLL);
	cqp_option_format(o, &c, v, sizeof(v));
	CHECK_STR(v, "send,write,read");
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&c, TOOL, &w);
	cqp_params_defaults(&srv, TOOL);
	CHECK(cqp_params_decode(&srv, TOOL, w.buf, w.len) == 0 &&
	      srv.verbs == c.verbs);
	CHECK(parse(&c, "--verb atomic x") == 0);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&c, TOOL, &w);
	CHECK(cqp_params_decode(&srv, TOOL, w.buf, w.len) == 0 &&
	      srv.verb == CQP_VERB_ATOMIC && srv.size == 8 && !srv.verbs);
	CHECK(cqp_verb_modes(CQP_VERB_WRITE) == 1u << CQP_CQ_MEM);
	CHECK(cqp_verb_modes(CQP_VERB_READ) & 1u << CQP_CQ_EVENT);
	CHECK(cqp_verb_passive(CQP_VERB_ATOMIC) &&
	      !cqp_verb_passive(CQP_VERB_WRITE));
	bad("--verb write --cq-mode event", "write-imm for events");
	bad("--verb write --cq-mode poll", "allowed: --cq-mode mem");
	bad("--cq-mode mem", "--verb write only");
	bad("--verb atomic -s 16", "8 bytes");
	bad("--verb write -s 7", "a multiple of 8, from 8");
	bad("--verb write -s 100", "a multiple of 8, from 8");
	bad("--verbs read,atomic -s 64", "8 bytes");
	CHECK(parse(&c, "--verbs read,atomic x") == 0 && c.size == 8);
	bad("--verbs send,,read", "--verbs");
	bad("--verbs", "--verbs needs a value");
}

/* The policies' words, --compare-modes LIST, --p99-target and
 * --poll-batch auto: parsed, refused, formatted back and negotiated. */
static void test_policies(void)
{
	struct cqp_params c, srv;
	const enum cqp_tool lat = CQP_TOOL_CQ_EVENT_LAT;
	char rec[2048], buf[256];
	struct cqp_kv_writer w;

	CHECK(parse(&c, "--cq-mode empty:8") == 0);
	CHECK(c.cq_mode == CQP_CQ_EMPTY && cqp_params_empty_n(&c) == 8);
	CHECK(parse(&c, "--cq-mode empty") == 0 &&
	      cqp_params_empty_n(&c) == CQP_EMPTY_DEFAULT);
	CHECK(parse(&c, "--cq-mode ski:rand") == 0 &&
	      c.cq_mode == CQP_CQ_SKI_RAND);
	CHECK(parse(&c, "--cq-mode adaptive --p99-target 300") == 0);
	CHECK(c.cq_mode == CQP_CQ_ADAPTIVE && c.p99_target_us == 300);
	CHECK(parse(&c, "--poll-batch auto") == 0 && c.poll_batch == 0);
	cqp_option_format(cqp_option_find("poll-batch"), &c, buf, sizeof(buf));
	CHECK_STR(buf, "auto");
	bad("--cq-mode empty:0", "--cq-mode: 'empty:0': N of empty:N");
	bad("--cq-mode empty:x", "--cq-mode");
	bad("--p99-target 100", "--p99-target");
	bad("--poll-batch 0", "1..4096 or auto");
	bad("--poll-batch automatic", "--poll-batch");
	/* The list: a word after the flag is its list only when it is one. */
	CHECK(parse_for(&c, lat, "--compare-modes 198.18.0.1") == 0);
	CHECK(c.compare_modes && !c.compare_list);
	CHECK_STR(c.host, "198.18.0.1");
	CHECK(parse_for(&c, lat,
			"--compare-modes poll,empty:16,timer,adaptive h") == 0);
	CHECK(c.compare_list == (1u << CQP_CQ_POLL | 1u << CQP_CQ_EMPTY |
				 1u << CQP_CQ_TIMER | 1u << CQP_CQ_ADAPTIVE));
	CHECK(cqp_params_empty_n(&c) == 16);
	CHECK_STR(c.host, "h");
	CHECK(parse_for(&c, lat, "h --compare-modes=ski,ski:rand") == 0);
	CHECK(c.compare_list == (1u << CQP_CQ_SKI | 1u << CQP_CQ_SKI_RAND));
	CHECK(parse_for(&c, lat, "--compare-modes --rate 1k") == 0 &&
	      c.compare_modes && c.rate == 1000);
	CHECK(parse_for(&c, lat, "--compare-modes=poll,spin") == -CQP_E_USAGE);
	/* A list meant as one is refused, not taken for the HOST. */
	CHECK(parse_for(&c, lat, "--compare-modes poll,spin") == -CQP_E_USAGE);
	CHECK(parse_for(&c, lat, "--compare-modes empty:0 h") == -CQP_E_USAGE);
	CHECK(parse_for(&c, lat, "--compare-modes=poll,poll") == -CQP_E_USAGE);
	CHECK(parse_for(&c, lat,
			"--cq-mode empty:8 --compare-modes "
			"empty:9 h") == -CQP_E_USAGE);
	CHECK(strstr(cqp_errmsg(), "one N a run") != NULL);
	/* Negotiated: the server runs the same list and N. */
	CHECK(parse_for(&c, lat,
			"--compare-modes poll,event,empty:32,adaptive "
			"--p99-target 50 --poll-batch auto h") == 0);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&c, lat, &w);
	CHECK(!w.overflow);
	CHECK(parse_for(&srv, lat, "") == 0);
	CHECK(cqp_params_decode(&srv, lat, w.buf, w.len) == 0);
	CHECK(srv.compare_modes && srv.compare_list == c.compare_list);
	CHECK(cqp_params_empty_n(&srv) == 32 && srv.p99_target_us == 50);
	CHECK(srv.poll_batch == 0);
	cqp_option_format(cqp_option_find("compare-modes"), &srv, buf,
			  sizeof(buf));
	CHECK_STR(buf, "poll,event,empty:32,adaptive");
	/* ...and a later client without them resets them. */
	CHECK(parse_for(&c, lat, "h") == 0);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&c, lat, &w);
	CHECK(cqp_params_decode(&srv, lat, w.buf, w.len) == 0);
	CHECK(!srv.compare_modes && !srv.compare_list && !srv.empty_n);
	CHECK(srv.poll_batch == 16 && !srv.p99_target_us);
}

/* A server's line per client says what it asked for as a user would
 * type it: --compare-modes alone, not the wire's "--compare-modes true". */
static void test_asked(void)
{
	struct cqp_params p;
	char buf[256];

	CHECK(parse_for(&p, CQP_TOOL_CQ_EVENT_LAT,
			"--rates 200,1000 --compare-modes -s 64 -n 300 x") ==
	      0);
	cqp_params_asked(&p, CQP_TOOL_CQ_EVENT_LAT, buf, sizeof(buf));
	CHECK(strstr(buf, "--compare-modes") != NULL);
	CHECK(strstr(buf, "true") == NULL);
	CHECK(parse_for(&p, CQP_TOOL_CQ_EVENT_LAT,
			"--compare-modes poll,event x") == 0);
	cqp_params_asked(&p, CQP_TOOL_CQ_EVENT_LAT, buf, sizeof(buf));
	CHECK(strstr(buf, "--compare-modes poll,event") != NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--list") == 0) {
		list_options();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--tools") == 0) {
		for (unsigned i = 0; i < CQP_TOOL__N; i++)
			printf("%s\n", cqp_tools[i].name);
		return 0;
	}
	test_tools();
	test_good();
	test_bad();
	test_negotiation();
	test_latency_tool();
	test_open_loop();
	test_arrival_kinds();
	test_spins();
	test_threads();
	test_queue_mem();
	test_help();
	test_verbs();
	test_policies();
	test_asked();
	return check_done("test_options");
}
