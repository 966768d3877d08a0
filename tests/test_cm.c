/* SPDX-License-Identifier: BSD-2-Clause */
/* cm_event_stress pieces that need no device: the private data format
 * (every length, every corruption caught, an event copy's bound), per
 * event type rows and their exchange, how event rows and the run summary
 * render, and the event loop with both sides' handlers against a fake
 * RDMA CM. */
#include "check.h"
#include "tools/cm_event_stress/cm_ctx.h"
#include "engine/cm_loop.h"
#include "engine/cm_storm.h"
#include "base/error.h"
#include "base/kv.h"
#include "report/report.h"
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static void test_private_data(void)
{
	uint8_t buf[CQP_PD_REP_MAX];
	uint32_t seq;
	unsigned lengths = 0;
	uint64_t seen = 0;

	/* Lengths cycle through every size the room allows. */
	for (uint32_t s = 0; s < 200; s++) {
		uint8_t n = cqp_pd_fill(buf, CQP_PD_REQ_MAX, CQP_PD_REQ, s);

		CHECK(n >= 16 && n <= CQP_PD_REQ_MAX);
		if (!(seen & (1ull << (n - 16)))) {
			seen |= 1ull << (n - 16);
			lengths++;
		}
		/* The transport pads: the true length travels inside. */
		CHECK(cqp_pd_check(buf, CQP_PD_REQ_MAX, CQP_PD_REQ, &seq) ==
			  0 &&
		      seq == s);
	}
	CHECK(lengths == CQP_PD_REQ_MAX - 16 + 1);

	cqp_pd_fill(buf, sizeof(buf), CQP_PD_ACC, 77);
	CHECK(cqp_pd_check(buf, sizeof(buf), CQP_PD_REJ, &seq) < 0);
	CHECK(cqp_errcode() == CQP_E_PROTO && strstr(cqp_errmsg(), "kind"));
	cqp_errclear();
	CHECK(cqp_pd_check(buf, 10, CQP_PD_ACC, &seq) < 0); /* truncated */
	cqp_errclear();
	/* Any byte of the payload flipped: the checksum says so. */
	for (unsigned i = 16; i < 16u + 77u % (CQP_PD_REP_MAX - 16 + 1); i++) {
		buf[i] ^= 1;
		CHECK(cqp_pd_check(buf, sizeof(buf), CQP_PD_ACC, &seq) < 0);
		buf[i] ^= 1;
		cqp_errclear();
	}
	CHECK(cqp_pd_check(buf, sizeof(buf), CQP_PD_ACC, &seq) == 0 &&
	      seq == 77);
	/* A header claiming more than arrived. */
	buf[8] = 200;
	CHECK(cqp_pd_check(buf, sizeof(buf), CQP_PD_ACC, &seq) < 0);
	cqp_errclear();
}

/* A fake RDMA CM: the calls below replace librdmacm's at link time
 * (--wrap, see Makefile.am).  Ids are heap blocks freed by
 * rdma_destroy_id, so ASan sees any use after; events queue in order and
 * are freed at their ack; destroying an id drops its queued events, as
 * the kernel does, and waits for the acks of those already taken, as
 * librdmacm does.  The channel's fd is an eventfd that stays readable. */
struct fake_ev {
	struct rdma_cm_event e; /* first: the ack gets it back by a cast */
	uint8_t pd[256];
	struct fake_ev *next;
};

#define FAKE_IDS 64

static struct {
	pthread_mutex_t mu;
	pthread_cond_t acked;
	struct fake_ev *head, *tail;
	struct {
		struct rdma_cm_id *id;
		unsigned unacked;
		bool live;
	} ids[FAKE_IDS];
	unsigned nids;
	unsigned rejects, accepts;
	struct rdma_cm_id *rejected;
	unsigned destroy_unacked; /* rdma_destroy_id would block forever */
	unsigned handed_dead;	  /* a handler got a destroyed id's event */
} fake = {.mu = PTHREAD_MUTEX_INITIALIZER, .acked = PTHREAD_COND_INITIALIZER};

static struct rdma_cm_id fake_listen;

static void fake_reset(void)
{
	pthread_mutex_lock(&fake.mu);
	while (fake.head) {
		struct fake_ev *f = fake.head;

		fake.head = f->next;
		free(f);
	}
	fake.tail = NULL;
	fake.nids = fake.rejects = fake.accepts = 0;
	fake.destroy_unacked = fake.handed_dead = 0;
	fake.rejected = NULL;
	pthread_mutex_unlock(&fake.mu);
}

/* The latest entry for id (an address may come back from malloc). */
static int fake_find(const struct rdma_cm_id *id)
{
	for (int i = (int)fake.nids - 1; i >= 0; i--)
		if (fake.ids[i].id == id)
			return i;
	return -1;
}

static bool fake_live(const struct rdma_cm_id *id)
{
	bool live;

	pthread_mutex_lock(&fake.mu);
	live = fake_find(id) >= 0 && fake.ids[fake_find(id)].live;
	pthread_mutex_unlock(&fake.mu);
	return live;
}

static unsigned fake_live_count(void)
{
	unsigned n = 0;

	pthread_mutex_lock(&fake.mu);
	for (unsigned i = 0; i < fake.nids; i++)
		n += fake.ids[i].live;
	pthread_mutex_unlock(&fake.mu);
	return n;
}

static struct rdma_cm_id *fake_new_id(struct rdma_event_channel *ch,
				      void *context)
{
	struct rdma_cm_id *id = calloc(1, sizeof(*id));

	if (!id)
		abort();
	id->channel = ch;
	id->context = context;
	id->ps = RDMA_PS_TCP;
	pthread_mutex_lock(&fake.mu);
	if (fake.nids == FAKE_IDS)
		abort();
	fake.ids[fake.nids].id = id;
	fake.ids[fake.nids].unacked = 0;
	fake.ids[fake.nids].live = true;
	fake.nids++;
	pthread_mutex_unlock(&fake.mu);
	return id;
}

static void fake_push(struct rdma_cm_id *id, struct rdma_cm_id *listen,
		      enum rdma_cm_event_type t, const void *pd, unsigned len)
{
	struct fake_ev *f = calloc(1, sizeof(*f));

	if (!f || len > sizeof(f->pd))
		abort();
	f->e.id = id;
	f->e.listen_id = listen;
	f->e.event = t;
	if (len) {
		memcpy(f->pd, pd, len);
		f->e.param.conn.private_data = f->pd;
		f->e.param.conn.private_data_len = (uint8_t)len;
	}
	pthread_mutex_lock(&fake.mu);
	if (fake.tail)
		fake.tail->next = f;
	else
		fake.head = f;
	fake.tail = f;
	pthread_mutex_unlock(&fake.mu);
}

/* A peer's connect request, as the listener's channel would hand it. */
static struct rdma_cm_id *fake_request(struct rdma_event_channel *ch,
				       const void *pd, unsigned len)
{
	struct rdma_cm_id *id = fake_new_id(ch, fake_listen.context);

	fake_push(id, &fake_listen, RDMA_CM_EVENT_CONNECT_REQUEST, pd, len);
	return id;
}

struct rdma_event_channel *__wrap_rdma_create_event_channel(void);
struct rdma_event_channel *__wrap_rdma_create_event_channel(void)
{
	struct rdma_event_channel *ch = calloc(1, sizeof(*ch));

	if (ch)
		ch->fd = eventfd(1, 0);
	return ch;
}

void __wrap_rdma_destroy_event_channel(struct rdma_event_channel *ch);
void __wrap_rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	close(ch->fd);
	free(ch);
}

int __wrap_rdma_get_cm_event(struct rdma_event_channel *ch,
			     struct rdma_cm_event **e);
int __wrap_rdma_get_cm_event(struct rdma_event_channel *ch,
			     struct rdma_cm_event **e)
{
	struct fake_ev *f;

	(void)ch;
	pthread_mutex_lock(&fake.mu);
	f = fake.head;
	if (f) {
		fake.head = f->next;
		if (!fake.head)
			fake.tail = NULL;
		fake.ids[fake_find(f->e.id)].unacked++;
	}
	pthread_mutex_unlock(&fake.mu);
	if (!f) {
		errno = EAGAIN;
		return -1;
	}
	*e = &f->e;
	return 0;
}

int __wrap_rdma_ack_cm_event(struct rdma_cm_event *e);
int __wrap_rdma_ack_cm_event(struct rdma_cm_event *e)
{
	pthread_mutex_lock(&fake.mu);
	fake.ids[fake_find(e->id)].unacked--;
	pthread_cond_broadcast(&fake.acked);
	pthread_mutex_unlock(&fake.mu);
	free(e);
	return 0;
}

int __wrap_rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
			  void *context, enum rdma_port_space ps);
int __wrap_rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
			  void *context, enum rdma_port_space ps)
{
	*id = fake_new_id(ch, context);
	(*id)->ps = ps;
	return 0;
}

int __wrap_rdma_destroy_id(struct rdma_cm_id *id);
int __wrap_rdma_destroy_id(struct rdma_cm_id *id)
{
	struct fake_ev **pp;
	int i;

	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	pthread_mutex_lock(&fake.mu);
	i = fake_find(id);
	/* librdmacm would wait forever: 2 s tell a deadlock. */
	while (fake.ids[i].unacked &&
	       pthread_cond_timedwait(&fake.acked, &fake.mu, &until) == 0)
		;
	if (fake.ids[i].unacked)
		fake.destroy_unacked++;
	fake.ids[i].live = false;
	for (pp = &fake.head; *pp;) {
		struct fake_ev *f = *pp;

		if (f->e.id == id) {
			*pp = f->next;
			free(f);
		} else {
			pp = &f->next;
		}
	}
	for (fake.tail = fake.head; fake.tail && fake.tail->next;)
		fake.tail = fake.tail->next;
	pthread_mutex_unlock(&fake.mu);
	free(id);
	return 0;
}

int __wrap_rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
			     struct sockaddr *dst, int timeout_ms);
int __wrap_rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
			     struct sockaddr *dst, int timeout_ms)
{
	(void)src, (void)dst, (void)timeout_ms;
	fake_push(id, NULL, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 0);
	return 0;
}

int __wrap_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);
int __wrap_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	(void)timeout_ms;
	fake_push(id, NULL, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 0);
	return 0;
}

/* The peer accepts every connect (no QP: CONNECT_RESPONSE). */
int __wrap_rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *cp);
int __wrap_rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *cp)
{
	uint8_t pd[CQP_PD_REP_MAX];
	uint32_t seq;

	if (cqp_pd_check(cp->private_data, cp->private_data_len, CQP_PD_REQ,
			 &seq) < 0)
		abort();
	fake_push(id, NULL, RDMA_CM_EVENT_CONNECT_RESPONSE, pd,
		  cqp_pd_fill(pd, sizeof(pd), CQP_PD_ACC, seq));
	return 0;
}

int __wrap_rdma_establish(struct rdma_cm_id *id);
int __wrap_rdma_establish(struct rdma_cm_id *id)
{
	(void)id;
	return 0;
}

/* The active side's teardown: DREP, then the timewait ends. */
int __wrap_rdma_disconnect(struct rdma_cm_id *id);
int __wrap_rdma_disconnect(struct rdma_cm_id *id)
{
	fake_push(id, NULL, RDMA_CM_EVENT_DISCONNECTED, NULL, 0);
	fake_push(id, NULL, RDMA_CM_EVENT_TIMEWAIT_EXIT, NULL, 0);
	return 0;
}

int __wrap_rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *cp);
int __wrap_rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *cp)
{
	(void)cp;
	pthread_mutex_lock(&fake.mu);
	fake.accepts++;
	pthread_mutex_unlock(&fake.mu);
	fake_push(id, NULL, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
	return 0;
}

int __wrap_rdma_reject(struct rdma_cm_id *id, const void *pd, uint8_t len);
int __wrap_rdma_reject(struct rdma_cm_id *id, const void *pd, uint8_t len)
{
	(void)pd, (void)len;
	pthread_mutex_lock(&fake.mu);
	fake.rejects++;
	fake.rejected = id;
	pthread_mutex_unlock(&fake.mu);
	return 0;
}

static bool fake_idle(void *arg)
{
	bool idle;

	(void)arg;
	pthread_mutex_lock(&fake.mu);
	idle = !fake.head;
	pthread_mutex_unlock(&fake.mu);
	return idle;
}

/* Both sides' handlers, behind a look at whether the id still lives. */
static int server_handler(void *arg, const struct cqp_cm_ev *ev)
{
	if (!fake_live(ev->id)) {
		pthread_mutex_lock(&fake.mu);
		fake.handed_dead++;
		pthread_mutex_unlock(&fake.mu);
	}
	return cm_server_event(arg, ev);
}

static int client_handler(void *arg, const struct cqp_cm_ev *ev)
{
	if (!fake_live(ev->id)) {
		pthread_mutex_lock(&fake.mu);
		fake.handed_dead++;
		pthread_mutex_unlock(&fake.mu);
	}
	return cm_client_event(arg, ev);
}

/* One side's state as setup() makes it, on the fake CM. */
static struct ctx *fake_side(bool client, uint32_t mode, uint32_t threads,
			     uint32_t conns)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct cqp_params *p = calloc(1, sizeof(*p));
	struct cqp_cm_loop_cfg cfg;

	if (!c || !p)
		abort();
	fake_reset();
	cqp_params_defaults(p, CQP_TOOL_CM_EVENT_STRESS);
	p->no_qp = true;
	p->cm_mode = mode;
	p->cm_batch = 8;
	p->threads = threads;
	p->connections = p->concurrency = conns;
	cfg = (struct cqp_cm_loop_cfg){mode, p->cm_batch, threads, NULL};
	c->p = p;
	pthread_mutex_init(&c->mu, NULL);
	cqp_cm_stats_init(&c->st);
	CHECK(cqp_cm_loop_create(&c->loop, &cfg,
				 client ? client_handler : server_handler,
				 c) == 0);
	c->loop_made = true;
	if (client) {
		c->cl.n = conns;
		c->cl.conns = calloc(conns, sizeof(*c->cl.conns));
	}
	return c;
}

static void fake_side_free(struct ctx *c)
{
	while (c->sv.live_list)
		cm_server_drop(c, c->sv.live_list);
	cqp_cm_loop_destroy(&c->loop);
	free(c->cl.conns);
	pthread_mutex_destroy(&c->mu);
	free((void *)c->p);
	free(c);
}

static int serve(struct ctx *c)
{
	bool quiet;

	return cqp_cm_loop_run(&c->loop, fake_idle, 20, &quiet);
}

/* DISCONNECTED then TIMEWAIT_EXIT for one id, taken together (a batch,
 * or a worker's queue): the first destroys the id, so the second must
 * never reach a handler (it would read the freed id). */
static void test_timewait_after_destroy(uint32_t threads)
{
	struct ctx *c = fake_side(false, CQP_CM_BATCH, threads, 0);
	uint8_t pd[CQP_PD_REQ_MAX];
	struct rdma_cm_id *id;

	id = fake_request(c->loop.ch, pd,
			  cqp_pd_fill(pd, sizeof(pd), CQP_PD_REQ, 5));
	CHECK(serve(c) == 0 && c->sv.established == 1);
	fake_push(id, NULL, RDMA_CM_EVENT_DISCONNECTED, NULL, 0);
	fake_push(id, NULL, RDMA_CM_EVENT_TIMEWAIT_EXIT, NULL, 0);
	CHECK(serve(c) == 0);
	CHECK(fake.handed_dead == 0);
	CHECK(c->sv.disconnected == 1 && c->sv.live == 0);
	CHECK(c->loop.dropped == 1); /* the TIMEWAIT_EXIT */
	CHECK(c->loop.events == 4 && c->loop.acked == 4);
	fake_side_free(c);
	CHECK(fake_live_count() == 0 && fake.destroy_unacked == 0);
	if (fake.handed_dead)
		fprintf(stderr,
			"server, %u workers: %u events of a destroyed "
			"id handed over\n",
			threads, fake.handed_dead);

	/* The client's side: its disconnects bring both events at once. */
	c = fake_side(true, CQP_CM_BATCH, threads, 3);
	CHECK(cm_run_phase(c, PH_CONNECT, &(double){0}) == 0);
	CHECK(c->cl.established == 3);
	CHECK(cm_run_phase(c, PH_DISCONNECT, &(double){0}) == 0);
	CHECK(c->cl.disconnected == 3);
	CHECK(fake.handed_dead == 0 && c->loop.dropped == 3);
	CHECK(c->ids_created == 3 && c->ids_destroyed == 3);
	fake_side_free(c);
	CHECK(fake_live_count() == 0 && fake.destroy_unacked == 0);
	if (fake.handed_dead)
		fprintf(stderr,
			"client, %u workers: %u events of a destroyed "
			"id handed over\n",
			threads, fake.handed_dead);
}

/* A request whose private data is not ours (len bytes of it): rejected,
 * its id destroyed, the run failed naming what was wrong. */
static void test_bad_request(uint32_t mode, unsigned len, const char *want)
{
	struct ctx *c = fake_side(false, mode, 0, 0);
	uint8_t pd[255];
	struct rdma_cm_id *id;
	int rc;

	memset(pd, 0xee, sizeof(pd));
	id = fake_request(c->loop.ch, pd, len);
	rc = serve(c);
	CHECK(rc < 0 && cqp_errcode() == CQP_E_PROTO);
	CHECK(strstr(cqp_errmsg(), want) != NULL);
	if (!strstr(cqp_errmsg(), want))
		fprintf(stderr, "%u bytes: got \"%s\"\n", len, cqp_errmsg());
	cqp_errclear();
	CHECK(fake.rejects == 1 && fake.rejected == id && fake.accepts == 0);
	CHECK(!fake_live(id) && fake.destroy_unacked == 0);
	CHECK(c->ids_created == c->ids_destroyed);
	fake_side_free(c);
	CHECK(fake_live_count() == 0);
}

/* A failed handler leaves the rest of its batch unhandled: a request
 * among them has no owner, so the loop rejects and destroys it. */
static void test_request_left(void)
{
	struct ctx *c = fake_side(false, CQP_CM_BATCH, 0, 0);
	uint8_t pd[CQP_PD_REQ_MAX];
	struct rdma_cm_id *bad, *left;

	memset(pd, 0, sizeof(pd));
	bad = fake_request(c->loop.ch, pd, 20);
	left = fake_request(c->loop.ch, pd,
			    cqp_pd_fill(pd, sizeof(pd), CQP_PD_REQ, 1));
	CHECK(serve(c) < 0);
	cqp_errclear();
	CHECK(fake.rejects == 2 && fake.rejected == left && fake.accepts == 0);
	CHECK(!fake_live(bad) && !fake_live(left));
	CHECK(c->sv.requests == 1 && c->ids_created == c->ids_destroyed);
	fake_side_free(c);
	CHECK(fake_live_count() == 0 && fake.destroy_unacked == 0);
}

/* iWARP may carry more private data than an event copy holds: it must
 * not be copied past the copy's end. */
static void test_copy_oversize(void)
{
	struct cqp_cm_ev *ev = malloc(sizeof(*ev));
	struct rdma_cm_id id = {.ps = RDMA_PS_TCP};
	struct rdma_cm_event e = {.id = &id,
				  .event = RDMA_CM_EVENT_CONNECT_REQUEST};
	uint8_t pd[255];
	uint32_t seq;

	memset(pd, 0xee, sizeof(pd));
	e.param.conn.private_data = pd;
	e.param.conn.private_data_len = sizeof(pd);
	cqp_cm_ev_copy(ev, &e, 1);
	CHECK(ev->pdata_len <= CQP_CM_PDATA_MAX);
	/* Nothing kept, and the check says why. */
	CHECK(ev->pdata_len == 0 && ev->pdata_oversize == 255);
	CHECK(cqp_pd_check_ev(ev, CQP_PD_REQ, &seq) < 0);
	CHECK(cqp_errcode() == CQP_E_PROTO &&
	      strstr(cqp_errmsg(), "private data of 255 bytes"));
	cqp_errclear();

	/* What fits is kept whole. */
	e.param.conn.private_data_len = CQP_CM_PDATA_MAX;
	cqp_cm_ev_copy(ev, &e, 1);
	CHECK(ev->pdata_len == CQP_CM_PDATA_MAX && ev->pdata_oversize == 0);
	CHECK(ev->pdata[CQP_CM_PDATA_MAX - 1] == 0xee);
	free(ev);
}

static void test_rows(void)
{
	struct cqp_cm_stats *st = malloc(sizeof(*st));
	struct cqp_row rows[8], back[8];
	char buf[8192];
	struct cqp_kv_writer w;
	unsigned n, m;

	cqp_cm_stats_init(st);
	for (uint64_t i = 1; i <= 100; i++)
		cqp_cm_stats_add(st, RDMA_CM_EVENT_ESTABLISHED, i * 1000);
	cqp_cm_stats_add(st, RDMA_CM_EVENT_DISCONNECTED, 0);
	cqp_cm_stats_add(st, RDMA_CM_EVENT_DISCONNECTED, 0);
	n = cqp_cm_stats_rows(st, "server", 2.0, rows, 0, 8);
	CHECK(n == 2);
	CHECK_STR(rows[0].label, "RDMA_CM_EVENT_ESTABLISHED");
	CHECK_STR(rows[0].side, "server");
	CHECK(rows[0].count == 100);
	CHECK_NEAR(rows[0].rate_per_s, 50, 1e-9);
	CHECK_NEAR(rows[0].lat_us.p50, 50, 50.0 / 128);
	CHECK_NEAR(rows[0].lat_us.max, 100, 100.0 / 128);
	CHECK_STR(rows[1].label, "RDMA_CM_EVENT_DISCONNECTED");
	CHECK(rows[1].count == 2 && isnan(rows[1].lat_us.p50));

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_cm_rows_encode(rows, n, &w);
	CHECK(!w.overflow);
	CHECK(cqp_cm_rows_decode(buf, w.len, "server", back, 0, 8, &m) == 0);
	CHECK(m == 2 && back[0].count == 100 && back[1].count == 2);
	CHECK_NEAR(back[0].lat_us.p99, rows[0].lat_us.p99, 1e-6);
	CHECK_STR(back[1].side, "server");
	free(st);
}

static void test_render(void)
{
	struct cqp_params p;
	struct cqp_row rows[2];
	struct cqp_figure figs[3] = {
	    {"", "connections", 700, true},
	    {"client", "events", 2800, true},
	    {"client", "ack_ns_per_event", 812.5, false},
	};
	struct cqp_report r;
	char *s;

	cqp_params_defaults(&p, CQP_TOOL_CM_EVENT_STRESS);
	memset(rows, 0, sizeof(rows));
	memset(&r, 0, sizeof(r));
	snprintf(rows[0].side, sizeof(rows[0].side), "client");
	snprintf(rows[0].label, sizeof(rows[0].label),
		 "RDMA_CM_EVENT_ESTABLISHED");
	rows[0].count = 700;
	rows[0].rate_per_s = 350;
	rows[0].has_lat = true;
	rows[0].lat_us.p50 = 12.5;
	rows[1] = rows[0];
	snprintf(rows[1].side, sizeof(rows[1].side), "server");
	rows[1].lat_us.p50 = NAN;
	r.tool = CQP_TOOL_CM_EVENT_STRESS;
	r.title = "RDMA CM event storm";
	r.params = &p;
	r.rows = rows;
	r.nrows = 2;
	r.summary = figs;
	r.nsummary = 3;

	s = render(&r);
	CHECK(s && strstr(s, "side") && strstr(s, "events/s"));
	CHECK(s && strstr(s, "RDMA CM's choice for each connection"));
	CHECK(s && !strstr(s, "#bytes") && !strstr(s, "one-way"));
	CHECK(s && strstr(s, " Summary: connections 700\n"));
	CHECK(s &&
	      strstr(s, " client: events 2800, ack_ns_per_event 812.50\n"));
	free(s);

	p.output = CQP_OUT_JSON;
	s = render(&r);
	CHECK(s && strstr(s, "\"side\": \"client\"") &&
	      strstr(s, "\"event\": \"RDMA_CM_EVENT_ESTABLISHED\""));
	CHECK(s && strstr(s, "\"count\": 700") &&
	      strstr(s, "\"rate_per_s\": 350"));
	CHECK(s && strstr(s, "\"p50\": null")); /* no causing call */
	CHECK(s && strstr(s, "\"summary\": {") &&
	      strstr(s, "\"connections\": 700") && strstr(s, "\"client\": {") &&
	      strstr(s, "\"ack_ns_per_event\": 812.5"));
	CHECK(s && !strstr(s, "\"bytes\""));
	free(s);

	p.output = CQP_OUT_CSV;
	s = render(&r);
	CHECK(s && !strncmp(s, "side,event,count,rate_per_s,lat_us_min", 38));
	CHECK(s && strstr(s, "client,RDMA_CM_EVENT_ESTABLISHED,700,350,"));
	CHECK(s && strstr(s, "# summary: connections=700 client.events=2800 "
			     "client.ack_ns_per_event=812.5\n"));
	free(s);
}

int main(void)
{
	test_private_data();
	test_rows();
	test_render();
	test_copy_oversize();
	test_timewait_after_destroy(0);
	test_timewait_after_destroy(2);
	test_bad_request(CQP_CM_NONBLOCK, 20, "private data of kind");
	test_bad_request(CQP_CM_NONBLOCK, 255, "255 bytes");
	test_bad_request(CQP_CM_BATCH, 255, "255 bytes");
	test_request_left();
	return check_done("test_cm");
}
