/* SPDX-License-Identifier: BSD-2-Clause */
/* What perftest would do: the settings in which a run differs from the
 * defaults of the perftest test users compare it with (inline size and
 * signaling, where perftest 4.5 and 6.x agree), for a one-line hint
 * under the settings. */
#ifndef CQP_PERFTEST_H
#define CQP_PERFTEST_H

#include <stddef.h>

#include "base/options.h"
#include "base/record.h"

/* perftest's counterpart of tool ("ib_send_bw", "ib_send_lat -c UD"...);
 * NULL for none (cm_event_stress). */
const char *cqp_perftest_peer(enum cqp_tool tool);

/* "inline 236 (ib_send_bw: 0), signal every 1 (ib_send_bw: 100)" into
 * buf; returns how many settings differ (0: buf is ""). */
unsigned cqp_perftest_diff(enum cqp_tool tool, const struct cqp_params *p,
			   const struct cqp_device_info *d, char *buf,
			   size_t cap);

#endif
