/* SPDX-License-Identifier: BSD-2-Clause */
/* The results two sides exchange over the out-of-band channel after each
 * step, as key=value records (kv.h): one side's cost, per-thread shares,
 * the latency summary, UD delivery, open-loop figures and CM event rows.
 * Wire protocol, not reporting: a key renamed here breaks older peers. */
#ifndef CQP_RESULTS_H
#define CQP_RESULTS_H

#include <stddef.h>

#include "base/kv.h"
#include "report/report.h"

/* A step's record from one side: its cost (mine) and the row's figures
 * the other side may lack; and the peer's merged into row and theirs (the
 * server adopts the figures the client measured). */
void cqp_results_encode(const struct cqp_row *row, const struct cqp_cost *mine,
			struct cqp_kv_writer *w);
int cqp_results_decode(struct cqp_row *row, struct cqp_cost *theirs,
		       const char *text, size_t len);

/* A row's figures (cqp_row_fields) that one side may lack, as kv; and
 * the peer's merged into row: UD's delivery counters by the larger, the
 * figures only the client measured (bandwidth, latency, open loop)
 * adopted by a side that has none. */
void cqp_row_figures_encode(const struct cqp_row *row, struct cqp_kv_writer *w);
int cqp_row_figures_decode(struct cqp_row *row, const char *text, size_t len);

/* The server's queues and memory (struct cqp_held), as kv keys mem_...;
 * decode sets *has when the record holds them. */
void cqp_held_encode(const struct cqp_held *h, struct cqp_kv_writer *w);
int cqp_held_decode(struct cqp_held *h, bool *has, const char *text,
		    size_t len);

/* An event row's figures as kv under prefix ("s0_"), and back. */
void cqp_event_row_encode(const struct cqp_row *row, const char *prefix,
			  struct cqp_kv_writer *w);
int cqp_event_row_decode(struct cqp_row *row, const char *prefix,
			 const char *text, size_t len);

/* Exchange of one side's cost over the out-of-band channel as kv
 * (keys: cpu_pct, seconds, completions, ...). */
void cqp_cost_encode(const struct cqp_cost *c, struct cqp_kv_writer *w);
/* --threads: the per-thread shares, beside cqp_cost_encode's record;
 * decode allocates c->threads (none: NULL, 0). */
void cqp_threads_encode(const struct cqp_cost *c, struct cqp_kv_writer *w);
int cqp_threads_decode(struct cqp_cost *c, const char *text, size_t len);
int cqp_cost_decode(struct cqp_cost *c, const char *text, size_t len);
/* The same with every key under prefix ("cost_"), beside other figures. */
void cqp_cost_encode_as(const struct cqp_cost *c, const char *prefix,
			struct cqp_kv_writer *w);
int cqp_cost_decode_as(struct cqp_cost *c, const char *prefix, const char *text,
		       size_t len);

#endif
