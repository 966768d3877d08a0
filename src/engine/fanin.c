/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/fanin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int cqp_senders_init(struct cqp_senders *t, unsigned n)
{
	uint32_t cap = 8;

	/* At most half full: probes stay short. */
	while (cap < 2u * n)
		cap *= 2;
	t->slot = malloc(cap * sizeof(*t->slot));
	if (!t->slot)
		return cqp_fail(CQP_E_NOMEM, "out of memory for %u senders", n);
	for (uint32_t i = 0; i < cap; i++)
		t->slot[i].client = UINT32_MAX;
	t->mask = cap - 1;
	return 0;
}

void cqp_senders_free(struct cqp_senders *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

int cqp_senders_add(struct cqp_senders *t, uint32_t qpn, uint32_t tail,
		    uint32_t client)
{
	uint32_t h = (qpn * 0x9e3779b1u) ^ tail;

	for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
		struct cqp_sender *s = &t->slot[i];

		if (s->client == UINT32_MAX) {
			*s = (struct cqp_sender){qpn, tail, client};
			return 0;
		}
		if (s->qpn == qpn && s->tail == tail)
			return cqp_fail(CQP_E_PROTO,
					"clients %u and %u both say they send "
					"from QP %u at one address",
					s->client + 1, client + 1, qpn);
	}
}

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

uint32_t cqp_endpoint_tail(const union ibv_gid *gid, uint16_t lid, bool grh)
{
	return grh ? be32_at(gid->raw + 12) : lid;
}

uint32_t cqp_sender_tail(const struct ibv_wc *wc, const uint8_t *grh)
{
	if (!(wc->wc_flags & IBV_WC_GRH))
		return wc->slid;
	/* IPv6 and IB GRHs start with version 6: the source GID is bytes
	 * 8..23.  RoCE v2 over IPv4 leaves the first 20 bytes and puts the
	 * IPv4 header in the last 20: its source address is bytes 32..35. */
	if (grh[0] >> 4 == 6)
		return be32_at(grh + 20);
	return be32_at(grh + 32);
}

double cqp_jain(const double *x, unsigned n)
{
	double sum = 0, sq = 0;

	for (unsigned i = 0; i < n; i++) {
		sum += x[i];
		sq += x[i] * x[i];
	}
	return n && sq > 0 ? sum * sum / (n * sq) : NAN;
}
