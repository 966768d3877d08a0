/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/tools.h"

#include <stddef.h>

#define CQP_TOOL_ROW_(a, e, nm, cls, ttl, sz, dp, wu, pr, pi, ps)              \
	{.tool = CQP_TOOL_##e,                                                 \
	 .name = nm,                                                           \
	 .classes = cls,                                                       \
	 .title = ttl,                                                         \
	 .size = sz,                                                           \
	 .depth = dp,                                                          \
	 .warmup = wu,                                                         \
	 .peer = pr,                                                           \
	 .peer_inline = pi,                                                    \
	 .peer_signal_every = ps},
const struct cqp_tool_desc cqp_tools[] = {CQP_TOOL_LIST(CQP_TOOL_ROW_, ~)};
#undef CQP_TOOL_ROW_

const struct cqp_tool_desc *cqp_tool_desc(enum cqp_tool tool)
{
	for (unsigned i = 0; i < CQP_TOOL__N; i++)
		if (cqp_tools[i].tool == tool)
			return &cqp_tools[i];
	return NULL;
}

const char *cqp_tool_name(enum cqp_tool tool)
{
	const struct cqp_tool_desc *d = cqp_tool_desc(tool);

	return d ? d->name : "cqperf";
}
