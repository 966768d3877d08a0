/* SPDX-License-Identifier: BSD-2-Clause */
/* --threads: the merge of the threads' figures into a step's row and a
 * side's cost, and the per-thread shares that travel between the sides. */
#include <stdlib.h>
#include <string.h>

#include "base/kv.h"
#include "report/results.h"
#include "engine/workers.h"
#include "check.h"

static void cost(struct cqp_cost *c, double cpu, double usr, uint64_t compl,
		 uint64_t wakeups, double secs, double proc)
{
	memset(c, 0, sizeof(*c));
	c->valid = true;
	c->cpu_pct = cpu;
	c->cpu_user_pct = usr;
	c->cpu_sys_pct = cpu - usr;
	c->completions = compl ;
	c->wakeups = wakeups;
	c->polls = compl +1;
	c->seconds = secs;
	c->proc_cpu_pct = proc;
	c->channels = 1;
	c->has_sys = true;
	c->sys_busy_pct = 150;
}

int main(void)
{
	struct cqp_cost each[2], out, back;
	struct cqp_row rows[2], row;
	int32_t cpus[2] = {0, 1};
	char rec[4096];
	struct cqp_kv_writer w;

	cost(&each[0], 60, 10, 1000, 40, 1.0, 130);
	cost(&each[1], 50, 5, 800, 30, 1.2, 125);
	CHECK(cqp_workers_merge_cost(each, cpus, 2, &out) == 0);
	CHECK(out.cpu_pct == 110 && out.cpu_user_pct == 15 &&
	      out.cpu_sys_pct == 95);
	CHECK(out.completions == 1800 && out.wakeups == 70 &&
	      out.polls == 1802 && out.channels == 2);
	/* The process and the machine: thread 0's look, not summed. */
	CHECK(out.proc_cpu_pct == 130 && out.sys_busy_pct == 150);
	CHECK(out.seconds == 1.2);
	CHECK(out.nthreads == 2 && out.threads);
	CHECK(out.threads[1].cpu == 1 && out.threads[1].completions == 800 &&
	      out.threads[1].wakeups == 30 && out.threads[1].cpu_pct == 50 &&
	      out.threads[1].cpu_user_pct == 5 &&
	      out.threads[1].cpu_sys_pct == 45);

	/* What the peer gets: every thread, exactly. */
	out.threads[0].foreign_completions = 7;
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_threads_encode(&out, &w);
	CHECK(cqp_threads_decode(&back, rec, strlen(rec)) == 0);
	CHECK(back.nthreads == 2 && back.threads[0].foreign_completions == 7 &&
	      back.threads[1].cpu == 1 && back.threads[1].cpu_sys_pct == 45 &&
	      back.threads[0].completions == 1000);
	free(back.threads);
	/* No threads: nothing sent, nothing decoded. */
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, "cpu_pct", 1);
	CHECK(cqp_threads_decode(&back, rec, strlen(rec)) == 0 &&
	      back.nthreads == 0 && !back.threads);
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, "threads", 2);
	cqp_kv_add_str(&w, "thread0", "0,1,2,3,4,5,6");
	cqp_kv_add_str(&w, "thread1", "0,1,2");
	CHECK(cqp_threads_decode(&back, rec, strlen(rec)) < 0 && !back.threads);
	/* The wire form is the old one (cpu,completions,wakeups,foreign,
	 * cpu%,usr%,sys%,lock wait), and nothing more or less passes. */
	cqp_kv_writer_init(&w, rec, sizeof(rec));
	cqp_kv_add_u64(&w, "threads", 1);
	cqp_kv_add_str(&w, "thread0", "-1,5,6,7,12.5,2.5,10,3.25");
	CHECK(cqp_threads_decode(&back, rec, strlen(rec)) == 0 &&
	      back.threads[0].cpu == -1 && back.threads[0].completions == 5 &&
	      back.threads[0].wakeups == 6 &&
	      back.threads[0].foreign_completions == 7 &&
	      back.threads[0].cpu_pct == 12.5 &&
	      back.threads[0].cpu_user_pct == 2.5 &&
	      back.threads[0].cpu_sys_pct == 10 &&
	      back.threads[0].lock_wait_us == 3.25);
	free(back.threads);
	for (int bad = 0; bad < 3; bad++) {
		static const char *const vals[] = {
		    "0,5,6,7,1,1,1,1,9", "0,-5,6,7,1,1,1,1", "0,5,6,7,1,1,1,x"};

		cqp_kv_writer_init(&w, rec, sizeof(rec));
		cqp_kv_add_u64(&w, "threads", 1);
		cqp_kv_add_str(&w, "thread0", vals[bad]);
		CHECK(cqp_threads_decode(&back, rec, strlen(rec)) < 0 &&
		      !back.threads);
	}
	free(out.threads);

	/* Rows: 1 Gb/s for 1 s and 2 Gb/s for 2 s is 5 Gb over 2 s. */
	memset(rows, 0, sizeof(rows));
	for (int t = 0; t < 2; t++) {
		rows[t].has_bw = true;
		rows[t].bytes = 4096;
		rows[t].iterations = 1000u * (t + 1);
		rows[t].bw_avg_gbps = t + 1;
		rows[t].bw_peak_gbps = 2.0 * (t + 1);
		rows[t].msg_rate_mpps = 0.5 * (t + 1);
		rows[t].bw_seconds = t + 1;
	}
	cqp_workers_merge_row(rows, 2, &row);
	CHECK(row.iterations == 3000 && row.bytes == 4096);
	CHECK(row.bw_avg_gbps > 2.4999 && row.bw_avg_gbps < 2.5001);
	CHECK(row.msg_rate_mpps > 1.2499 && row.msg_rate_mpps < 1.2501);
	CHECK(row.bw_peak_gbps == 6 && row.bw_seconds == 2);
	CHECK(!row.open_loop && row.achieved_rate == 0);

	/* --rate 1001 over two threads: 501 + 500 offered, late summed,
	 * achieved the merged message rate. */
	for (int t = 0; t < 2; t++) {
		rows[t].open_loop = true;
		rows[t].offered_rate = 501 - t;
		rows[t].late_sends = 3 + t;
		rows[t].achieved_rate = 1; /* the thread's own: replaced */
	}
	cqp_workers_merge_row(rows, 2, &row);
	CHECK(row.open_loop && row.offered_rate == 1001 && row.late_sends == 7);
	CHECK(row.achieved_rate > 1249999 && row.achieved_rate < 1250001);
	/* --comp-vector: a fixed one for every CQ, auto round robin. */
	CHECK(cqp_comp_vector_for(2, 5, 4) == 2);
	CHECK(cqp_comp_vector_for(-1, 0, 4) == 0 &&
	      cqp_comp_vector_for(-1, 5, 4) == 1 &&
	      cqp_comp_vector_for(-1, 7, 1) == 0 &&
	      cqp_comp_vector_for(-1, 3, 0) == 0);
	return check_done("test_workers");
}
