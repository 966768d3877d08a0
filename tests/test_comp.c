/* SPDX-License-Identifier: BSD-2-Clause */
/* The completion engine's wait for a receive (cqp_comp_reap_recv_from)
 * against a fake CQ: ibv_poll_cq is libibverbs' inline call through the
 * context's ops, so a context whose poll_cq plays a script needs no
 * device.  Poll mode on one CQ spins inside the engine: sends found on
 * the way do not end the wait, every poll is counted, the deadline holds
 * and a failed completion is said. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "check.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/options.h"
#include "verbs/completion.h"

/* The script: what each poll returns, in order; then empty polls. */
#define MAX_STEPS 16
static struct step {
	int n;
	enum ibv_wc_opcode op[4];
	enum ibv_wc_status status;
} script[MAX_STEPS];
static unsigned nsteps, at, calls;
/* test_wakeup_wall_clock: polls find nothing until an event is taken,
 * then, this many us later, a receive. */
static unsigned events_taken, recv_after_event_us;

static int fake_poll(struct ibv_cq *cq, int max, struct ibv_wc *wc)
{
	(void)cq;
	calls++;
	if (recv_after_event_us) {
		if (!events_taken)
			return 0;
		usleep(recv_after_event_us);
		recv_after_event_us = 0;
		wc[0] = (struct ibv_wc){.status = IBV_WC_SUCCESS,
					.opcode = IBV_WC_RECV};
		return 1;
	}
	if (at == nsteps)
		return 0;
	const struct step *s = &script[at++];
	int n = s->n < max ? s->n : max;

	for (int i = 0; i < n; i++)
		wc[i] = (struct ibv_wc){.wr_id = 100 + calls,
					.status = s->status,
					.opcode = s->op[i]};
	return n;
}

struct rig {
	struct ibv_context ctx;
	struct ibv_cq cq;
	struct cqp_comp_cq q;
	struct cqp_comp c;
};

static void rig_init(struct rig *r, uint32_t mode)
{
	memset(r, 0, sizeof(*r));
	r->ctx.ops.poll_cq = fake_poll;
	r->cq.context = &r->ctx;
	r->q.cq = &r->cq;
	r->c.cqs = &r->q;
	r->c.ncq = 1;
	r->c.cfg.mode = mode;
	r->c.cfg.poll_batch = 16;
	r->c.batch = 16;
	r->c.last_ns = cqp_now_ns();
	nsteps = at = calls = 0;
}

static void play(struct step s)
{
	script[nsteps++] = s;
}

#define SEND(n) ((struct step){n, {IBV_WC_SEND, IBV_WC_SEND}, IBV_WC_SUCCESS})

/* Our own sends found first, then the receive: one return, with all. */
static void test_sends_do_not_end_the_wait(void)
{
	struct rig r;
	struct ibv_wc wc[16];
	int n;

	rig_init(&r, CQP_CQ_POLL);
	play(SEND(1));
	play((struct step){0});
	play((struct step){0});
	play((struct step){2, {IBV_WC_SEND, IBV_WC_RECV}, IBV_WC_SUCCESS});
	play(SEND(1)); /* after the receive: the next call's */
	n = cqp_comp_reap_recv_from(&r.c, wc, 16, cqp_now_ns(), 1000);
	CHECK(n == 3);
	CHECK(wc[0].opcode == IBV_WC_SEND && wc[1].opcode == IBV_WC_SEND &&
	      wc[2].opcode == IBV_WC_RECV);
	CHECK(calls == 4);
	CHECK(r.c.cnt.polls == 4 && r.c.cnt.empty_polls == 2);
	CHECK(r.c.cnt.completions == 3 && r.c.cnt.spin_completions == 3);
	CHECK(r.c.progressed);
}

/* Room for two: two sends fill it, and the wait returns them. */
static void test_full_array_returns(void)
{
	struct rig r;
	struct ibv_wc wc[2];

	rig_init(&r, CQP_CQ_POLL);
	play(SEND(2));
	play((struct step){1, {IBV_WC_RECV}, IBV_WC_SUCCESS});
	CHECK(cqp_comp_reap_recv_from(&r.c, wc, 2, cqp_now_ns(), 1000) == 2);
	CHECK(calls == 1);
}

/* Silence: 0 once wait_ms from since_ns passed, the sends found before
 * it returned instead; the clock is read every CLOCK_EVERY polls only. */
static void test_deadline(void)
{
	struct rig r;
	struct ibv_wc wc[16];
	uint64_t t0 = cqp_now_ns();
	int n;

	rig_init(&r, CQP_CQ_POLL);
	n = cqp_comp_reap_recv_from(&r.c, wc, 16, t0, 5);
	CHECK(n == 0);
	CHECK(cqp_now_ns() - t0 >= 5000000u);
	CHECK(r.c.cnt.polls == r.c.cnt.empty_polls && r.c.cnt.polls >= 1024);
	CHECK(r.c.cnt.polls % 1024 == 0);

	rig_init(&r, CQP_CQ_POLL);
	play(SEND(1));
	CHECK(cqp_comp_reap_recv_from(&r.c, wc, 16, cqp_now_ns(), 2) == 1);
	CHECK(wc[0].opcode == IBV_WC_SEND);
}

/* since_ns 0: the wait counts from the last completion, which the first
 * look at the clock dates; a silence after it ends the wait. */
static void test_since_last_completion(void)
{
	struct rig r;
	struct ibv_wc wc[16];
	uint64_t t0;

	rig_init(&r, CQP_CQ_POLL);
	r.c.last_ns = 1; /* long ago: counted from it, the wait is over */
	r.c.progressed = false;
	CHECK(cqp_comp_reap_recv_from(&r.c, wc, 16, 0, 1000) == 0);
	CHECK(r.c.cnt.polls == 1024);

	rig_init(&r, CQP_CQ_POLL);
	r.c.last_ns = 1;
	r.c.progressed = true; /* a completion since: dated now */
	t0 = cqp_now_ns();
	CHECK(cqp_comp_reap_recv_from(&r.c, wc, 16, 0, 20) == 0);
	CHECK(cqp_now_ns() - t0 >= 20000000u);
}

/* A failed completion is a CQP_E_COMPLETION failure naming its status. */
static void test_failed_completion(void)
{
	struct rig r;
	struct ibv_wc wc[16];

	rig_init(&r, CQP_CQ_POLL);
	play((struct step){1, {IBV_WC_RECV}, IBV_WC_LOC_LEN_ERR});
	CHECK(cqp_comp_reap_recv_from(&r.c, wc, 16, cqp_now_ns(), 1000) ==
	      -CQP_E_COMPLETION);
	CHECK(strstr(cqp_errmsg(), "local length error") != NULL);
	cqp_errclear();
}

/* A stop asked for ends the spin within LOOK_EVERY polls. */
static void test_stop(void)
{
	static volatile sig_atomic_t stop = 1;
	struct rig r;
	struct ibv_wc wc[16];

	rig_init(&r, CQP_CQ_POLL);
	r.c.cfg.stop = &stop;
	CHECK(cqp_comp_reap_recv_from(&r.c, wc, 16, cqp_now_ns(), 1000) ==
	      -CQP_E_INTERRUPTED);
	CHECK(calls == 0);
	cqp_errclear();
}

/* ibv_get_cq_event reads the channel's fd for the CQ's handle, then
 * reaches into the CQ's real context: the test's channel is a pipe of
 * CQ pointers, read here instead (linked with --wrap). */
int __wrap_ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			    void **cq_context);
int __wrap_ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			    void **cq_context)
{
	if (read(ch->fd, cq, sizeof(*cq)) != (ssize_t)sizeof(*cq))
		return -1;
	events_taken++;
	*cq_context = (*cq)->cq_context;
	return 0;
}

static int fake_arm(struct ibv_cq *cq, int solicited)
{
	(void)cq;
	(void)solicited;
	return 0;
}

/* Four CQs on one blocking channel, watched by epoll (as --cq-mod N,0
 * sets it up): all four events already queued when the wait wakes.  One
 * wakeup takes them all; taking one, the three left each ended a later
 * wait at once and counted as a wakeup that never slept. */
static void test_queued_events_one_wakeup(void)
{
	struct rig r;
	struct ibv_cq cqs[4];
	struct cqp_comp_cq qs[4];
	struct ibv_comp_channel ch = {0}, *chans[1] = {&ch};
	struct epoll_event ev = {.events = EPOLLIN};
	struct ibv_wc wc[16];
	struct pollfd left;
	unsigned taken = 0;
	int fds[2];

	rig_init(&r, CQP_CQ_EVENT);
	r.ctx.ops.req_notify_cq = fake_arm;
	CHECK(pipe(fds) == 0);
	ch.fd = fds[0];
	memset(qs, 0, sizeof(qs));
	for (int i = 0; i < 4; i++) {
		cqs[i] = r.cq;
		cqs[i].cq_context = &qs[i];
		qs[i].cq = &cqs[i];
		qs[i].ch = &ch;
	}
	r.c.cqs = qs;
	r.c.ncq = 4;
	r.c.chans = chans;
	r.c.nch = 1;
	r.c.cfg.ack_batch = 100;
	r.c.pol.mode = CQP_CQ_EVENT;
	r.c.residue_ns = CQP_COMP_RESIDUE_NS;
	r.c.epfd = epoll_create1(0);
	CHECK(r.c.epfd >= 0 &&
	      epoll_ctl(r.c.epfd, EPOLL_CTL_ADD, ch.fd, &ev) == 0);
	for (int i = 0; i < 4; i++) {
		struct ibv_cq *p = &cqs[i];

		CHECK(write(fds[1], &p, sizeof(p)) == (ssize_t)sizeof(p));
	}
	/* Two passes over the four CQs find nothing (before and after the
	 * arm); after the wakeup, a receive. */
	for (int i = 0; i < 8; i++)
		play((struct step){0});
	play((struct step){1, {IBV_WC_RECV}, IBV_WC_SUCCESS});
	CHECK(cqp_comp_reap(&r.c, wc, 16) == 1);
	CHECK(r.c.cnt.wakeups == 1);
	for (int i = 0; i < 4; i++)
		taken += qs[i].unacked;
	left = (struct pollfd){.fd = ch.fd, .events = POLLIN};
	CHECK(taken == 4 && poll(&left, 1, 0) == 0);
	close(r.c.epfd);
	close(fds[0]);
	close(fds[1]);
}

/* ski times each wakeup on the wall clock beside its CPU: arm to event,
 * and event to the completion reaped (here 2 ms of it, the poll's). */
static void test_wakeup_wall_clock(void)
{
	struct rig r;
	struct ibv_comp_channel ch = {0}, *chans[1] = {&ch};
	struct epoll_event ev = {.events = EPOLLIN};
	struct ibv_cq *p = NULL;
	struct ibv_wc wc[16];
	int fds[2];

	rig_init(&r, CQP_CQ_SKI);
	r.ctx.ops.req_notify_cq = fake_arm;
	CHECK(pipe(fds) == 0);
	ch.fd = fds[0];
	r.cq.cq_context = &r.q;
	r.q.ch = &ch;
	r.c.chans = chans;
	r.c.nch = 1;
	r.c.cfg.ack_batch = 100;
	cqp_policy_init(&r.c.pol, CQP_CQ_SKI, 0, 0, 0);
	r.c.epfd = epoll_create1(0);
	CHECK(r.c.epfd >= 0 &&
	      epoll_ctl(r.c.epfd, EPOLL_CTL_ADD, ch.fd, &ev) == 0);
	p = &r.cq;
	CHECK(write(fds[1], &p, sizeof(p)) == (ssize_t)sizeof(p));
	events_taken = 0;
	recv_after_event_us = 2000;
	CHECK(cqp_comp_reap(&r.c, wc, 16) == 1);
	CHECK(r.c.cnt.wakeups == 1);
	CHECK(r.c.cnt.wake_wait.n == 1 && r.c.cnt.wake_reap.n == 1);
	CHECK(cqp_median_ring_get(&r.c.cnt.wake_reap) >= 2000000u);
	CHECK(cqp_median_ring_get(&r.c.cnt.wake_wait) > 0);
	/* Reaped again without a wakeup: nothing more is timed. */
	play((struct step){1, {IBV_WC_RECV}, IBV_WC_SUCCESS});
	CHECK(cqp_comp_reap(&r.c, wc, 16) == 1);
	CHECK(r.c.cnt.wake_reap.n == 1);
	close(r.c.epfd);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	test_wakeup_wall_clock();
	test_queued_events_one_wakeup();
	test_sends_do_not_end_the_wait();
	test_full_array_returns();
	test_deadline();
	test_since_last_completion();
	test_failed_completion();
	test_stop();
	return check_done("test_comp");
}
