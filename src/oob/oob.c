/* SPDX-License-Identifier: BSD-2-Clause */
/* The out-of-band channel's framed protocol and every error message that
 * names a frame and the peer: a timeout or a short read is reported where
 * the frame is known.  Its TCP setup is in socket.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif

#include "oob/oob.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/error.h"
#include "base/kv.h"
#include "oob/wait.h"

/* send_error must not hold up a run that is already failing. */
#define ERROR_SEND_MS 1000
/* Enough for a hello, a barrier, or the start of an ERROR's reason. */
#define SMALL_PAYLOAD 1024

static const char *const msg_names[CQP_MSG__MAX] = {
    [CQP_MSG_HELLO] = "HELLO",	     [CQP_MSG_PARAMS] = "PARAMS",
    [CQP_MSG_ACCEPT] = "ACCEPT",     [CQP_MSG_REJECT] = "REJECT",
    [CQP_MSG_ENDPOINT] = "ENDPOINT", [CQP_MSG_BARRIER] = "BARRIER",
    [CQP_MSG_RESULTS] = "RESULTS",   [CQP_MSG_ERROR] = "ERROR",
    [CQP_MSG_BYE] = "BYE",	     [CQP_MSG_PORT] = "PORT",
    [CQP_MSG_ALIVE] = "ALIVE",
};

static const char *msg_name(uint16_t type)
{
	if (type == 0 || type >= CQP_MSG__MAX)
		return "an unknown message";
	return msg_names[type];
}

/* CQPERF_TRACE=oob (cqperf(7) ENVIRONMENT): each frame sent or received,
 * and each wait for one, on standard error.  Read once. */
static bool tracing(void)
{
	static _Atomic int on = -1;
	int v = atomic_load_explicit(&on, memory_order_relaxed);

	if (v < 0) {
		const char *e = getenv("CQPERF_TRACE");

		v = e && strstr(e, "oob") != NULL;
		atomic_store_explicit(&on, v, memory_order_relaxed);
	}
	return v;
}

/* "cq_poll_bw[123] oob +0.012 s -> PARAMS 57 B to HOST:PORT: text" */
static void trace(const struct cqp_oob *o, const char *what, uint16_t type,
		  const void *payload, uint32_t len)
{
	static _Atomic int64_t t0;
	int64_t now, zero = 0;
	char text[161];
	uint32_t n = 0;

	if (!tracing())
		return;
	now = cqp_oob_now_ms();
	atomic_compare_exchange_strong(&t0, &zero, now);
	/* kv records: one key=value a line, shown comma-separated */
	for (const char *p = payload; p && n < len && n < sizeof(text) - 1; n++)
		text[n] = p[n] == '\n'			? ','
			  : p[n] >= 0x20 && p[n] < 0x7f ? p[n]
							: '?';
	text[n] = '\0';
	if (n && n == len && text[n - 1] == ',')
		text[n - 1] = '\0';
	fprintf(stderr, "%s[%d] oob +%.3f s %s %s %" PRIu32 " B %s %s%s%s%s\n",
		program_invocation_short_name, (int)getpid(),
		(double)(now - atomic_load(&t0)) / 1e3, what, msg_name(type),
		len, what[0] == '-' ? "to" : "from", o->peer, n ? ": " : "",
		text, len > n ? "..." : "");
}

/* Before a wait: the line a stuck pair ends on says what each side
 * waits for. */
static void trace_wait(const struct cqp_oob *o, uint16_t type)
{
	if (tracing())
		fprintf(stderr, "%s[%d] oob waits for %s from %s\n",
			program_invocation_short_name, (int)getpid(),
			msg_name(type), o->peer);
}

/* Length of the well-formed UTF-8 sequence at s (1..4) and its code
 * point, or 0: a stray continuation byte, a truncated or overlong
 * sequence, a surrogate or past U+10FFFF. */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
	int n = s[0] < 0x80		      ? 1
		: s[0] >= 0xc0 && s[0] < 0xe0 ? 2
		: s[0] >= 0xe0 && s[0] < 0xf0 ? 3
		: s[0] >= 0xf0 && s[0] < 0xf8 ? 4
					      : 0;
	uint32_t c;

	if (n == 0)
		return 0;
	c = n == 1 ? s[0] : s[0] & (0x7fu >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void cqp_oob_sanitize(char *s)
{
	char *out = s;

	while (*s) {
		uint32_t cp = 0;
		int n = utf8_seq((const unsigned char *)s, &cp);

		/* C0, DEL and C1 (U+0080..U+009F, CSI among them) are what a
		 * terminal acts on; so are bytes of no character at all. */
		if (n == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
			*out++ = '?';
			s += n ? n : 1;
			continue;
		}
		memmove(out, s, (size_t)n);
		out += n;
		s += n;
	}
	*out = '\0';
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

void cqp_oob_hdr_encode(uint8_t hdr[CQP_OOB_HDR_LEN], uint16_t type,
			uint32_t len)
{
	put_be32(hdr, CQP_OOB_MAGIC);
	put_be16(hdr + 4, CQP_OOB_VERSION);
	put_be16(hdr + 6, type);
	put_be32(hdr + 8, len);
}

/* who: "peer" or "peer HOST:PORT", so the public decoder and recv share
 * the messages. */
static int hdr_decode(const uint8_t hdr[CQP_OOB_HDR_LEN], uint16_t *type,
		      uint32_t *len, const char *who)
{
	uint32_t magic = get_be32(hdr), l = get_be32(hdr + 8);
	uint16_t ver = get_be16(hdr + 4), t = get_be16(hdr + 6);

	if (magic != CQP_OOB_MAGIC)
		return cqp_fail(CQP_E_PROTO,
				"%s sent a frame with bad magic 0x%08x "
				"(expected 0x%08x \"CQPF\"): not a cqperf "
				"peer, or the stream is out of step",
				who, magic, CQP_OOB_MAGIC);
	/* Before the type: another version may have other types. */
	if (ver != CQP_OOB_VERSION)
		return cqp_fail(CQP_E_VERSION,
				"%s speaks cqperf protocol v%u, we speak v%u",
				who, ver, CQP_OOB_VERSION);
	if (t == 0 || t >= CQP_MSG__MAX)
		return cqp_fail(CQP_E_PROTO, "%s sent unknown message type %u",
				who, t);
	if (l > CQP_OOB_MAX_PAYLOAD)
		return cqp_fail(CQP_E_PROTO,
				"%s announced a %s payload of %u bytes, over "
				"the limit of %u bytes",
				who, msg_names[t], l, CQP_OOB_MAX_PAYLOAD);
	*type = t;
	*len = l;
	return 0;
}

int cqp_oob_hdr_decode(const uint8_t hdr[CQP_OOB_HDR_LEN], uint16_t *type,
		       uint32_t *len)
{
	return hdr_decode(hdr, type, len, "peer");
}

/* Progress through one frame, for messages about where it stopped. */
struct frame_pos {
	int64_t deadline;
	uint32_t done;	/* frame bytes moved so far */
	uint32_t total; /* header + payload, 0 while the length is unknown */
	uint16_t want;	/* the message expected, 0 for any */
};

static void where_in_frame(char *buf, size_t cap, const struct frame_pos *f)
{
	if (f->done == 0)
		buf[0] = '\0';
	else if (f->total == 0)
		snprintf(buf, cap, " (mid-frame after %u of %u header bytes)",
			 f->done, CQP_OOB_HDR_LEN);
	else
		snprintf(buf, cap, " (mid-frame after %u of %u bytes)", f->done,
			 f->total);
}

static int read_full(struct cqp_oob *o, void *buf, uint32_t n,
		     struct frame_pos *f)
{
	uint8_t *p = buf;
	char at[80], d[32];

	while (n) {
		ssize_t r = recv(o->fd, p, n, MSG_DONTWAIT);

		if (r > 0) {
			p += r;
			n -= (uint32_t)r;
			f->done += (uint32_t)r;
			continue;
		}
		where_in_frame(at, sizeof(at), f);
		if (r == 0)
			return cqp_fail(CQP_E_PEER_CLOSED,
					"peer %s closed the connection%s",
					o->peer, at);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = cqp_oob_wait_fd(o->fd, POLLIN, f->deadline);

			if (w < 0)
				return w;
			/* Say what we waited for: a server's log then tells
			 * a silent client from one that stalled later. */
			if (w == 0 && f->want && f->done == 0)
				return cqp_fail(
				    CQP_E_TIMEOUT,
				    "no answer from peer %s within %s "
				    "(waiting for its %s)",
				    o->peer,
				    cqp_oob_fmt_duration(d, sizeof(d),
							 o->timeout_ms),
				    msg_name(f->want));
			if (w == 0)
				return cqp_fail(
				    CQP_E_TIMEOUT,
				    "no answer from peer %s within %s%s",
				    o->peer,
				    cqp_oob_fmt_duration(d, sizeof(d),
							 o->timeout_ms),
				    at);
			continue;
		}
		/* A killed peer often shows up as a reset, not a close. */
		if (errno == ECONNRESET)
			return cqp_fail(CQP_E_PEER_CLOSED,
					"peer %s reset the connection%s",
					o->peer, at);
		return cqp_fail(CQP_E_NET, "reading from peer %s: %s%s",
				o->peer, strerror(errno), at);
	}
	return 0;
}

static int send_frame(struct cqp_oob *o, uint16_t type, const void *buf,
		      uint32_t len, int timeout_ms)
{
	uint8_t hdr[CQP_OOB_HDR_LEN];
	struct iovec iov[2] = {
	    {.iov_base = hdr, .iov_len = sizeof(hdr)},
	    {.iov_base = (void *)buf, .iov_len = len},
	};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	struct frame_pos f = {.deadline = cqp_oob_deadline_after(timeout_ms),
			      .total = CQP_OOB_HDR_LEN + len};
	char at[80], d[32];

	if (type == 0 || type >= CQP_MSG__MAX || len > CQP_OOB_MAX_PAYLOAD)
		return cqp_fail(CQP_E_PROTO,
				"refusing to send message type %u with a "
				"%u-byte payload to peer %s (limit %u)",
				type, len, o->peer, CQP_OOB_MAX_PAYLOAD);
	cqp_oob_hdr_encode(hdr, type, len);
	while (f.done < f.total) {
		/* MSG_NOSIGNAL: a vanished peer is an error, not SIGPIPE. */
		ssize_t r = sendmsg(o->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r >= 0) {
			size_t left = (size_t)r;

			f.done += (uint32_t)r;
			while (mh.msg_iovlen && left >= mh.msg_iov->iov_len) {
				left -= mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			}
			if (mh.msg_iovlen) {
				mh.msg_iov->iov_base =
				    (uint8_t *)mh.msg_iov->iov_base + left;
				mh.msg_iov->iov_len -= left;
			}
			continue;
		}
		where_in_frame(at, sizeof(at), &f);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = cqp_oob_wait_fd(o->fd, POLLOUT, f.deadline);

			if (w < 0)
				return w;
			if (w == 0)
				return cqp_fail(CQP_E_TIMEOUT,
						"peer %s did not take our %s "
						"within %s (it stopped "
						"reading)%s",
						o->peer, msg_names[type],
						cqp_oob_fmt_duration(
						    d, sizeof(d), timeout_ms),
						at);
			continue;
		}
		if (errno == EPIPE || errno == ECONNRESET)
			return cqp_fail(CQP_E_PEER_CLOSED,
					"peer %s closed the connection "
					"(sending %s)%s",
					o->peer, msg_names[type], at);
		return cqp_fail(CQP_E_NET, "sending %s to peer %s: %s%s",
				msg_names[type], o->peer, strerror(errno), at);
	}
	trace(o, "->", type, buf, len);
	return 0;
}

int cqp_oob_send(struct cqp_oob *o, uint16_t type, const void *buf,
		 uint32_t len)
{
	return send_frame(o, type, buf, len, o->timeout_ms);
}

static int recv_hdr(struct cqp_oob *o, struct frame_pos *f, uint16_t *type,
		    uint32_t *len)
{
	uint8_t hdr[CQP_OOB_HDR_LEN];
	char who[128];
	int rc;

	rc = read_full(o, hdr, sizeof(hdr), f);
	if (rc < 0)
		return rc;
	snprintf(who, sizeof(who), "peer %s", o->peer);
	rc = hdr_decode(hdr, type, len, who);
	if (rc < 0)
		return rc;
	f->total = CQP_OOB_HDR_LEN + *len;
	return 0;
}

/* Read the payload announced by the header into the caller's buffer. */
static int recv_payload(struct cqp_oob *o, struct frame_pos *f, uint16_t t,
			uint32_t l, void *buf, uint32_t cap, uint32_t *len)
{
	int rc;

	/* Refuse before reading: an oversized payload is never buffered. */
	if (l > cap)
		return cqp_fail(CQP_E_PROTO,
				"peer %s sent a %u-byte %s, larger than our "
				"%u-byte buffer",
				o->peer, l, msg_names[t], cap);
	rc = read_full(o, buf, l, f);
	if (rc < 0)
		return rc;
	if (l < cap)
		((char *)buf)[l] = '\0';
	if (len)
		*len = l;
	return 0;
}

int cqp_oob_recv(struct cqp_oob *o, uint16_t *type, void *buf, uint32_t cap,
		 uint32_t *len)
{
	struct frame_pos f = {.deadline =
				  cqp_oob_deadline_after(o->timeout_ms)};
	uint16_t t;
	uint32_t l;
	int rc;

	rc = recv_hdr(o, &f, &t, &l);
	if (rc < 0)
		return rc;
	rc = recv_payload(o, &f, t, l, buf, cap, len);
	if (rc < 0)
		return rc;
	trace(o, "<-", t, buf, l);
	*type = t;
	return 0;
}

/* The reason of an ERROR/REJECT payload, whatever else it carries. */
static void peer_reason(const char *text, uint32_t len, char *out, size_t cap)
{
	if (cqp_kv_get_str(text, len, "reason", out, cap) < 0)
		snprintf(out, cap, "(no reason given)");
	cqp_oob_sanitize(out);
}

int cqp_oob_expect(struct cqp_oob *o, uint16_t type, void *buf, uint32_t cap,
		   uint32_t *len)
{
	struct frame_pos f = {.deadline = cqp_oob_deadline_after(o->timeout_ms),
			      .want = type};
	char small[SMALL_PAYLOAD], reason[512];
	uint16_t t;
	uint32_t l, keep;
	int rc;

	trace_wait(o, type);
	rc = recv_hdr(o, &f, &t, &l);
	if (rc < 0)
		return rc;
	if (t == type) {
		rc = recv_payload(o, &f, t, l, buf, cap, len);
		if (rc == 0)
			trace(o, "<-", t, buf, l);
		return rc;
	}
	if (t != CQP_MSG_ERROR && t != CQP_MSG_REJECT)
		return cqp_fail(CQP_E_PROTO, "expected %s from peer %s, got %s",
				msg_name(type), o->peer, msg_names[t]);

	/* Read the reason into our own buffer: the caller's may be small
	 * or absent, and the reason must not be lost to a size check.
	 * Beyond what fits we read and drop, keeping the stream in step. */
	keep = l < sizeof(small) ? l : (uint32_t)sizeof(small);
	rc = read_full(o, small, keep, &f);
	for (uint32_t left = l - keep; rc == 0 && left;) {
		char sink[256];
		uint32_t n = left < sizeof(sink) ? left : sizeof(sink);

		rc = read_full(o, sink, n, &f);
		left -= n;
	}
	if (rc < 0)
		return rc;
	trace(o, "<-", t, small, keep);
	peer_reason(small, keep, reason, sizeof(reason));
	if (t == CQP_MSG_ERROR)
		return cqp_fail(CQP_E_PEER_FAILED, "peer %s failed: %s",
				o->peer, reason);
	return cqp_fail(CQP_E_REJECTED, "peer %s rejected the parameters: %s",
			o->peer, reason);
}

void cqp_oob_send_error(struct cqp_oob *o, const char *reason)
{
	struct cqp_error saved;
	char text[512], buf[600];
	struct cqp_kv_writer w;
	int t = o->timeout_ms;

	if (o->fd < 0)
		return;
	/* The caller is about to report its own failure: keep it intact. */
	cqp_error_save(&saved);
	/* A kv value cannot hold a newline. */
	snprintf(text, sizeof(text), "%s", reason ? reason : "");
	for (char *p = text; *p; p++)
		if (*p == '\n')
			*p = ' ';
	cqp_kv_writer_init(&w, buf, sizeof(buf));
	cqp_kv_add_str(&w, "reason", text);
	if (!w.overflow)
		(void)send_frame(o, CQP_MSG_ERROR, buf, (uint32_t)w.len,
				 t > 0 && t < ERROR_SEND_MS ? t
							    : ERROR_SEND_MS);
	(void)cqp_error_restore(&saved);
}

bool cqp_oob_pending(const struct cqp_oob *o)
{
	struct pollfd pfd = {.fd = o->fd, .events = POLLIN};

	return o->fd >= 0 && poll(&pfd, 1, 0) > 0;
}

int cqp_oob_peek(const struct cqp_oob *o, uint16_t *type)
{
	uint8_t hdr[CQP_OOB_HDR_LEN];
	uint32_t len;
	ssize_t r;
	int ret;

	if (!cqp_oob_pending(o))
		return 0;
	/* A frame left waiting (the peer's results) is seen again at every
	 * look and hides a close behind it; the session reads both soon. */
	r = recv(o->fd, hdr, sizeof(hdr), MSG_PEEK | MSG_DONTWAIT);
	if (r < 0 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (r <= 0)
		return cqp_fail(CQP_E_PEER_CLOSED,
				"peer %s closed the connection mid-run%s%s",
				o->peer, r < 0 ? ": " : "",
				r < 0 ? strerror(errno) : "");
	if (r < (ssize_t)sizeof(hdr))
		return 0;
	/* garbage: the session would fail on it, so fail now, naming it */
	ret = cqp_oob_hdr_decode(hdr, type, &len);
	return ret < 0 ? ret : 1;
}
