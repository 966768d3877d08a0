/* SPDX-License-Identifier: BSD-2-Clause */
/* What the option files share (the table, its words, the value parsers,
 * the command-line parser, the validation) and nothing else includes. */
#ifndef CQP_OPTIONS_IMPL_H
#define CQP_OPTIONS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/options.h"

/* The option masks, from the tools' classes (base/tools.h). */
#define RDMA_TOOLS   CQP_TOOLS_WITH(CQP_TC_RDMA)
#define BW_TOOLS     CQP_TOOLS_WITH(CQP_TC_BW)
#define LAT_TOOLS    CQP_TOOLS_WITH(CQP_TC_LAT)
#define UD_TOOLS     CQP_TOOLS_WITH(CQP_TC_UD)
#define THREAD_TOOLS CQP_TOOLS_WITH(CQP_TC_THREADS)
#define ALL	     CQP_TOOL_ALL
#define NEG	     CQP_OPTF_NEGOTIATED
#define OFF(field)   offsetof(struct cqp_params, field)
#define KIB	     ((uint64_t)1024)
#define MIB	     (1024 * KIB)
#define GIB	     (1024 * MIB)
#define CM	     CQP_TOOL_CM_EVENT_STRESS

/* The parser's per-option arrays live on the stack, sized by this. */
enum { MAXOPT = 96 };

/* The words of the enumerations, in their order, NULL-terminated. */
extern const char *const cqp_cq_mode_words[];
extern const char *const cqp_verb_words[];
extern const char *const cqp_output_words[];
extern const char *const cqp_cm_mode_words[];
extern const char *const cqp_clock_words[];
extern const char *const cqp_arrival_words[];

/* option_value.c, for the parser and --help: where o's value lives in
 * p, and the rest. */
void *cqp_opt_field(const struct cqp_option *o, struct cqp_params *p);
const void *cqp_opt_cfield(const struct cqp_option *o,
			   const struct cqp_params *p);
void cqp_opt_format_size(uint64_t v, char *buf, size_t cap);
void cqp_opt_format_range(const struct cqp_option *o, char *buf, size_t cap);
bool cqp_opt_is_modes_list(const struct cqp_option *o, const char *val);

#endif
