/* SPDX-License-Identifier: BSD-2-Clause */
#include "report.h"

#include <stdlib.h>

#include "report_fields.h"

void cqp_rows_free(struct cqp_row *rows, unsigned nrows)
{
	for (unsigned i = 0; i < nrows; i++) {
		free(rows[i].hist);
		free(rows[i].hw_client);
		free(rows[i].hw_server);
		free(rows[i].client.threads);
		free(rows[i].server.threads);
		rows[i].client.threads = rows[i].server.threads = NULL;
		rows[i].client.nthreads = rows[i].server.nthreads = 0;
		rows[i].hist = NULL;
		rows[i].hw_client = rows[i].hw_server = NULL;
	}
}

void cqp_report_print(const struct cqp_report *r, FILE *out)
{
	switch (r->params ? r->params->output : CQP_OUT_HUMAN) {
	case CQP_OUT_JSON:
		cqp_report_json(r, out);
		break;
	case CQP_OUT_CSV:
		cqp_report_csv(r, out);
		break;
	case CQP_OUT_HUMAN:
	default:
		cqp_report_human(r, out);
		break;
	}
	fflush(out);
}
