/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/path.h"

#include <netinet/in.h>
#include <stdio.h>

#include "engine/bench.h"
#include "base/error.h"
#include "base/fabric.h"
#include "oob/session.h"
#include "verbs/verbs.h"

/* A group's path: each client's port facts for ours, the MTU the
 * smallest any of them allows; the rest as with the first (every
 * client's own GID choice stands: the server cannot adapt to K). */
static int agree_group(struct cqp_run *run, const struct cqp_port_facts *mine,
		       struct cqp_port_facts *first, uint32_t *mtu)
{
	int rc = 0;

	for (unsigned i = 0; rc == 0 && i < run->group->n; i++) {
		struct cqp_port_facts t;
		uint32_t m;

		rc = cqp_group_exchange_port(run->group, i, mine, &t);
		if (rc == 0)
			rc = cqp_fabric_path_mtu(mine, &t, run->p->mtu, &m);
		if (rc < 0)
			break;
		if (i == 0 || m < *mtu)
			*mtu = m;
		if (i == 0)
			*first = t;
	}
	return rc;
}

static int agree(struct cqp_dev *d, struct cqp_run *run, bool rc_qps,
		 uint32_t *mtu)
{
	const struct cqp_params *p = run->p;
	struct cqp_port_facts mine, theirs;
	int rc;

	rc = cqp_fabric_transport_ok(d->ctx->device->transport_type,
				     d->info.name, rc_qps, !rc_qps);
	if (rc < 0 || (rc = cqp_dev_check_limits(d, p)) < 0)
		return rc;
	if (p->pkey_index >= d->port_attr.pkey_tbl_len)
		return cqp_fail(CQP_E_USAGE,
				"--pkey-index %u: port %u of %s has P_Keys "
				"0..%d",
				p->pkey_index, d->port, d->info.name,
				d->port_attr.pkey_tbl_len - 1);
	cqp_dev_port_facts(d, &mine);
	mine.gid_given = p->gid_index >= 0;
	if (run->group)
		rc = agree_group(run, &mine, &theirs, mtu);
	else if ((rc = cqp_session_exchange_port(run->s, &mine, &theirs)) == 0)
		rc = cqp_fabric_path_mtu(&mine, &theirs, p->mtu, mtu);
	if (rc < 0)
		return rc;
	/* Each side chose its GID alone: when the oob address matched none,
	 * the two may sit in different subnets (a VLAN, a secondary
	 * address), and RC would fail with retry-exceeded, UD lose all.
	 * With --rdma-cm, RDMA CM's route gives the path instead. */
	if (mine.ethernet && theirs.has_gid && !p->rdma_cm && !run->group &&
	    cqp_fabric_gid_adapts(run->is_client, mine.gid_given,
				  theirs.gid_given) &&
	    (rc = cqp_dev_gid_toward(d, &theirs.gid)) < 0)
		return rc;
	d->grh = cqp_fabric_use_grh(&mine, &theirs, p->gid_index >= 0);
	d->sl = (uint8_t)p->sl;
	d->tclass = (uint8_t)p->tclass;
	d->pkey_index = (uint16_t)p->pkey_index;
	d->info.path_mtu = *mtu;
	d->info.grh = d->grh;
	d->info.comp_vectors = d->ctx->num_comp_vectors > 0
				   ? (uint32_t)d->ctx->num_comp_vectors
				   : 0;
	if (!rc_qps) {
		/* What a packet carries besides its payload on this link. */
		struct cqp_wire link = {
		    .ethernet = mine.ethernet,
		    .gid_type = d->gid_type,
		    .ipv4 = IN6_IS_ADDR_V4MAPPED(
			(const struct in6_addr *)d->gid.raw),
		    .grh = d->grh,
		    .vlan = mine.ethernet &&
			    cqp_fabric_gid_vlan("/sys", d->info.name, d->port,
						(unsigned)d->gid_index),
		};
		const char *wire;

		if (p->mcast[0] &&
		    (rc = cqp_fabric_mcast_ok(mine.ethernet, d->info.name)) < 0)
			return rc;
		d->info.wire_overhead = cqp_fabric_ud_overhead(&link, &wire);
		snprintf(d->info.wire, sizeof(d->info.wire), "%s", wire);
	}
	return 0;
}

int cqp_path_open(struct cqp_dev *d, struct cqp_run *run, bool rc_qps,
		  uint32_t *mtu)
{
	const struct cqp_params *p = run->p;
	uint8_t local[16];
	bool known = cqp_oob_local_gid(cqp_run_oob(run), local) == 0;
	int rc;

	rc = cqp_dev_open(d, p->ib_dev, p->ib_port, p->gid_index,
			  known ? local : NULL);
	if (rc < 0)
		return rc;
	rc = agree(d, run, rc_qps, mtu);
	if (rc < 0) {
		cqp_dev_close(d);
		return rc;
	}
	run->dev = d->info;
	run->dev_held = &d->held;
	return 0;
}
