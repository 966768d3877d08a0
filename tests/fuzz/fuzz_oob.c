/* libFuzzer target for what a peer controls: the frame header and the kv
 * payload.  Not part of `make check`; build and run by hand:
 *
 *   clang -g -std=gnu11 -Isrc -fsanitize=fuzzer,address,undefined \
 *     -o fuzz_oob tests/fuzz/fuzz_oob.c src/oob.c src/kv.c src/error.c
 *   ./fuzz_oob -max_total_time=60
 *
 * Besides "no crash", it checks that a record the parser accepts survives
 * a writer/parser round trip unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kv.h"
#include "oob.h"

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
