/* SPDX-License-Identifier: BSD-2-Clause */
#include "engine/verb.h"

#include <string.h>

#include "base/error.h"
#include "engine/bench.h"

int cqp_verb_access(uint32_t verbs, bool target)
{
	int a = IBV_ACCESS_LOCAL_WRITE;

	if (!target)
		return a;
	if (verbs & (1u << CQP_VERB_WRITE | 1u << CQP_VERB_WRITE_IMM))
		a |= IBV_ACCESS_REMOTE_WRITE;
	if (verbs & 1u << CQP_VERB_READ)
		a |= IBV_ACCESS_REMOTE_READ;
	if (verbs & 1u << CQP_VERB_ATOMIC)
		a |= IBV_ACCESS_REMOTE_ATOMIC;
	return a;
}

uint64_t cqp_verb_extra(uint32_t verbs, uint32_t slots)
{
	return 8 + (verbs & 1u << CQP_VERB_WRITE ? (uint64_t)slots * 8 : 0);
}

static void one_sge(struct ibv_send_wr *wr, struct ibv_sge *sge, void *addr,
		    uint32_t len, uint32_t lkey)
{
	sge[0].addr = (uintptr_t)addr;
	sge[0].length = len;
	sge[0].lkey = lkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
}

/* WRITE: the payload but its last 8 bytes from the buffer, those from
 * the request's own tail slot, so that what the target polls is this
 * request's sequence number whenever the NIC reads it. */
static void prep_write(struct cqp_verb_qp *q, uint32_t size, uint32_t imm,
		       struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	uint64_t seq = ++q->seq;
	/* Slots by the run's count, not the phase's: a warm-up WRITE still
	 * in flight keeps its own. */
	uint64_t *tail = &q->tails[++q->slot % q->nslots];

	*tail = cqp_tail_make(
	    seq, (imm == CQP_IMM_END ? CQP_TAIL_END : 0) |
		     (imm == CQP_IMM_MEASURE ? CQP_TAIL_MEASURE : 0) |
		     (q->measuring ? CQP_TAIL_PHASE : 0));
	wr->sg_list = sge;
	wr->num_sge = 0;
	if (size > 8) {
		sge[0].addr = (uintptr_t)q->buf;
		sge[0].length = size - 8;
		sge[0].lkey = q->lkey;
		wr->num_sge = 1;
	}
	sge[wr->num_sge].addr = (uintptr_t)tail;
	sge[wr->num_sge].length = 8;
	sge[wr->num_sge].lkey = q->lkey;
	wr->num_sge++;
}

void cqp_verb_prep(uint32_t verb, struct cqp_verb_qp *q, uint32_t size,
		   uint32_t imm, bool inl, struct ibv_send_wr *wr,
		   struct ibv_sge *sge)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr.rdma.remote_addr = q->raddr;
	wr->wr.rdma.rkey = q->rkey;
	switch (verb) {
	case CQP_VERB_SEND:
		wr->opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		wr->imm_data = imm;
		one_sge(wr, sge, q->buf, size, q->lkey);
		break;
	case CQP_VERB_WRITE_IMM:
		wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr->imm_data = imm;
		one_sge(wr, sge, q->buf, size, q->lkey);
		break;
	case CQP_VERB_WRITE:
		wr->opcode = IBV_WR_RDMA_WRITE;
		prep_write(q, size, imm, wr, sge);
		break;
	case CQP_VERB_READ:
		wr->opcode = IBV_WR_RDMA_READ;
		one_sge(wr, sge, q->buf, size, q->lkey);
		inl = false;
		break;
	default: /* CQP_VERB_ATOMIC: fetch-and-add 1 to the peer's counter */
		wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = q->raddr + q->counter_at;
		wr->wr.atomic.rkey = q->rkey;
		wr->wr.atomic.compare_add = 1;
		q->adds++;
		one_sge(wr, sge, q->buf, 8, q->lkey);
		inl = false;
		break;
	}
	wr->send_flags = inl ? IBV_SEND_INLINE : 0;
}

uint32_t cqp_verb_mem_take(struct cqp_verb_qp *q, uint32_t size)
{
	uint64_t v = cqp_verb_peek(q, size);
	uint32_t msgs;

	if (!v)
		return 0;
	msgs = cqp_tail_phase_moved(q->seen, v) ? cqp_tail_seq(v)
						: cqp_tail_after(q->seen, v);
	q->seen = v;
	return msgs;
}

struct mem_look {
	struct cqp_verb_qp *qs;
	unsigned n, at;
	uint32_t size;
};

static int mem_look(void *arg)
{
	struct mem_look *m = arg;

	for (unsigned k = 0; k < m->n; k++) {
		uint32_t msgs = cqp_verb_mem_take(&m->qs[m->at], m->size);

		if (msgs)
			return (int)msgs;
		if (++m->at == m->n)
			m->at = 0;
	}
	return 0;
}

int cqp_verb_mem_wait(struct cqp_comp *comp, struct cqp_verb_qp *qs, unsigned n,
		      uint32_t size, unsigned *which)
{
	struct mem_look m = {qs, n, *which < n ? *which : 0, size};
	int rc = cqp_comp_spin(comp, mem_look, &m);

	if (rc > 0)
		*which = m.at;
	return rc;
}

/* Sizes -a steps through are powers of two; -s may be any. */
void cqp_verb_clear_tails(uint8_t *buf, uint64_t len, uint64_t size)
{
	for (uint64_t s = 8; s <= len; s *= 2)
		memset(buf + s - 8, 0, 8);
	if (size >= 8 && size <= len)
		memset(buf + size - 8, 0, 8);
}

static uint8_t pattern(uint64_t k, uint64_t i)
{
	return (uint8_t)(k * 131 + i * 7 + (i >> 8) + 1);
}

/* Is byte i where a WRITE of a power-of-two size, or of -s `size`,
 * leaves its sequence number? */
static bool in_tail(uint64_t i, uint64_t size)
{
	uint64_t end = i | 7;

	return ((end + 1) & end) == 0 ||
	       (size >= 8 && i + 8 >= size && i < size);
}

void cqp_verb_fill(uint8_t *buf, uint64_t len, uint64_t k, uint64_t size)
{
	for (uint64_t i = 0; i < len; i++)
		buf[i] = in_tail(i, size) ? 0 : pattern(k, i);
}

int64_t cqp_verb_check(const uint8_t *buf, uint64_t len, uint64_t k,
		       uint64_t size)
{
	for (uint64_t i = 0; i < len; i++)
		if (buf[i] != (in_tail(i, size) ? 0 : pattern(k, i)))
			return (int64_t)i;
	return -1;
}

void cqp_verb_step(uint32_t verb, struct cqp_verb_qp *q, bool requester,
		   uint64_t size, uint64_t opt_size)
{
	q->vstep++;
	if (!requester || verb == CQP_VERB_ATOMIC)
		return;
	if (verb == CQP_VERB_READ)
		memset(q->buf, 0, size);
	else
		cqp_verb_fill(q->buf, size, q->vstep, opt_size);
}

static int differs(uint32_t verb, int64_t at, uint64_t size)
{
	return cqp_fail(
	    CQP_E_PROTO,
	    "--verify: byte %lld of a %llu-byte %s is not what "
	    "was %s",
	    (long long)at, (unsigned long long)size, cqp_verb_name(verb),
	    verb == CQP_VERB_READ ? "in the peer's buffer" : "sent");
}

int cqp_verb_verify_landed(uint32_t verb, struct cqp_verb_qp *q, uint64_t size,
			   uint64_t len, uint64_t opt_size)
{
	uint64_t check = verb == CQP_VERB_WRITE ? size - 8 : size;
	int64_t at;

	if (verb == CQP_VERB_READ) {
		/* What the next step reads. */
		cqp_verb_fill(q->buf, len, q->vstep + 1, opt_size);
		return 0;
	}
	if (verb == CQP_VERB_ATOMIC)
		return 0;
	at = cqp_verb_check(verb == CQP_VERB_SEND ? q->rbuf : q->buf, check,
			    q->vstep, opt_size);
	return at < 0 ? 0 : differs(verb, at, size);
}

/* The counter's value, by a fetch-and-add of 0. */
static int atomic_total(struct cqp_comp *comp, struct ibv_qp *qp,
			struct cqp_verb_qp *q, uint64_t *total)
{
	struct ibv_sge sge = {(uintptr_t)q->buf, 8, q->lkey};
	struct ibv_send_wr wr = {.wr_id = UINT64_MAX,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	struct ibv_wc wc;
	int err, n;

	wr.wr.atomic.remote_addr = q->raddr + q->counter_at;
	wr.wr.atomic.rkey = q->rkey;
	if ((err = ibv_post_send(qp, &wr, &bad)))
		return cqp_fail(CQP_E_DEVICE, "ibv_post_send on QP %u: %s",
				qp->qp_num, strerror(err));
	do {
		if ((n = cqp_comp_reap_sends(comp, &wc, 1)) < 0)
			return n;
	} while (n == 0 || wc.wr_id != UINT64_MAX);
	memcpy(total, q->buf, 8);
	return 0;
}

int cqp_verb_verify_sent(uint32_t verb, struct cqp_comp *comp,
			 struct ibv_qp *qp, struct cqp_verb_qp *q,
			 uint64_t size)
{
	uint64_t total = 0;
	int64_t at;
	int rc;

	if (verb == CQP_VERB_READ) {
		at = cqp_verb_check(q->buf, size, q->vstep, 0);
		return at < 0 ? 0 : differs(verb, at, size);
	}
	if (verb != CQP_VERB_ATOMIC)
		return 0;
	if ((rc = atomic_total(comp, qp, q, &total)) < 0)
		return rc;
	if (total != q->adds)
		return cqp_fail(CQP_E_PROTO,
				"--verify: the peer's counter reads %llu after "
				"%llu fetch-and-adds of 1",
				(unsigned long long)total,
				(unsigned long long)q->adds);
	return 0;
}
