/* SPDX-License-Identifier: BSD-2-Clause */
#include "base/record.h"

#include <math.h>
#include <stdlib.h>

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
		free(rows[i].clients);
		rows[i].clients = NULL;
		rows[i].nclients = 0;
	}
}

double cqp_row_loss_pct(const struct cqp_row *row)
{
	double want;

	if (!row->has_delivery || !row->sent)
		return NAN;
	want = (double)row->sent * (double)(row->fanout ? row->fanout : 1);
	return 100.0 * (want - (double)row->received) / want;
}

double cqp_wire_eff_pct(uint64_t bytes, uint32_t overhead)
{
	if (!overhead)
		return NAN;
	return 100.0 * (double)bytes / ((double)bytes + overhead);
}
