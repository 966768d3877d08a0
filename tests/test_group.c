/* SPDX-License-Identifier: BSD-2-Clause */
/* A server's group of clients (--clients K) over loopback TCP: K real
 * clients (cqp_session_connect, each on a thread) join and step together;
 * one that asks for another test is refused naming the option, a caller
 * that speaks garbage disturbs no one, a group that does not fill fails
 * naming how many came (and tells them), and while a group runs anyone
 * else hears "server full". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_err.h"
#include "oob_pair.h"
#include "base/error.h"
#include "oob/group.h"
#include "oob/oob.h"
#include "oob/session.h"

#define TOOL CQP_TOOL_UD_SEND_BW

/* One client on its own thread: connect (returns once the group is
 * joined), then announce one step of `size` and say BYE. */
struct client {
	uint16_t port;
	uint64_t size;
	bool step;
	pthread_t th;
	int rc, step_rc;
	char msg[512];
	int64_t joined_ms; /* when the connect returned */
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct cqp_params p;
	struct cqp_session s;

	cqp_params_defaults(&p, TOOL);
	snprintf(p.host, sizeof(p.host), "127.0.0.1");
	p.port = c->port;
	p.timeout_s = 2;
	p.size = c->size;
	p.quiet = true;
	c->rc = cqp_session_connect(&s, &p, TOOL, NULL);
	c->joined_ms = mono_ms();
	if (c->rc < 0)
		snprintf(c->msg, sizeof(c->msg), "%s", cqp_errmsg());
	if (c->rc == 0 && c->step) {
		struct cqp_step_req st = {c->size, 0, 0, 0};

		c->step_rc = cqp_session_step(&s, &st);
		if (c->step_rc == 0) {
			st.size = 0;
			c->step_rc = cqp_session_step(&s, &st);
		}
	}
	cqp_session_close(&s);
	return NULL;
}

static void start(struct client *c, uint16_t port, uint64_t size, bool step)
{
	c->port = port;
	c->size = size;
	c->step = step;
	c->rc = c->step_rc = 1;
	c->msg[0] = '\0';
	pthread_create(&c->th, NULL, client_main, c);
}

static int listen_on(struct cqp_session *s, struct cqp_params *p)
{
	int rc = -1;

	for (int i = 0; i < 200 && rc < 0; i++) {
		p->port = (uint32_t)(40000 + (getpid() + i * 53) % 10000);
		rc = cqp_session_listen(s, p, TOOL);
		if (rc < 0) {
			if (!strstr(cqp_errmsg(), "already in use"))
				break;
			cqp_session_close(s);
		}
	}
	return rc;
}

/* A caller that says something other than a hello, then hangs up. */
static void garbage(uint16_t port)
{
	struct cqp_oob o;

	if (cqp_oob_connect("127.0.0.1", port, 2000, NULL, &o) == 0) {
		write_all(o.fd, "GET / HTTP/1.0\r\n\r\n", 18);
		sleep_ms(50);
		cqp_oob_close(&o);
	}
}

static void server_params(struct cqp_params *p, unsigned k, unsigned join_s)
{
	cqp_params_defaults(p, TOOL);
	p->timeout_s = 2;
	p->quiet = true;
	p->clients = k;
	p->join_timeout_s = join_s;
}

/* Three join (one asked for another size and was refused, one caller
 * spoke garbage), step together, and a fourth hears "server full". */
static void test_group_joins(void)
{
	struct cqp_params p;
	struct cqp_session s;
	struct cqp_group g;
	struct client c[4], odd, late;
	struct cqp_step_req st = {0};

	server_params(&p, 3, 10);
	CHECK_OK(listen_on(&s, &p));
	start(&c[0], (uint16_t)p.port, 64, true);
	/* The first sets the test; the odd one comes second. */
	sleep_ms(100);
	start(&odd, (uint16_t)p.port, 4096, false);
	sleep_ms(100);
	garbage((uint16_t)p.port);
	start(&c[1], (uint16_t)p.port, 64, true);
	sleep_ms(100);
	start(&c[2], (uint16_t)p.port, 64, true);
	CHECK_OK(cqp_group_join(&g, &s, NULL, NULL));
	CHECK(g.n == 3);
	CHECK(p.size == 64);
	pthread_join(odd.th, NULL);
	CHECK(odd.rc == -CQP_E_REJECTED);
	CHECK(strstr(odd.msg, "--size 4096, where the group of 3 clients "
			      "runs --size 64") != NULL);

	/* Joined: a fourth is refused at once, naming the limit. */
	start(&late, (uint16_t)p.port, 64, false);
	pthread_join(late.th, NULL);
	CHECK(late.rc == -CQP_E_REJECTED);
	CHECK(strstr(late.msg, "server full: 3 clients") != NULL);
	if (!strstr(late.msg, "server full"))
		fprintf(stderr, "  late: %s\n", late.msg);

	/* One step for all three, then all say BYE. */
	CHECK_OK(cqp_group_step(&g, &st));
	CHECK(st.size == 64);
	CHECK_OK(cqp_group_step(&g, &st));
	CHECK(st.size == 0);
	for (int i = 0; i < 3; i++) {
		pthread_join(c[i].th, NULL);
		CHECK(c[i].rc == 0);
		CHECK(c[i].step_rc == 0);
	}
	cqp_group_end(&g);
	cqp_session_close(&s);
}

/* Two of three within --join-timeout 1: the server fails naming the
 * count, within the timeout, and the two hear why. */
static void test_group_timeout(void)
{
	struct cqp_params p;
	struct cqp_session s;
	struct cqp_group g;
	struct client c[2];
	int64_t t0, el;

	server_params(&p, 3, 1);
	CHECK_OK(listen_on(&s, &p));
	start(&c[0], (uint16_t)p.port, 64, false);
	start(&c[1], (uint16_t)p.port, 64, false);
	t0 = mono_ms();
	CHECK_ERR(cqp_group_join(&g, &s, NULL, NULL), CQP_E_TIMEOUT,
		  "--join-timeout 1 s: 2 of 3 clients came");
	el = mono_ms() - t0;
	/* The first's arrival starts the clock: at most a little over 1 s
	 * from when both were started. */
	CHECK(el < 3000);
	for (int i = 0; i < 2; i++) {
		pthread_join(c[i].th, NULL);
		CHECK(c[i].rc == -CQP_E_PEER_FAILED);
		CHECK(strstr(c[i].msg, "2 of 3 clients came") != NULL);
	}
	cqp_group_end(&g);
	cqp_session_close(&s);
}

int main(void)
{
	test_group_joins();
	test_group_timeout();
	return check_done("test_group");
}
