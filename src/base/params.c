/* SPDX-License-Identifier: BSD-2-Clause */
/* What parameters imply (CQ depth, arrival shape, queue memory) and
 * whether a set of them makes sense together (cqp_params_validate). */
#include "base/options_impl.h"

#include <arpa/inet.h>
#include <inttypes.h>

#include "base/arrival.h"
#include "base/error.h"

uint32_t cqp_params_cq_depth(const struct cqp_params *p)
{
	/* Both at most 32768 (the table's bounds): no overflow. */
	return p->cq_depth ? p->cq_depth : p->tx_depth + p->rx_depth;
}

void cqp_params_arrival(const struct cqp_params *p, struct cqp_arrival_shape *s)
{
	*s = (struct cqp_arrival_shape){
	    .kind = p->arrival,
	    .burst = p->burst,
	    .on_ms = p->on_ms,
	    .off_ms = p->off_ms,
	    .pareto_milli = p->pareto_milli,
	};
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

uint64_t cqp_queue_mem(const struct cqp_params *p, uint64_t nqps, uint64_t nrqs,
		       uint64_t ncqs)
{
	uint64_t inl =
	    p->inline_size < 0 ? CQP_AUTO_INLINE : (uint64_t)p->inline_size;
	uint64_t sqe = 64 + round_up(inl, 64);

	return nqps * round_up(p->tx_depth * sqe, 4096) +
	       nrqs * round_up(p->rx_depth * 64ull, 4096) +
	       ncqs * round_up(cqp_params_cq_depth(p) * 64ull, 4096);
}

static int validate_verbs(const struct cqp_params *p, enum cqp_tool tool)
{
	uint32_t verbs = cqp_params_verbs(p);
	bool write = verbs & 1u << CQP_VERB_WRITE;

	if (tool & UD_TOOLS && p->verb != CQP_VERB_SEND)
		return cqp_fail(CQP_E_USAGE,
				"--verb: '%s' is not for UD, whose queue pairs "
				"carry SEND only (allowed: send)",
				cqp_verb_name(p->verb));
	if (p->verbs && p->verb != CQP_VERB_SEND)
		return cqp_fail(CQP_E_USAGE,
				"--verb and --verbs conflict: one verb, or a "
				"set of steps per verb");
	if (!write &&
	    (p->cq_mode == CQP_CQ_MEM || p->client_cq_mode == CQP_CQ_MEM ||
	     (p->compare_modes && cqp_params_compare(p) & 1u << CQP_CQ_MEM)))
		return cqp_fail(
		    CQP_E_USAGE,
		    "--cq-mode mem is for --verb write only: memory "
		    "polling waits where a plain RDMA WRITE leaves "
		    "no completion; other verbs have one to reap");
	if (p->verb == CQP_VERB_WRITE && !p->verbs && !p->compare_modes &&
	    p->cq_mode != CQP_CQ_MEM)
		return cqp_fail(
		    CQP_E_USAGE,
		    "--verb write --cq-mode %s: a plain RDMA WRITE "
		    "raises no completion at the target; use --verb "
		    "write-imm for events (allowed: --cq-mode mem)",
		    cqp_cq_mode_name(p->cq_mode));
	if (verbs & 1u << CQP_VERB_ATOMIC && (p->all || p->size != 8))
		return cqp_fail(CQP_E_USAGE,
				"--verb atomic: atomics are 8 bytes (allowed: "
				"--size 8, without --all)");
	/* The target loads the last 8 bytes at once (acquire): misaligned,
	 * that faults on Armv8.0-8.3 (LDAR) and is undefined on x86.  A
	 * write-imm's target polls no memory, so any size does there. */
	if (write && !p->all && !cqp_verb_size_ok(CQP_VERB_WRITE, p->size))
		return cqp_fail(CQP_E_USAGE,
				"--size %" PRIu64 ": --verb write polls the "
				"last 8 bytes of a message for its sequence "
				"number, an aligned 8-byte load (allowed: a "
				"multiple of 8, from 8)",
				p->size);
	return 0;
}

/* A multicast GID: ff00::/8, or an IPv4-mapped 224.0.0.0/4 (RoCE v2). */
static bool is_mcast_gid(const char *text)
{
	struct in6_addr a;

	if (inet_pton(AF_INET6, text, &a) != 1)
		return false;
	if (a.s6_addr[0] == 0xff)
		return true;
	return IN6_IS_ADDR_V4MAPPED(&a) && (a.s6_addr[12] & 0xf0) == 0xe0;
}

/* Whether a step of the run may reap in `mode`. */
static bool uses_mode(const struct cqp_params *p, uint32_t mode)
{
	return p->cq_mode == mode || p->client_cq_mode == mode ||
	       (p->compare_modes && cqp_params_compare(p) & 1u << mode);
}

int cqp_params_validate(const struct cqp_params *p, enum cqp_tool tool)
{
	int rc = validate_verbs(p, tool);

	if (rc < 0)
		return rc;
	if (p->p99_target_us && !uses_mode(p, CQP_CQ_ADAPTIVE))
		return cqp_fail(CQP_E_USAGE,
				"--p99-target is the adaptive policy's: give "
				"--cq-mode adaptive (or adaptive in "
				"--compare-modes or --client-cq-mode)");
	if (p->arrival != CQP_ARRIVAL_FIXED && !p->rate && !p->nrates)
		return cqp_fail(CQP_E_USAGE,
				"--arrival needs --rate or --rates: without a "
				"rate the client sends each request when the "
				"last reply is in (ping-pong)");
	if (p->rate && p->nrates)
		return cqp_fail(CQP_E_USAGE,
				"--rate and --rates conflict: one rate, or a "
				"row per rate");
	if ((p->rate || p->nrates) && p->cq_depth &&
	    p->cq_depth < p->tx_depth + p->rx_depth)
		return cqp_fail(CQP_E_USAGE,
				"--cq-depth %u is below tx-depth + rx-depth "
				"(%u): an open loop can have both queues' "
				"completions waiting at once",
				p->cq_depth, p->tx_depth + p->rx_depth);
	if (p->nrates && p->all)
		return cqp_fail(CQP_E_USAGE,
				"--rates and --all conflict: one axis at a "
				"time (a row per rate of one --size)");
	if (p->cm_addr[0] && !p->rdma_cm && tool != CQP_TOOL_CM_EVENT_STRESS)
		return cqp_fail(CQP_E_USAGE,
				"--cm-addr needs --rdma-cm: without it the "
				"path is set up over the TCP channel");
	if (p->mcast[0] && !is_mcast_gid(p->mcast))
		return cqp_fail(
		    CQP_E_USAGE,
		    "--mcast: '%s' is not a multicast GID (ff00::/8, "
		    "or ::ffff:224.0.0.0/100 for RoCE v2)",
		    p->mcast);
	if (p->msgs && p->no_qp)
		return cqp_fail(CQP_E_USAGE,
				"--msgs and --no-qp conflict: traffic needs "
				"QPs");
	if (p->rdma_cm && p->qkey != CQP_DEFAULT_QKEY)
		return cqp_fail(
		    CQP_E_USAGE,
		    "--qkey and --rdma-cm conflict: RDMA CM fixes "
		    "the Q_Key of its UDP port space at 0x01234567");
	if (p->mcast[0] && p->rdma_cm)
		return cqp_fail(CQP_E_USAGE,
				"--mcast and --rdma-cm conflict: multicast "
				"joins with ibv_attach_mcast");
	if (p->mtu && (p->mtu & (p->mtu - 1)))
		return cqp_fail(CQP_E_USAGE,
				"--mtu: '%u' is not one of 256, 512, 1024, "
				"2048 or 4096",
				p->mtu);
	if (p->ncpu && p->ncpu < p->nthreads)
		return cqp_fail(CQP_E_USAGE,
				"--cpu lists %u CPUs for --threads %u: one "
				"per thread",
				p->ncpu, p->nthreads);
	if (p->shared_channel && (tool & LAT_TOOLS))
		return cqp_fail(
		    CQP_E_USAGE,
		    "--shared-channel does not fit ping-pong: each thread "
		    "waits for its own reply before the next request, so a "
		    "reply another thread reaped would stall it; use a "
		    "bandwidth tool");
	if (p->shared_channel && p->nthreads < 2)
		return cqp_fail(CQP_E_USAGE,
				"--shared-channel needs --threads 2 or more: "
				"one thread has no one to share with");
	if (p->shared_channel && cqp_cq_mode_polls(p->cq_mode))
		return cqp_fail(CQP_E_USAGE,
				"--shared-channel needs --cq-mode event or "
				"hybrid: poll mode never sleeps on a channel");
	if (p->shared_channel && p->nonblock)
		return cqp_fail(CQP_E_USAGE,
				"--shared-channel and --nonblock conflict: "
				"threads sharing a channel take one event "
				"each, with a blocking read");
	if (p->shared_channel && p->channel_per_cq)
		return cqp_fail(CQP_E_USAGE,
				"--shared-channel and --channel-per-cq "
				"conflict: one channel, or one per CQ");
	if ((uint64_t)p->nthreads * p->qps > 1024)
		return cqp_fail(CQP_E_USAGE,
				"--threads %u times --qps %u is %u QPs: at "
				"most 1024 in all",
				p->nthreads, p->qps, p->nthreads * p->qps);
	if (p->nthreads > 1 && p->rate && p->rate < p->nthreads)
		return cqp_fail(CQP_E_USAGE,
				"--rate %" PRIu64 " is below --threads %u: "
				"the rate is split over the threads",
				p->rate, p->nthreads);
	if (p->signal_every > p->tx_depth)
		return cqp_fail(CQP_E_USAGE,
				"--signal-every %u exceeds --tx-depth %u: the "
				"send queue would fill with unsignaled work",
				p->signal_every, p->tx_depth);
	if (p->post_list > p->tx_depth)
		return cqp_fail(CQP_E_USAGE,
				"--post-list %u exceeds --tx-depth %u",
				p->post_list, p->tx_depth);
	if (p->cq_depth &&
	    p->cq_depth <
		(p->tx_depth > p->rx_depth ? p->tx_depth : p->rx_depth))
		return cqp_fail(CQP_E_USAGE,
				"--cq-depth %u is below the queue depth it "
				"serves (tx-depth %u, rx-depth %u)",
				p->cq_depth, p->tx_depth, p->rx_depth);
	return 0;
}

/* Calls fn for each negotiated option of tool whose value in p differs
 * from the default, with its text. */
