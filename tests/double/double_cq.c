/* SPDX-License-Identifier: BSD-2-Clause */
/* The device double's CQs: channels it owns and mlx5's CQ moderation.
 *
 * mlx5 raises a CQ's event when the CQ is armed and either cq_max_count
 * completions have arrived since arming or cq_period us have passed since
 * its last event (the period starts from the EQE: mlx5_ib_create_cq
 * leaves the CQ context's cq_period_mode at 0, START_FROM_EQE), so a
 * completion after a quiet spell longer than the period raises its event
 * at once; 0 disables a trigger (kernel drivers/infiniband/hw/mlx5/cq.c
 * mlx5_ib_modify_cq, and the PRM's CQ context).  rxe raises one at the first
 * completion.  So a moderated CQ's completions are taken from rxe by a pump
 * thread into a ring, counted, and the event written to the app's channel (a
 * pipe) only when a trigger fires; ibv_poll_cq reads the ring.  CQs that are
 * not moderated have their rxe events forwarded one for one.
 *
 * An arm that finds CQEs the app has not polled raises the event at once
 * on mlx5: its arm doorbell carries the consumer index (rdma-core
 * providers/mlx5/cq.c mlx5_arm_cq writes sn << 28 | cmd | ci, and the
 * kernel's mlx5_cq_arm the same), the CQE index the hardware is to report;
 * mlx5_ib_arm_cq reports missed events for its software completions only,
 * leaving the hardware ones to this (DPDK d76a17f7: "arms the CQ to get
 * notifications when a specific CQE index is created").  rxe raises an
 * event only when a completion is posted after the arm (rxe_cq_post), and
 * uverbs drops IB_CQ_REPORT_MISSED_EVENTS.  Inferred from those sources,
 * not seen on a ConnectX; a solicited-only arm, and a moderated CQ's
 * count, are left as rxe and the period/count rule have them. */
#include "double.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct dbl_cq *dbl_cq_find(struct ibv_cq *cq)
{
	for (struct dbl_cq *q = dbl.cqs; q; q = q->next)
		if (q->cq == cq)
			return q;
	return NULL;
}

static struct dbl_chan *chan_find(struct ibv_comp_channel *ch)
{
	for (struct dbl_chan *c = dbl.chans; c; c = c->next)
		if (&c->pub == ch)
			return c;
	return NULL;
}

static bool moderated(const struct dbl_cq *q)
{
	return q->count || q->period;
}

void dbl_fault_wc(struct ibv_wc *wc, int n)
{
	for (int i = 0; dbl.fault.wc_rnr_at && i < n; i++)
		if (__atomic_add_fetch(&dbl.completions, 1, __ATOMIC_RELAXED) ==
		    dbl.fault.wc_rnr_at) {
			wc[i].status = IBV_WC_RNR_RETRY_EXC_ERR;
			dbl_log("fault wc_rnr");
		}
}

/* Locked.  The app's event, on its channel. */
static void deliver(struct dbl_cq *q)
{
	struct ibv_cq *cq = q->cq;

	q->app_armed = false;
	q->since_arm = 0;
	q->first_ns = 0;
	q->event_ns = dbl_now_ns();
	if (write(q->chan->wfd, &cq, sizeof(cq)) != (ssize_t)sizeof(cq))
		fprintf(stderr, "cqpdouble: event lost: %s\n", strerror(errno));
}

/* Locked.  Fires a moderated CQ's event when a trigger is due. */
static void mod_check(struct dbl_cq *q, uint64_t now)
{
	if (!q->app_armed || !q->since_arm)
		return;
	if ((q->count && q->since_arm >= q->count) ||
	    (q->period && now - q->first_ns >= (uint64_t)q->period * 1000u)) {
		dbl_log("event cq after %u completions", q->since_arm);
		deliver(q);
	}
}

/* Locked.  A moderated CQ's period runs, from its last event (the first
 * event at once); the pump, which may be asleep with no deadline (a poll
 * of the app's swept the completion), is woken to count it. */
static void start_timer(struct dbl_cq *q)
{
	char b = 0;

	q->first_ns = q->event_ns;
	if (write(dbl.wake[1], &b, 1) < 0 && errno != EAGAIN)
		fprintf(stderr, "cqpdouble: pump not woken: %s\n",
			strerror(errno));
}

/* Locked.  Moves what rxe holds into the ring, counting arrivals. */
static int sweep(struct dbl_cq *q)
{
	while (q->len < q->cap) {
		uint32_t tail = (q->head + q->len) % q->cap;
		uint32_t room = q->cap - q->len;
		int want = (int)(room < q->cap - tail ? room : q->cap - tail);
		int n = dbl.poll_cq(q->cq, want, q->ring + tail);

		if (n < 0)
			return n;
		if (n == 0)
			break;
		q->len += (uint32_t)n;
		if (q->app_armed) {
			if (!q->since_arm && q->period)
				start_timer(q);
			q->since_arm += (uint32_t)n;
		}
	}
	return 0;
}

#define LATE_NS (20ull * 1000 * 1000)

/* Locked.  send_late: the sends polled go to q->late (while there is
 * room), and come back behind the next receive, or LATE_NS on. */
static int late_sends(struct dbl_cq *q, int n, struct ibv_wc *wc)
{
	const uint32_t room = sizeof(q->late) / sizeof(q->late[0]);
	int got = dbl.poll_cq(q->cq, n, wc), k = 0, recvs = 0;
	uint32_t m = 0;

	for (int i = 0; i < got; i++) {
		if (!(wc[i].opcode & IBV_WC_RECV) && q->nlate < room) {
			if (!q->nlate)
				q->late_ns = dbl_now_ns();
			q->late[q->nlate++] = wc[i];
			continue;
		}
		recvs += (wc[i].opcode & IBV_WC_RECV) != 0;
		wc[k++] = wc[i];
	}
	if (got < 0 || !q->nlate ||
	    (!recvs && dbl_now_ns() - q->late_ns < LATE_NS))
		return got < 0 ? got : k;
	while (k < n && m < q->nlate)
		wc[k++] = q->late[m++];
	memmove(q->late, q->late + m, (q->nlate - m) * sizeof(q->late[0]));
	q->nlate -= m;
	q->late_ns = dbl_now_ns();
	return k;
}

static int poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct dbl_cq *q;
	int got = 0, rc;

	pthread_mutex_lock(&dbl.lock);
	q = dbl_cq_find(cq);
	if (q && !moderated(q) && dbl.fault.send_late) {
		got = late_sends(q, n, wc);
		pthread_mutex_unlock(&dbl.lock);
		if (got > 0)
			dbl_fault_wc(wc, got);
		return got;
	}
	if (q && !moderated(q) && q->len) {
		/* What an arm swept (req_notify_cq) comes first. */
		while (got < n && q->len) {
			wc[got++] = q->ring[q->head];
			q->head = (q->head + 1) % q->cap;
			q->len--;
		}
		pthread_mutex_unlock(&dbl.lock);
		dbl_fault_wc(wc, got);
		return got;
	}
	if (!q || !moderated(q)) {
		pthread_mutex_unlock(&dbl.lock);
		got = dbl.poll_cq(cq, n, wc);
		if (got > 0)
			dbl_fault_wc(wc, got);
		return got;
	}
	rc = sweep(q);
	mod_check(q, dbl_now_ns());
	while (rc == 0 && got < n && q->len) {
		wc[got++] = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->len--;
	}
	pthread_mutex_unlock(&dbl.lock);
	if (got > 0)
		dbl_fault_wc(wc, got);
	return rc < 0 ? rc : got;
}

/* Locked, just armed (mlx5, no moderation): a CQE past the consumer
 * index raises the event at once. */
static int arm_unpolled(struct dbl_cq *q)
{
	int rc = sweep(q);

	if (rc < 0 || !q->len)
		return rc < 0 ? rc : 0;
	dbl_log("arm found %u unpolled", q->len);
	deliver(q);
	return 0;
}

static int req_notify_cq(struct ibv_cq *cq, int solicited)
{
	struct dbl_cq *q;
	int rc = 0;

	pthread_mutex_lock(&dbl.lock);
	q = dbl_cq_find(cq);
	if (q && q->chan) {
		/* A moderated CQ stays armed at rxe for the pump, which
		 * counts every arrival; the app's arm starts the count. */
		if (!q->app_armed) {
			q->since_arm = 0;
			q->first_ns = 0;
		}
		q->app_armed = true;
		rc = dbl.req_notify_cq(cq, moderated(q) ? 0 : solicited);
		/* Not with moderation: whether its count takes in CQEs
		 * already there is not in the sources; nor with send_late,
		 * whose sends rxe must keep. */
		if (!rc && dbl.p->arm_sees_unpolled && !solicited &&
		    !moderated(q) && !dbl.fault.send_late)
			rc = arm_unpolled(q);
	} else {
		rc = dbl.req_notify_cq(cq, solicited);
	}
	pthread_mutex_unlock(&dbl.lock);
	return rc;
}

static int modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *a)
{
	struct dbl_cq *q;
	int rc = 0;

	if (!(a->attr_mask & IBV_CQ_ATTR_MODERATE) ||
	    a->moderate.cq_count > dbl.p->max_cq_count ||
	    a->moderate.cq_period > dbl.p->max_cq_period)
		return EINVAL;
	pthread_mutex_lock(&dbl.lock);
	q = dbl_cq_find(cq);
	if (!q || !q->chan) {
		rc = EINVAL;
	} else {
		q->count = a->moderate.cq_count;
		q->period = a->moderate.cq_period;
		dbl_log("modify_cq count %u period %u", q->count, q->period);
		/* The pump sees arrivals only while rxe's CQ is armed. */
		if (moderated(q))
			rc = dbl.req_notify_cq(cq, 0);
	}
	pthread_mutex_unlock(&dbl.lock);
	return rc;
}

/* The nearest period deadline of an armed moderated CQ, in ms for
 * epoll_wait; -1: none. */
static int next_timer_ms(void)
{
	uint64_t now = dbl_now_ns(), best = UINT64_MAX;

	for (struct dbl_cq *q = dbl.cqs; q; q = q->next)
		if (q->app_armed && q->since_arm && q->period) {
			uint64_t at = q->first_ns + (uint64_t)q->period * 1000u;

			if (at < best)
				best = at;
		}
	if (best == UINT64_MAX)
		return -1;
	return best <= now ? 0 : (int)((best - now + 999999u) / 1000000u);
}

static void real_ack(struct ibv_cq *cq, unsigned int n)
{
	static void (*real)(struct ibv_cq *, unsigned int);

	if (!real)
		real = dbl_real("ibv_ack_cq_events");
	real(cq, n);
}

static int real_get_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
			  void **ctx)
{
	static int (*real)(struct ibv_comp_channel *, struct ibv_cq **,
			   void **);

	if (!real)
		real = dbl_real("ibv_get_cq_event");
	return real(ch, cq, ctx);
}

/* One rxe event on a hidden channel. */
static void pump_event(struct dbl_chan *c)
{
	struct ibv_cq *cq;
	void *ctx;
	struct dbl_cq *q;

	if (real_get_event(c->hidden, &cq, &ctx))
		return;
	pthread_mutex_lock(&dbl.lock);
	real_ack(cq, 1);
	q = dbl_cq_find(cq);
	if (q && moderated(q)) {
		/* Rearm before the sweep: what lands after it raises an
		 * event; what landed before it is swept. */
		dbl.req_notify_cq(cq, 0);
		sweep(q);
		mod_check(q, dbl_now_ns());
	} else if (q && q->app_armed) {
		deliver(q);
	}
	pthread_mutex_unlock(&dbl.lock);
}

static void *pump(void *arg)
{
	(void)arg;
	for (;;) {
		struct epoll_event ev[16];
		int ms, n;

		pthread_mutex_lock(&dbl.lock);
		ms = next_timer_ms();
		pthread_mutex_unlock(&dbl.lock);
		n = epoll_wait(dbl.epfd, ev, 16, ms);
		for (int i = 0; i < n; i++) {
			if (!ev[i].data.ptr) {
				char b[64];

				if (read(dbl.wake[0], b, sizeof(b)) < 0 &&
				    errno != EAGAIN)
					return NULL;
				continue;
			}
			pthread_mutex_lock(&dbl.lock);
			/* The channel may be gone: its entry is looked up. */
			struct dbl_chan *c = dbl.chans;

			while (c && c != ev[i].data.ptr)
				c = c->next;
			pthread_mutex_unlock(&dbl.lock);
			if (c)
				pump_event(c);
		}
		pthread_mutex_lock(&dbl.lock);
		for (struct dbl_cq *q = dbl.cqs; q; q = q->next)
			if (moderated(q))
				mod_check(q, dbl_now_ns());
		pthread_mutex_unlock(&dbl.lock);
	}
	return NULL;
}

/* Locked. */
static int pump_start(void)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

	if (dbl.pump_running)
		return 0;
	if ((dbl.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    pipe2(dbl.wake, O_CLOEXEC | O_NONBLOCK) ||
	    epoll_ctl(dbl.epfd, EPOLL_CTL_ADD, dbl.wake[0], &ev))
		return -1;
	if (pthread_create(&dbl.pump, NULL, pump, NULL))
		return -1;
	pthread_detach(dbl.pump);
	dbl.pump_running = true;
	return 0;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	static struct ibv_comp_channel *(*real)(struct ibv_context *);
	struct dbl_chan *c;
	int fds[2];

	if (!real)
		real = dbl_real("ibv_create_comp_channel");
	if (!dbl.p || !dbl.p->own_channels)
		return real(ctx);
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	if (!(c->hidden = real(ctx)))
		goto fail;
	if (pipe2(fds, O_CLOEXEC))
		goto fail;
	fcntl(c->hidden->fd, F_SETFL,
	      fcntl(c->hidden->fd, F_GETFL) | O_NONBLOCK);
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	c->pub.context = ctx;
	c->pub.fd = fds[0];
	c->wfd = fds[1];
	pthread_mutex_lock(&dbl.lock);
	if (pump_start() == 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};

		if (epoll_ctl(dbl.epfd, EPOLL_CTL_ADD, c->hidden->fd, &ev) ==
		    0) {
			c->next = dbl.chans;
			dbl.chans = c;
			pthread_mutex_unlock(&dbl.lock);
			return &c->pub;
		}
	}
	pthread_mutex_unlock(&dbl.lock);
	close(fds[0]);
	close(fds[1]);
fail:
	if (c->hidden)
		ibv_destroy_comp_channel(c->hidden);
	free(c);
	errno = ENOMEM;
	return NULL;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	static int (*real)(struct ibv_comp_channel *);
	struct dbl_chan *c, **pp;
	int rc;

	if (!real)
		real = dbl_real("ibv_destroy_comp_channel");
	pthread_mutex_lock(&dbl.lock);
	c = chan_find(ch);
	if (!c) {
		pthread_mutex_unlock(&dbl.lock);
		return real(ch);
	}
	for (pp = &dbl.chans; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	epoll_ctl(dbl.epfd, EPOLL_CTL_DEL, c->hidden->fd, NULL);
	pthread_mutex_unlock(&dbl.lock);
	rc = real(c->hidden);
	close(c->pub.fd);
	close(c->wfd);
	free(c);
	return rc;
}

int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq,
		     void **cq_ctx)
{
	ssize_t r;
	bool ours;

	pthread_mutex_lock(&dbl.lock);
	ours = chan_find(ch) != NULL;
	pthread_mutex_unlock(&dbl.lock);
	if (!ours)
		return real_get_event(ch, cq, cq_ctx);
	/* Blocking or not as the app set the fd; EINTR passes through. */
	r = read(ch->fd, cq, sizeof(*cq));
	if (r != (ssize_t)sizeof(*cq))
		return -1;
	*cq_ctx = (*cq)->cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
	struct dbl_cq *q;

	pthread_mutex_lock(&dbl.lock);
	q = dbl_cq_find(cq);
	pthread_mutex_unlock(&dbl.lock);
	/* The pump acked rxe's events as they came. */
	if (!q || !q->chan)
		real_ack(cq, n);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_ctx,
			     struct ibv_comp_channel *ch, int vector)
{
	static struct ibv_cq *(*real)(struct ibv_context *, int, void *,
				      struct ibv_comp_channel *, int);
	struct dbl_chan *c;
	struct dbl_cq *q;
	struct ibv_cq *cq;

	if (!real)
		real = dbl_real("ibv_create_cq");
	pthread_mutex_lock(&dbl.lock);
	c = ch ? chan_find(ch) : NULL;
	pthread_mutex_unlock(&dbl.lock);
	cq = real(ctx, cqe, cq_ctx, c ? c->hidden : ch, vector);
	if (!cq || !dbl.p)
		return cq;
	if (!dbl.first_cq)
		dbl.first_cq = cq;
	if (!(q = calloc(1, sizeof(*q))))
		goto fail;
	q->cq = cq;
	q->chan = c;
	if (c) {
		q->cap = (uint32_t)cq->cqe + 1;
		if (!(q->ring = calloc(q->cap, sizeof(*q->ring))))
			goto fail;
		c->pub.refcnt++;
	}
	pthread_mutex_lock(&dbl.lock);
	q->next = dbl.cqs;
	dbl.cqs = q;
	pthread_mutex_unlock(&dbl.lock);
	return cq;
fail:
	if (q)
		free(q->ring);
	free(q);
	ibv_destroy_cq(cq);
	errno = ENOMEM;
	return NULL;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	static int (*real)(struct ibv_cq *);
	struct dbl_cq *q = NULL, **pp;

	if (!real)
		real = dbl_real("ibv_destroy_cq");
	pthread_mutex_lock(&dbl.lock);
	for (pp = &dbl.cqs; *pp; pp = &(*pp)->next)
		if ((*pp)->cq == cq) {
			q = *pp;
			*pp = q->next;
			break;
		}
	if (q && q->chan)
		q->chan->pub.refcnt--;
	if (dbl.first_cq == cq)
		dbl.first_cq = NULL;
	pthread_mutex_unlock(&dbl.lock);
	if (q) {
		free(q->ring);
		free(q);
	}
	return real(cq);
}

void dbl_cq_patch(struct ibv_context *ctx)
{
	struct verbs_context *v = verbs_get_ctx(ctx);

	dbl.poll_cq = ctx->ops.poll_cq;
	ctx->ops.poll_cq = poll_cq;
	dbl.req_notify_cq = ctx->ops.req_notify_cq;
	ctx->ops.req_notify_cq = req_notify_cq;
	if (dbl.p->moderation)
		v->modify_cq = modify_cq;
}
