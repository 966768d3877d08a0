/* SPDX-License-Identifier: BSD-2-Clause */
/* Every tool, one row each: the one list the enum, the option masks, the
 * per-tool defaults, perftest's counterparts and the report titles derive
 * from.  Adding a tool is a row here (src/README, "Adding a tool"); the
 * tests and scripts read the rows from this file (gen/tools_list.py).
 *
 * X(a, ENUM, "name", classes, "title",      a: the caller's argument
 *   size, depth, warmup,            defaults, 0: the option table's
 *   "perftest peer", inline, signal every)
 *
 * The peer's settings are perftest_parameters.h's: DEF_INLINE_SEND_RC_UC
 * 236 and DEF_INLINE_SEND_UD 188 for latency tests, no inline for
 * bandwidth tests, DEF_CQ_MOD 100 (a bandwidth test signals one send in
 * 100); signal every 0: a latency test, one in flight.
 */
#ifndef CQP_TOOLS_H
#define CQP_TOOLS_H

#include <stdint.h>

/* A tool's classes: what it measures, over what, and what it can do. */
#define CQP_TC_BW      (1u << 0) /* bandwidth: a stream of messages */
#define CQP_TC_LAT     (1u << 1) /* latency: a ping-pong */
#define CQP_TC_UD      (1u << 2) /* over UD (else RC) */
#define CQP_TC_RDMA    (1u << 3) /* traffic on a device (not only RDMA CM) */
#define CQP_TC_THREADS (1u << 4) /* --threads */

#define CQP_TOOL_LIST(X, a)                                                    \
	X(a, CQ_POLL_BW, "cq_poll_bw",                                         \
	  CQP_TC_BW | CQP_TC_RDMA | CQP_TC_THREADS, "RC SEND bandwidth", 0, 0, \
	  128, "ib_send_bw", 0, 100)                                           \
	X(a, CQ_EVENT_LAT, "cq_event_lat",                                     \
	  CQP_TC_LAT | CQP_TC_RDMA | CQP_TC_THREADS,                           \
	  "RC SEND ping-pong latency", 2, 16, 100, "ib_send_lat", 236, 0)      \
	X(a, UD_SEND_BW, "ud_send_bw",                                         \
	  CQP_TC_BW | CQP_TC_UD | CQP_TC_RDMA | CQP_TC_THREADS,                \
	  "UD SEND bandwidth", 1024, 0, 0, "ib_send_bw -c UD", 0, 100)         \
	X(a, UD_SEND_LAT, "ud_send_lat", CQP_TC_LAT | CQP_TC_UD | CQP_TC_RDMA, \
	  "UD SEND ping-pong latency", 2, 16, 100, "ib_send_lat -c UD", 188,   \
	  0)                                                                   \
	X(a, CM_EVENT_STRESS, "cm_event_stress", 0u, "RDMA CM event storm", 0, \
	  0, 0, NULL, 0, 0)

#define CQP_TOOL_IDX_(a, e, ...) CQP_TOOL_IDX_##e,
enum cqp_tool_index { CQP_TOOL_LIST(CQP_TOOL_IDX_, ~) CQP_TOOL__N };
#undef CQP_TOOL_IDX_

#define CQP_TOOL_BIT_(a, e, ...) CQP_TOOL_##e = 1u << CQP_TOOL_IDX_##e,
enum cqp_tool {
	CQP_TOOL_LIST(CQP_TOOL_BIT_, ~) CQP_TOOL_ALL = (1u << CQP_TOOL__N) - 1,
};
#undef CQP_TOOL_BIT_

/* The tools of every class in classes, as a constant (option masks). */
#define CQP_TOOL_IF_(cls, e, name, c, ...)                                     \
	| (((c) & (cls)) == (cls) ? (unsigned)CQP_TOOL_##e : 0u)
#define CQP_TOOLS_WITH(classes) (0u CQP_TOOL_LIST(CQP_TOOL_IF_, classes))

struct cqp_tool_desc {
	enum cqp_tool tool;
	const char *name;
	unsigned classes;
	const char *title;
	uint64_t size;	  /* default -s; 0: the table's */
	uint32_t depth;	  /* default -t and -r; 0: the table's */
	uint64_t warmup;  /* default --warmup; 0: the table's */
	const char *peer; /* perftest's counterpart; NULL: none */
	uint32_t peer_inline, peer_signal_every;
};

/* Every tool, in the list's order, and CQP_TOOL__N of them. */
extern const struct cqp_tool_desc cqp_tools[];
/* The row of tool (one bit), or NULL. */
const struct cqp_tool_desc *cqp_tool_desc(enum cqp_tool tool);
/* Its name; "cqperf" for none. */
const char *cqp_tool_name(enum cqp_tool tool);

#endif
