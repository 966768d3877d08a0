/* SPDX-License-Identifier: BSD-2-Clause */
/* Renders a report into a string, for the report tests. */
#ifndef CQP_TEST_RENDER_H
#define CQP_TEST_RENDER_H

#include <stdio.h>
#include <stdlib.h>

#include "report/report.h"

/* The whole report as p->output renders it; malloc'd (the caller
 * frees), NULL when no memory stream could be opened. */
static inline char *render(const struct cqp_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	cqp_report_print(r, f);
	fclose(f);
	/* CQPERF_TEST_SHOW=1: what each check reads, on stderr. */
	if (buf && getenv("CQPERF_TEST_SHOW"))
		fputs(buf, stderr);
	return buf;
}

#endif
