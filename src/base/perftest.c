/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/perftest.h"

#include <inttypes.h>
#include <stdio.h>

/* The tool's counterpart, from its row in base/tools.h; NULL for none. */
static const struct cqp_tool_desc *find(enum cqp_tool tool)
{
	const struct cqp_tool_desc *d = cqp_tool_desc(tool);

	return d && d->peer ? d : NULL;
}

const char *cqp_perftest_peer(enum cqp_tool tool)
{
	const struct cqp_tool_desc *pr = find(tool);

	return pr ? pr->peer : NULL;
}

unsigned cqp_perftest_diff(enum cqp_tool tool, const struct cqp_params *p,
			   const struct cqp_device_info *d, char *buf,
			   size_t cap)
{
	const struct cqp_tool_desc *pr = find(tool);
	unsigned n = 0;
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	if (!pr || !p)
		return 0;
	if (d->has_inline && d->inline_size != pr->peer_inline) {
		len +=
		    (size_t)snprintf(buf + len, len < cap ? cap - len : 0,
				     "inline %" PRIu32 " (%s: %" PRIu32 ")",
				     d->inline_size, pr->peer, pr->peer_inline);
		n++;
	}
	if (pr->peer_signal_every && p->signal_every != pr->peer_signal_every) {
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0,
					"%ssignal every %" PRIu32
					" (%s: %" PRIu32 ")",
					n ? ", " : "", p->signal_every,
					pr->peer, pr->peer_signal_every);
		n++;
	}
	return n;
}
