/* SPDX-License-Identifier: BSD-2-Clause */
#include "report/report.h"

#include "report/report_fields.h"

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
