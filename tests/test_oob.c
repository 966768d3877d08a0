/* SPDX-License-Identifier: BSD-2-Clause */
/* Out-of-band channel: framing against garbage, short reads, closes and
 * stalls, the hello/barrier/expect logic, and a real TCP connection on
 * the loopback.  The kv records and the error model are test_kv.c's. */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "check_err.h"
#include "oob_pair.h"
#include "base/error.h"
#include "base/kv.h"
#include "oob/oob.h"
#include "base/options.h"
#include "oob/session.h"

/* A header built by hand, independent of cqp_oob_hdr_encode. */
static void raw_hdr(uint8_t h[12], uint32_t magic, uint16_t ver, uint16_t type,
		    uint32_t len)
{
	h[0] = magic >> 24;
	h[1] = magic >> 16;
	h[2] = magic >> 8;
	h[3] = magic;
	h[4] = ver >> 8;
	h[5] = ver;
	h[6] = type >> 8;
	h[7] = type;
	h[8] = len >> 24;
	h[9] = len >> 16;
	h[10] = len >> 8;
	h[11] = len;
}

/* ---- kv ---------------------------------------------------------------- */

/* Context on a failure keeps the failure's own words, even a long one. */
/* What a peer's reason may put on the terminal: UTF-8 text, never a
 * control character (C0, DEL, C1) nor a byte of no character. */
static void test_sanitize(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"plain reason", "plain reason"},
	    {"caf\xc3\xa9 \xe2\x82\xac\x35", "caf\xc3\xa9 \xe2\x82\xac\x35"},
	    {"\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!"},
	    {"a\nb\r\x1b[2Jc\x7f", "a?b??[2Jc?"},
	    {"csi \xc2\x9b"
	     "31m",
	     "csi ?31m"}, /* C1 CSI, as UTF-8 */
	    {"raw \x9b"
	     "31m",
	     "raw ?31m"}, /* C1 CSI, one byte */
	    {"lone \x80\xbf", "lone ??"},
	    {"overlong \xc0\xaf", "overlong ??"},
	    {"surrogate \xed\xa0\x80", "surrogate ???"},
	    {"big \xf4\x90\x80\x80", "big ????"},
	    {"cut \xe2\x82", "cut ??"},
	    {"", ""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64];

		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		cqp_oob_sanitize(buf);
		CHECK(strcmp(buf, cases[i].out) == 0);
	}
}

static void test_header(void)
{
	char want_msg[128];
	uint8_t h[12],
	    want[12] = {'C', 'Q', 'P', 'F', 0, 1, 0, 6, 0x01, 0x02, 0x03, 0x04};
	uint16_t t;
	uint32_t l;

	cqp_oob_hdr_encode(h, CQP_MSG_BARRIER, 0x01020304);
	CHECK(memcmp(h, want, 12) == 0);

	cqp_oob_hdr_encode(h, CQP_MSG_BYE, CQP_OOB_MAX_PAYLOAD);
	CHECK_OK(cqp_oob_hdr_decode(h, &t, &l));
	CHECK(t == CQP_MSG_BYE && l == CQP_OOB_MAX_PAYLOAD);

	raw_hdr(h, 0x47455420, 1, 1, 0); /* "GET " */
	CHECK_ERR(cqp_oob_hdr_decode(h, &t, &l), CQP_E_PROTO,
		  "bad magic 0x47455420");
	raw_hdr(h, CQP_OOB_MAGIC, 2, 1, 0);
	CHECK_ERR(cqp_oob_hdr_decode(h, &t, &l), CQP_E_VERSION,
		  "peer speaks cqperf protocol v2, we speak v1");
	/* a newer version may have types we do not know: version first */
	raw_hdr(h, CQP_OOB_MAGIC, 7, 999, 0);
	CHECK_ERR(cqp_oob_hdr_decode(h, &t, &l), CQP_E_VERSION, "v7");
	raw_hdr(h, CQP_OOB_MAGIC, 1, 0, 0);
	CHECK_ERR(cqp_oob_hdr_decode(h, &t, &l), CQP_E_PROTO,
		  "unknown message type 0");
	raw_hdr(h, CQP_OOB_MAGIC, 1, CQP_MSG__MAX, 0);
	CHECK_ERR(cqp_oob_hdr_decode(h, &t, &l), CQP_E_PROTO,
		  "unknown message type");
	raw_hdr(h, CQP_OOB_MAGIC, 1, CQP_MSG_PARAMS, CQP_OOB_MAX_PAYLOAD + 1);
	snprintf(want_msg, sizeof(want_msg),
		 "PARAMS payload of %u bytes, over the limit of %u bytes",
		 CQP_OOB_MAX_PAYLOAD + 1, CQP_OOB_MAX_PAYLOAD);
	CHECK_ERR(cqp_oob_hdr_decode(h, &t, &l), CQP_E_PROTO, want_msg);
}

/* ---- framing over a socketpair ------------------------------------------ */

struct sender {
	struct cqp_oob *o;
	uint16_t type;
	const void *buf;
	uint32_t len;
	int rc;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	s->rc = cqp_oob_send(s->o, s->type, s->buf, s->len);
	return NULL;
}

static void test_round_trip(void)
{
	struct cqp_oob a, b;
	char buf[256], *big;
	uint16_t t;
	uint32_t len;

	make_pair(&a, &b, T_MS);
	for (uint16_t type = 1; type < CQP_MSG__MAX; type++) {
		char payload[32];
		int n = snprintf(payload, sizeof(payload), "n=%u\n", type);

		if (type == CQP_MSG_BYE)
			n = 0; /* BYE travels empty */
		CHECK_OK(cqp_oob_send(&b, type, payload, (uint32_t)n));
		memset(buf, 'X', sizeof(buf));
		t = 0;
		len = 999;
		CHECK_OK(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len));
		CHECK(t == type);
		CHECK(len == (uint32_t)n);
		CHECK(memcmp(buf, payload, (size_t)n) == 0);
		CHECK(buf[n] == '\0');
	}

	/* Two frames in one write: each recv takes exactly one. */
	{
		uint8_t two[2 * 12 + 4];

		cqp_oob_hdr_encode(two, CQP_MSG_RESULTS, 4);
		memcpy(two + 12, "a=1\n", 4);
		cqp_oob_hdr_encode(two + 16, CQP_MSG_BYE, 0);
		write_all(b.fd, two, 28);
		CHECK_OK(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len));
		CHECK(t == CQP_MSG_RESULTS && len == 4);
		CHECK_STR(buf, "a=1\n");
		CHECK_OK(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len));
		CHECK(t == CQP_MSG_BYE && len == 0);
	}

	/* The largest payload, from a thread (it may exceed the socket
	 * buffer).  cap == len: fits, without a NUL after it. */
	big = malloc(CQP_OOB_MAX_PAYLOAD);
	for (uint32_t i = 0; i < CQP_OOB_MAX_PAYLOAD; i++)
		big[i] = (char)('a' + i % 26);
	{
		struct sender s = {&b, CQP_MSG_RESULTS, big,
				   CQP_OOB_MAX_PAYLOAD, -1};
		char *in = malloc(CQP_OOB_MAX_PAYLOAD);
		pthread_t th;

		a.timeout_ms = b.timeout_ms = 3000;
		pthread_create(&th, NULL, sender_main, &s);
		CHECK_OK(cqp_oob_recv(&a, &t, in, CQP_OOB_MAX_PAYLOAD, &len));
		pthread_join(th, NULL);
		CHECK(s.rc == 0);
		CHECK(t == CQP_MSG_RESULTS && len == CQP_OOB_MAX_PAYLOAD);
		CHECK(memcmp(in, big, CQP_OOB_MAX_PAYLOAD) == 0);
		free(in);
	}
	/* The sender refuses what the receiver would. */
	CHECK_ERR(
	    cqp_oob_send(&b, CQP_MSG_RESULTS, big, CQP_OOB_MAX_PAYLOAD + 1),
	    CQP_E_PROTO, "refusing to send");
	CHECK_ERR(cqp_oob_send(&b, 0, "", 0), CQP_E_PROTO, "type 0");
	free(big);
	cqp_oob_close(&a);
	cqp_oob_close(&b);
	CHECK(a.fd == -1);
}

struct dribble {
	int fd;
	const uint8_t *buf;
	size_t len;
	int gap_ms;
};

static void *dribble_main(void *arg)
{
	struct dribble *d = arg;

	for (size_t i = 0; i < d->len; i++) {
		write_all(d->fd, d->buf + i, 1);
		sleep_ms(d->gap_ms);
	}
	return NULL;
}

static void test_short_reads(void)
{
	struct cqp_oob a, b;
	uint8_t frame[12 + 30];
	char buf[64];
	struct dribble d;
	pthread_t th;
	uint16_t t;
	uint32_t len;

	/* The deadline covers the whole frame: 42 bytes at 2 ms each. */
	make_pair(&a, &b, 3000);
	cqp_oob_hdr_encode(frame, CQP_MSG_ENDPOINT, 30);
	memcpy(frame + 12, "qpn=1234\nlid=0\ngid=fe80::1:23\n", 30);
	d = (struct dribble){b.fd, frame, sizeof(frame), 2};
	pthread_create(&th, NULL, dribble_main, &d);
	CHECK_OK(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len));
	pthread_join(th, NULL);
	CHECK(t == CQP_MSG_ENDPOINT && len == 30);
	CHECK(memcmp(buf, frame + 12, 30) == 0);
	cqp_oob_close(&a);
	cqp_oob_close(&b);

	/* A peer's HELLO in one-byte writes is a normal hello. */
	{
		static const char rec[] =
		    "proto=1\ntool=cq_poll_bw\nversion=0.1.0\n";
		uint8_t hello[12 + sizeof(rec) - 1];

		make_pair(&a, &b, 5000);
		cqp_oob_hdr_encode(hello, CQP_MSG_HELLO, sizeof(rec) - 1);
		memcpy(hello + 12, rec, sizeof(rec) - 1);
		d = (struct dribble){b.fd, hello, sizeof(hello), 1};
		pthread_create(&th, NULL, dribble_main, &d);
		CHECK_OK(cqp_session_hello(&a, "cq_poll_bw", "0.1.0"));
		pthread_join(th, NULL);
		cqp_oob_close(&a);
		cqp_oob_close(&b);
	}

	/* A trickle slower than the deadline: the deadline is the
	 * frame's, so a byte now and then does not keep us waiting. */
	{
		uint8_t slow[12 + 8];
		int64_t t0, el;

		make_pair(&a, &b, T_MS);
		cqp_oob_hdr_encode(slow, CQP_MSG_HELLO, 8);
		memset(slow + 12, 'x', 8);
		d = (struct dribble){b.fd, slow, sizeof(slow), 25};
		pthread_create(&th, NULL, dribble_main, &d);
		t0 = mono_ms();
		CHECK_ERR(
		    cqp_oob_expect(&a, CQP_MSG_HELLO, buf, sizeof(buf), &len),
		    CQP_E_TIMEOUT, "within 300 ms (mid-frame after");
		el = mono_ms() - t0;
		CHECK(el >= T_MS - 20 && el < T_MS + 1500);
		/* The dribbler's next write fails once we close: wait for
		 * it to finish first. */
		pthread_join(th, NULL);
		cqp_oob_close(&a);
		cqp_oob_close(&b);
	}
}

/* xorshift64*: the same "random" bytes on every run. */
static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Random bytes, then a close: every outcome is a frame we can use or one
 * clear failure -- never a hang, a crash or a control byte in the
 * message.  Some streams start with a valid magic and version so the
 * checks behind them (type, length, payload) see random input too. */
static void test_random_bytes(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned decoded = 0, failed = 0, odd = 0;

	for (int i = 0; i < 100000; i++) {
		uint8_t h[12];
		uint16_t t;
		uint32_t l;
		int rc;

		for (int k = 0; k < 12; k++)
			h[k] = (uint8_t)rnd_next(&seed);
		if (i % 2)
			raw_hdr(h, CQP_OOB_MAGIC, 1, (uint16_t)(h[7] % 12),
				(uint32_t)rnd_next(&seed) >> (h[9] % 32));
		rc = cqp_oob_hdr_decode(h, &t, &l);
		if (rc == 0 &&
		    !(t >= 1 && t < CQP_MSG__MAX && l <= CQP_OOB_MAX_PAYLOAD))
			odd++;
		if (rc < 0 && !printable(cqp_errmsg()))
			odd++;
	}
	CHECK(odd == 0);

	for (int i = 0; i < 2000; i++) {
		struct cqp_oob a, b;
		uint8_t bytes[64];
		size_t n = rnd_next(&seed) % sizeof(bytes);
		char buf[64];
		uint16_t t = 0;
		uint32_t len = 0;
		enum cqp_errcode code;
		int rc;

		for (size_t k = 0; k < n; k++)
			bytes[k] = (uint8_t)rnd_next(&seed);
		if (n >= 12 && i % 2)
			raw_hdr(bytes, CQP_OOB_MAGIC, 1, bytes[7] % 12,
				bytes[11] % 64);
		make_pair(&a, &b, T_MS);
		write_all(b.fd, bytes, n);
		cqp_oob_close(&b);
		rc = cqp_oob_recv(&a, &t, buf, sizeof(buf), &len);
		code = cqp_errcode();
		if (rc == 0) {
			decoded++;
			if (!(t >= 1 && t < CQP_MSG__MAX && 12 + len <= n))
				odd++;
		} else {
			failed++;
			if (code != CQP_E_PROTO && code != CQP_E_VERSION &&
			    code != CQP_E_PEER_CLOSED)
				odd++;
			if (!printable(cqp_errmsg()) || !cqp_errmsg()[0])
				odd++;
		}
		cqp_errclear();
		cqp_oob_close(&a);
	}
	CHECK(odd == 0);
	/* Both outcomes happened: the test reached past the magic. */
	CHECK(decoded > 0 && failed > 0);
}

static void test_bad_frames(void)
{
	struct cqp_oob a, b;
	uint8_t h[12];
	char buf[64], want[160];
	uint16_t t;
	uint32_t len;

	make_pair(&a, &b, T_MS);

	write_all(b.fd, "GET / HTTP/1.1\r\n", 16);
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len), CQP_E_PROTO,
		  "peer side-b:2 sent a frame with bad magic");
	cqp_oob_close(&a);
	cqp_oob_close(&b);

	make_pair(&a, &b, T_MS);
	raw_hdr(h, CQP_OOB_MAGIC, 2, CQP_MSG_HELLO, 0);
	write_all(b.fd, h, 12);
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len), CQP_E_VERSION,
		  "peer side-b:2 speaks cqperf protocol v2, we speak v1");

	raw_hdr(h, CQP_OOB_MAGIC, 1, 0, 0);
	write_all(b.fd, h, 12);
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len), CQP_E_PROTO,
		  "unknown message type 0");
	raw_hdr(h, CQP_OOB_MAGIC, 1, 0xffff, 0);
	write_all(b.fd, h, 12);
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len), CQP_E_PROTO,
		  "unknown message type 65535");

	/* Oversized: refused from the header alone, the bytes after it
	 * are still unread. */
	raw_hdr(h, CQP_OOB_MAGIC, 1, CQP_MSG_PARAMS, 0xffffffffu);
	write_all(b.fd, h, 12);
	write_all(b.fd, "ZZ", 2);
	snprintf(want, sizeof(want),
		 "peer side-b:2 announced a PARAMS payload of 4294967295 "
		 "bytes, over the limit of %u bytes",
		 CQP_OOB_MAX_PAYLOAD);
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len), CQP_E_PROTO,
		  want);
	CHECK(recv(a.fd, buf, sizeof(buf), MSG_DONTWAIT) == 2);
	CHECK(memcmp(buf, "ZZ", 2) == 0);

	/* Within the protocol limit but over the caller's buffer. */
	{
		char payload[100];

		memset(payload, 'p', sizeof(payload));
		CHECK_OK(cqp_oob_send(&b, CQP_MSG_PARAMS, payload, 100));
		CHECK_ERR(cqp_oob_recv(&a, &t, buf, 50, &len), CQP_E_PROTO,
			  "100-byte PARAMS, larger than our 50-byte buffer");
		CHECK(recv(a.fd, buf, sizeof(buf), MSG_DONTWAIT) == 64);
	}
	cqp_oob_close(&a);
	cqp_oob_close(&b);
}

static void test_close_and_timeout(void)
{
	struct cqp_oob a, b;
	uint8_t h[12];
	char buf[64];
	uint16_t t;
	uint32_t len;
	int64_t t0, el;

	/* Closed before any byte of a frame. */
	make_pair(&a, &b, T_MS);
	cqp_oob_close(&b);
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len),
		  CQP_E_PEER_CLOSED, "peer side-b:2 closed the connection");
	CHECK(!strstr(cqp_errmsg(), "mid-frame"));
	/* Writing to it is an error, not a SIGPIPE. */
	CHECK_ERR(cqp_oob_send(&a, CQP_MSG_BYE, NULL, 0), CQP_E_PEER_CLOSED,
		  "peer side-b:2 closed the connection");
	/* send_error failing must not replace the failure being reported. */
	cqp_fail(CQP_E_TIMEOUT, "my own failure");
	cqp_oob_send_error(&a, "giving up");
	CHECK(cqp_errcode() == CQP_E_TIMEOUT);
	CHECK_STR(cqp_errmsg(), "my own failure");
	cqp_oob_close(&a);
	cqp_oob_send_error(&a, "closed: a no-op");
	CHECK_STR(cqp_errmsg(), "my own failure");

	/* Mid-header. */
	make_pair(&a, &b, T_MS);
	cqp_oob_hdr_encode(h, CQP_MSG_RESULTS, 10);
	write_all(b.fd, h, 5);
	cqp_oob_close(&b);
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len),
		  CQP_E_PEER_CLOSED, "mid-frame after 5 of 12 header bytes");
	cqp_oob_close(&a);

	/* Mid-payload. */
	make_pair(&a, &b, T_MS);
	write_all(b.fd, h, 12);
	write_all(b.fd, "a=1\n", 4);
	cqp_oob_close(&b);
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len),
		  CQP_E_PEER_CLOSED, "mid-frame after 16 of 22 bytes");
	cqp_oob_close(&a);

	/* Silence: a timeout close to the deadline, not a hang. */
	make_pair(&a, &b, T_MS);
	t0 = mono_ms();
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len), CQP_E_TIMEOUT,
		  "no answer from peer side-b:2 within 300 ms");
	el = mono_ms() - t0;
	CHECK(el >= T_MS - 20 && el < T_MS + 1500);

	/* A stall in the middle of a frame. */
	write_all(b.fd, h, 12);
	CHECK_ERR(cqp_oob_expect(&a, CQP_MSG_RESULTS, buf, sizeof(buf), &len),
		  CQP_E_TIMEOUT, "within 300 ms (mid-frame after 12 of 22");

	/* Seconds in the message once the deadline reaches them. */
	a.timeout_ms = 1000;
	CHECK_ERR(cqp_oob_recv(&a, &t, buf, sizeof(buf), &len), CQP_E_TIMEOUT,
		  "within 1 s");

	/* A peer that stops reading: the send deadline holds too. */
	{
		static char chunk[CQP_OOB_MAX_PAYLOAD];
		int rc = 0, i;

		b.timeout_ms = T_MS;
		for (i = 0; i < 1000 && rc == 0; i++)
			rc = cqp_oob_send(&b, CQP_MSG_RESULTS, chunk,
					  sizeof(chunk));
		CHECK_ERR(rc, CQP_E_TIMEOUT, "peer side-a:1 did not take our");
	}
	cqp_oob_close(&a);
	cqp_oob_close(&b);
}

/* ---- expect, error, hello, barrier -------------------------------------- */

static void test_expect(void)
{
	struct cqp_oob a, b;
	char buf[64], pad[5000];
	uint32_t len;

	make_pair(&a, &b, T_MS);

	CHECK_OK(send_str(&b, CQP_MSG_ACCEPT, "max-inline=220\n"));
	CHECK_OK(cqp_oob_expect(&a, CQP_MSG_ACCEPT, buf, sizeof(buf), &len));
	CHECK(len == 15);
	CHECK_STR(buf, "max-inline=220\n");

	/* send_error must leave our own recorded failure alone. */
	cqp_fail(CQP_E_DEVICE, "original failure %d", 42);
	cqp_oob_send_error(&b, "device mlx5_0 has no port 3\nsecond line");
	CHECK(cqp_errcode() == CQP_E_DEVICE);
	CHECK_STR(cqp_errmsg(), "original failure 42");
	CHECK_ERR(cqp_oob_expect(&a, CQP_MSG_ACCEPT, buf, sizeof(buf), &len),
		  CQP_E_PEER_FAILED,
		  "peer side-b:2 failed: device mlx5_0 has no port 3 second "
		  "line");
	cqp_errclear();
	cqp_oob_send_error(&b, "x");
	CHECK(cqp_errcode() == CQP_OK);
	CHECK_ERR(cqp_oob_expect(&a, CQP_MSG_RESULTS, buf, sizeof(buf), &len),
		  CQP_E_PEER_FAILED, "failed: x");

	CHECK_OK(send_str(&b, CQP_MSG_REJECT,
			  "reason=--size 1G exceeds --max-mem\n"));
	CHECK_ERR(cqp_oob_expect(&a, CQP_MSG_ACCEPT, buf, sizeof(buf), &len),
		  CQP_E_REJECTED,
		  "peer side-b:2 rejected the parameters: --size 1G exceeds "
		  "--max-mem");
	CHECK_OK(send_str(&b, CQP_MSG_REJECT, "why=dunno\n"));
	CHECK_ERR(cqp_oob_expect(&a, CQP_MSG_ACCEPT, buf, sizeof(buf), &len),
		  CQP_E_REJECTED, "(no reason given)");

	/* An ERROR larger than the caller's buffer still yields its reason,
	 * and the stream stays in step. */
	memset(pad, 'q', sizeof(pad));
	memcpy(pad, "reason=out of memory\npad=", 25);
	pad[sizeof(pad) - 1] = '\n';
	CHECK_OK(cqp_oob_send(&b, CQP_MSG_ERROR, pad, sizeof(pad)));
	CHECK_OK(cqp_oob_send(&b, CQP_MSG_BYE, NULL, 0));
	CHECK_ERR(cqp_oob_expect(&a, CQP_MSG_ACCEPT, buf, 16, &len),
		  CQP_E_PEER_FAILED, "failed: out of memory");
	CHECK_OK(cqp_oob_expect(&a, CQP_MSG_BYE, NULL, 0, &len));
	CHECK(len == 0);

	CHECK_OK(send_str(&b, CQP_MSG_RESULTS, "x=1\n"));
	CHECK_ERR(cqp_oob_expect(&a, CQP_MSG_ACCEPT, buf, sizeof(buf), &len),
		  CQP_E_PROTO,
		  "expected ACCEPT from peer side-b:2, got RESULTS");
	cqp_oob_close(&a);
	cqp_oob_close(&b);
}

struct side {
	struct cqp_oob *o;
	const char *tool, *version, *barrier;
	int rc;
	enum cqp_errcode code;
	char msg[512];
};

static void *side_main(void *arg)
{
	struct side *s = arg;

	if (s->barrier)
		s->rc = cqp_session_barrier(s->o, s->barrier);
	else
		s->rc = cqp_session_hello(s->o, s->tool, s->version);
	s->code = cqp_errcode();
	snprintf(s->msg, sizeof(s->msg), "%s", cqp_errmsg());
	return NULL;
}

/* Run both sides at once, as two processes would. */
static void both(struct side *x, struct side *y)
{
	pthread_t tx, ty;

	pthread_create(&tx, NULL, side_main, x);
	pthread_create(&ty, NULL, side_main, y);
	pthread_join(tx, NULL);
	pthread_join(ty, NULL);
}

static void test_hello_barrier(void)
{
	struct cqp_oob a, b;
	struct side x, y;
	char buf[256];
	uint32_t len;

	/* Two threads must each get a turn: a loaded machine needs more
	 * than T_MS.  The silent-peer case below sets T_MS again. */
	make_pair(&a, &b, 5000);
	x = (struct side){.o = &a, .tool = "cq_poll_bw", .version = "0.1.0"};
	y = (struct side){.o = &b, .tool = "cq_poll_bw", .version = "0.1.0"};
	both(&x, &y);
	CHECK(x.rc == 0 && y.rc == 0);
	/* One machine, one process: each knows the other is local. */
	CHECK(a.peer_local && b.peer_local);
	CHECK(a.peer_pid == (int)getpid() && b.peer_pid == (int)getpid());

	/* Another machine's boot_id, or none: remote. */
	CHECK_OK(send_str(&b, CQP_MSG_HELLO,
			  "proto=1\ntool=cq_poll_bw\nversion=0.1.0\n"
			  "boot_id=00000000-0000-0000-0000-000000000000\n"
			  "pid=42\n"));
	CHECK_OK(cqp_session_hello(&a, "cq_poll_bw", "0.1.0"));
	CHECK(!a.peer_local && a.peer_pid == 0);
	CHECK_OK(cqp_oob_expect(&b, CQP_MSG_HELLO, buf, sizeof(buf), &len));
	CHECK_OK(send_str(&b, CQP_MSG_HELLO,
			  "proto=1\ntool=cq_poll_bw\nversion=0.1.0\n"));
	CHECK_OK(cqp_session_hello(&a, "cq_poll_bw", "0.1.0"));
	CHECK(!a.peer_local);
	CHECK_OK(cqp_oob_expect(&b, CQP_MSG_HELLO, buf, sizeof(buf), &len));

	/* Same tool, other release: refused, since parameters travel as
	 * differences from defaults that another release may not share. */
	x.version = "0.2.0";
	both(&x, &y);
	CHECK(x.rc == -CQP_E_VERSION && y.rc == -CQP_E_VERSION);
	CHECK(strstr(y.msg, "runs cq_poll_bw 0.2.0, we run cq_poll_bw "
			    "0.1.0") != NULL);

	/* Another tool: both sides fail and say what the other runs. */
	y.tool = "cq_event_lat";
	both(&x, &y);
	CHECK(x.rc == -CQP_E_VERSION && x.code == CQP_E_VERSION);
	CHECK(y.rc == -CQP_E_VERSION && y.code == CQP_E_VERSION);
	CHECK(strstr(x.msg, "peer side-b:2 runs cq_event_lat 0.1.0, we run "
			    "cq_poll_bw 0.2.0") != NULL);
	CHECK(strstr(y.msg, "peer side-a:1 runs cq_poll_bw 0.2.0, we run "
			    "cq_event_lat 0.1.0") != NULL);

	x = (struct side){.o = &a, .barrier = "warmup"};
	y = (struct side){.o = &b, .barrier = "warmup"};
	both(&x, &y);
	CHECK(x.rc == 0 && y.rc == 0);
	y.barrier = "measure";
	both(&x, &y);
	CHECK(x.rc == -CQP_E_PROTO && y.rc == -CQP_E_PROTO);
	CHECK(strstr(x.msg, "peer side-b:2 is at barrier \"measure\", we are "
			    "at \"warmup\"") != NULL);
	CHECK(strstr(y.msg, "is at barrier \"warmup\"") != NULL);

	/* A peer hello with another protocol in the record, or broken. */
	CHECK_OK(send_str(&b, CQP_MSG_HELLO,
			  "proto=2\ntool=cq_poll_bw\nversion=9\n"));
	CHECK_ERR(cqp_session_hello(&a, "cq_poll_bw", "0.1.0"), CQP_E_VERSION,
		  "speaking cqperf protocol v2");
	CHECK_OK(cqp_oob_expect(&b, CQP_MSG_HELLO, buf, sizeof(buf), &len));
	CHECK_OK(send_str(&b, CQP_MSG_HELLO, "proto=1\n"));
	CHECK_ERR(cqp_session_hello(&a, "cq_poll_bw", "0.1.0"), CQP_E_PROTO,
		  "bad HELLO from peer side-b:2: key=value record lacks key "
		  "\"tool\"");
	CHECK_OK(cqp_oob_expect(&b, CQP_MSG_HELLO, buf, sizeof(buf), &len));
	/* hello waiting on a silent peer times out, saying for what */
	a.timeout_ms = T_MS;
	CHECK_ERR(cqp_session_hello(&a, "cq_poll_bw", "0.1.0"), CQP_E_TIMEOUT,
		  "no answer from peer side-b:2 within 300 ms (waiting for "
		  "its HELLO)");
	cqp_oob_close(&a);
	cqp_oob_close(&b);
}

/* ---- TCP on the loopback ------------------------------------------------ */

struct server {
	int lfd;
	int rc;
	char peer[96];
	char msg[512];
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct cqp_oob o;
	char buf[256];
	uint32_t len;
	uint16_t t;

	s->rc = cqp_oob_accept(s->lfd, 3000, &o);
	if (s->rc == 0) {
		snprintf(s->peer, sizeof(s->peer), "%s", o.peer);
		if ((s->rc = cqp_session_hello(&o, "cq_poll_bw", "0.1.0")) ==
			0 &&
		    (s->rc = cqp_oob_expect(&o, CQP_MSG_PARAMS, buf,
					    sizeof(buf), &len)) == 0 &&
		    (s->rc = strcmp(buf, "size=65536\n") ? -1 : 0) == 0 &&
		    (s->rc = send_str(&o, CQP_MSG_ACCEPT, "ok=1\n")) == 0 &&
		    (s->rc = cqp_session_barrier(&o, "measure")) == 0 &&
		    (s->rc = cqp_oob_recv(&o, &t, buf, sizeof(buf), &len)) == 0)
			s->rc = t == CQP_MSG_BYE ? 0 : -1;
		cqp_oob_close(&o);
	}
	snprintf(s->msg, sizeof(s->msg), "%s", cqp_errmsg());
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static volatile sig_atomic_t alarm_stop;

/* After 300 ms, what a tool's SIGTERM handler does: the flag set, and
 * SIGALRM at the thread *arg (a process-wide signal could land on
 * another of the test's threads). */
static void *alarm_main(void *arg)
{
	struct timespec ts = {0, 300000000};

	nanosleep(&ts, NULL);
	alarm_stop = 1;
	pthread_kill(*(pthread_t *)arg, SIGALRM);
	return NULL;
}

static void test_tcp(void)
{
	struct server s = {.lfd = -1};
	struct cqp_oob c;
	char buf[64], want[256];
	uint16_t port = 0;
	int64_t t0, el;
	pthread_t th;
	uint32_t len;
	int rc = -1, lfd2 = -1;

	for (int i = 0; i < 200 && rc < 0; i++) {
		port = (uint16_t)(20000 + (getpid() + i * 37) % 10000);
		rc = cqp_oob_listen(port, &s.lfd);
		if (rc < 0 && !strstr(cqp_errmsg(), "already in use"))
			break;
	}
	CHECK_OK(rc);
	if (rc < 0)
		return;

	/* A second listener on the same port is refused, by name. */
	CHECK_ERR(cqp_oob_listen(port, &lfd2), CQP_E_NET, "already in use");

	pthread_create(&th, NULL, server_main, &s);
	CHECK_OK(cqp_oob_connect("127.0.0.1", port, 3000, NULL, &c));
	snprintf(want, sizeof(want), "127.0.0.1:%u", port);
	CHECK_STR(c.peer, want);
	CHECK_OK(cqp_session_hello(&c, "cq_poll_bw", "0.1.0"));
	CHECK_OK(send_str(&c, CQP_MSG_PARAMS, "size=65536\n"));
	CHECK_OK(cqp_oob_expect(&c, CQP_MSG_ACCEPT, buf, sizeof(buf), &len));
	CHECK_OK(cqp_session_barrier(&c, "measure"));
	CHECK_OK(cqp_oob_send(&c, CQP_MSG_BYE, NULL, 0));
	pthread_join(th, NULL);
	CHECK(s.rc == 0);
	if (s.rc)
		fprintf(stderr, "  server: %s\n", s.msg);
	CHECK(strncmp(s.peer, "127.0.0.1:", 10) == 0);
	cqp_oob_close(&c);

	/* Nobody connecting: accept times out. */
	t0 = mono_ms();
	CHECK_ERR(cqp_oob_accept(s.lfd, 200, &c), CQP_E_TIMEOUT,
		  "no client connected to TCP port");
	CHECK(mono_ms() - t0 >= 180);
	close(s.lfd);

	/* Nobody listening: retried until the deadline, not given up at the
	 * first refusal. */
	t0 = mono_ms();
	snprintf(want, sizeof(want),
		 "could not connect to 127.0.0.1:%u within 500 ms: connection "
		 "refused, no cq_poll_bw server listens there; start one on "
		 "that host with `cq_poll_bw -d DEV`",
		 port);
	CHECK_ERR(cqp_oob_connect("127.0.0.1", port, 500,
				  &(struct cqp_oob_wait){.tool = "cq_poll_bw"},
				  &c),
		  CQP_E_NET, want);
	el = mono_ms() - t0;
	CHECK(el >= 480 && el < 3000);
	if (!(el >= 480 && el < 3000))
		fprintf(stderr, "  connect gave up after %" PRId64 " ms\n", el);

	CHECK_ERR(cqp_oob_connect("no-such-host.invalid", port, 300, NULL, &c),
		  CQP_E_NET, "cannot resolve host no-such-host.invalid");

	/* A signal while retrying ends the wait as what it is, not as the
	 * deadline (issue 32: SIGTERM after 5 s said "within 30 s"). */
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	pthread_t me = pthread_self(), killer;
	struct cqp_oob_wait how = {NULL, &alarm_stop, NULL};
	/* A port of our own, bound and not listening: every attempt is
	 * refused at once, and no other test can listen there meanwhile. */
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sin);
	int hold = socket(AF_INET, SOCK_STREAM, 0);

	CHECK(hold >= 0 &&
	      bind(hold, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	      getsockname(hold, (struct sockaddr *)&sin, &sl) == 0);
	port = ntohs(sin.sin_port);

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	pthread_create(&killer, NULL, alarm_main, &me);
	t0 = mono_ms();
	snprintf(want, sizeof(want),
		 "interrupted while waiting for the server on 127.0.0.1:%u",
		 port);
	CHECK_ERR(cqp_oob_connect("127.0.0.1", port, 3000, &how, &c),
		  CQP_E_INTERRUPTED, want);
	el = mono_ms() - t0;
	CHECK(el >= 250 && el < 1500);
	pthread_join(killer, NULL);
	sigaction(SIGALRM, &old, NULL);
	close(hold);
}

/* ---- the server's side of a session against hand-made clients ----- */

/* Each way a connect fails says what it means and what to do. */
static void test_unreached(void)
{
	char m[512];

	cqp_oob_unreached(m, sizeof(m), "ud_send_lat", "h:1", ETIMEDOUT, true,
			  3000);
	CHECK(strstr(m, "within 3 s: connection refused, no ud_send_lat "
			"server") != NULL);
	cqp_oob_unreached(m, sizeof(m), NULL, "h:1", ECONNREFUSED, false, 0);
	CHECK(strstr(m, "h:1: connection refused, no server listens there; "
			"start one on that host with `TOOL -d DEV`") != NULL);
	cqp_oob_unreached(m, sizeof(m), "x", "h:1", EHOSTUNREACH, false, 2000);
	CHECK(strstr(m, "within 2 s: No route to host (no route to it from "
			"here: check the address") != NULL);
	cqp_oob_unreached(m, sizeof(m), "x", "h:1", ETIMEDOUT, false, 30000);
	CHECK(strstr(m,
		     "within 30 s: no answer (Connection timed out: the "
		     "host may be down, or a firewall drops that TCP port)") !=
	      NULL);
	cqp_oob_unreached(m, sizeof(m), "x", "h:1", EACCES, false, 0);
	CHECK(strcmp(m, "could not connect to h:1: Permission denied") == 0);
}

int main(void)
{
	test_unreached();
	test_sanitize();
	test_header();
	test_round_trip();
	test_short_reads();
	test_random_bytes();
	test_bad_frames();
	test_close_and_timeout();
	test_expect();
	test_hello_barrier();
	test_tcp();
	return check_done("test_oob");
}
