/* SPDX-License-Identifier: BSD-2-Clause */
/* report: JSON validity and contract (checked by python3's parser when
 * present), JSON escaping, CSV, the codecs over the oob (cost, a row's
 * figures, server_mem); cq_event_lat's JSON extras.  The human table is
 * test_report_human.c's. */
#include "check.h"
#include "base/error.h"
#include "base/json.h"
#include "base/kv.h"
#include "engine/measure.h"
#include "report/report.h"
#include "report/report_fields.h"
#include "report/results.h"
#include "render.h"
#include "report_fixture.h"
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
		/* A group's figures are its server's alone. */
		bool wired =
		    !f->value && f->group >= RG_BW && f->group != RG_FANIN;

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
	/* A group's server says it in the human report too; a lone
	 * client's does not (JSON only). */
	f.p.output = CQP_OUT_HUMAN;
	s = render(&f.r);
	CHECK(strstr(s, " Held for 2 clients: 2 QPs, 2 CQs, 0 SRQs, "
			"1024 receive slots, 1.0 MiB of MRs (512.0 KiB a "
			"client)\n") != NULL);
	free(s);
	f.r.clients = 1;
	s = render(&f.r);
	CHECK(strstr(s, "Held for") == NULL);
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
	test_csv();
	test_cost_kv();
	test_accounting();
	test_say();
	return check_done("test_report");
}
