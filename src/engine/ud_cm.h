/* SPDX-License-Identifier: BSD-2-Clause */
/* The UD path through RDMA CM (RDMA_PS_UDP): the client resolves the
 * server's address and route and sends a SIDR request per QP carrying its
 * own endpoint; the server answers with the QP number of its QP of the
 * same index.  The client takes the address handle attributes, remote QP
 * number and Q_Key from the ESTABLISHED event, as UD applications built
 * on RDMA CM do.  Every wait has the run's deadline. */
#ifndef CQP_UD_CM_H
#define CQP_UD_CM_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "verbs/verbs.h"

struct cqp_ud_cm;

/* RDMA CM fixes the Q_Key of its UDP port space. */
#define CQP_UD_CM_QKEY 0x01234567u

/* Server: listen on port (RDMA CM's UDP space, not TCP).  dev: the
 * device of our QPs; a request that arrives on another is refused. */
int cqp_ud_cm_listen(struct cqp_ud_cm **cm, uint16_t port, int timeout_ms,
		     const char *dev);
/* Server: answer n requests; request i names client QP i, whose endpoint
 * lands in remote[i], and gets our qpns[i]. */
int cqp_ud_cm_accept(struct cqp_ud_cm *cm, const uint32_t *qpns, unsigned n,
		     struct cqp_endpoint *remote);
/* Client: reach host:port once per local QP; fills ah_attr (one for all,
 * the path is the same), qpns[i] and *qkey.  A route over another device
 * than dev (our QPs') is a usage failure naming both. */
int cqp_ud_cm_connect(struct cqp_ud_cm **cm, const char *host, uint16_t port,
		      int timeout_ms, const char *dev,
		      const struct cqp_endpoint *local, unsigned n,
		      struct ibv_ah_attr *ah_attr, uint32_t *qpns,
		      uint32_t *qkey);
void cqp_ud_cm_close(struct cqp_ud_cm *cm);

#endif
