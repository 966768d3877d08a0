/* SPDX-License-Identifier: BSD-2-Clause */
/* The strategy map: the cheapest server within the p99 slack, per size
 * and rate; points in one mode, closed-loop rows and rows without the
 * server's cost choose nothing. */
#include <string.h>

#include "base/strategy.h"
#include "check.h"

static void row(struct cqp_row *r, const char *mode, double rate, double p99,
		double cpu)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->label, sizeof(r->label), "%s", mode);
	r->bytes = 2;
	r->iterations = 100;
	r->has_lat = true;
	r->open_loop = rate > 0;
	r->offered_rate = rate;
	r->lat_us.p99 = p99;
	r->server.valid = true;
	r->server.cpu_pct = cpu;
}

int main(void)
{
	struct cqp_row rows[13];
	struct cqp_strategy st;
	unsigned n = 0;

	row(&rows[n++], "poll", 0, 10, 100); /* closed loop: no rate */
	row(&rows[n++], "poll", 1000, 40, 100);
	row(&rows[n++], "event", 1000, 43.9, 5); /* within 10 % */
	row(&rows[n++], "hybrid", 1000, 41, 30);
	row(&rows[n++], "poll", 5000, 40, 100);
	row(&rows[n++], "event", 5000, 44.1, 20); /* just outside */
	row(&rows[n++], "hybrid", 5000, 42, 60);
	row(&rows[n++], "poll", 9000, 50, 100);
	row(&rows[n++], "event", 9000, 90, 70);
	row(&rows[n++], "hybrid", 9000, 70, 90);
	row(&rows[n++], "poll", 12000, 50, 100); /* one mode only */
	row(&rows[n], "event", 12000, 50, 10);
	rows[n++].server.valid = false; /* its cost unknown */
	row(&rows[n], "hybrid", 12000, 0, 1);
	rows[n++].iterations = 0; /* nothing answered: no p99 of 0 */

	cqp_strategy_pick(rows, n, 10, &st);
	CHECK(st.n == 3 && st.slack_pct == 10);
	CHECK(st.c[0].offered_rate == 1000 && st.c[0].n == 3);
	CHECK_STR(st.c[0].mode[st.c[0].chosen].mode, "event");
	CHECK_STR(st.c[1].mode[st.c[1].chosen].mode, "hybrid");
	CHECK_STR(st.c[2].mode[st.c[2].chosen].mode, "poll");
	CHECK(st.c[2].mode[st.c[2].chosen].p99_us == 50);
	/* No slack: the best p99 alone, whatever it costs. */
	cqp_strategy_pick(rows, n, 0, &st);
	CHECK_STR(st.c[0].mode[st.c[0].chosen].mode, "poll");
	/* A wide slack: the cheapest everywhere. */
	cqp_strategy_pick(rows, n, 1000, &st);
	CHECK_STR(st.c[2].mode[st.c[2].chosen].mode, "event");
	/* One mode per rate (no --compare-modes): nothing to choose. */
	cqp_strategy_pick(rows, 2, 10, &st);
	CHECK(st.n == 0);
	/* --verbs: every (verb, mode) at a rate is one choice; a READ's
	 * server costs nothing, and wins within the slack. */
	n = 0;
	row(&rows[n++], "send+poll", 2000, 40, 100);
	row(&rows[n++], "send+event", 2000, 41, 6);
	row(&rows[n++], "write+mem", 2000, 12, 100);
	row(&rows[n++], "read+event", 2000, 30, 0.2);
	row(&rows[n++], "write-imm+hybrid", 2000, 13, 40);
	cqp_strategy_pick(rows, n, 10, &st);
	CHECK(st.n == 1 && st.c[0].n == 5);
	CHECK_STR(st.c[0].mode[st.c[0].chosen].mode, "write-imm+hybrid");
	cqp_strategy_pick(rows, n, 200, &st);
	CHECK_STR(st.c[0].mode[st.c[0].chosen].mode, "read+event");
	return check_done("test_strategy");
}
