/* SPDX-License-Identifier: BSD-2-Clause */
/* Which completion mode at which load: from the rows of an open-loop
 * sweep in every mode (--rates with --compare-modes), the cheapest
 * server whose tail latency is as good as the best, rate by rate. */
#ifndef CQP_STRATEGY_H
#define CQP_STRATEGY_H

#include "base/record.h"

/* Fills out from rows: one choice per (size, offered rate) measured in
 * two or more modes with the server's cost known.  A row qualifies when
 * its p99 is at most (1 + slack_pct / 100) times the best p99 of its
 * rate; the qualifying row with the least server CPU is chosen (the
 * first on a tie). */
void cqp_strategy_pick(const struct cqp_row *rows, unsigned nrows,
		       double slack_pct, struct cqp_strategy *out);

#endif
