/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer target for what a peer controls: the frame header, the kv
 * payload, and the test parameters a server adopts from a client.  Not
 * part of `make check`; tests/fuzz/smoke.sh builds and runs it briefly,
 * or by hand:
 *
 *   clang -g -std=gnu11 -D_GNU_SOURCE -Isrc \
 *     -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     -o fuzz_oob tests/fuzz/fuzz_oob.c SOURCES
 *
 * (SOURCES: what sources() in tests/fuzz/smoke.sh names for oob.)
 *   mkdir -p /tmp/fuzz-oob
 *   ./fuzz_oob -max_total_time=60 /tmp/fuzz-oob tests/fuzz/corpus/oob
 *
 * (libFuzzer adds what it finds to the first directory: not the seeds.)
 *
 * The input is a frame (header, then payload) when its first bytes
 * decode as a header, else a bare kv record.  Besides "no crash", it
 * checks that a header that decodes re-encodes to the same bytes, that a
 * record the parser accepts survives a writer/parser round trip
 * unchanged, and that PARAMS the server accepts for some binary pass
 * validation and survive its encode and decode unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/kv.h"
#include "oob/oob.h"
#include "base/options.h"

#define MAX_PAIRS 64

struct pairs {
	int n;
	const char *key[MAX_PAIRS];
	const char *val[MAX_PAIRS];
	char *store[MAX_PAIRS];
	/* second pass: compare against the first */
	const struct pairs *ref;
	int mismatch;
};

static int keep(void *ctx, const char *key, const char *val)
{
	struct pairs *p = ctx;
	size_t kl = strlen(key), vl = strlen(val);

	if (p->ref) {
		if (p->n >= p->ref->n || strcmp(key, p->ref->key[p->n]) ||
		    strcmp(val, p->ref->val[p->n]))
			p->mismatch = 1;
		p->n++;
		return 0;
	}
	if (p->n == MAX_PAIRS)
		return 1; /* enough: stop early, which parse must honour */
	p->store[p->n] = malloc(kl + vl + 2);
	if (!p->store[p->n])
		abort();
	memcpy(p->store[p->n], key, kl + 1);
	memcpy(p->store[p->n] + kl + 1, val, vl + 1);
	p->key[p->n] = p->store[p->n];
	p->val[p->n] = p->store[p->n] + kl + 1;
	p->n++;
	return 0;
}

static const enum cqp_tool tools[] = {
    CQP_TOOL_CQ_POLL_BW, CQP_TOOL_CQ_EVENT_LAT, CQP_TOOL_UD_SEND_BW,
    CQP_TOOL_UD_SEND_LAT, CQP_TOOL_CM_EVENT_STRESS};

static bool same_negotiated(const struct cqp_params *a,
			    const struct cqp_params *b, enum cqp_tool tool)
{
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		char x[128], y[128];

		if (!(o->flags & CQP_OPTF_NEGOTIATED) || !(o->tools & tool))
			continue;
		cqp_option_format(o, a, x, sizeof(x));
		cqp_option_format(o, b, y, sizeof(y));
		if (strcmp(x, y) != 0)
			return false;
	}
	return true;
}

/* The server's side of CQP_MSG_PARAMS, for every binary. */
static void params(const char *text, size_t len)
{
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		struct cqp_params p, again;
		char rec[4096];
		struct cqp_kv_writer w;
		int rc;

		cqp_params_defaults(&p, tools[i]);
		rc = cqp_params_decode(&p, tools[i], text, len);
		if (rc < 0) {
			/* a bad record is the client's fault, never ours */
			if (cqp_errcode() != CQP_E_USAGE &&
			    cqp_errcode() != CQP_E_PROTO)
				abort();
			continue;
		}
		if (rc != 0 || cqp_params_validate(&p, tools[i]) != 0)
			abort();
		cqp_kv_writer_init(&w, rec, sizeof(rec));
		cqp_params_encode(&p, tools[i], &w);
		cqp_params_defaults(&again, tools[i]);
		if (w.overflow ||
		    cqp_params_decode(&again, tools[i], w.buf, w.len) != 0 ||
		    !same_negotiated(&p, &again, tools[i]))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct pairs first = {0}, second = {0};
	uint16_t type;
	uint32_t len;
	uint64_t u;
	double d;
	char s[32];
	int rc;

	if (size >= CQP_OOB_HDR_LEN) {
		uint8_t again[CQP_OOB_HDR_LEN];

		if (cqp_oob_hdr_decode(data, &type, &len) == 0) {
			/* what decodes must encode to the same bytes */
			cqp_oob_hdr_encode(again, type, len);
			if (memcmp(again, data, CQP_OOB_HDR_LEN) != 0)
				abort();
			/* the rest is its payload, cut at the length */
			text += CQP_OOB_HDR_LEN;
			size -= CQP_OOB_HDR_LEN;
			if (len < size)
				size = len;
			if (type == CQP_MSG_PARAMS)
				params(text, size);
		} else if (cqp_errcode() != CQP_E_PROTO &&
			   cqp_errcode() != CQP_E_VERSION) {
			abort();
		}
	}

	(void)cqp_kv_get_u64(text, size, "n", &u);
	(void)cqp_kv_get_double(text, size, "x", &d);
	(void)cqp_kv_get_str(text, size, "reason", s, sizeof(s));

	rc = cqp_kv_parse(text, size, keep, &first);
	if (rc < 0 && cqp_errcode() != CQP_E_PROTO)
		abort();
	if (rc == 0) {
		size_t cap = size + 2;
		char *buf = malloc(cap);
		struct cqp_kv_writer w;

		if (!buf)
			abort();
		cqp_kv_writer_init(&w, buf, cap);
		for (int i = 0; i < first.n; i++)
			cqp_kv_add_str(&w, first.key[i], first.val[i]);
		/* accepted input is re-encodable in no more room (the
		 * writer adds at most a final newline and a NUL) */
		if (w.overflow)
			abort();
		second.ref = &first;
		if (cqp_kv_parse(buf, w.len, keep, &second) != 0 ||
		    second.mismatch || second.n != first.n)
			abort();
		free(buf);
	}
	for (int i = 0; i < first.n; i++)
		free(first.store[i]);
	return 0;
}
