/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/strategy.h"

#include <stdio.h>
#include <string.h>

static bool same_point(const struct cqp_row *a, const struct cqp_choice *c)
{
	return a->bytes == c->bytes && a->offered_rate == c->offered_rate;
}

static struct cqp_choice *point_of(struct cqp_strategy *out,
				   const struct cqp_row *row)
{
	for (unsigned i = 0; i < out->n; i++)
		if (same_point(row, &out->c[i]))
			return &out->c[i];
	if (out->n == CQP_MAX_RATES)
		return NULL;
	memset(&out->c[out->n], 0, sizeof(out->c[0]));
	out->c[out->n].bytes = row->bytes;
	out->c[out->n].offered_rate = row->offered_rate;
	return &out->c[out->n++];
}

static void choose(struct cqp_choice *c, double slack_pct)
{
	double best = c->mode[0].p99_us;

	for (unsigned i = 1; i < c->n; i++)
		if (c->mode[i].p99_us < best)
			best = c->mode[i].p99_us;
	c->chosen = c->n;
	for (unsigned i = 0; i < c->n; i++) {
		if (c->mode[i].p99_us > best * (1 + slack_pct / 100))
			continue;
		if (c->chosen == c->n || c->mode[i].server_cpu_pct <
					     c->mode[c->chosen].server_cpu_pct)
			c->chosen = i;
	}
}

void cqp_strategy_pick(const struct cqp_row *rows, unsigned nrows,
		       double slack_pct, struct cqp_strategy *out)
{
	unsigned k = 0;

	memset(out, 0, sizeof(*out));
	out->slack_pct = slack_pct;
	for (unsigned i = 0; i < nrows; i++) {
		const struct cqp_row *r = &rows[i];
		struct cqp_choice *c;

		/* A row that answered nothing has no tail to compare. */
		if (!r->open_loop || !r->has_lat || !r->iterations ||
		    !r->server.valid || !r->label[0] ||
		    !(c = point_of(out, r)) || c->n == CQP_STRATEGY_MODES)
			continue;
		snprintf(c->mode[c->n].mode, sizeof(c->mode[0].mode), "%s",
			 r->label);
		c->mode[c->n].p99_us = r->lat_us.p99;
		c->mode[c->n].server_cpu_pct = r->server.cpu_pct;
		c->n++;
	}
	/* A point measured in one mode chose nothing. */
	for (unsigned i = 0; i < out->n; i++) {
		if (out->c[i].n < 2)
			continue;
		choose(&out->c[i], slack_pct);
		out->c[k++] = out->c[i];
	}
	out->n = k;
}
