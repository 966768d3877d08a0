/* SPDX-License-Identifier: BSD-2-Clause */
/* The words of modes, verbs, outputs, clocks and arrivals: what the
 * parser accepts and the report prints, in one place. */
#include "base/options_impl.h"

#include <inttypes.h>
#include <stdio.h>

/* In the order of enum cqp_cq_mode; empty takes ":N". */
const char *const cqp_cq_mode_words[] = {
    "poll",  "event", "hybrid",	  "mem",      "empty",
    "timer", "ski",   "ski:rand", "adaptive", NULL};
/* In the order of enum cqp_verb. */
const char *const cqp_verb_words[] = {"send", "write-imm", "write",
				      "read", "atomic",	   NULL};
const char *const cqp_output_words[] = {"human", "json", "csv", NULL};
const char *const cqp_cm_mode_words[] = {"block", "nonblock", "batch", NULL};
/* In the order of enum cqp_clock_mode. */
const char *const cqp_clock_words[] = {"auto", "tsc", "monotonic", "force-tsc",
				       NULL};
/* In the order of enum cqp_arrival_kind; burst, onoff and pareto take
 * ":" and their parameters. */
const char *const cqp_arrival_words[] = {"fixed", "poisson", "burst",
					 "onoff", "pareto",  NULL};

const char *cqp_cq_mode_name(uint32_t mode)
{
	return mode < CQP_CQ__N ? cqp_cq_mode_words[mode] : "?";
}

void cqp_mode_word(const struct cqp_params *p, uint32_t mode, char *buf,
		   size_t cap)
{
	if (mode == CQP_CQ_EMPTY)
		snprintf(buf, cap, "empty:%" PRIu32, cqp_params_empty_n(p));
	else
		snprintf(buf, cap, "%s", cqp_cq_mode_name(mode));
}

const char *cqp_verb_name(uint32_t verb)
{
	return verb < CQP_VERB__N ? cqp_verb_words[verb] : "?";
}

uint32_t cqp_verb_modes(uint32_t verb)
{
	uint32_t cq = ((1u << CQP_CQ__N) - 1) & ~(1u << CQP_CQ_MEM);

	return verb == CQP_VERB_WRITE ? 1u << CQP_CQ_MEM : cq;
}

const char *cqp_cm_mode_name(uint32_t mode)
{
	return mode <= CQP_CM_BATCH ? cqp_cm_mode_words[mode] : "?";
}

const char *cqp_output_name(uint32_t output)
{
	return output <= CQP_OUT_CSV ? cqp_output_words[output] : "?";
}
