/* SPDX-License-Identifier: BSD-2-Clause */
/* Port counters: directories laid out like sysfs (ports/1/hw_counters)
 * with real providers' counter names, the delta between two reads, and
 * the trip through a results record. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "base/hwcount.h"
#include "base/kv.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* irdma (E810, X722): camelCase, iWARP and RoCE alike. */
static const char *const irdma[] = {
    "ip4InDiscards",
    "ip4InTruncatedPkts",
    "ip4OutNoRoutes",
    "ip6InDiscards",
    "ip6InTruncatedPkts",
    "ip6OutNoRoutes",
    "tcpRetransSegs",
    "tcpInOptErrors",
    "tcpInProtoErrors",
    "rxVlanErrors",
    "ip4InOctets",
    "ip4InPkts",
    "ip4InReasmRqd",
    "ip4InMcastOctets",
    "ip4InMcastPkts",
    "ip4OutOctets",
    "ip4OutPkts",
    "ip4OutSegRqd",
    "ip4OutMcastOctets",
    "ip4OutMcastPkts",
    "ip6InOctets",
    "ip6InPkts",
    "ip6InReasmRqd",
    "ip6InMcastOctets",
    "ip6InMcastPkts",
    "ip6OutOctets",
    "ip6OutPkts",
    "ip6OutSegRqd",
    "ip6OutMcastOctets",
    "ip6OutMcastPkts",
    "tcpInSegs",
    "tcpOutSegs",
    "iwInRdmaReads",
    "iwInRdmaSends",
    "iwInRdmaWrites",
    "iwOutRdmaReads",
    "iwOutRdmaSends",
    "iwOutRdmaWrites",
    "iwRdmaBnd",
    "iwRdmaInv",
    "RxUDP",
    "TxUDP",
    "RxECNMrkd",
    "cnpHandled",
    "cnpIgnored",
    "cnpSent",
};

/* bnxt_re (Broadcom), with the extended and gen P7 counters: over 100,
 * more than the old cap of 96. */
static const char *const bnxt_re[] = {
    "active_pds",
    "active_ahs",
    "active_qps",
    "active_rc_qps",
    "active_ud_qps",
    "active_srqs",
    "active_cqs",
    "active_mrs",
    "active_mws",
    "watermark_pds",
    "watermark_ahs",
    "watermark_qps",
    "watermark_rc_qps",
    "watermark_ud_qps",
    "watermark_srqs",
    "watermark_cqs",
    "watermark_mrs",
    "watermark_mws",
    "resize_cq_cnt",
    "rx_pkts",
    "rx_bytes",
    "tx_pkts",
    "tx_bytes",
    "recoverable_errors",
    "rx_drops",
    "rx_discards",
    "to_retransmits",
    "seq_err_naks_rcvd",
    "max_retry_exceeded",
    "rnr_naks_rcvd",
    "missing_resp",
    "unrecoverable_err",
    "bad_resp_err",
    "local_qp_op_err",
    "local_protection_err",
    "mem_mgmt_op_err",
    "remote_invalid_req_err",
    "remote_access_err",
    "remote_op_err",
    "dup_req",
    "res_exceed_max",
    "res_length_mismatch",
    "res_exceeds_wqe",
    "res_opcode_err",
    "res_rx_invalid_rkey",
    "res_rx_domain_err",
    "res_rx_no_perm",
    "res_rx_range_err",
    "res_tx_invalid_rkey",
    "res_tx_domain_err",
    "res_tx_no_perm",
    "res_tx_range_err",
    "res_irrq_oflow",
    "res_unsup_opcode",
    "res_unaligned_atomic",
    "res_rem_inv_err",
    "res_mem_error",
    "res_srq_err",
    "res_cmp_err",
    "res_invalid_dup_rkey",
    "res_wqe_format_err",
    "res_cq_load_err",
    "res_srq_load_err",
    "res_tx_pci_err",
    "res_rx_pci_err",
    "res_oos_drop_count",
    "active_qp_count_p0",
    "active_qp_count_p1",
    "active_qp_count_p2",
    "active_qp_count_p3",
    "num_irq_started_by_fw",
    "tx_atomic_req",
    "rx_atomic_req",
    "tx_read_req",
    "tx_read_resp",
    "rx_read_req",
    "rx_read_resp",
    "tx_write_req",
    "rx_write_req",
    "tx_send_req",
    "rx_send_req",
    "rx_roce_good_pkts",
    "rx_roce_good_bytes",
    "rx_roce_drops",
    "rx_roce_discards",
    "tx_roce_pkts",
    "tx_roce_bytes",
    "tx_roce_discards",
    "tx_roce_errors",
    "rx_roce_only_pkts",
    "rx_roce_only_bytes",
    "rx_roce_only_errors",
    "rx_out_of_buffer",
    "rx_out_of_sequence",
    "tx_cnp",
    "rx_cnp",
    "rx_ecn_marked",
    "req_cqe_error",
    "req_cqe_flush_error",
    "resp_cqe_error",
    "resp_cqe_flush_error",
    "resp_remote_access_errors",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rx_icrc_encapsulated",
    "rx_dcn_payload_cut",
    "te_bypassed",
    "tx_dcn_cnp",
    "rx_dcn_cnp",
    "rx_payload_cut",
    "rx_payload_cut_ignored",
    "rx_dcn_cnp_ignored",
    "db_fifo_register",
};

/* mlx5 (ConnectX), port counters. */
static const char *const mlx5[] = {
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rx_icrc_encapsulated",
    "rx_read_requests",
    "rx_write_requests",
    "rx_atomic_requests",
    "rx_dct_connect",
    "req_transport_retries_exceeded",
    "req_rnr_retries_exceeded",
    "out_of_buffer_discards",
};

/* rxe (soft-RoCE). */
static const char *const rxe[] = {
    "sent_pkts",	   "rcvd_pkts",
    "duplicate_request",   "out_of_seq_request",
    "rcvd_rnr_err",	   "send_rnr_err",
    "rcvd_seq_err",	   "ack_deferred",
    "retry_exceeded_err",  "retry_rnr_exceeded_err",
    "completer_retry_err", "send_err",
    "link_downed",	   "rdma_sends",
    "rdma_recvs",
};

static void put_u64(const char *dir, const char *name, uint64_t v)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)v);
	check_put_file(dir, name, text);
}

/* ROOT/ports/1/hw_counters, as sysfs lays it out; its path in dir. */
static void make_tree(const char *root, char *dir, size_t cap)
{
	snprintf(dir, cap, "%s/ports", root);
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(dir, cap, "%s/ports/1", root);
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(dir, cap, "%s/ports/1/hw_counters", root);
	CHECK(mkdir(dir, 0700) == 0);
}

static void empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
}

static void remove_tree(const char *root)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/ports/1/hw_counters", root);
	empty_dir(dir);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/ports/1", root);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/ports", root);
	rmdir(dir);
	empty_dir(root);
	rmdir(root);
}

static const struct cqp_hw_counter *find(const struct cqp_hw_counters *c,
					 const char *name)
{
	for (unsigned i = 0; i < c->n; i++)
		if (strcmp(c->c[i].name, name) == 0)
			return &c->c[i];
	return NULL;
}

/* Every name of want[0..n) was kept; the missing ones named. */
static void expect_kept(const struct cqp_hw_counters *a,
			const char *const *want, size_t n, const char *label)
{
	for (size_t i = 0; i < n; i++) {
		if (!find(a, want[i]))
			fprintf(stderr, "%s: %s left out\n", label, want[i]);
		CHECK(find(a, want[i]) != NULL);
	}
}

static bool sorted(const struct cqp_hw_counters *c)
{
	for (unsigned i = 1; i < c->n; i++)
		if (strcmp(c->c[i - 1].name, c->c[i].name) >= 0)
			return false;
	return true;
}

/* A provider's whole set: every counter read, under its own name, its
 * delta over a step, and the same names after the trip through kv. */
static void provider(const char *label, const char *const *names, size_t n)
{
	char root[] = "/tmp/cqperf-hw.XXXXXX", dir[512];
	struct cqp_hw_counters *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)),
			       *d = malloc(sizeof(*d)),
			       *back = malloc(sizeof(*back));
	size_t cap = 65536;
	char *rec = malloc(cap);
	struct cqp_kv_writer w;
	unsigned missing = 0;

	CHECK(a && b && d && back && rec);
	if (!(a && b && d && back && rec) || !mkdtemp(root))
		goto out;
	make_tree(root, dir, sizeof(dir));
	check_put_file(dir, "lifespan", "10\n");
	for (size_t i = 0; i < n; i++)
		put_u64(dir, names[i], 1000 + i);
	CHECK(cqp_hw_read_dir(dir, a) == 0);
	for (size_t i = 0; i < n; i++)
		if (!find(a, names[i])) {
			if (!missing++)
				fprintf(stderr, "%s: %s not read\n", label,
					names[i]);
		}
	if (missing || a->n != n)
		fprintf(stderr, "%s: %u of %zu counters read, %u missing\n",
			label, a->n, n, missing);
	CHECK(missing == 0 && a->n == n && a->left_out == 0);
	CHECK(sorted(a));
	CHECK(!find(a, "lifespan"));

	for (size_t i = 0; i < n; i++)
		put_u64(dir, names[i], 1000 + i + 7 * i);
	CHECK(cqp_hw_read_dir(dir, b) == 0);
	cqp_hw_delta(a, b, d);
	CHECK(d->n == a->n);
	for (size_t i = 0; i < n; i++) {
		const struct cqp_hw_counter *c = find(d, names[i]);

		CHECK(!c || c->value == 7 * i);
	}

	cqp_kv_writer_init(&w, rec, cap);
	cqp_kv_add_u64(&w, "iterations", 5);
	cqp_hw_encode(d, &w);
	CHECK(!w.overflow);
	CHECK(cqp_hw_decode(back, rec, w.len) == 0);
	CHECK(back->n == d->n);
	for (unsigned i = 0; i < d->n; i++) {
		const struct cqp_hw_counter *c = find(back, d->c[i].name);

		if (!c)
			fprintf(stderr, "%s: %s lost over kv\n", label,
				d->c[i].name);
		CHECK(c && c->value == d->c[i].value);
	}
	remove_tree(root);
out:
	free(a);
	free(b);
	free(d);
	free(back);
	free(rec);
}

/* The drop, retransmission and congestion counters a collapse is read
 * from, by provider. */
static void irdma_picked(void)
{
	static const char *const want[] = {"ip4InDiscards", "tcpRetransSegs",
					   "cnpHandled",    "cnpIgnored",
					   "cnpSent",	    "RxECNMrkd"};
	char root[] = "/tmp/cqperf-hw.XXXXXX", dir[512];
	struct cqp_hw_counters *a = malloc(sizeof(*a));

	CHECK(a != NULL);
	if (!a || !mkdtemp(root)) {
		free(a);
		return;
	}
	make_tree(root, dir, sizeof(dir));
	for (size_t i = 0; i < N(irdma); i++)
		check_put_file(dir, irdma[i], "3\n");
	CHECK(cqp_hw_read_dir(dir, a) == 0);
	expect_kept(a, want, N(want), "irdma");
	remove_tree(root);
	free(a);
}

/* More counters than a report keeps: the drops, retransmissions and
 * congestion counters stay, whatever the directory's order. */
static void over_cap(void)
{
	static const char *const want[] = {
	    "rx_drops",	       "to_retransmits", "rnr_nak_retry_err",
	    "np_cnp_sent",     "rx_ecn_marked",	 "out_of_buffer",
	    "out_of_sequence", "cnpHandled",	 "tcpRetransSegs",
	    "ip4InDiscards"};
	char root[] = "/tmp/cqperf-hw.XXXXXX", dir[512], name[32];
	struct cqp_hw_counters *a = malloc(sizeof(*a));
	unsigned total = CQP_HW_MAX + 40;

	CHECK(a != NULL);
	if (!a || !mkdtemp(root)) {
		free(a);
		return;
	}
	make_tree(root, dir, sizeof(dir));
	for (unsigned i = 0; i < total - N(want); i++) {
		snprintf(name, sizeof(name), "stat_%03u", i);
		check_put_file(dir, name, "1\n");
	}
	for (size_t i = 0; i < N(want); i++)
		check_put_file(dir, want[i], "2\n");
	/* Too long to keep: left out too, and said so. */
	check_put_file(dir,
		       "a_counter_name_longer_than_any_provider_has_ever_used",
		       "3\n");
	CHECK(cqp_hw_read_dir(dir, a) == 0);
	CHECK(a->n == CQP_HW_MAX);
	CHECK(a->left_out == 41);
	CHECK(sorted(a));
	expect_kept(a, want, N(want), "over the cap");
	remove_tree(root);
	free(a);
}

/* The delta's rule: a counter that went backwards wrapped if both reads
 * fit in 32 bits (many providers keep 32-bit hardware counters behind
 * sysfs's u64), else it was reset and reads 0. */
static void wraps(void)
{
	char root[] = "/tmp/cqperf-hw.XXXXXX", dir[512];
	struct cqp_hw_counters a, b, d;
	const struct cqp_hw_counter *c;

	CHECK(mkdtemp(root) != NULL);
	make_tree(root, dir, sizeof(dir));
	check_put_file(dir, "rcvd_pkts", "4294967000\n"); /* 2^32 - 296 */
	check_put_file(dir, "rx_bytes", "4294967295\n");  /* 2^32 - 1 */
	check_put_file(dir, "tx_bytes", "8589934592\n");  /* 2^33: 64 bits */
	check_put_file(dir, "sent_pkts", "100\n");
	CHECK(cqp_hw_read_dir(dir, &a) == 0);
	check_put_file(dir, "rcvd_pkts", "704\n"); /* 296 + 704 later */
	check_put_file(dir, "rx_bytes", "0\n");	   /* one later */
	check_put_file(dir, "tx_bytes", "5\n");	   /* went backwards: reset */
	check_put_file(dir, "sent_pkts", "1100\n");
	CHECK(cqp_hw_read_dir(dir, &b) == 0);
	cqp_hw_delta(&a, &b, &d);
	CHECK(d.n == 4);
	c = find(&d, "rcvd_pkts");
	CHECK(c && c->value == 1000);
	c = find(&d, "rx_bytes");
	CHECK(c && c->value == 1);
	c = find(&d, "tx_bytes");
	CHECK(c && c->value == 0);
	c = find(&d, "sent_pkts");
	CHECK(c && c->value == 1000);
	remove_tree(root);
}

int main(void)
{
	char dir[] = "/tmp/cqperf-hw.XXXXXX";
	struct cqp_hw_counters a, b, d, back;
	struct cqp_kv_writer w;
	char rec[1024];

	CHECK(mkdtemp(dir) != NULL);
	/* rxe's layout: a counter per file, plus the cache's lifespan. */
	check_put_file(dir, "sent_pkts", "100\n");
	check_put_file(dir, "rcvd_pkts", "90\n");
	check_put_file(dir, "rcvd_rnr_err", "7\n");
	check_put_file(dir, "lifespan", "10\n");
	check_put_file(dir, "VL15_dropped", "1\n");
	check_put_file(dir, "junk", "n/a\n"); /* not a number: skipped */
	check_put_file(dir, "bad name",
		       "1\n"); /* neither a JSON nor a kv key */
	CHECK(cqp_hw_read_dir(dir, &a) == 0);
	CHECK(a.n == 4);
	CHECK_STR(a.c[0].name, "VL15_dropped");
	CHECK_STR(a.c[1].name, "rcvd_pkts");
	CHECK_STR(a.c[2].name, "rcvd_rnr_err");
	CHECK_STR(a.c[3].name, "sent_pkts");
	CHECK(a.c[3].value == 100);

	check_put_file(dir, "sent_pkts", "1100\n");
	check_put_file(dir, "rcvd_pkts", "1090\n");
	check_put_file(dir, "rcvd_rnr_err", "7\n");
	CHECK(cqp_hw_read_dir(dir, &b) == 0);
	cqp_hw_delta(&a, &b, &d);
	CHECK(d.n == 4);
	CHECK(d.c[1].value == 1000 && d.c[2].value == 0 &&
	      d.c[3].value == 1000);
	/* A counter on one side only is left out. */
	b.n = 3;
	cqp_hw_delta(&a, &b, &d);
	CHECK(d.n == 3);

	cqp_hw_delta(&a, &a, &d);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, "iterations", 5);
	cqp_hw_encode(&d, &w);
	CHECK(!w.overflow);
	CHECK(cqp_hw_decode(&back, rec, w.len) == 0);
	CHECK(back.n == 4);
	CHECK_STR(back.c[0].name, "VL15_dropped");
	CHECK_STR(back.c[3].name, "sent_pkts");
	CHECK(back.c[3].value == 0);

	empty_dir(dir);
	rmdir(dir);
	CHECK(cqp_hw_read_dir(dir, &a) == -1 && a.n == 0);

	provider("irdma", irdma, N(irdma));
	provider("bnxt_re", bnxt_re, N(bnxt_re));
	provider("mlx5", mlx5, N(mlx5));
	provider("rxe", rxe, N(rxe));
	irdma_picked();
	over_cap();
	wraps();
	return check_done("test_hwcount");
}
