/* SPDX-License-Identifier: BSD-2-Clause */
/* The session over a socketpair: a server's accept against hostile and
 * mismatched clients (hello, parameters, --max-mem), each rejected with
 * its reason while the listener stays usable; the per-step announcement
 * and barrier. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "check_err.h"
#include "oob_pair.h"
#include "base/error.h"
#include "base/kv.h"
#include "base/options.h"
#include "oob/oob.h"
#include "oob/session.h"

struct hostile {
	uint16_t port;
	const char *params; /* NULL: connect and say nothing */
	uint16_t got;	    /* the server's answer to PARAMS */
	char reason[512];
	int rc;
};

/* A client built from frames: echo the server's HELLO back (so tool and
 * version match whatever this build is), then send params as PARAMS. */
static void *hostile_main(void *arg)
{
	struct hostile *h = arg;
	struct cqp_oob o;
	char buf[1024];
	uint32_t len;

	h->rc = cqp_oob_connect("127.0.0.1", h->port, 3000, NULL, &o);
	if (h->rc < 0)
		return NULL;
	o.timeout_ms = 5000;
	if (!h->params) {
		/* Silent until the server gives up on us. */
		h->rc =
		    cqp_oob_expect(&o, CQP_MSG_HELLO, buf, sizeof(buf), &len);
		if (h->rc == 0)
			h->rc =
			    cqp_oob_recv(&o, &h->got, buf, sizeof(buf), &len);
		cqp_oob_close(&o);
		return NULL;
	}
	if ((h->rc = cqp_oob_expect(&o, CQP_MSG_HELLO, buf, sizeof(buf),
				    &len)) == 0 &&
	    (h->rc = cqp_oob_send(&o, CQP_MSG_HELLO, buf, len)) == 0 &&
	    (h->rc = send_str(&o, CQP_MSG_PARAMS, h->params)) == 0)
		h->rc = cqp_oob_recv(&o, &h->got, buf, sizeof(buf), &len);
	if (h->rc == 0 && h->got == CQP_MSG_REJECT)
		cqp_kv_get_str(buf, len, "reason", h->reason,
			       sizeof(h->reason));
	cqp_oob_close(&o);
	return NULL;
}

static struct cqp_mem_need need_size(const struct cqp_params *p)
{
	return (struct cqp_mem_need){p->size * p->qps, 4096};
}

/* One hand-made client against cqp_session_accept; returns accept's
 * result with the client's view in *h. */
static int serve_one(struct cqp_session *s, struct hostile *h)
{
	pthread_t th;
	int rc;

	h->port = (uint16_t)s->p->port;
	pthread_create(&th, NULL, hostile_main, h);
	rc = cqp_session_accept(s, need_size);
	cqp_session_end(s);
	pthread_join(th, NULL);
	return rc;
}

static void test_session_accept(void)
{
	struct cqp_params p;
	struct cqp_session s;
	struct hostile h;
	int rc = -1;
	int64_t t0, el;

	cqp_params_defaults(&p, CQP_TOOL_CQ_POLL_BW);
	p.timeout_s = 1;
	p.max_mem = 1024 * 1024;
	for (int i = 0; i < 200 && rc < 0; i++) {
		p.port = (uint32_t)(30000 + (getpid() + i * 41) % 10000);
		rc = cqp_session_listen(&s, &p, CQP_TOOL_CQ_POLL_BW);
		if (rc < 0) {
			if (!strstr(cqp_errmsg(), "already in use"))
				break;
			cqp_session_close(&s);
		}
	}
	CHECK_OK(rc);
	if (rc < 0)
		return;

	/* Out of the command line's bounds: refused with the reason, which
	 * the client gets too. */
	h = (struct hostile){.params = "size=0\n"};
	CHECK_ERR(serve_one(&s, &h), CQP_E_REJECTED, "--size");
	CHECK(h.rc == 0 && h.got == CQP_MSG_REJECT);
	CHECK(strstr(h.reason, "--size") != NULL);
	h = (struct hostile){.params = "tx-depth=4294967296\n"};
	CHECK_ERR(serve_one(&s, &h), CQP_E_REJECTED, "--tx-depth");
	CHECK(strstr(h.reason, "--tx-depth") != NULL);
	h = (struct hostile){.params = "bogus=1\n"};
	CHECK_ERR(serve_one(&s, &h), CQP_E_REJECTED, "'bogus'");

	/* Escape sequences in a value reach neither our log nor the
	 * client's terminal. */
	h = (struct hostile){.params = "size=\033[2J\033]0;owned\007\n"};
	CHECK_ERR(serve_one(&s, &h), CQP_E_REJECTED, "--size");
	CHECK(printable(cqp_errmsg()));
	CHECK(h.got == CQP_MSG_REJECT && printable(h.reason));

	/* More than --max-mem: refused, naming it and its value. */
	h = (struct hostile){.params = "size=2097152\n"};
	CHECK_ERR(serve_one(&s, &h), CQP_E_REJECTED, "--max-mem of 1048576");
	CHECK(strstr(h.reason, "of buffers, about 4096 of queues") != NULL);
	CHECK(strstr(h.reason, "--max-mem") != NULL);
	h = (struct hostile){.params = "size=524288\nqps=4\n"};
	CHECK_ERR(serve_one(&s, &h), CQP_E_REJECTED,
		  "needs 2101248 bytes (2097152 of buffers");

	/* A client that never speaks is dropped after --timeout. */
	h = (struct hostile){.params = NULL};
	t0 = mono_ms();
	CHECK_ERR(serve_one(&s, &h), CQP_E_TIMEOUT,
		  "within 1 s (waiting for its HELLO)");
	el = mono_ms() - t0;
	CHECK(el >= 950 && el < 4000);
	CHECK(h.rc == -CQP_E_PEER_CLOSED);

	/* ...and the listener still takes a good client. */
	h = (struct hostile){.params = "size=4096\n"};
	CHECK_OK(serve_one(&s, &h));
	CHECK(h.rc == 0 && h.got == CQP_MSG_ACCEPT);
	CHECK(p.size == 4096);
	cqp_session_close(&s);
}

/* ---- the server's side of a step: what a client may ask for --------- */

/* One BARRIER from the peer end; the server's verdict on it. */
static int step_from(struct cqp_params *p, const char *barrier)
{
	static char buf[CQP_OOB_MAX_PAYLOAD + 1];
	struct cqp_session s = {.p = p, .buf = buf};
	struct cqp_step_req st = {0};
	struct cqp_oob b;
	int rc;

	make_pair(&s.oob, &b, T_MS);
	CHECK_OK(send_str(&b, CQP_MSG_BARRIER, barrier));
	rc = cqp_session_step(&s, &st);
	cqp_oob_close(&s.oob);
	cqp_oob_close(&b);
	return rc;
}

static void test_session_step(void)
{
	struct cqp_params p;

	cqp_params_defaults(&p, CQP_TOOL_CQ_POLL_BW);
	p.verb = CQP_VERB_WRITE;
	p.max_mem = 1 << 20;
	/* A WRITE's target polls its last 8 bytes, aligned: a hostile
	 * client's 4-byte or 100-byte WRITE is refused, not peeked at. */
	CHECK_OK(step_from(&p, "size=64\nmode=3\nspin_us=0\nverb=2\n"));
	CHECK_ERR(step_from(&p, "size=4\nmode=3\nspin_us=0\nverb=2\n"),
		  CQP_E_PROTO, "asked for size 4");
	CHECK_ERR(step_from(&p, "size=100\nmode=3\nspin_us=0\nverb=2\n"),
		  CQP_E_PROTO, "asked for size 100");
	/* Other verbs' targets poll no memory: any size. */
	p.verb = CQP_VERB_WRITE_IMM;
	CHECK_OK(step_from(&p, "size=4\nmode=0\nspin_us=0\nverb=1\n"));
}

int main(void)
{
	test_session_accept();
	test_session_step();
	return check_done("test_session");
}
