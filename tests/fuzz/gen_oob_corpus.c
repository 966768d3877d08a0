/* SPDX-License-Identifier: BSD-2-Clause */
/* Writes the seed corpus of fuzz_oob: frames as the project's own writers
 * build them (header encoder, kv writer, parameter encoder), so seeds
 * stay valid when the format changes.  Not built by `make`; by hand:
 *
 *   clang -std=gnu11 -D_GNU_SOURCE -Isrc -o gen_oob_corpus \
 *     tests/fuzz/gen_oob_corpus.c SOURCES
 *   ./gen_oob_corpus tests/fuzz/corpus/oob
 *
 * (SOURCES: what sources() in tests/fuzz/smoke.sh names for oob.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kv.h"
#include "oob/oob.h"
#include "base/options.h"

static const char *dir;

static void put(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* A frame of `type` around the record in w (its length as announced,
 * unless `lie` overrides it). */
static void frame(const char *name, uint16_t type,
		  const struct cqp_kv_writer *w, long lie)
{
	static uint8_t buf[CQP_OOB_HDR_LEN + 8192];
	uint32_t len = lie >= 0 ? (uint32_t)lie : (uint32_t)w->len;

	if (w->overflow || w->len > sizeof(buf) - CQP_OOB_HDR_LEN)
		abort();
	cqp_oob_hdr_encode(buf, type, len);
	memcpy(buf + CQP_OOB_HDR_LEN, w->buf, w->len);
	put(name, buf, CQP_OOB_HDR_LEN + w->len);
}

/* The PARAMS record a client sends for this command line. */
static void params(const char *name, enum cqp_tool tool, const char *line)
{
	char copy[512], *argv[32], rec[4096];
	struct cqp_kv_writer w;
	struct cqp_params p;
	int argc = 0;

	snprintf(copy, sizeof(copy), "%s %s", cqp_tool_name(tool), line);
	for (char *t = strtok(copy, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	if (cqp_params_parse(&p, tool, argc, argv, stderr) != 0) {
		fprintf(stderr, "seed '%s' does not parse\n", line);
		exit(1);
	}
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_params_encode(&p, tool, &w);
	frame(name, CQP_MSG_PARAMS, &w, -1);
}

int main(int argc, char **argv)
{
	char rec[4096];
	struct cqp_kv_writer w;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, "proto", 1);
	cqp_kv_add_str(&w, "tool", "cq_poll_bw");
	cqp_kv_add_str(&w, "version", "0.1");
	frame("hello", CQP_MSG_HELLO, &w, -1);
	/* the announced length past the bytes that follow: a short read */
	frame("hello-short", CQP_MSG_HELLO, &w, (long)w.len + 100);
	put("kv-hello", w.buf, w.len);

	params("params-poll-bw", CQP_TOOL_CQ_POLL_BW,
	       "-s 4K -n 500 --cq-mode event --ack-batch 8 -q 4 "
	       "--cq-mod 16,10 -l 8 --signal-every 4 x");
	params("params-event-lat", CQP_TOOL_CQ_EVENT_LAT,
	       "-a --cq-mode hybrid --spin-us 20 --warmup 10 --rtt "
	       "--compare-modes --idle-sec 2 x");
	params("params-ud-bw", CQP_TOOL_UD_SEND_BW,
	       "-s 2K -q 8 --srq --verify --qkey 0x1234 --mcast ff0e::1 "
	       "-D 5 --nonblock x");
	params("params-ud-lat", CQP_TOOL_UD_SEND_LAT,
	       "--rdma-cm --retry-us 5000 -n 100 --solicited x");
	params("params-cm", CQP_TOOL_CM_EVENT_STRESS,
	       "-c 50 --concurrency 8 --rounds 3 --msgs 2 --reject-pct 10 "
	       "--cm-mode batch --cm-batch 16 --threads 2 x");
	params("params-empty", CQP_TOOL_CQ_POLL_BW, "x");

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_str(&w, "tx-depth", "0");
	cqp_kv_add_str(&w, "no-such", "1");
	frame("params-bad", CQP_MSG_PARAMS, &w, -1);

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	frame("accept", CQP_MSG_ACCEPT, &w, -1);
	frame("bye", CQP_MSG_BYE, &w, -1);

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_str(&w, "reason", "--size 3G exceeds --max-mem");
	frame("reject", CQP_MSG_REJECT, &w, -1);
	frame("error", CQP_MSG_ERROR, &w, -1);
	put("kv-reason", w.buf, w.len);

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, "count", 2);
	cqp_kv_add_u64(&w, "lid", 0);
	cqp_kv_add_u64(&w, "qpn0", 17);
	cqp_kv_add_u64(&w, "psn0", 0x123456);
	cqp_kv_add_u64(&w, "qpn1", 18);
	cqp_kv_add_u64(&w, "psn1", 0xabcdef);
	cqp_kv_add_str(&w, "gid", "fe80::1");
	frame("endpoint", CQP_MSG_ENDPOINT, &w, -1);

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_str(&w, "phase", "step");
	frame("barrier", CQP_MSG_BARRIER, &w, -1);

	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, "n", 1000);
	cqp_kv_add_u64(&w, "iterations", 1000);
	cqp_kv_add_double(&w, "x", 0.1);
	cqp_kv_add_double(&w, "bw_peak_gbps", 12.5);
	cqp_kv_add_double(&w, "lat_p99", 1e-300);
	cqp_kv_add_i64(&w, "delta", -42);
	frame("results", CQP_MSG_RESULTS, &w, -1);
	put("kv-results", w.buf, w.len);

	/* headers the decoder must refuse (offsets: magic 0, version 4,
	 * type 6, length 8, all big-endian) */
	{
		uint8_t h[CQP_OOB_HDR_LEN];

		cqp_oob_hdr_encode(h, CQP_MSG_BYE, 0);
		h[0] = 'X';
		put("bad-magic", h, sizeof(h));
		cqp_oob_hdr_encode(h, CQP_MSG_BYE, 0);
		h[5] = 99;
		put("bad-version", h, sizeof(h));
		cqp_oob_hdr_encode(h, CQP_MSG_BYE, 0);
		h[7] = 200;
		put("bad-type", h, sizeof(h));
		cqp_oob_hdr_encode(h, CQP_MSG_RESULTS, CQP_OOB_MAX_PAYLOAD + 1);
		put("too-long", h, sizeof(h));
	}
	return 0;
}
