/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/perftest.h"

#include <inttypes.h>
#include <stdio.h>

/* perftest_parameters.h: DEF_INLINE_SEND_RC_UC 236, DEF_INLINE_SEND_UD
 * 188 for latency tests, no inline for bandwidth tests; DEF_CQ_MOD 100
 * (bandwidth tests signal one send in 100). */
struct peer {
	enum cqp_tool tool;
	const char *name;
	uint32_t inline_size;
	uint32_t signal_every; /* 0: latency test, one in flight */
};

static const struct peer peers[] = {
    {CQP_TOOL_CQ_POLL_BW, "ib_send_bw", 0, 100},
    {CQP_TOOL_UD_SEND_BW, "ib_send_bw -c UD", 0, 100},
    {CQP_TOOL_CQ_EVENT_LAT, "ib_send_lat", 236, 0},
    {CQP_TOOL_UD_SEND_LAT, "ib_send_lat -c UD", 188, 0},
};

static const struct peer *find(enum cqp_tool tool)
{
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		if (peers[i].tool == tool)
			return &peers[i];
	return NULL;
}

const char *cqp_perftest_peer(enum cqp_tool tool)
{
	const struct peer *pr = find(tool);

	return pr ? pr->name : NULL;
}

unsigned cqp_perftest_diff(enum cqp_tool tool, const struct cqp_params *p,
			   const struct cqp_device_info *d, char *buf,
			   size_t cap)
{
	const struct peer *pr = find(tool);
	unsigned n = 0;
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	if (!pr || !p)
		return 0;
	if (d->has_inline && d->inline_size != pr->inline_size) {
		len +=
		    (size_t)snprintf(buf + len, len < cap ? cap - len : 0,
				     "inline %" PRIu32 " (%s: %" PRIu32 ")",
				     d->inline_size, pr->name, pr->inline_size);
		n++;
	}
	if (pr->signal_every && p->signal_every != pr->signal_every) {
		len += (size_t)snprintf(
		    buf + len, len < cap ? cap - len : 0,
		    "%ssignal every %" PRIu32 " (%s: %" PRIu32 ")",
		    n ? ", " : "", p->signal_every, pr->name, pr->signal_every);
		n++;
	}
	return n;
}
