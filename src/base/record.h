/* SPDX-License-Identifier: BSD-2-Clause */
/* The result data model: one side's cost, a row per step, the device, the
 * projection and the strategy map, and the whole record (struct
 * cqp_report) that the report layer renders and results.c carries over
 * the oob.  Plain data, no printing: every layer may hold it. */
#ifndef CQP_RECORD_H
#define CQP_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/options.h"
#include "base/stats.h"

/* What one side's completion engine did during the measured phase. */
/* --threads: one thread's share of a side's cost. */
struct cqp_thread_cost {
	int32_t cpu; /* where it ran at the step's end; -1 unknown */
	uint64_t completions, wakeups;
	uint64_t foreign_completions; /* of another thread's CQ */
	double cpu_pct, cpu_user_pct, cpu_sys_pct;
	double lock_wait_us; /* waiting for a CQ another thread drained */
};

struct cqp_cost {
	bool valid;	/* false: this side's figures are unknown */
	double cpu_pct; /* CPU of the benchmark thread / wall time */
	double seconds; /* wall time the counters cover */
	/* Where the CPU went (cpuacct.h), % of one core over seconds. */
	double cpu_user_pct, cpu_sys_pct; /* the thread's split */
	double proc_cpu_pct;		  /* every thread of the process */
	bool has_sys;			  /* /proc/stat was readable */
	double sys_busy_pct, sys_irq_pct, sys_softirq_pct; /* the machine */
	double sys_kthread_pct; /* kernel threads: ksoftirqd, kworkers */
	/* sys_irq/softirq measured by the kernel (CONFIG_IRQ_TIME_ACCOUNTING)
	 * rather than sampled at its tick. */
	bool sys_irqtime_measured;
	/* /proc/softirqs (has_softirqs): the machine's data-path softirqs
	 * a second, exact counts. */
	bool has_softirqs;
	double sys_softirqs_per_s;
	double others_busy_pct; /* busy time nobody here explains */
	bool noisy;		/* others_busy_pct > CQP_NOISY_PCT */
	double sys_steal_pct;	/* a guest's time the hypervisor took */
	bool has_cpu;		/* --cpu: that CPU alone */
	double cpu_irq_pct, cpu_softirq_pct;
	uint64_t completions;
	uint64_t polls;
	uint64_t empty_polls;
	uint64_t wakeups;
	uint64_t events_acked;
	uint64_t spin_completions;  /* hybrid: caught while spinning */
	uint64_t sleep_completions; /* hybrid/event: right after a wakeup */
	bool has_idle;		    /* --idle-sec measured this side */
	double idle_cpu_pct;	    /* CPU with the connection up and idle */
	double idle_cpu_user_pct, idle_cpu_sys_pct; /* its split */
	bool has_rx_mem;       /* UD: receive memory is reported */
	uint64_t rx_mem_bytes; /* receive buffers this side registered */
	uint64_t channels;     /* completion channels its engines used */
	/* --shared-channel (has_shared): completions of another thread's
	 * CQ, and the waits for a CQ's lock and their total time. */
	bool has_shared;
	uint64_t foreign_completions, lock_waits;
	double lock_wait_us;
	/* The policy's own figures (has_policy: a mode that may sleep,
	 * cqperf(7) POLICIES): time spinning in idle spells, naps on a
	 * timer (timer), the budget each idle spell drew in us (mean, p50,
	 * p99: hybrid's spin, timer's nap, ski's, ski:rand's, adaptive's),
	 * and the measured CPU of a wakeup (ski, ski:rand, adaptive; 0
	 * before one is measured) with its wall-clock time, arm to event
	 * and event to the completion reaped (medians of the last 15). */
	bool has_policy;
	double spin_us;
	uint64_t naps;
	double budget_mean_us, budget_p50_us, budget_p99_us;
	double wake_cpu_us, wake_wait_us, wake_reap_us;
	/* --poll-batch auto (has_batch): the batch asked of each poll that
	 * found work, mean and largest. */
	bool has_batch;
	double batch_mean;
	uint64_t batch_max;
	/* --threads: the threads' shares (the figures above are their
	 * sums, or thread 0's for the process- and machine-wide ones);
	 * owned by the row (cqp_rows_free), NULL when not threaded. */
	struct cqp_thread_cost *threads;
	unsigned nthreads;
};

struct cqp_hw_counters;

struct cqp_device_info {
	char name[64];
	uint32_t port;
	int32_t gid_index;
	uint32_t active_mtu;   /* bytes */
	char link_layer[16];   /* "Ethernet" / "InfiniBand" */
	char gid[48];	       /* textual GID */
	char gid_type[16];     /* "RoCE v2", "RoCE v1", "IB"; "" unknown */
	uint32_t path_mtu;     /* bytes, agreed with the peer; 0 unknown */
	uint32_t comp_vectors; /* the context's completion vectors; 0 unknown */
	bool grh;	       /* packets carry a GRH (else LID routed) */
	bool has_inline;
	uint32_t inline_size; /* granted inline bytes, when has_inline */
	/* READs and atomics a QP may have in flight, agreed with the peer,
	 * in a run with those verbs; 0: none of them. */
	uint32_t rd_atom;
	/* UD: what a packet carries besides its payload on this link
	 * (fabric.h); 0 unknown. */
	uint32_t wire_overhead;
	char wire[32]; /* "RoCE v2 over IPv4", "InfiniBand"... */
};

/* One client of a server's group (--clients): its own figures, as it
 * measured them (rates) and as the server counted them (delivery). */
struct cqp_client_figs {
	char addr[96]; /* "host:port" of its out-of-band channel */
	double msg_rate_mpps, bw_avg_gbps;
	bool has_delivery;
	uint64_t sent, received, rx_dry;
	double cpu_pct; /* its own thread's, as it measured it */
};

/* One table row: a message size (or a mode, for mode comparisons). */
struct cqp_row {
	char label[32]; /* optional row label ("poll"...); "" = none */
	uint64_t bytes;
	/* The verb, in a run of one other than SEND; "" = SEND only. */
	char verb[12];
	uint64_t iterations;
	bool has_bw;
	double bw_peak_gbps, bw_avg_gbps; /* 1e9 bits per second */
	double bw_seconds;    /* this side's measured phase (not reported) */
	double msg_rate_mpps; /* 1e6 messages per second */
	bool has_lat;
	struct cqp_summary lat_us;
	/* Open loop (--rate): lat_us is the response time, from each
	 * request's scheduled send; service_lat_us from its actual post. */
	bool open_loop;
	double offered_rate, achieved_rate; /* requests per second */
	double arrival_cv;   /* stdev / mean of the scheduled gaps */
	uint64_t late_sends; /* due while the window was full */
	struct cqp_summary service_lat_us;
	/* UD delivery: what the client sent against what arrived.  Each
	 * side fills what it knows; the results exchange merges them. */
	bool has_delivery;
	uint64_t sent;	   /* messages the client sent */
	uint64_t fanout;   /* copies of each the server should get */
	uint64_t received; /* messages the server's receives caught */
	uint64_t rx_dry;   /* times the server found its receives used up */
	bool has_lost;	   /* ud_send_lat: exchanges retried after a loss */
	uint64_t lost;
	/* cm_event_stress: a row per side and event type (label: the name
	 * rdma_event_str gives). */
	char side[8]; /* "client", "server"; "" = not an event row */
	uint64_t count;
	double rate_per_s;
	struct cqp_cost client, server;
	struct cqp_hist *hist; /* -H: latency in ns as reported; owned, freed
				* with the row by cqp_rows_free() */
	/* Each side's port counters over the step (hwcount.h); NULL:
	 * none.  Owned like hist. */
	struct cqp_hw_counters *hw_client, *hw_server;
	/* A server's group (nclients > 0): each client's figures (owned
	 * like hist), and Jain's index over their message rates. */
	struct cqp_client_figs *clients;
	uint64_t nclients;
	double fairness;
};

/* What the completion load would be at another line rate, from the
 * measured cost of one wakeup (cq_event_lat --project). */
struct cqp_projection {
	bool valid;
	bool have_cost;	       /* false: no event-mode figures to go on */
	bool server_side;      /* the cost is the server's (bandwidth tools) */
	double wakeup_cost_us; /* CPU per wakeup, measured in event mode */
	uint64_t rate_bps;     /* --project */
	uint64_t bytes;	       /* message size projected */
	uint32_t batch;	       /* completions per wakeup assumed */
	double compl_per_s;
	double wakeups_per_s;
	double core_pct; /* wakeups/s x cost, as a share of a core */
};

/* --rate with --project (bandwidth tools): the model of the receiver's
 * wakeups at the achieved rate R, from its measured CPU per wakeup t --
 * one wakeup per message until a wakeup's work outlasts the gap between
 * messages, so min(R, 1/t) -- beside what it measured. */
struct cqp_projection_check {
	bool valid;
	double rate;	       /* messages/s achieved */
	double wakeup_cost_us; /* t */
	double model_wakeups_per_s, measured_wakeups_per_s;
	double model_cpu_pct, measured_cpu_pct;
};

/* --rates with --compare-modes: at each offered rate, the mode with the
 * least server CPU whose p99 is within the slack of the best p99 there
 * (strategy.h). */
/* poll, event, hybrids of each verb, and write's mem */
#define CQP_STRATEGY_MODES (4 * (2 + CQP_MAX_SPINS) + 1)
struct cqp_choice {
	double offered_rate;
	uint64_t bytes;
	unsigned chosen; /* index into mode[] */
	unsigned n;
	struct {
		char mode[32];
		double p99_us, server_cpu_pct;
	} mode[CQP_STRATEGY_MODES];
};

struct cqp_strategy {
	unsigned n;
	double slack_pct;
	struct cqp_choice c[CQP_MAX_RATES];
};

/* A run-wide figure (cm_event_stress's summary).  Figures of one group
 * are adjacent and render as one nested object. */
struct cqp_figure {
	char group[24]; /* "" = top level */
	char key[40];
	double value;
	bool integer;
};

/* What a side holds on the device for its run, counted where each is
 * created (cqperf(7) SERVER MEMORY): the queues and what they cost. */
struct cqp_held {
	uint64_t qps, cqs, srqs;
	uint64_t recv_wqes; /* receive slots: each QP's RQ and each SRQ */
	uint64_t cqes;	    /* CQ entries, as the device granted them */
	uint64_t registered_bytes; /* memory registered with ibv_reg_mr */
};

struct cqp_report {
	enum cqp_tool tool;
	const char *title; /* "RC SEND bandwidth" */
	const struct cqp_params *params;
	bool is_client;
	struct cqp_device_info dev;
	struct cqp_row *rows;
	unsigned nrows;
	const char *error; /* non-NULL: the run failed (partial) */
	struct cqp_projection projection; /* valid: cq_event_lat figures */
	struct cqp_strategy strategy;	  /* n == 0: none */
	struct cqp_projection_check check;
	const struct cqp_figure *summary;
	unsigned nsummary;
	/* Run-wide CPU of each side, for tools whose rows are not steps
	 * (cm_event_stress); valid = false: none. */
	struct cqp_cost run_client, run_server;
	/* Both sides ran on one machine (the same boot id): its figures
	 * (kernel, softirq) are one, printed once. */
	bool one_machine;
	/* The server's queues and memory (NULL: unknown), held for its
	 * clients (1 until a server takes more). */
	const struct cqp_held *server_mem;
	unsigned clients;
};

/* UD delivery figures derived from a row: share of expected messages that
 * never arrived (NaN when unknown), and payload over payload plus the
 * bytes each packet carries besides it on the link used (NaN when that is
 * unknown: overhead 0). */
double cqp_row_loss_pct(const struct cqp_row *row);
double cqp_wire_eff_pct(uint64_t bytes, uint32_t overhead);

/* Frees what rows own (their histograms). */
void cqp_rows_free(struct cqp_row *rows, unsigned nrows);

#endif
