/* SPDX-License-Identifier: BSD-2-Clause */
/* A server's clients (--clients K) as its traffic sees them: which client
 * a datagram came from, by its source QP and address, and the figures
 * over all of them (Jain's fairness index). */
#ifndef CQP_FANIN_H
#define CQP_FANIN_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* (source QP number, address tail) -> client index.  QP numbers are a
 * device's: two clients on two nodes may share one, so the sender's
 * address goes with it (its GID's last 4 bytes -- the IPv4 address on
 * RoCE v2 over IPv4 -- or its LID where packets carry no GRH). */
struct cqp_senders {
	struct cqp_sender {
		uint32_t qpn, tail;
		uint32_t client; /* UINT32_MAX: empty */
	} * slot;
	uint32_t mask;
};

int cqp_senders_init(struct cqp_senders *t, unsigned n);
void cqp_senders_free(struct cqp_senders *t);
/* The same (qpn, tail) twice is a failure: two clients one address. */
int cqp_senders_add(struct cqp_senders *t, uint32_t qpn, uint32_t tail,
		    uint32_t client);
/* The client, or UINT32_MAX for a stranger. */
static inline uint32_t cqp_senders_find(const struct cqp_senders *t,
					uint32_t qpn, uint32_t tail)
{
	uint32_t h = (qpn * 0x9e3779b1u) ^ tail;

	for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
		const struct cqp_sender *s = &t->slot[i];

		if (s->client == UINT32_MAX ||
		    (s->qpn == qpn && s->tail == tail))
			return s->client;
	}
}

/* An endpoint's address tail, as cqp_sender_tail finds it on the wire. */
uint32_t cqp_endpoint_tail(const union ibv_gid *gid, uint16_t lid, bool grh);
/* The tail of a received datagram's sender: from the 40 bytes before its
 * payload (a GRH, or on RoCE v2 over IPv4 the IPv4 header in their last
 * 20), or its LID without a GRH. */
uint32_t cqp_sender_tail(const struct ibv_wc *wc, const uint8_t *grh);

/* Jain's index over n rates: 1 when all are equal, 1/n when one has it
 * all; NaN for none (or all zero). */
double cqp_jain(const double *x, unsigned n);

#endif
