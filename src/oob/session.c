/* SPDX-License-Identifier: BSD-2-Clause */
#include "oob/session.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fabric.h"
#include "base/textfile.h"
#include "base/version.h"

/* A hello or a barrier record: a few short keys. */
#define HELLO_PAYLOAD 1024

/* Re-fail a kv lookup error with what it was about. */
static int fail_in(const char *what, const char *peer)
{
	return cqp_fail_wrap(cqp_errcode(), "bad %s from peer %s", what, peer);
}

/* This machine's identity, for telling a peer on the same one
 * (cpuacct.h counts its CPU as no noise); "" when unknown. */
static void boot_id(char *buf, size_t cap)
{
	cqp_read_line("/proc/sys/kernel/random/boot_id", buf, cap);
}

int cqp_session_hello(struct cqp_oob *o, const char *tool, const char *version)
{
	char buf[HELLO_PAYLOAD], ptool[128], pver[128], boot[64], pboot[64];
	struct cqp_kv_writer w;
	uint64_t proto, pid = 0;
	uint32_t len;
	int rc;

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_u64(&w, "proto", CQP_OOB_VERSION);
	cqp_kv_add_str(&w, "tool", tool);
	cqp_kv_add_str(&w, "version", version);
	/* Who we are on which machine: a peer on the same one is no
	 * noise in the other's CPU accounting. */
	boot_id(boot, sizeof(boot));
	cqp_kv_add_str(&w, "boot_id", boot);
	cqp_kv_add_u64(&w, "pid", (uint64_t)getpid());
	if (w.overflow)
		return cqp_fail(CQP_E_PROTO,
				"cannot encode hello for tool \"%s\" version "
				"\"%s\"",
				tool, version);
	/* Both sides send before they read, so neither waits on the other
	 * and both get to report a mismatch. */
	rc = cqp_oob_send(o, CQP_MSG_HELLO, buf, (uint32_t)w.len);
	if (rc < 0)
		return rc;
	rc = cqp_oob_expect(o, CQP_MSG_HELLO, buf, sizeof(buf), &len);
	if (rc < 0)
		return rc;
	if ((rc = cqp_kv_get_u64(buf, len, "proto", &proto)) < 0 ||
	    (rc = cqp_kv_get_str(buf, len, "tool", ptool, sizeof(ptool))) < 0 ||
	    (rc = cqp_kv_get_str(buf, len, "version", pver, sizeof(pver))) < 0)
		return fail_in("HELLO", o->peer);
	cqp_oob_sanitize(ptool);
	cqp_oob_sanitize(pver);
	if (proto != CQP_OOB_VERSION)
		return cqp_fail(CQP_E_VERSION,
				"peer %s runs %s %s speaking cqperf protocol "
				"v%llu, we run %s %s speaking v%u",
				o->peer, ptool, pver, (unsigned long long)proto,
				tool, version, CQP_OOB_VERSION);
	/* Parameters travel as differences from the defaults, so both sides
	 * must run the same release, not only the same protocol. */
	if (strcmp(ptool, tool) != 0 || strcmp(pver, version) != 0)
		return cqp_fail(CQP_E_VERSION,
				"peer %s runs %s %s, we run %s %s", o->peer,
				ptool, pver, tool, version);
	/* Optional: without them the peer counts as remote. */
	o->peer_local = false;
	o->peer_pid = 0;
	if (boot[0] &&
	    cqp_kv_get_str(buf, len, "boot_id", pboot, sizeof(pboot)) == 0 &&
	    cqp_kv_get_u64(buf, len, "pid", &pid) == 0 && pid > 0 &&
	    pid <= INT32_MAX && strcmp(boot, pboot) == 0) {
		o->peer_local = true;
		o->peer_pid = (int)pid;
	}
	cqp_errclear();
	return 0;
}

int cqp_session_barrier_say(struct cqp_oob *o, const char *name)
{
	char buf[HELLO_PAYLOAD];
	struct cqp_kv_writer w;

	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_str(&w, "phase", name);
	if (w.overflow)
		return cqp_fail(CQP_E_PROTO, "cannot encode barrier \"%s\"",
				name);
	return cqp_oob_send(o, CQP_MSG_BARRIER, buf, (uint32_t)w.len);
}

int cqp_session_barrier_heard(struct cqp_oob *o, const char *name)
{
	char buf[HELLO_PAYLOAD], phase[256];
	uint32_t len;
	int rc;

	rc = cqp_oob_expect(o, CQP_MSG_BARRIER, buf, sizeof(buf), &len);
	if (rc < 0)
		return rc;
	rc = cqp_kv_get_str(buf, len, "phase", phase, sizeof(phase));
	if (rc < 0)
		return fail_in("BARRIER", o->peer);
	cqp_oob_sanitize(phase);
	if (strcmp(phase, name) != 0)
		return cqp_fail(CQP_E_PROTO,
				"peer %s is at barrier \"%s\", we are at "
				"\"%s\"",
				o->peer, phase, name);
	return 0;
}

int cqp_session_barrier(struct cqp_oob *o, const char *name)
{
	int rc = cqp_session_barrier_say(o, name);

	return rc < 0 ? rc : cqp_session_barrier_heard(o, name);
}

static int init(struct cqp_session *s, struct cqp_params *p, enum cqp_tool tool,
		bool is_client)
{
	memset(s, 0, sizeof(*s));
	s->tool = tool;
	s->p = p;
	s->lfd = -1;
	s->oob.fd = -1;
	s->is_client = is_client;
	s->buf = malloc(CQP_OOB_MAX_PAYLOAD + 1);
	if (!s->buf)
		return cqp_fail(CQP_E_NOMEM, "out of memory");
	return 0;
}

/* A server gathering --clients K: its accept says how long it may yet
 * wait for the rest; the group starts when it says "joined". */
static int wait_group(struct cqp_session *s, uint32_t len)
{
	uint64_t wait_ms;
	int saved = s->oob.timeout_ms, rc;

	rc = cqp_kv_get_u64(s->buf, len, CQP_GROUP_WAIT_KEY, &wait_ms);
	if (rc < 0 || wait_ms > 3600u * 1000u)
		return fail_in("ACCEPT", s->oob.peer);
	if (saved > 0)
		s->oob.timeout_ms = saved + (int)wait_ms;
	rc = cqp_session_barrier_heard(&s->oob, CQP_GROUP_JOINED);
	s->oob.timeout_ms = saved;
	return rc;
}

int cqp_session_connect(struct cqp_session *s, struct cqp_params *p,
			enum cqp_tool tool, const volatile sig_atomic_t *stop)
{
	/* The note is for a person waiting at a terminal. */
	struct cqp_oob_wait how = {
	    !p->quiet && isatty(STDERR_FILENO) ? cqp_tool_name(tool) : NULL,
	    stop, cqp_tool_name(tool)};
	struct cqp_kv_writer w;
	char rec[4096];
	uint32_t len;
	int rc;

	rc = init(s, p, tool, true);
	if (rc < 0)
		return rc;
	rc = cqp_oob_connect(p->host, (uint16_t)p->port,
			     (int)p->timeout_s * 1000, &how, &s->oob);
	if (rc < 0)
		return rc;
	rc = cqp_session_hello(&s->oob, cqp_tool_name(tool), CQP_VERSION);
	if (rc < 0)
		return rc;
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(p, tool, &w);
	if (w.overflow)
		return cqp_fail(CQP_E_USAGE, "parameters do not fit a record");
	rc = cqp_oob_send(&s->oob, CQP_MSG_PARAMS, w.buf, (uint32_t)w.len);
	if (rc < 0)
		return rc;
	rc = cqp_oob_expect(&s->oob, CQP_MSG_ACCEPT, s->buf,
			    CQP_OOB_MAX_PAYLOAD, &len);
	if (rc == 0 && cqp_kv_has(s->buf, len, CQP_GROUP_WAIT_KEY))
		rc = wait_group(s, len);
	return rc;
}

int cqp_session_listen(struct cqp_session *s, struct cqp_params *p,
		       enum cqp_tool tool)
{
	int rc = init(s, p, tool, false);

	if (rc < 0)
		return rc;
	return cqp_oob_listen((uint16_t)p->port, &s->lfd);
}

int cqp_session_refuse(struct cqp_oob *o)
{
	char rec[700];
	struct cqp_kv_writer w;
	/* The reason is ours to keep: the send must not overwrite it. */
	struct cqp_error why;
	int rc;

	cqp_error_save(&why);
	/* Option errors quote the client's values: keep escapes and
	 * newlines out of our log and of the reason we send. */
	cqp_oob_sanitize(why.msg);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_str(&w, "reason", why.msg);
	cqp_oob_send(o, CQP_MSG_REJECT, w.buf, (uint32_t)w.len);
	rc = cqp_fail(CQP_E_REJECTED, "rejected client %s: %s", o->peer,
		      why.msg);
	cqp_oob_close(o);
	return rc;
}

int cqp_session_admit(struct cqp_session *s, struct cqp_oob *o,
		      struct cqp_params *into, int wait_ms,
		      cqp_mem_need_fn mem_need)
{
	uint32_t len;
	int rc;

	rc = cqp_oob_accept(s->lfd, wait_ms, o);
	if (rc < 0)
		return rc;
	o->timeout_ms = (int)s->p->timeout_s * 1000;
	rc = cqp_session_hello(o, cqp_tool_name(s->tool), CQP_VERSION);
	if (rc < 0)
		goto drop;
	rc = cqp_oob_expect(o, CQP_MSG_PARAMS, s->buf, CQP_OOB_MAX_PAYLOAD,
			    &len);
	if (rc < 0)
		goto drop;
	rc = cqp_params_decode(into, s->tool, s->buf, len);
	if (rc < 0)
		goto refuse;
	if (mem_need) {
		struct cqp_mem_need m = mem_need(into);

		if (m.buffers + m.queues > into->max_mem) {
			cqp_fail(CQP_E_USAGE,
				 "the test needs %" PRIu64 " bytes (%" PRIu64
				 " of buffers, about %" PRIu64
				 " of queues), above this server's --max-mem "
				 "of %" PRIu64,
				 m.buffers + m.queues, m.buffers, m.queues,
				 into->max_mem);
			goto refuse;
		}
	}
	return 0;
refuse:
	return cqp_session_refuse(o);
drop:
	cqp_oob_close(o);
	return rc;
}

int cqp_session_accept(struct cqp_session *s, cqp_mem_need_fn mem_need)
{
	int rc = cqp_session_admit(s, &s->oob, s->p, -1, mem_need);

	return rc < 0 ? rc : cqp_oob_send(&s->oob, CQP_MSG_ACCEPT, "", 0);
}

int cqp_session_exchange(struct cqp_session *s, uint16_t type,
			 const struct cqp_kv_writer *mine, const char **text,
			 uint32_t *len)
{
	int rc;

	if (mine->overflow)
		return cqp_fail(CQP_E_PROTO, "record too large to send");
	if (s->is_client) {
		rc =
		    cqp_oob_send(&s->oob, type, mine->buf, (uint32_t)mine->len);
		if (rc < 0)
			return rc;
	}
	rc = cqp_oob_expect(&s->oob, type, s->buf, CQP_OOB_MAX_PAYLOAD, len);
	if (rc < 0)
		return rc;
	if (!s->is_client) {
		rc =
		    cqp_oob_send(&s->oob, type, mine->buf, (uint32_t)mine->len);
		if (rc < 0)
			return rc;
	}
	*text = s->buf;
	return 0;
}

int cqp_session_step(struct cqp_session *s, struct cqp_step_req *st)
{
	char rec[96];
	struct cqp_kv_writer w;
	uint32_t len;
	int rc;

	if (s->is_client) {
		if (st->size == 0)
			return cqp_oob_send(&s->oob, CQP_MSG_BYE, "", 0);
		cqp_kv_writer_init(&w, rec, sizeof(rec));
		cqp_kv_add_u64(&w, "size", st->size);
		cqp_kv_add_u64(&w, "mode", st->mode);
		cqp_kv_add_u64(&w, "spin_us", st->spin_us);
		cqp_kv_add_u64(&w, "verb", st->verb);
		rc = cqp_oob_send(&s->oob, CQP_MSG_BARRIER, w.buf,
				  (uint32_t)w.len);
		if (rc < 0)
			return rc;
		return cqp_oob_expect(&s->oob, CQP_MSG_BARRIER, s->buf,
				      CQP_OOB_MAX_PAYLOAD, &len);
	}
	rc = cqp_session_step_heard(s, &s->oob, st);
	return rc < 0 || st->size == 0
		   ? rc
		   : cqp_oob_send(&s->oob, CQP_MSG_BARRIER, "", 0);
}

int cqp_session_step_heard(struct cqp_session *s, struct cqp_oob *o,
			   struct cqp_step_req *st)
{
	uint64_t m, spin, verb = CQP_VERB_SEND;
	uint16_t type;
	uint32_t len;
	int rc;

	rc = cqp_oob_recv(o, &type, s->buf, CQP_OOB_MAX_PAYLOAD, &len);
	if (rc < 0)
		return rc;
	if (type == CQP_MSG_BYE) {
		st->size = 0;
		return 0;
	}
	if (type == CQP_MSG_ERROR) {
		char why[512] = "no reason given";

		cqp_kv_get_str(s->buf, len, "reason", why, sizeof(why));
		cqp_oob_sanitize(why);
		return cqp_fail(CQP_E_PEER_FAILED, "peer %s failed: %s",
				o->peer, why);
	}
	if (type != CQP_MSG_BARRIER)
		return cqp_fail(CQP_E_PROTO,
				"expected the next size from peer %s, got "
				"message type %u",
				o->peer, type);
	rc = cqp_kv_get_u64(s->buf, len, "size", &st->size);
	if (rc == 0)
		rc = cqp_kv_get_u64(s->buf, len, "mode", &m);
	if (rc == 0)
		rc = cqp_kv_get_u64(s->buf, len, "spin_us", &spin);
	if (rc == 0 && cqp_kv_has(s->buf, len, "verb"))
		rc = cqp_kv_get_u64(s->buf, len, "verb", &verb);
	if (rc < 0)
		return rc;
	/* A verb outside the run's set would find no access to its MR; a
	 * WRITE of the wrong size, no aligned tail to poll. */
	if (st->size == 0 || st->size > s->p->max_mem || m >= CQP_CQ__N ||
	    spin > 10000000 || verb >= CQP_VERB__N ||
	    !(cqp_params_verbs(s->p) & 1u << verb) ||
	    !cqp_verb_size_ok((uint32_t)verb, st->size))
		return cqp_fail(CQP_E_PROTO,
				"peer %s asked for size %" PRIu64
				" in mode %" PRIu64 ", spin %" PRIu64
				" us, verb %" PRIu64,
				o->peer, st->size, m, spin, verb);
	st->mode = (uint32_t)m;
	st->spin_us = (uint32_t)spin;
	st->verb = (uint32_t)verb;
	return 0;
}

void cqp_session_abort(struct cqp_session *s)
{
	if (s->oob.fd >= 0)
		cqp_oob_send_error(&s->oob, cqp_errmsg());
}

void cqp_session_end(struct cqp_session *s)
{
	cqp_oob_close(&s->oob);
}

void cqp_session_close(struct cqp_session *s)
{
	cqp_oob_close(&s->oob);
	if (s->lfd >= 0)
		close(s->lfd);
	s->lfd = -1;
	free(s->buf);
	s->buf = NULL;
}

int cqp_session_exchange_endpoints(struct cqp_session *s,
				   const struct cqp_endpoint *local,
				   struct cqp_endpoint *remote, unsigned n)
{
	size_t cap = 160 * (size_t)n + 64;
	char *rec = malloc(cap);
	struct cqp_kv_writer w;
	const char *text;
	uint32_t len;
	int rc;

	if (!rec)
		return cqp_fail(CQP_E_NOMEM, "out of memory for endpoints");
	cqp_kv_writer_init(&w, rec, cap);
	cqp_endpoints_encode(local, n, &w);
	rc = cqp_session_exchange(s, CQP_MSG_ENDPOINT, &w, &text, &len);
	if (rc == 0)
		rc = cqp_endpoints_decode(remote, n, text, len);
	free(rec);
	return rc;
}

int cqp_session_exchange_port(struct cqp_session *s,
			      const struct cqp_port_facts *mine,
			      struct cqp_port_facts *theirs)
{
	char rec[160];
	struct cqp_kv_writer w;
	const char *text;
	uint32_t len;
	int rc;

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_port_facts_encode(mine, &w);
	rc = cqp_session_exchange(s, CQP_MSG_PORT, &w, &text, &len);
	return rc < 0 ? rc : cqp_port_facts_decode(theirs, text, len);
}
