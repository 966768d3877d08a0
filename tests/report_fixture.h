/* SPDX-License-Identifier: BSD-2-Clause */
/* The report tests' fixtures (a bandwidth and a latency report, cost,
 * histogram and projection samples) and python3's parse of a JSON
 * document, shared by test_report.c and test_report_human.c. */
#ifndef CQP_TEST_REPORT_FIXTURE_H
#define CQP_TEST_REPORT_FIXTURE_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "engine/measure.h"
#include "report/report.h"

static inline void cost_sample(struct cqp_cost *c, double cpu, uint64_t wakeups)
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
static inline void fixture_bw(struct fixture *f)
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
static inline void fixture_lat(struct fixture *f)
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
static inline void hist_sample(struct cqp_hist *h)
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
static inline void projection_sample(struct cqp_projection *pr, bool have_cost)
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

static inline int have_python(void)
{
	int st = system("python3 -c pass >/dev/null 2>&1");

	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Runs the python program `checks` on doc (as d); true if it passes.
 * The program travels in the environment so no shell quoting gets in
 * the way.  NaN/Infinity literals and invalid UTF-8 are parse errors. */
static inline int python_ok(const char *doc, const char *checks)
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

/* Column of needle in the first line of text that contains it. */
static inline long column_of(const char *text, const char *needle)
{
	const char *hit = strstr(text, needle), *bol;

	if (!hit)
		return -1;
	for (bol = hit; bol > text && bol[-1] != '\n'; bol--)
		;
	return hit - bol;
}

/* Number of lines of text holding needle. */
static inline int lines_with(const char *text, const char *needle)
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
static inline int aligned_block(const char *text, const char *head)
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
static inline int aligned(const char *text)
{
	const char *l;

	for (l = text; *l; l = strchr(l, '\n') + 1)
		if (strchr(l, '\n') - l > 100)
			return 0;
	return aligned_block(text, " #bytes") &&
	       (!strstr(text, " cost ") || aligned_block(text, " cost "));
}

#endif
