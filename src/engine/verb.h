/* SPDX-License-Identifier: BSD-2-Clause */
/* What a request is on the wire for each --verb, shared by the RC tools:
 * its work request, the remote buffer it reaches, the sequence number a
 * plain WRITE leaves in the last 8 bytes of its message for a target
 * that polls memory (--cq-mode mem), and --verify's payload pattern. */
#ifndef CQP_VERB_H
#define CQP_VERB_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/options.h"
#include "verbs/completion.h"

/* A WRITE's last 8 bytes (its tail): a sequence number (29 bits,
 * wrapping), the marks, and in the high half the complement of the low
 * one.  The number counts per QP over the run from 1, except in a phase
 * (CQP_TAIL_PHASE, cqp_verb_measure): a bandwidth step's measured
 * WRITEs, every one of them marked, numbered from 1, so that a target
 * that missed the first still sees the phase begin and counts its
 * messages exactly.  The target may read the 8 bytes while the NIC
 * writes them: a torn read, and zeroes or stale payload, fail the check
 * and count as nothing. */
#define CQP_TAIL_MEASURE 1u /* the first measured message (ping-pong) */
#define CQP_TAIL_END	 2u /* the step's last message */
#define CQP_TAIL_PHASE	 4u /* the measured phase, numbered from 1 */
#define CQP_TAIL_MARKS	 3u /* bits of marks */
#define CQP_TAIL_SEQ	 29u

static inline uint64_t cqp_tail_make(uint64_t seq, uint32_t marks)
{
	uint32_t lo = (uint32_t)(seq << CQP_TAIL_MARKS) | marks;

	return (uint64_t)~lo << 32 | lo;
}

static inline bool cqp_tail_valid(uint64_t v)
{
	return (uint32_t)(v >> 32) == (uint32_t)~v;
}

static inline uint32_t cqp_tail_marks(uint64_t v)
{
	return (uint32_t)v & ((1u << CQP_TAIL_MARKS) - 1);
}

static inline uint32_t cqp_tail_seq(uint64_t v)
{
	return (uint32_t)v >> CQP_TAIL_MARKS;
}

/* Messages from tail `from` to tail `to`, in serial arithmetic: 0 when
 * `to` is not newer. */
static inline uint32_t cqp_tail_after(uint64_t from, uint64_t to)
{
	uint32_t d = cqp_tail_seq(to) - cqp_tail_seq(from);

	d &= (1u << CQP_TAIL_SEQ) - 1;
	return d < 1u << (CQP_TAIL_SEQ - 1) ? d : 0;
}

/* `v` is of another phase than `seen`: a phase begins (or a step after
 * it), whatever the numbers say. */
static inline bool cqp_tail_phase_moved(uint64_t seen, uint64_t v)
{
	return ((uint32_t)(seen ^ v) & CQP_TAIL_PHASE) != 0;
}

/* One QP's side of the verbs: the peer's buffer, our own, and for WRITE
 * the tail slots (a slot per request that may be in flight, so that the
 * NIC reads each request's own sequence number, in the same MR). */
struct cqp_verb_qp {
	uint8_t *buf; /* ours, registered with lkey */
	uint32_t lkey;
	uint8_t *rbuf; /* where receives land: apart from buf for SEND */
	uint32_t rlen;
	uint64_t raddr; /* the peer's buffer */
	uint32_t rkey;
	/* After the payload bytes, 8-aligned: the atomics' counter (at
	 * counter_at, in either buffer), then the tails: nslots of them. */
	uint64_t counter_at;
	uint64_t *tails;
	uint32_t nslots;
	uint64_t seq;	/* the last WRITE sequence number we sent */
	uint64_t slot;	/* WRITEs sent over the run: the next tail slot */
	bool measuring; /* our WRITEs are a phase (CQP_TAIL_PHASE) */
	uint64_t adds;	/* fetch-and-adds we sent, over the run */
	uint64_t seen;	/* mem: the last valid tail that reached us (0: none) */
	uint64_t vstep; /* --verify: the step, whose pattern is sent */
};

/* The MR access a side needs for the run's verbs (a mask, 1u << verb):
 * a target gets the remote access those verbs need and nothing more. */
int cqp_verb_access(uint32_t verbs, bool target);
/* Bytes a QP's buffer needs after its payload bytes (8-aligned) for the
 * atomics' counter and the tail slots. */
uint64_t cqp_verb_extra(uint32_t verbs, uint32_t slots);

/* Fills wr and sge (up to 2) for one request of `size` bytes.  `imm` is
 * what SEND would carry (0: none; CQP_IMM_MEASURE, CQP_IMM_END or a
 * number): write-imm always carries it, write turns the marks into the
 * tail's flags, read and atomic carry nothing.  `inl`: the size fits the
 * QP's inline data.  wr_id, signaling and chaining are the caller's. */
void cqp_verb_prep(uint32_t verb, struct cqp_verb_qp *q, uint32_t size,
		   uint32_t imm, bool inl, struct ibv_send_wr *wr,
		   struct ibv_sge *sge);

/* WRITE, the requester: a bandwidth step's measured phase begins (on)
 * with the next WRITE, numbered 1, and every tail from it on carries
 * CQP_TAIL_PHASE until it ends with the step (off). */
static inline void cqp_verb_measure(struct cqp_verb_qp *q, bool on)
{
	if (on)
		q->seq = 0;
	q->measuring = on;
}

/* Where a WRITE of `size` bytes leaves its tail: the last 8 bytes, on an
 * 8-byte boundary (options refuse other sizes, cqp_verb_size_ok). */
static inline uint64_t cqp_verb_tail_at(uint32_t size)
{
	return size - 8u;
}

/* mem: the tail of the newest WRITE of `size` bytes in our buffer, or 0
 * when there is none newer than q->seen. */
static inline uint64_t cqp_verb_peek(const struct cqp_verb_qp *q, uint32_t size)
{
	uint64_t v =
	    __atomic_load_n((const uint64_t *)(q->buf + cqp_verb_tail_at(size)),
			    __ATOMIC_ACQUIRE);

	return cqp_tail_valid(v) && (cqp_tail_phase_moved(q->seen, v) ||
				     cqp_tail_after(q->seen, v))
		   ? v
		   : 0;
}

/* mem: the messages the newest WRITE in q's buffer stands for, by
 * sequence number (a phase's first tail seen: the phase's so far),
 * moving q->seen on to it; 0 when there is none newer.  Never waits. */
uint32_t cqp_verb_mem_take(struct cqp_verb_qp *q, uint32_t size);

/* mem: spins (cqp_comp_spin) until a WRITE newer than q->seen lands in
 * one of the n QPs' buffers, from *next on, round robin; sets *which to
 * its index and moves its seen on (flags and all).  Counts as
 * completions the messages it stands for by sequence number, and returns
 * that count, or a failure. */
int cqp_verb_mem_wait(struct cqp_comp *comp, struct cqp_verb_qp *qs, unsigned n,
		      uint32_t size, unsigned *which);

/* Zeroes every place a WRITE of the run may leave its tail (the last 8
 * bytes of each size -a or -s may use), so that stale payload never
 * reads as a sequence number. */
void cqp_verb_clear_tails(uint8_t *buf, uint64_t len, uint64_t size);

/* --verify: pattern `k` over the first `len` bytes, the tails of every
 * power-of-two size and of -s `size` left zero (cqp_verb_clear_tails). */
void cqp_verb_fill(uint8_t *buf, uint64_t len, uint64_t k, uint64_t size);
/* The first byte of the first `len` that differs from it, or -1. */
int64_t cqp_verb_check(const uint8_t *buf, uint64_t len, uint64_t k,
		       uint64_t size);

/* --verify, each step: the step's pattern in a requester's buffer (that
 * sends it), or zeroes (where READ will land). */
void cqp_verb_step(uint32_t verb, struct cqp_verb_qp *q, bool requester,
		   uint64_t size, uint64_t opt_size);
/* --verify, the target's end of a step: what landed is the step's
 * pattern (SEND, write-imm, WRITE but its tail); for READ, the pattern
 * of the next step is laid out over `len` bytes.  CQP_E_PROTO naming
 * the first byte that differs. */
int cqp_verb_verify_landed(uint32_t verb, struct cqp_verb_qp *q, uint64_t size,
			   uint64_t len, uint64_t opt_size);
/* --verify, the requester's end of a step: READ brought the step's
 * pattern; the peer's atomic counter (read with one more fetch-and-add,
 * of 0) equals the fetch-and-adds sent.  CQP_E_PROTO otherwise. */
int cqp_verb_verify_sent(uint32_t verb, struct cqp_comp *comp,
			 struct ibv_qp *qp, struct cqp_verb_qp *q,
			 uint64_t size);

#endif
