/* SPDX-License-Identifier: BSD-2-Clause */
/* --verb without a device: each verb's work request, the access a side's
 * buffers get, the WRITE tail a target polls (torn, stale and wrapped),
 * and --verify's pattern with its tails left zero. */
#include <stdlib.h>
#include <string.h>

#include "engine/bench.h"
#include "engine/verb.h"
#include "check.h"

static void tails(void)
{
	uint64_t a = cqp_tail_make(41, 0), b = cqp_tail_make(42, CQP_TAIL_END);

	CHECK(cqp_tail_valid(a) && cqp_tail_valid(b));
	CHECK(cqp_tail_after(a, b) == 1 && cqp_tail_after(b, a) == 0);
	CHECK(cqp_tail_after(0, a) == 41);
	CHECK(cqp_tail_marks(b) == CQP_TAIL_END && cqp_tail_marks(a) == 0);
	/* Zeroes, the buffer's 0x5a fill: nothing. */
	CHECK(!cqp_tail_valid(0));
	CHECK(!cqp_tail_valid(0x5a5a5a5a5a5a5a5aull));
	/* The NIC mid-way through writing b over a, either way round: no
	 * torn value passes for a tail. */
	for (unsigned k = 1; k < 8; k++) {
		uint64_t lo = ~0ull >> (64 - 8 * k), fwd, back;

		fwd = (b & lo) | (a & ~lo);
		back = (a & lo) | (b & ~lo);
		CHECK(!cqp_tail_valid(fwd) || fwd == a || fwd == b);
		CHECK(!cqp_tail_valid(back) || back == a || back == b);
	}
	/* 29 bits, wrapping: still one message on. */
	CHECK(cqp_tail_after(cqp_tail_make((1u << 29) - 1, 0),
			     cqp_tail_make(1u << 29, 0)) == 1);
	CHECK(cqp_tail_seq(cqp_tail_make(41, CQP_TAIL_PHASE | CQP_TAIL_END)) ==
	      41);
}

/* A bandwidth step's WRITEs as a target sees them: the warm-up's, then
 * the measured phase's, numbered from 1 and every one marked.  However
 * few of them the target happens to read, it sees the phase begin and
 * counts exactly the measured messages. */
static void phase(void)
{
	uint8_t buf[64 + 8 + 16 * 8] = {0}, peer[64] = {0};
	struct cqp_verb_qp tx = {
	    .buf = buf, .tails = (uint64_t *)(buf + 72), .nslots = 16};
	struct cqp_verb_qp rx = {.buf = peer};
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];
	uint64_t counted = 0, last = 0;

	/* The NIC's side: a WRITE's tail lands in the peer's last 8. */
#define LAND() memcpy(peer + cqp_verb_tail_at(64), (void *)sge[1].addr, 8)
	for (int k = 0; k < 128; k++) {
		cqp_verb_prep(CQP_VERB_WRITE, &tx, 64, 0, false, &wr, sge);
		LAND();
	}
	CHECK(cqp_verb_mem_take(&rx, 64) == 128);
	/* The warm-up's last WRITE and the first measured one land before
	 * the target looks again: the phase still shows. */
	cqp_verb_prep(CQP_VERB_WRITE, &tx, 64, CQP_IMM_MEASURE, false, &wr,
		      sge);
	LAND();
	cqp_verb_measure(&tx, true);
	for (int k = 0; k < 1000; k++) {
		cqp_verb_prep(CQP_VERB_WRITE, &tx, 64,
			      k == 999 ? CQP_IMM_END : 0, false, &wr, sge);
		LAND();
		/* The target looks now and then, never at the first. */
		if (k % 37 == 36 || k == 999) {
			uint32_t n = cqp_verb_mem_take(&rx, 64);

			CHECK(n > 0);
			counted += last ? n : 0;
			if (!last)
				counted = n;
			last = rx.seen;
		}
	}
	CHECK(cqp_tail_marks(rx.seen) == (CQP_TAIL_PHASE | CQP_TAIL_END));
	CHECK(cqp_tail_seq(rx.seen) == 1000 && counted == 1000);
	CHECK(cqp_verb_tail_at(64) % 8 == 0 && cqp_verb_tail_at(8) == 0);
	/* The next step: warm-up tails again, no phase; a target that
	 * starts from nothing takes them. */
	cqp_verb_measure(&tx, false);
	memset(peer, 0, sizeof(peer));
	rx.seen = 0;
	cqp_verb_prep(CQP_VERB_WRITE, &tx, 64, 0, false, &wr, sge);
	LAND();
	CHECK(cqp_verb_mem_take(&rx, 64) == 1001 &&
	      !(cqp_tail_marks(rx.seen) & CQP_TAIL_PHASE));
#undef LAND
}

static void prep(void)
{
	uint8_t buf[4096 + 8 + 16 * 8];
	struct cqp_verb_qp q = {.buf = buf,
				.lkey = 7,
				.raddr = 0x10000,
				.rkey = 9,
				.counter_at = 4096,
				.tails = (uint64_t *)(buf + 4096 + 8),
				.nslots = 16};
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];

	cqp_verb_prep(CQP_VERB_SEND, &q, 64, 0, true, &wr, sge);
	CHECK(wr.opcode == IBV_WR_SEND && wr.num_sge == 1 &&
	      wr.send_flags == IBV_SEND_INLINE);
	cqp_verb_prep(CQP_VERB_SEND, &q, 64, CQP_IMM_END, false, &wr, sge);
	CHECK(wr.opcode == IBV_WR_SEND_WITH_IMM && wr.imm_data == CQP_IMM_END);
	cqp_verb_prep(CQP_VERB_WRITE_IMM, &q, 64, 0, false, &wr, sge);
	CHECK(wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM &&
	      wr.wr.rdma.remote_addr == 0x10000 && wr.wr.rdma.rkey == 9);
	/* WRITE: the payload less 8 bytes, then its own tail slot. */
	cqp_verb_prep(CQP_VERB_WRITE, &q, 1024, CQP_IMM_END, false, &wr, sge);
	CHECK(wr.opcode == IBV_WR_RDMA_WRITE && wr.num_sge == 2 &&
	      sge[0].length == 1016 && sge[1].length == 8 &&
	      sge[1].addr == (uintptr_t)&q.tails[1]);
	CHECK(q.tails[1] == cqp_tail_make(1, CQP_TAIL_END));
	cqp_verb_prep(CQP_VERB_WRITE, &q, 8, 0, true, &wr, sge);
	CHECK(wr.num_sge == 1 && sge[0].addr == (uintptr_t)&q.tails[2] &&
	      q.tails[2] == cqp_tail_make(2, 0));
	/* READ and atomics are never inline. */
	cqp_verb_prep(CQP_VERB_READ, &q, 4096, 0, true, &wr, sge);
	CHECK(wr.opcode == IBV_WR_RDMA_READ && wr.send_flags == 0 &&
	      sge[0].length == 4096);
	cqp_verb_prep(CQP_VERB_ATOMIC, &q, 8, 0, true, &wr, sge);
	CHECK(wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD &&
	      wr.wr.atomic.remote_addr == 0x10000 + 4096 &&
	      wr.wr.atomic.compare_add == 1 && sge[0].length == 8 &&
	      wr.send_flags == 0 && q.adds == 1 && q.seq == 2);
}

static void access_flags(void)
{
	uint32_t all = (1u << CQP_VERB__N) - 1;

	CHECK(cqp_verb_access(all, false) == IBV_ACCESS_LOCAL_WRITE);
	CHECK(cqp_verb_access(1u << CQP_VERB_SEND, true) ==
	      IBV_ACCESS_LOCAL_WRITE);
	CHECK(cqp_verb_access(1u << CQP_VERB_READ, true) ==
	      (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
	CHECK(cqp_verb_access(1u << CQP_VERB_WRITE_IMM, true) ==
	      (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
	CHECK(cqp_verb_access(1u << CQP_VERB_ATOMIC, true) ==
	      (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC));
	CHECK(cqp_verb_extra(1u << CQP_VERB_SEND, 128) == 8);
	CHECK(cqp_verb_extra(1u << CQP_VERB_WRITE, 128) == 8 + 128 * 8);
}

static void pattern(void)
{
	uint8_t *b = malloc(8192);

	memset(b, 0x5a, 8192);
	cqp_verb_clear_tails(b, 8192, 1000);
	for (uint64_t s = 8; s <= 8192; s *= 2)
		CHECK(!cqp_tail_valid(*(uint64_t *)(b + s - 8)) &&
		      *(uint64_t *)(b + s - 8) == 0);
	CHECK(*(uint64_t *)(b + 992) == 0 && b[1000] == 0x5a);
	cqp_verb_fill(b, 8192, 3, 1000);
	CHECK(cqp_verb_check(b, 8192, 3, 1000) == -1);
	CHECK(*(uint64_t *)(b + 4088) == 0 && *(uint64_t *)(b + 992) == 0);
	CHECK(cqp_verb_check(b, 8192, 4, 1000) == 16); /* 0..15: tails */
	b[5000] ^= 1;
	CHECK(cqp_verb_check(b, 8192, 3, 1000) == 5000);
	free(b);
}

int main(void)
{
	tails();
	phase();
	prep();
	access_flags();
	pattern();
	return check_done("test_verb");
}
