/* SPDX-License-Identifier: BSD-2-Clause */
/* One result record (record.h), rendered as a human table, JSON or CSV.
 *
 * The JSON document follows the contract of cqperf(7) OUTPUT and
 * doc/cqperf-1.schema.json (schema "cqperf/1"): the schema names every
 * top-level key and what it holds, so this comment does not repeat
 * them.  Human text goes to the given stream (stdout); errors are the
 * caller's business (stderr).
 */
#ifndef CQP_REPORT_H
#define CQP_REPORT_H

#include <stdio.h>

#include "base/record.h"

#define CQP_SCHEMA "cqperf/1"

/* Render the whole record in p->output format to out. */
void cqp_report_print(const struct cqp_report *r, FILE *out);

/* A line for a person (a server's word on its clients), as printf,
 * folded at a blank to the human report's 100 columns. */
void cqp_report_say(FILE *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
