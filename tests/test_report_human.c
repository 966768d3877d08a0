/* SPDX-License-Identifier: BSD-2-Clause */
/* report: the human table, as a terminal shows it: columns aligned under
 * their headings, within 100 columns (--wide: one line a row), the notes
 * under it, cq_event_lat's extras (idle CPU, spin share, -H histograms,
 * the load projection). */
#include "check.h"
#include "report/report.h"
#include "render.h"
#include "report_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	test_human();
	test_human_lat_extras();
	test_human_narrow();
	return check_done("test_report_human");
}
