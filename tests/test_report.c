/* SPDX-License-Identifier: BSD-2-Clause */
/* report: JSON validity and contract (checked by python3's parser when
 * present), JSON escaping, the human table, CSV, cost kv round-trip;
 * cq_event_lat's extras: idle CPU, spin share, -H histograms and the
 * load projection. */
#include "check.h"
#include "base/error.h"
#include "base/json.h"
#include "base/kv.h"
#include "engine/measure.h"
#include "report/report.h"
#include "report/report_fields.h"
#include "report/results.h"
#include "render.h"
#include "base/version.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Quotes, a backslash, a newline, a control character, UTF-8. */
#define NASTY "say \"hi\" \\ back\nslash\x01 end \xc3\xa9"

static char *render_json_calls(void (*fn)(struct cqp_json *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct cqp_json j;

	if (!f)
		return NULL;
	cqp_json_init(&j, f, false);
	fn(&j);
	fclose(f);
	return buf;
}

static void cost_sample(struct cqp_cost *c, double cpu, uint64_t wakeups)
{
	memset(c, 0, sizeof(*c));
	c->valid = true;
	c->cpu_pct = cpu;
	c->seconds = 2.5;
	c->completions = 100000;
	c->polls = 150000;
	c->empty_polls = 50000;
	c->wakeups = wakeups;
	c->events_acked = wakeups;
	c->spin_completions = 60000;
	c->sleep_completions = 40000;
}

struct fixture {
	struct cqp_params p;
	struct cqp_row rows[2];
	struct cqp_report r;
};

/* A cq_poll_bw client report with two sizes; the first row has both
 * sides' cost, the second only the client's. */
static void fixture_bw(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	cqp_params_defaults(&f->p, CQP_TOOL_CQ_POLL_BW);
	f->p.size = 65536;
	f->p.cq_mode = CQP_CQ_EVENT;
	f->p.cq_mod_count = 16;
	f->p.cq_mod_usec = 10;
	snprintf(f->p.ib_dev, sizeof(f->p.ib_dev), "rxe0");

	f->rows[0].bytes = 65536;
	f->rows[0].iterations = 424242;
	f->rows[0].has_bw = true;
	f->rows[0].bw_peak_gbps = 12.5;
	f->rows[0].bw_avg_gbps = 10;
	f->rows[0].msg_rate_mpps = 0.019073;
	cost_sample(&f->rows[0].client, 37.5, 2000);
	cost_sample(&f->rows[0].server, 99.9, 0); /* pure polling */
	f->rows[1] = f->rows[0];
	f->rows[1].bytes = 131072;
	f->rows[1].server.valid = false;

	f->r.tool = CQP_TOOL_CQ_POLL_BW;
	f->r.title = "RC SEND bandwidth";
	f->r.params = &f->p;
	f->r.is_client = true;
	snprintf(f->r.dev.name, sizeof(f->r.dev.name), "rxe0");
	f->r.dev.port = 1;
	f->r.dev.gid_index = 1;
	f->r.dev.active_mtu = 4096;
	snprintf(f->r.dev.link_layer, sizeof(f->r.dev.link_layer), "Ethernet");
	snprintf(f->r.dev.gid, sizeof(f->r.dev.gid), "::ffff:10.0.2.15");
	snprintf(f->r.dev.gid_type, sizeof(f->r.dev.gid_type), "RoCE v2");
	f->r.dev.path_mtu = 1024;
	f->r.dev.grh = true;
	f->r.dev.has_inline = true;
	f->r.dev.inline_size = 236;
	f->r.rows = f->rows;
	f->r.nrows = 2;
}

/* A cq_event_lat report with labelled rows (one per mode). */
static void fixture_lat(struct fixture *f)
{
	static const struct cqp_summary lat = {
	    .count = 1000,
	    .min = 5.5,
	    .max = 90.25,
	    .avg = 8.125,
	    .stdev = 1.5,
	    .p50 = 7.75,
	    .p99 = 12.5,
	    .p99_9 = 40,
	    .p99_99 = 88,
	};

	fixture_bw(f);
	f->r.tool = CQP_TOOL_CQ_EVENT_LAT;
	f->r.title = "RC SEND latency";
	f->r.is_client = false;
	for (int i = 0; i < 2; i++) {
		f->rows[i].has_bw = false;
		f->rows[i].has_lat = true;
		f->rows[i].lat_us = lat;
		f->rows[i].bytes = 64;
		f->rows[i].iterations = 1000;
	}
	snprintf(f->rows[0].label, sizeof(f->rows[0].label), "poll");
	snprintf(f->rows[1].label, sizeof(f->rows[1].label), "hybrid");
}

/* 1000 one-way latencies in ns: a bulk near 5.5-8 us, a tail to 90.25. */
static void hist_sample(struct cqp_hist *h)
{
	cqp_hist_init(h);
	for (unsigned i = 0; i < 990; i++)
		cqp_hist_add(h, 5500 + (i * 37) % 2500);
	for (unsigned i = 0; i < 9; i++)
		cqp_hist_add(h, 12000 + i * 3000);
	cqp_hist_add(h, 90250);
}

/* The example of the design notes: 100 Gb/s of 4 KiB messages, 64 per
 * wakeup, 3.5 us per wakeup. */
static void projection_sample(struct cqp_projection *pr, bool have_cost)
{
	memset(pr, 0, sizeof(*pr));
	pr->valid = true;
	pr->have_cost = have_cost;
	pr->rate_bps = 100000000000ull;
	pr->bytes = 4096;
	pr->batch = 64;
	pr->compl_per_s = (double)pr->rate_bps / 8.0 / 4096.0;
	pr->wakeups_per_s = pr->compl_per_s / 64.0;
	if (have_cost) {
		pr->wakeup_cost_us = 3.5;
		pr->core_pct = pr->wakeups_per_s * 3.5 / 1e4;
	}
}

/* ---- JSON writer ---- */

static void calls_nesting(struct cqp_json *j)
{
	cqp_json_obj_begin(j, NULL);
	cqp_json_u64(j, "a", UINT64_MAX);
	cqp_json_i64(j, "b", INT64_MIN);
	cqp_json_obj_begin(j, "e");
	cqp_json_obj_end(j);
	cqp_json_arr_begin(j, "l");
	cqp_json_bool(j, NULL, true);
	cqp_json_double(j, NULL, NAN);
	cqp_json_double(j, NULL, -INFINITY);
	cqp_json_double(j, NULL, 0.25);
	cqp_json_str(j, NULL, NULL);
	cqp_json_arr_begin(j, NULL);
	cqp_json_arr_end(j);
	cqp_json_arr_end(j);
	cqp_json_null(j, "n");
	cqp_json_obj_end(j);
	cqp_json_finish(j);
}

static void calls_escape(struct cqp_json *j)
{
	cqp_json_str(j, NULL, NASTY);
}

static void calls_bad_utf8(struct cqp_json *j)
{
	/* stray continuation, overlong '/', a truncated 3-byte form, an
	 * encoded surrogate; then a valid 4-byte character */
	cqp_json_str(j, NULL,
		     "a\x80"
		     "b\xc0\xaf"
		     "c\xe2\x82"
		     "d\xed\xa0\x80"
		     "e\xf0\x9f\x98\x80");
}

static void test_json_writer(void)
{
	char *s;

	s = render_json_calls(calls_nesting);
	CHECK_STR(s, "{\"a\":18446744073709551615,"
		     "\"b\":-9223372036854775808,\"e\":{},"
		     "\"l\":[true,null,null,0.25,null,[]],\"n\":null}\n");
	free(s);
	s = render_json_calls(calls_escape);
	CHECK_STR(s, "\"say \\\"hi\\\" \\\\ back\\u000aslash\\u0001 end "
		     "\xc3\xa9\"");
	free(s);
	s = render_json_calls(calls_bad_utf8);
	CHECK_STR(s, "\"a\\ufffdb\\ufffd\\ufffdc\\ufffd\\ufffdd\\ufffd"
		     "\\ufffd\\ufffde\xf0\x9f\x98\x80\"");
	free(s);
}

/* ---- JSON document, checked by a real parser ---- */

static int have_python(void)
{
	int st = system("python3 -c pass >/dev/null 2>&1");

	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Runs the python program `checks` on doc (as d); true if it passes.
 * The program travels in the environment so no shell quoting gets in
 * the way.  NaN/Infinity literals and invalid UTF-8 are parse errors. */
static int python_ok(const char *doc, const char *checks)
{
	static const char prologue[] =
	    "import json,sys\n"
	    "def bad(c): raise ValueError('non-JSON constant ' + c)\n"
	    "d = json.loads(sys.stdin.buffer.read().decode('utf-8'),"
	    " parse_constant=bad)\n"
	    "num = lambda v: type(v) in (int, float)\n";
	char *prog = malloc(sizeof(prologue) + strlen(checks));
	FILE *p;
	int st;

	if (!prog)
		return 0;
	strcpy(prog, prologue);
	strcat(prog, checks);
	setenv("CQP_TEST_PY", prog, 1);
	free(prog);
	p = popen("python3 -c \"$CQP_TEST_PY\"", "w");
	if (!p)
		return 0;
	fputs(doc, p);
	st = pclose(p);
	if (!(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		fprintf(stderr, "python rejected:\n%s\n", doc);
		return 0;
	}
	return 1;
}

static void test_json_report(void)
{
	struct fixture f;
	char *doc;
	int ok;

	fixture_bw(&f);
	f.p.output = CQP_OUT_JSON;
	f.rows[0].client.cpu_pct = NAN; /* must become null, not NaN */
	f.r.error = NASTY;
	doc = render(&f.r);
	CHECK(doc && doc[strlen(doc) - 1] == '\n');
	/* The contract, key by key. */
	ok = python_ok(
	    doc,
	    "assert d['schema'] == 'cqperf/1'\n"
	    "assert d['tool'] == 'cq_poll_bw' and d['role'] == 'client'\n"
	    "assert d['version'] == '" CQP_VERSION "'\n"
	    "p = d['params']\n"
	    "assert num(p['size']) and p['size'] == 65536\n"
	    "assert num(p['iters']) and num(p['gid_index'])\n"
	    "assert p['cq_mode'] == 'event' and p['output'] == 'json'\n"
	    "assert p['cq_mod'] == {'count': 16, 'usec': 10}\n"
	    "assert p['report_gbits'] is False\n"
	    "assert p['ib_dev'] == 'rxe0'\n"
	    "assert 'post_list' in p\n"
	    "assert 'help' not in p and 'version' not in p\n"
	    "assert all('-' not in k for k in p)\n"
	    "v = d['device']\n"
	    "assert v['name'] == 'rxe0' and v['port'] == 1\n"
	    "assert v['gid_index'] == 1 and v['active_mtu'] == 4096\n"
	    "assert v['link_layer'] == 'Ethernet' and 'gid' in v\n"
	    "assert v['gid_type'] == 'RoCE v2' and v['path_mtu'] == 1024\n"
	    "assert v['addressing'] == 'GRH' and v['inline_bytes'] == 236\n"
	    "r = d['results']\n"
	    "assert len(r) == 2 and 'label' not in r[0]\n"
	    "assert r[0]['bytes'] == 65536 and r[0]['iterations'] == 424242\n"
	    "assert num(r[0]['bw_avg_gbps']) and r[0]['bw_avg_gbps'] == 10\n"
	    "assert num(r[0]['bw_peak_gbps']) and num(r[0]['msg_rate_mpps'])\n"
	    "assert 'lat_us' not in r[0]\n"
	    "c = r[0]['client']\n"
	    "for k in ('seconds', 'completions', 'polls', 'empty_polls',"
	    " 'wakeups', 'events_acked', 'spin_completions',"
	    " 'sleep_completions', 'compl_per_wakeup', 'wakeups_per_s'):\n"
	    "    assert num(c[k]), k\n"
	    "assert c['cpu_pct'] is None\n"
	    "assert c['wakeups'] == 2000 and c['compl_per_wakeup'] == 50\n"
	    "assert c['wakeups_per_s'] == 800\n"
	    "s = r[0]['server']\n"
	    "assert s['compl_per_wakeup'] is None and s['wakeups'] == 0\n"
	    "assert 'server' not in r[1] and 'client' in r[1]\n"
	    "assert d['error'] == 'say \"hi\" \\\\ back\\nslash\\x01 end "
	    "\\u00e9'\n");
	CHECK(ok);
	free(doc);

	/* No error: no "error" key.  A latency tool: lat_us, no bw keys. */
	fixture_lat(&f);
	f.p.output = CQP_OUT_JSON;
	doc = render(&f.r);
	ok = python_ok(
	    doc, "assert 'error' not in d and d['role'] == 'server'\n"
		 "assert d['tool'] == 'cq_event_lat'\n"
		 "assert 'report_gbits' not in d['params']\n"
		 "r = d['results'][1]\n"
		 "assert r['label'] == 'hybrid' and 'bw_avg_gbps' not in r\n"
		 "l = r['lat_us']\n"
		 "assert sorted(l) == sorted(['min', 'p50', 'avg', 'stdev',"
		 " 'p99', 'p99_9', 'p99_99', 'max'])\n"
		 "assert all(num(x) for x in l.values())\n"
		 "assert l['p99_99'] == 88 and l['min'] == 5.5\n");
	CHECK(ok);
	free(doc);

	/* A failure before any row still gives a valid document. */
	fixture_bw(&f);
	f.p.output = CQP_OUT_JSON;
	f.r.nrows = 0;
	f.r.error = "no RDMA device";
	f.r.dev.name[0] = '\0';
	doc = render(&f.r);
	ok = python_ok(doc, "assert d['results'] == []\n"
			    "assert d['error'] == 'no RDMA device'\n");
	CHECK(ok);
	free(doc);
}

/* Idle CPU only where measured, the spin share, -H buckets and the
 * projection object. */
static void test_json_lat_extras(void)
{
	struct fixture f;
	struct cqp_hist h, empty;
	char *doc;
	int ok;

	fixture_lat(&f);
	f.p.output = CQP_OUT_JSON;
	f.p.histogram = true;
	f.p.project_bps = 100000000000ull;
	f.rows[0].client.has_idle = true;
	f.rows[0].client.idle_cpu_pct = 2.5;
	f.rows[0].server.spin_completions = 0;
	f.rows[0].server.sleep_completions = 0;
	hist_sample(&h);
	cqp_hist_init(&empty);
	f.rows[0].hist = &h;
	f.rows[1].hist = &empty;
	projection_sample(&f.r.projection, true);
	doc = render(&f.r);
	ok = python_ok(
	    doc,
	    "p = d['params']\n"
	    "assert p['histogram'] is True and p['rtt'] is False\n"
	    "assert num(p['project']) and p['project'] == 100000000000\n"
	    "r0, r1 = d['results']\n"
	    "assert r0['client']['idle_cpu_pct'] == 2.5\n"
	    "assert 'idle_cpu_pct' not in r0['server']\n"
	    "assert 'idle_cpu_pct' not in r1['client']\n"
	    "assert r0['client']['spin_pct'] == 60\n"
	    "assert r0['server']['spin_pct'] is None\n"
	    "hs = r0['histogram']\n"
	    "assert sum(b['count'] for b in hs) == 1000\n"
	    "assert all(b['count'] > 0 and num(b['lo_us']) and"
	    " b['lo_us'] < b['hi_us'] for b in hs)\n"
	    "assert all(a['hi_us'] <= b['lo_us'] for a, b in zip(hs, hs[1:]))\n"
	    "assert hs[0]['lo_us'] <= 5.5 < hs[0]['hi_us']\n"
	    "assert hs[-1]['lo_us'] <= 90.25 < hs[-1]['hi_us']\n"
	    "assert r1['histogram'] == []\n"
	    "j = d['projection']\n"
	    "assert sorted(j) == sorted(['rate_bps', 'bytes', 'batch',"
	    " 'compl_per_s', 'wakeups_per_s', 'wakeup_cost_us', 'core_pct'])\n"
	    "assert j['rate_bps'] == 100000000000 and j['bytes'] == 4096\n"
	    "assert j['batch'] == 64 and j['wakeup_cost_us'] == 3.5\n"
	    "assert abs(j['compl_per_s'] - 3051757.8125) < 0.01\n"
	    "assert abs(j['core_pct'] - 16.689) < 1e-3\n");
	CHECK(ok);
	free(doc);

	/* No event-mode figures: cost and share of a core are null.  No
	 * -H: no histogram even with the data there. */
	f.p.histogram = false;
	projection_sample(&f.r.projection, false);
	doc = render(&f.r);
	ok = python_ok(doc, "j = d['projection']\n"
			    "assert j['wakeup_cost_us'] is None\n"
			    "assert j['core_pct'] is None\n"
			    "assert num(j['wakeups_per_s'])\n"
			    "assert all('histogram' not in r"
			    " for r in d['results'])\n");
	CHECK(ok);
	free(doc);

	/* No projection asked: no key. */
	f.r.projection.valid = false;
	doc = render(&f.r);
	ok = python_ok(doc, "assert 'projection' not in d\n");
	CHECK(ok);
	free(doc);
}

/* ---- human ---- */

/* Column of needle in the first line of text that contains it. */
static long column_of(const char *text, const char *needle)
{
	const char *hit = strstr(text, needle), *bol;

	if (!hit)
		return -1;
	for (bol = hit; bol > text && bol[-1] != '\n'; bol--)
		;
	return hit - bol;
}

/* Number of lines of text holding needle. */
static int lines_with(const char *text, const char *needle)
{
	const char *hit;
	int n = 0;

	while ((hit = strstr(text, needle)) != NULL) {
		n++;
		text = strchr(hit + 1, '\n');
		if (!text)
			break;
	}
	return n;
}

/* Every cell of every line of a block starts where its header starts:
 * the header (the first line holding head) has its columns after two
 * blanks (headers hold single blanks), and each line indented as it is
 * has a cell start (blank, then non-blank) at each of them.  Lines
 * indented deeper (a row's block) are passed over; the block ends at a
 * line indented less, a rule, or, under a row, a line not of a side. */
static int aligned_block(const char *text, const char *head)
{
	const char *hdr = strstr(text, head), *row, *end;
	long starts[64], n = 0, i, len, ind, rind;

	if (!hdr)
		return 0;
	while (hdr > text && hdr[-1] != '\n')
		hdr--;
	end = strchr(hdr, '\n');
	len = end - hdr;
	ind = (long)strspn(hdr, " ");
	for (i = ind; i < len && n < 64; i++)
		if (hdr[i] != ' ' &&
		    (i == ind || (hdr[i - 1] == ' ' && hdr[i - 2] == ' ')))
			starts[n++] = i;
	for (row = end + 1; *row && *row != '-'; row = strchr(row, '\n') + 1) {
		long rlen = strchr(row, '\n') - row;
		const char *gap, *colon;
		bool machine;

		rind = (long)strspn(row, " ");
		if (rind < ind)
			break;
		/* The notes under the table ("MB/sec: ...", "- ..."): a
		 * colon before any cell's gap. */
		gap = strstr(row + rind, "  ");
		colon = strchr(row + rind, ':');
		if (rind == 1 &&
		    (row[rind] == '-' || row[rind] == '<' ||
		     (colon && colon - row < rlen && (!gap || colon < gap))))
			break;
		/* The machine's line: blank but for its own cells. */
		machine = strncmp(row + rind, "machine", 7) == 0;
		if (rind > ind)
			continue;
		/* Under a row, a block's lines are its sides. */
		if (ind > 1 && strncmp(row + rind, "client", 6) != 0 &&
		    strncmp(row + rind, "server", 6) != 0 &&
		    strncmp(row + rind, "machine", 7) != 0)
			break;
		for (i = 0; i < n; i++) {
			/* (With a machine line, the sides' lines end
			 * before its cells.) */
			if (starts[i] >= rlen ||
			    (machine && row[starts[i]] == ' '))
				continue;
			if (starts[i] >= rlen || row[starts[i]] == ' ' ||
			    row[starts[i] - 1] != ' ')
				return 0;
		}
	}
	return n > 3 ? 1 : (int)n;
}

/* The row table and the first row's cost block line up; no line is
 * wider than a terminal's 100 columns. */
static int aligned(const char *text)
{
	const char *l;

	for (l = text; *l; l = strchr(l, '\n') + 1)
		if (strchr(l, '\n') - l > 100)
			return 0;
	return aligned_block(text, " #bytes") &&
	       (!strstr(text, " cost ") || aligned_block(text, " cost "));
}

static void test_human(void)
{
	struct fixture f;
	char *s;

	fixture_bw(&f);
	s = render(&f.r);
	CHECK(strstr(s, "RC SEND bandwidth (cq_poll_bw, cqperf " CQP_VERSION
			")\n") != NULL);
	/* Folded at a field separator, under the first word. */
	CHECK(strstr(s, "Device: rxe0  port 1  GID index 1 (::ffff:10.0.2.15, "
			"RoCE v2)  active MTU 4096  path MTU 1024\n   link "
			"Ethernet  inline 236\n") != NULL);
	/* perftest's ib_send_bw: no inline, one send in 100 signaled. */
	CHECK(strstr(s, " Unlike perftest: inline 236 (ib_send_bw: 0), signal "
			"every 1 (ib_send_bw: 100); see cqperf(7),\n   "
			"PERFTEST\n") != NULL);
	free(s);
	/* InfiniBand, LID routed, before any QP exists. */
	snprintf(f.r.dev.link_layer, sizeof(f.r.dev.link_layer), "InfiniBand");
	snprintf(f.r.dev.gid_type, sizeof(f.r.dev.gid_type), "IB");
	f.r.dev.grh = false;
	f.r.dev.has_inline = false;
	s = render(&f.r);
	CHECK(strstr(s, "(::ffff:10.0.2.15, IB)  active MTU 4096  path MTU "
			"1024\n   link InfiniBand (LID routed)\n") != NULL);
	CHECK(strstr(s, "Completions: mode event  poll batch ") != NULL);
	CHECK(strstr(s, "solicited off  nonblock off") != NULL);
	CHECK(strstr(s, "#bytes") && strstr(s, "#iterations"));
	CHECK(strstr(s, "BW peak[MB/sec]") && strstr(s, "BW average[MB/sec]"));
	CHECK(strstr(s, "MsgRate[Mpps]") != NULL);
	/* The cost under each row, a line per side (the machine's figures
	 * on each side's line: two machines). */
	CHECK(lines_with(s, "\n     cost    CPU%  usr/sys") == 2);
	CHECK(lines_with(s, "\n     client  ") == 2);
	CHECK(lines_with(s, "\n     server  ") == 2);
	CHECK(lines_with(s, "\n     machine ") == 0);
	/* What the table's units and dashes mean, under it. */
	CHECK(strstr(s, "\n MB/sec: 2^20 bytes a second, as perftest counts") !=
	      NULL);
	CHECK(strstr(s, "\n kern, sirq ns/msg: each side's machine's, all "
			"CPUs; /proc/stat, tick-sampled\n") != NULL);
	CHECK(strstr(s, "client: CPU%") == NULL);
	CHECK(strstr(s, "compl/wake") && strstr(s, "wake/s"));
	CHECK(strstr(s, "wake/iter") == NULL);
	CHECK(strstr(s, "spin%") == NULL && strstr(s, "idle CPU%") == NULL);
	CHECK(strstr(s, "Latency:") == NULL);
	CHECK(strstr(s, "mode ") == strstr(s, "mode event")); /* no label */
	/* 10 Gb/s = 1192.09 MiB/s; 12.5 Gb/s = 1490.12 MiB/s */
	CHECK(strstr(s, "1192.09") && strstr(s, "1490.12"));
	/* values sit under their headers */
	CHECK(column_of(s, "#iterations") == column_of(s, "424242"));
	CHECK(column_of(s, "MsgRate") == column_of(s, "0.019073"));
	CHECK(column_of(s, " CPU%") == column_of(s, " 37.5"));
	CHECK(column_of(s, "compl/wake") == column_of(s, "50.00"));
	CHECK(column_of(s, "wake/s") == column_of(s, "800 "));
	CHECK(column_of(s, " CPU%") == column_of(s, " 99.9"));
	CHECK(strstr(s, "partial results") == NULL);
	CHECK(strncmp(s, "-----", 5) == 0);
	CHECK(strstr(s, " \n") == NULL); /* no trailing blanks */
	CHECK(aligned(s));
	free(s);

	/* --wide: a row and both sides' cost on one line, one header. */
	f.p.wide = true;
	s = render(&f.r);
	CHECK(lines_with(s, "#bytes") == 1 && strstr(s, " cost ") == NULL);
	CHECK(column_of(s, "client: CPU%") == column_of(s, " 37.5") + 1);
	CHECK(column_of(s, "client: CPU%") < column_of(s, "server: CPU%"));
	CHECK(strstr(s, "\n 65536 ") && strstr(s, "\n 131072 "));
	CHECK(lines_with(s, "\n 65536 ") == 1 && lines_with(s, "\n     ") == 0);
	CHECK(aligned_block(s, " #bytes") == 1);
	free(s);
	f.p.wide = false;

	/* --report-gbits: decimal gigabits, no MB/sec anywhere. */
	f.p.report_gbits = true;
	f.r.error = "peer closed the connection";
	f.r.nrows = 1;
	s = render(&f.r);
	CHECK(strstr(s, "BW peak[Gb/sec]") && strstr(s, "BW average[Gb/sec]"));
	CHECK(strstr(s, "MB/sec") == NULL);
	CHECK(strstr(s, "12.50") && strstr(s, "10.00"));
	CHECK(strstr(s, "131072") == NULL); /* only the rows given */
	CHECK(strstr(s, "-\npartial results: peer closed the connection\n") !=
	      NULL);
	free(s);

	/* Latency: label column, percentile columns, wakeups/iteration;
	 * the client side has no figures on the second row. */
	fixture_lat(&f);
	f.rows[1].client.valid = false;
	s = render(&f.r);
	CHECK(strstr(s, "RC SEND latency (cq_event_lat, cqperf ") != NULL);
	CHECK(strstr(s, "t_min[usec]") && strstr(s, "p99.99") &&
	      strstr(s, "t_max") && strstr(s, "t_stdev"));
	CHECK(strstr(s, "wake/iter") && strstr(s, "BW peak") == NULL);
	CHECK(column_of(s, " mode ") >= 0);
	CHECK(strstr(s, " hybrid ") != NULL);
	/* Three figures: 88 and 90.25 usec read as 88.0 and 90.2. */
	CHECK(strstr(s, " 88.0 ") && strstr(s, " 90.2\n"));
	CHECK(column_of(s, "p99.99") == column_of(s, "88.0"));
	CHECK(aligned(s));
	CHECK(strstr(s, "2.000") != NULL); /* 2000 wakeups / 1000 iters */
	free(s);

	/* Which latency it is: one-way by default, after Completions. */
	fixture_lat(&f);
	s = render(&f.r);
	CHECK(strstr(s, "\n Latency: one-way = round trip / 2, in usec\n") >
	      strstr(s, "\n Completions: "));
	free(s);
	f.p.rtt = true;
	s = render(&f.r);
	CHECK(strstr(s, "\n Latency: full round trip, in usec\n") != NULL);
	CHECK(strstr(s, "one-way") == NULL);
	free(s);

	/* A tool without completion settings has no Completions line. */
	fixture_bw(&f);
	f.r.tool = CQP_TOOL_CM_EVENT_STRESS;
	s = render(&f.r);
	CHECK(strstr(s, "Completions:") == NULL);
	free(s);
}

/* The widest line of text. */
static long widest(const char *text)
{
	long best = 0;

	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		long n = nl ? nl - l : (long)strlen(l);

		best = n > best ? n : best;
		l = nl ? nl + 1 : l + n;
	}
	return best;
}

/* Each kind of table at its widest, with figures as long as a slow
 * fabric makes them: every line fits 100 columns. */
static void test_human_narrow(void)
{
	struct fixture f;
	char *s;

	/* cm_event_stress: the longest event name, six-digit latencies;
	 * one line an event, the tails that do not fit left to JSON (and
	 * --wide), as a note says. */
	fixture_lat(&f);
	f.r.tool = CQP_TOOL_CM_EVENT_STRESS;
	for (int i = 0; i < 2; i++) {
		struct cqp_row *row = &f.rows[i];

		snprintf(row->side, sizeof(row->side), i ? "server" : "client");
		snprintf(row->label, sizeof(row->label),
			 "RDMA_CM_EVENT_CONNECT_RESPONSE");
		row->count = 1000000;
		row->rate_per_s = 123456.7;
		row->lat_us.min = 123456;
		row->lat_us.p50 = row->lat_us.avg = row->lat_us.p99 = 234567;
		row->lat_us.p99_9 = row->lat_us.p99_99 = 345678;
		row->lat_us.max = row->lat_us.stdev = 456789;
	}
	s = render(&f.r);
	CHECK(widest(s) <= 100);
	CHECK(strstr(s, " CONNECT_RESPONSE ") && !strstr(s, "RDMA_CM_EVENT"));
	CHECK(strstr(s, " side    event ") && strstr(s, " 123k "));
	CHECK(strstr(s, "t_stdev") == NULL || strstr(s, "t_stdev and "));
	CHECK(lines_with(s, "CONNECT_RESPONSE ") == 2);
	CHECK(strstr(s, "\n Latency in usec, from the call to its event; "
			"t_stdev and p99.99 in JSON") != NULL);
	free(s);
	f.p.wide = true;
	s = render(&f.r);
	CHECK(strstr(s, " t_stdev ") && strstr(s, " p99.99"));
	free(s);
	f.p.wide = false;

	/* ud_send_lat: modes, lost exchanges, an open loop, idle CPU,
	 * latencies up to a second. */
	fixture_lat(&f);
	f.r.tool = CQP_TOOL_UD_SEND_LAT;
	for (int i = 0; i < 2; i++) {
		struct cqp_row *row = &f.rows[i];

		row->has_lost = true;
		row->lost = 123456;
		row->open_loop = true;
		row->offered_rate = row->achieved_rate = 1234567;
		row->late_sends = 123456789;
		row->bytes = 4096;
		row->iterations = 10000000;
		row->lat_us.max = 999999;
		row->lat_us.p99_99 = row->lat_us.stdev = 99999;
		row->client.has_idle = true;
	}
	s = render(&f.r);
	CHECK(widest(s) <= 100);
	CHECK(strstr(s, " lost ") && strstr(s, "svc p99"));
	CHECK(aligned(s));
	free(s);

	/* ud_send_bw: loss and wire efficiency beside perftest's columns. */
	fixture_bw(&f);
	f.r.tool = CQP_TOOL_UD_SEND_BW;
	for (int i = 0; i < 2; i++) {
		f.rows[i].has_delivery = true;
		f.rows[i].bytes = 8388608;
		f.rows[i].iterations = 100000000;
	}
	s = render(&f.r);
	CHECK(widest(s) <= 100);
	CHECK(strstr(s, "loss%") && strstr(s, "wire eff%"));
	CHECK(aligned(s));
	free(s);
}

/* The longest run of '#' in text. */
static int longest_bar(const char *text)
{
	int best = 0, run = 0;

	for (; *text; text++) {
		run = *text == '#' ? run + 1 : 0;
		best = run > best ? run : best;
	}
	return best;
}

/* Sum of the counts of the histogram lines ("   lo..hi usec  count"). */
static unsigned long hist_total(const char *text)
{
	unsigned long sum = 0;
	const char *p = text;

	while ((p = strstr(p, " usec ")) != NULL) {
		p += 6;
		sum += strtoul(p, NULL, 10);
	}
	return sum;
}

static void test_human_lat_extras(void)
{
	struct fixture f;
	struct cqp_hist h, empty;
	char *s;

	/* Idle CPU on one side of one row: a column per side, "-" where
	 * not measured.  spin%: 60000 of 100000 spun; none at all is "-". */
	fixture_lat(&f);
	f.rows[0].client.has_idle = true;
	f.rows[0].client.idle_cpu_pct = 2.5;
	f.rows[1].server.spin_completions = 0;
	f.rows[1].server.sleep_completions = 0;
	s = render(&f.r);
	CHECK(lines_with(s, "\n     idle    CPU%  usr/sys\n") == 2);
	CHECK(
	    strstr(s, "\n     client  2.5   0.0/0.0\n     server  -     -\n"));
	CHECK(aligned_block(s, "     idle ") == 3);
	CHECK(strstr(s, "spin%") != NULL);
	CHECK(column_of(s, "spin%") == column_of(s, "60.0"));
	CHECK(aligned(s));
	CHECK(strstr(s, " \n") == NULL);
	free(s);

	/* No idle figures anywhere: no idle column. */
	f.rows[0].client.has_idle = false;
	s = render(&f.r);
	CHECK(strstr(s, " idle ") == NULL && strstr(s, "spin%") != NULL);
	free(s);

	/* -H: lines under the first row only (the second's is empty),
	 * every sample counted once, the fullest line 50 '#' wide, the
	 * ends at the data's min and max. */
	fixture_lat(&f);
	f.p.histogram = true;
	hist_sample(&h);
	cqp_hist_init(&empty);
	f.rows[0].hist = &h;
	f.rows[1].hist = &empty;
	s = render(&f.r);
	CHECK(lines_with(s, " usec  ") >= 4 && lines_with(s, " usec  ") <= 24);
	CHECK(hist_total(s) == 1000);
	CHECK(longest_bar(s) == 50);
	CHECK(strstr(s, "\n    5.50..") != NULL);
	CHECK(strstr(s, "..90.25 usec    1  #\n") != NULL);
	CHECK(strstr(s, " usec  ") > strstr(s, "\n poll ") &&
	      strstr(s, " usec  ") < strstr(s, "\n hybrid "));
	CHECK(strstr(strstr(s, "\n hybrid "), " usec ") == NULL);
	CHECK(strstr(s, " \n") == NULL);
	free(s);

	/* Without -H the data is not shown. */
	f.p.histogram = false;
	s = render(&f.r);
	CHECK(strstr(s, " usec  ") == NULL && strstr(s, "#\n") == NULL);
	free(s);

	/* One value only: one line, min..max. */
	f.p.histogram = true;
	cqp_hist_init(&h);
	for (int i = 0; i < 7; i++)
		cqp_hist_add(&h, 1800);
	s = render(&f.r);
	CHECK(lines_with(s, " usec  ") == 1);
	CHECK(strstr(s, "   1.800..1.800 usec  7  ####") != NULL);
	free(s);

	/* Projection after the table, in the words of the design notes. */
	fixture_lat(&f);
	projection_sample(&f.r.projection, true);
	s = render(&f.r);
	CHECK(strstr(s, "-\n Wakeup cost: 3.50 usec of CPU per wakeup (event "
			"mode, client)\n Projection at 100 Gb/s, 4096 B "
			"messages, 64 completions per wakeup:\n   3.05 M "
			"completions/s, 47.7 k wakeups/s, 16.7% of a core\n") !=
	      NULL);
	free(s);

	/* No event-mode row: the rates still, and what to run instead. */
	projection_sample(&f.r.projection, false);
	f.r.projection.rate_bps = 400000000;
	f.r.projection.batch = 1;
	f.r.projection.compl_per_s = 4e8 / 8 / 4096;
	f.r.projection.wakeups_per_s = f.r.projection.compl_per_s;
	s = render(&f.r);
	CHECK(strstr(s, "Wakeup cost") == NULL);
	CHECK(
	    strstr(s,
		   "\n Projection at 400 Mb/s, 4096 B messages, 1 "
		   "completion per wakeup:\n   12.2 k completions/s, 12.2 k "
		   "wakeups/s;\n   no event-mode figures to cost a wakeup (use "
		   "--cq-mode event or --compare-modes)\n") != NULL);
	free(s);

	/* A cost but no --project: the cost line alone. */
	projection_sample(&f.r.projection, true);
	f.r.projection.rate_bps = 0;
	s = render(&f.r);
	CHECK(strstr(s, " Wakeup cost: 3.50 usec") != NULL);
	CHECK(strstr(s, "Projection") == NULL);
	free(s);
}

/* ---- CSV ---- */

static int count_char(const char *s, char c)
{
	int n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static void test_csv(void)
{
	struct fixture f;
	char *s, *line, *save = NULL;
	int lines = 0, commas = -1, same = 1;

	fixture_bw(&f);
	f.p.output = CQP_OUT_CSV;
	s = render(&f.r);
	CHECK(strncmp(s,
		      "bytes,iterations,bw_peak_gbps,bw_avg_gbps,"
		      "msg_rate_mpps,client_cpu_pct,",
		      61) == 0);
	CHECK(strstr(s, ",client_wakeups,") && strstr(s, ",server_cpu_pct,"));
	CHECK(strstr(s, ",server_compl_per_wakeup,") != NULL);
	CHECK(strstr(s, "\n65536,424242,12.5,10,0.019073,37.5,") != NULL);
	for (line = strtok_r(s, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (commas < 0)
			commas = count_char(line, ',');
		same &= count_char(line, ',') == commas;
		lines++;
	}
	CHECK(lines == 3 && same);
	free(s);

	/* Labels (one needing quotes), latency columns, an error line. */
	fixture_lat(&f);
	f.p.output = CQP_OUT_CSV;
	snprintf(f.rows[1].label, sizeof(f.rows[1].label), "a,\"b\"");
	f.r.error = "line one\nline two";
	s = render(&f.r);
	CHECK(strncmp(s, "label,bytes,iterations,lat_us_min,lat_us_p50,", 45) ==
	      0);
	CHECK(strstr(s, "bw_avg_gbps") == NULL);
	CHECK(
	    strstr(s, "\npoll,64,1000,5.5,7.75,8.125,1.5,12.5,40,88,90.25,") !=
	    NULL);
	CHECK(strstr(s, "\n\"a,\"\"b\"\"\",64,") != NULL);
	CHECK(strstr(s, "\n# error: line one line two\n") != NULL);
	CHECK(count_char(s, '\n') == 4);
	CHECK(strstr(s, "idle_cpu_pct") == NULL);
	CHECK(strstr(s, ",client_spin_pct,") != NULL);
	free(s);

	/* Idle columns once a row has them, empty where not measured; the
	 * projection as a comment line, unknown figures empty. */
	fixture_lat(&f);
	f.p.output = CQP_OUT_CSV;
	f.rows[1].client.has_idle = true;
	f.rows[1].client.idle_cpu_pct = 0.5;
	projection_sample(&f.r.projection, false);
	s = render(&f.r);
	CHECK(strstr(s, ",client_sleep_completions,client_idle_cpu_pct,"
			"client_idle_cpu_user_pct,client_idle_cpu_sys_pct,"
			"client_channels,client_compl_per_wakeup,") != NULL);
	CHECK(strstr(s, ",server_idle_cpu_pct,") != NULL);
	CHECK(strstr(s, ",40000,,,,0,50,800,2,60,") !=
	      NULL); /* row 0: no idle */
	CHECK(strstr(s, ",40000,0.5,0,0,0,50,800,2,60,") != NULL);
	CHECK(strstr(s, "\n# projection: rate_bps=100000000000 bytes=4096 "
			"batch=64 compl_per_s=3051757.81 "
			"wakeups_per_s=47683.7158 wakeup_cost_us= "
			"core_pct=\n") != NULL);
	commas = -1;
	same = 1;
	lines = 0;
	save = NULL;
	for (line = strtok_r(s, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		if (commas < 0)
			commas = count_char(line, ',');
		same &= count_char(line, ',') == commas;
		lines++;
	}
	CHECK(lines == 3 && same);
	free(s);
}

/* ---- cost over kv ---- */

static void test_cost_kv(void)
{
	struct cqp_cost a, b;
	struct cqp_kv_writer w;
	char buf[1024];
	const char *cut;
	size_t len;

	cost_sample(&a, 100.0 / 3.0, 12345);
	a.seconds = 0.1;
	a.completions = UINT64_MAX;
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_cost_encode(&a, &w);
	CHECK(!w.overflow);
	memset(&b, 0, sizeof(b));
	CHECK(cqp_cost_decode(&b, w.buf, w.len) == 0);
	CHECK(b.valid);
	/* %.17g: doubles come back bit for bit */
	CHECK(b.cpu_pct == a.cpu_pct && b.seconds == a.seconds);
	CHECK(b.completions == UINT64_MAX && b.polls == a.polls &&
	      b.empty_polls == a.empty_polls && b.wakeups == a.wakeups &&
	      b.events_acked == a.events_acked &&
	      b.spin_completions == a.spin_completions &&
	      b.sleep_completions == a.sleep_completions);

	/* Drop the "wakeups" line: decode fails and leaves b alone. */
	cut = strstr(buf, "\nwakeups=");
	CHECK(cut != NULL);
	if (cut) {
		char rec[1024];
		const char *rest = strchr(cut + 1, '\n');

		len = (size_t)(cut + 1 - buf);
		memcpy(rec, buf, len);
		strcpy(rec + len, rest + 1);
		memset(&b, 0, sizeof(b));
		CHECK(cqp_cost_decode(&b, rec, strlen(rec)) == -CQP_E_PROTO);
		CHECK(!b.valid && b.polls == 0);
		CHECK(strstr(cqp_errmsg(), "wakeups") != NULL);
	}
	CHECK(cqp_cost_decode(&b, "", 0) == -CQP_E_PROTO);

	/* Idle CPU travels only when measured; its absence is no error. */
	CHECK(strstr(buf, "idle_cpu_pct") == NULL);
	CHECK(cqp_cost_decode(&b, w.buf, w.len) == 0);
	CHECK(!b.has_idle);
	a.has_idle = true;
	a.idle_cpu_pct = 1.0 / 7.0;
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_cost_encode(&a, &w);
	CHECK(!w.overflow && strstr(buf, "\nidle_cpu_pct=") != NULL);
	memset(&b, 0, sizeof(b));
	CHECK(cqp_cost_decode(&b, w.buf, w.len) == 0);
	CHECK(b.valid && b.has_idle && b.idle_cpu_pct == a.idle_cpu_pct);
	CHECK(b.wakeups == a.wakeups);

	/* A malformed idle figure is an error naming it. */
	a.has_idle = false;
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_cost_encode(&a, &w);
	cqp_kv_add_str(&w, "idle_cpu_pct", "lots");
	CHECK(!w.overflow);
	memset(&b, 0, sizeof(b));
	CHECK(cqp_cost_decode(&b, w.buf, w.len) == -CQP_E_PROTO);
	CHECK(!b.valid && strstr(cqp_errmsg(), "idle_cpu_pct") != NULL);
}

/* The accounting figures: every key in JSON and CSV, the split and the
 * softirq per message in the human table, the warning for a noisy side,
 * and bit-exact travel over kv (noisy included). */
static void accounting_sample(struct cqp_cost *c, bool noisy)
{
	c->cpu_user_pct = 30;
	c->cpu_sys_pct = 7.5;
	c->proc_cpu_pct = 40;
	c->has_sys = true;
	c->sys_busy_pct = 150;
	c->sys_irq_pct = 1;
	c->sys_softirq_pct = 84;
	c->sys_kthread_pct = 3;
	c->others_busy_pct = noisy ? 85 : 2;
	c->noisy = noisy;
	c->sys_steal_pct = 12.5;
}

static void test_accounting(void)
{
	static const char *const keys[] = {
	    "cpu_user_pct",	 "cpu_sys_pct",
	    "proc_cpu_pct",	 "sys_busy_pct",
	    "sys_irq_pct",	 "sys_softirq_pct",
	    "others_busy_pct",	 "noisy",
	    "cpu_ns_per_msg",	 "softirq_ns_per_msg",
	    "kernel_ns_per_msg", "sys_kthread_pct",
	    "sys_steal_pct"};
	struct fixture f;
	struct cqp_cost b;
	struct cqp_kv_writer w;
	char buf[2048], key[64];
	char *s;

	fixture_bw(&f);
	accounting_sample(&f.rows[0].client, false);
	accounting_sample(&f.rows[0].server, true);
	accounting_sample(&f.rows[1].client, false);
	s = render(&f.r);
	CHECK(s && strstr(s, "cost    CPU%  usr/sys") != NULL);
	CHECK(s && strstr(s, "sirq ns/msg") != NULL);
	CHECK(s && strstr(s, " 30.0/7.5 ") != NULL);
	/* 84 % of a core over 2.5 s, 424242 messages: 4950 ns each. */
	CHECK(s && strstr(s, " 4950\n") != NULL);
	/* Plus irq 1 and kernel threads 3: 88 %, 5186 ns. */
	CHECK(s && strstr(s, " 5186         4950\n") != NULL);
	CHECK(s &&
	      strstr(s, "\n Warning: server machine: 85 % of a core busy "
			"with other processes; figures are suspect\n") != NULL);
	CHECK(s && strstr(s, "client machine") == NULL);
	free(s);

	/* No warning when no side is noisy. */
	f.rows[0].server.noisy = false;
	s = render(&f.r);
	CHECK(s && strstr(s, "Warning") == NULL);
	free(s);
	f.rows[0].server.noisy = true;

	/* Both sides on one machine (one boot id): its figures once, on a
	 * line of their own under the sides', blank on theirs. */
	f.r.one_machine = true;
	s = render(&f.r);
	CHECK(s && lines_with(s, "\n     machine  ") == 2);
	CHECK(s && lines_with(s, "  5186         4950\n") == 2);
	CHECK(s && lines_with(s, "\n     client   ") == 2);
	CHECK(s && strstr(s, "the machine's (both sides ran on it), all CPUs; "
			     "/proc/stat, tick-sampled\n") != NULL);
	/* A kernel that measures irq time (CONFIG_IRQ_TIME_ACCOUNTING) on
	 * every side: said so. */
	for (unsigned i = 0; i < f.r.nrows; i++)
		f.rows[i].client.sys_irqtime_measured =
		    f.rows[i].server.sys_irqtime_measured = true;
	free(s);
	s = render(&f.r);
	CHECK(s && strstr(s, "all CPUs; /proc/stat, measured\n") != NULL);
	for (unsigned i = 0; i < f.r.nrows; i++)
		f.rows[i].client.sys_irqtime_measured =
		    f.rows[i].server.sys_irqtime_measured = false;
	CHECK(s && aligned(s));
	free(s);
	f.r.one_machine = false;

	/* No softirq tick in the step: below what /proc/stat tells, not 0;
	 * a side that never slept has no completions per wakeup. */
	f.rows[1].client.sys_softirq_pct = 0;
	f.rows[1].client.wakeups = 0;
	s = render(&f.r);
	CHECK(s && strstr(s, " <1 tick") != NULL);
	CHECK(s && strstr(s, "\n <1 tick: none seen in the step by /proc/stat, "
			     "which counts in 10 ms ticks") != NULL);
	CHECK(s && strstr(s, "\n -: compl/wake is - where the side never "
			     "slept\n") != NULL);
	free(s);
	f.rows[1].client.sys_softirq_pct = 84;

	f.p.output = CQP_OUT_JSON;
	s = render(&f.r);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(key, sizeof(key), "\"%s\": ", keys[i]);
		CHECK(s && strstr(s, key) != NULL);
	}
	CHECK(s && strstr(s, "\"noisy\": true") != NULL);
	CHECK(s && strstr(s, "\"noisy\": false") != NULL);
	CHECK(s && strstr(s, "\"clock\": {\n") != NULL);
	CHECK(s && strstr(s, "\"source\": \"") != NULL);
	/* --cpu figures only where measured. */
	CHECK(s && strstr(s, "cpu_softirq_pct") == NULL);
	free(s);

	f.p.output = CQP_OUT_CSV;
	s = render(&f.r);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(key, sizeof(key), ",client_%s", keys[i]);
		CHECK(s && strstr(s, key) != NULL);
		snprintf(key, sizeof(key), ",server_%s", keys[i]);
		CHECK(s && strstr(s, key) != NULL);
	}
	CHECK(s && strstr(s, ",150,1,84,3,85,true,") != NULL);
	CHECK(s && strstr(s, ",150,1,84,3,2,false,") != NULL);
	free(s);

	f.rows[0].server.has_cpu = true;
	f.rows[0].server.cpu_irq_pct = 0.5;
	f.rows[0].server.cpu_softirq_pct = 42;
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_cost_encode(&f.rows[0].server, &w);
	CHECK(!w.overflow);
	memset(&b, 0, sizeof(b));
	CHECK(cqp_cost_decode(&b, w.buf, w.len) == 0);
	CHECK(b.cpu_user_pct == 30 && b.cpu_sys_pct == 7.5 &&
	      b.proc_cpu_pct == 40 && b.has_sys && b.sys_busy_pct == 150 &&
	      b.sys_irq_pct == 1 && b.sys_softirq_pct == 84 &&
	      b.sys_kthread_pct == 3 && b.others_busy_pct == 85 && b.noisy &&
	      b.sys_steal_pct == 12.5 && b.has_cpu && b.cpu_irq_pct == 0.5 &&
	      b.cpu_softirq_pct == 42);
	/* Without /proc/stat: no machine figures, no flag. */
	f.rows[0].client.has_sys = false;
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_cost_encode(&f.rows[0].client, &w);
	memset(&b, 0, sizeof(b));
	CHECK(cqp_cost_decode(&b, w.buf, w.len) == 0);
	CHECK(!b.has_sys && !b.noisy && !b.has_cpu);
	CHECK(strstr(buf, "noisy") == NULL);

	/* Under a prefix, beside other figures of the same names. */
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_u64(&w, "events_acked", 7);
	cqp_cost_encode_as(&f.rows[0].server, "cost_", &w);
	memset(&b, 0, sizeof(b));
	CHECK(!w.overflow &&
	      cqp_cost_decode_as(&b, "cost_", w.buf, w.len) == 0);
	CHECK(b.valid && b.events_acked == f.rows[0].server.events_acked &&
	      b.noisy && b.sys_softirq_pct == 84);
	CHECK(cqp_cost_decode_as(&b, "nope_", w.buf, w.len) == -CQP_E_PROTO);

	/* A run-wide cost (cm_event_stress): a line per side, JSON's
	 * "cost", CSV's comment lines, and the warning for it too. */
	f.r.nrows = 0;
	f.r.run_client = f.rows[0].client;
	f.r.run_server = f.rows[0].server;
	f.p.output = CQP_OUT_HUMAN;
	s = render(&f.r);
	/* The client's /proc/stat was unreadable (has_sys off above). */
	CHECK(s && strstr(s, "\n CPU, client: thread 37.5 % (usr/sys "
			     "30.0/7.5), process 40.0 %\n") != NULL);
	CHECK(s &&
	      strstr(s, "\n CPU, server: thread 99.9 % (usr/sys "
			"30.0/7.5), process 40.0 %;\n   machine: busy 150.0, "
			"irq 1.0, softirq 84.0, kernel threads 3.0, others "
			"85.0 (% of a core)\n") != NULL);
	CHECK(s && strstr(s, "Warning: server machine: 85 %") != NULL);
	free(s);
	f.p.output = CQP_OUT_JSON;
	s = render(&f.r);
	CHECK(s && strstr(s, "\"cost\": {") != NULL);
	CHECK(s && strstr(s, "\"cpu_ns_per_msg\": null") != NULL);
	free(s);
	f.p.output = CQP_OUT_CSV;
	s = render(&f.r);
	CHECK(s && strstr(s, "\n# cost.server: cpu_pct=99.9 seconds=2.5 "
			     "cpu_user_pct=30 ") != NULL);
	CHECK(s && strstr(s, " noisy=true ") != NULL);
	free(s);
}

/* An open-loop row in every format, and its figures over the wire. */
static void open_loop_row(struct fixture *f)
{
	fixture_lat(f);
	f->p.rate = 20000;
	f->p.arrival = 1;
	f->p.tx_depth = 16;
	f->rows[0].open_loop = true;
	f->rows[0].offered_rate = 20000;
	f->rows[0].achieved_rate = 18000;
	f->rows[0].late_sends = 37;
	f->rows[0].arrival_cv = 0.97;
	f->rows[0].service_lat_us = f->rows[0].lat_us;
	f->rows[0].service_lat_us.p50 = 3.25;
	f->rows[0].service_lat_us.p99 = 6.5;
}

static void test_open_loop(void)
{
	struct fixture f;
	struct cqp_row back;
	struct cqp_kv_writer w;
	char *s, rec[4096];

	open_loop_row(&f);
	s = render(&f.r);
	CHECK(s && strstr(s, " Open loop: 20000 requests/s, poisson arrivals, "
			     "at most 16 in flight"));
	CHECK(s && strstr(s, "response = reply - scheduled send"));
	CHECK(s && strstr(s, "offered/s") && strstr(s, "svc p99"));
	CHECK(s && strstr(s, " Rate not reached in poll: 20000/s offered, "
			     "18000/s "
			     "achieved, 37 requests sent late"));
	/* The ping-pong row has none of it. */
	CHECK(s && strstr(s, " -  "));
	free(s);
	f.p.output = CQP_OUT_CSV;
	s = render(&f.r);
	CHECK(s && strstr(s, ",offered_rate,achieved_rate,late_sends,"
			     "arrival_cv,service_lat_us_min"));
	CHECK(s && strstr(s, ",20000,18000,37,0.97,"));
	free(s);
	if (have_python()) {
		f.p.output = CQP_OUT_JSON;
		s = render(&f.r);
		CHECK(python_ok(s,
				"r0, r1 = d['results']\n"
				"assert d['params']['rate'] == 20000\n"
				"assert d['params']['arrival'] == 'poisson'\n"
				"assert r0['offered_rate'] == 20000\n"
				"assert r0['achieved_rate'] == 18000\n"
				"assert r0['late_sends'] == 37\n"
				"assert r0['arrival_cv'] == 0.97\n"
				"assert r0['service_lat_us']['p50'] == 3.25\n"
				"assert 'service_lat_us' not in r1\n"));
		free(s);
	}
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_row_figures_encode(&f.rows[0], &w);
	memset(&back, 0, sizeof(back));
	CHECK(cqp_row_figures_decode(&back, w.buf, w.len) == 0);
	CHECK(back.open_loop && back.late_sends == 37);
	CHECK(back.achieved_rate == 18000 && back.arrival_cv == 0.97);
	CHECK(back.service_lat_us.p99 == 6.5);
	/* A closed-loop record leaves the row closed. */
	memset(&back, 0, sizeof(back));
	CHECK(cqp_row_figures_decode(&back, "lat_us_p50=1\n", 12) == 0);
	CHECK(!back.open_loop);
}

/* Every figure of cqp_row_fields that a side may lack crosses the oob:
 * a new row in the table travels without a codec of its own. */
static void test_row_figures_wire(void)
{
	struct cqp_row mine, back;
	char rec[4096];
	struct cqp_kv_writer w;
	unsigned crossed = 0;

	memset(&mine, 0, sizeof(mine));
	mine.has_bw = mine.has_lat = mine.has_delivery = true;
	mine.has_lost = mine.open_loop = true;
	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		const struct row_field *f = &cqp_row_fields[i];
		char *at = (char *)&mine + f->offset;

		if (f->value || f->type == FIELD_TEXT)
			continue;
		for (size_t k = 0; k < f->size / 8; k++) {
			double d = 100.0 + (double)(i * 10 + k);
			uint64_t u = 100 + i * 10 + k;

			if (f->type == FIELD_U64)
				memcpy(at + 8 * k, &u, 8);
			else
				memcpy(at + 8 * k, &d, 8);
		}
	}
	mine.iterations = 5000;
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_row_figures_encode(&mine, &w);
	memset(&back, 0, sizeof(back));
	CHECK(cqp_row_figures_decode(&back, w.buf, w.len) == 0);
	CHECK(back.iterations == 5000 && back.has_bw && back.has_lat);
	CHECK(back.has_delivery && back.has_lost && back.open_loop);
	for (size_t i = 0; i < cqp_n_row_fields; i++) {
		const struct row_field *f = &cqp_row_fields[i];
		bool wired = !f->value && f->group >= RG_BW;

		if (!wired)
			continue;
		crossed++;
		if (f->type == FIELD_LAT) { /* its eight figures, not count */
			for (unsigned k = 0; k < N_LAT_FIELDS; k++)
				if (cqp_lat_value(
					(void *)((char *)&mine + f->offset),
					&cqp_lat_fields[k]) !=
				    cqp_lat_value(
					(void *)((char *)&back + f->offset),
					&cqp_lat_fields[k]))
					CHECK_STR(f->key, "(crossed)");
		} else if (memcmp((char *)&mine + f->offset,
				  (char *)&back + f->offset, f->size) != 0) {
			CHECK_STR(f->key, "(crossed)");
		}
	}
	CHECK(crossed >= 14);
}

/* The server's queues and memory: in JSON with the schema's keys, each
 * also per client; over the oob whole or not at all. */
static void test_server_mem(void)
{
	struct cqp_held held = {.qps = 2,
				.cqs = 2,
				.srqs = 0,
				.recv_wqes = 1024,
				.cqes = 2048,
				.registered_bytes = 1 << 20},
			back;
	struct cqp_kv_writer w;
	struct fixture f;
	char *s, rec[1024];
	bool has = true;

	fixture_bw(&f);
	f.p.output = CQP_OUT_JSON;
	s = render(&f.r);
	CHECK(python_ok(s, "assert 'server_mem' not in d\n"));
	free(s);
	f.r.server_mem = &held;
	f.r.clients = 2;
	s = render(&f.r);
	CHECK(python_ok(s, "m = d['server_mem']\n"
			   "assert m['clients'] == 2 and m['qps'] == 2\n"
			   "assert m['recv_wqes'] == 1024\n"
			   "assert m['registered_bytes'] == 1048576\n"
			   "assert m['per_client']['cqes'] == 1024\n"));
	free(s);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_held_encode(&held, &w);
	memset(&back, 0, sizeof(back));
	CHECK(cqp_held_decode(&back, &has, w.buf, w.len) == 0 && has);
	CHECK(memcmp(&back, &held, sizeof(back)) == 0);
	CHECK(cqp_held_decode(&back, &has, "x=1\n", 4) == 0 && !has);
	CHECK(cqp_held_decode(&back, &has, "mem_qps=1\n", 10) < 0 && !has);
	cqp_errclear();
}

/* The bandwidth tools' model check: min(R, 1/t) wakeups per second. */
static void test_projection_check(void)
{
	struct fixture f;
	struct cqp_run run = {.p = &f.p};
	char *out;

	fixture_bw(&f);
	f.p.project_bps = 100000000000ull;
	f.rows[1].open_loop = true;
	f.rows[1].achieved_rate = 5000;
	f.rows[1].server = f.rows[0].client;
	f.rows[1].server.valid = true;
	f.rows[1].server.cpu_pct = 20;
	f.rows[1].server.seconds = 2;
	f.rows[1].server.wakeups = 8000; /* t = 50 us */
	cqp_bw_annotate(&run, &f.r);
	CHECK(f.r.check.valid && f.r.projection.server_side);
	CHECK_NEAR(f.r.check.wakeup_cost_us, 50, 1e-9);
	CHECK_NEAR(f.r.check.model_wakeups_per_s, 5000, 1e-9);
	CHECK_NEAR(f.r.check.model_cpu_pct, 25, 1e-9);
	CHECK_NEAR(f.r.check.measured_wakeups_per_s, 4000, 1e-9);
	out = render(&f.r);
	CHECK(out && strstr(out, "Wakeup cost: 50.00 usec of CPU per wakeup "
				 "(event mode, server)"));
	CHECK(out &&
	      strstr(out, " Projection check at 5.00 k msg/s (server):"
			  "\n   model 5.00 k wakeups/s, 25.0% of a core; "
			  "measured 4.00 k wakeups/s, 20.0%"));
	free(out);
	/* Past 1/t a wakeup's work outlasts the gaps: 20 k at most. */
	f.rows[1].achieved_rate = 40000;
	cqp_bw_annotate(&run, &f.r);
	CHECK_NEAR(f.r.check.model_wakeups_per_s, 20000, 1e-6);
	CHECK_NEAR(f.r.check.model_cpu_pct, 100, 1e-6);
	/* No --project: no check. */
	f.p.project_bps = 0;
	cqp_bw_annotate(&run, &f.r);
	CHECK(!f.r.check.valid && !f.r.projection.valid);
}

/* A server's line for a person folds at a blank within 100 columns, its
 * words all there, in order. */
static void test_say(void)
{
	char *buf = NULL, *line, *save = NULL, joined[1024] = "";
	size_t len = 0, widest = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *asked = "--rates 200,1000 --compare-modes --size 64 "
			    "--iters 300 --cq-mode hybrid --spin-us 5,20,80";

	if (!f)
		return;
	cqp_report_say(f, "cq_event_lat: client 198.18.0.1:41234 (%s): done",
		       asked);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		widest = strlen(line) > widest ? strlen(line) : widest;
		strcat(joined, line + strspn(line, " "));
		strcat(joined, " ");
	}
	CHECK(widest <= 100 && strstr(buf, "cq_event_lat: client") == buf);
	CHECK(strstr(joined, "--spin-us 5,20,80): done") != NULL);
	free(buf);
}

int main(void)
{
	test_json_writer();
	test_projection_check();
	test_open_loop();
	test_row_figures_wire();
	if (have_python()) {
		test_json_report();
		test_json_lat_extras();
		test_server_mem();
	} else
		printf("test_report: no python3, JSON parse checks skipped\n");
	test_human();
	test_human_lat_extras();
	test_human_narrow();
	test_csv();
	test_cost_kv();
	test_accounting();
	test_say();
	return check_done("test_report");
}
