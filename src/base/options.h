/* SPDX-License-Identifier: BSD-2-Clause */
/* The one table of options: parsing, --help, negotiation and reporting.
 *
 * Every option of every binary is a row in options_table.c.  The row alone
 * drives the command-line parser, --help, the man-page coverage test, the
 * parameter record the client sends to the server (parsed on the server
 * with the same bounds), and the "params" object of the JSON report.
 */
#ifndef CQP_OPTIONS_H
#define CQP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/tools.h"

/* mem: spin on the last bytes of the message buffer, where a plain RDMA
 * WRITE leaves no completion (--verb write's target); as a reaper of a
 * CQ it polls.  From empty on, the policies of base/policy.h. */
enum cqp_cq_mode {
	CQP_CQ_POLL,
	CQP_CQ_EVENT,
	CQP_CQ_HYBRID,
	CQP_CQ_MEM,
	CQP_CQ_EMPTY, /* empty:N */
	CQP_CQ_TIMER,
	CQP_CQ_SKI,
	CQP_CQ_SKI_RAND, /* ski:rand */
	CQP_CQ_ADAPTIVE,
	CQP_CQ__N
};
/* --compare-modes without a list. */
#define CQP_MODES_DEFAULT                                                      \
	(1u << CQP_CQ_POLL | 1u << CQP_CQ_EVENT | 1u << CQP_CQ_HYBRID)
/* A mode that never sleeps on a channel: poll, and mem (which polls CQs). */
static inline bool cqp_cq_mode_polls(uint32_t mode)
{
	return mode == CQP_CQ_POLL || mode == CQP_CQ_MEM;
}
/* --verb: the operation a request is.  In the order of the words. */
enum cqp_verb {
	CQP_VERB_SEND,
	CQP_VERB_WRITE_IMM,
	CQP_VERB_WRITE,
	CQP_VERB_READ,
	CQP_VERB_ATOMIC,
	CQP_VERB__N
};
enum cqp_output { CQP_OUT_HUMAN, CQP_OUT_JSON, CQP_OUT_CSV };
enum cqp_cm_mode { CQP_CM_BLOCK, CQP_CM_NONBLOCK, CQP_CM_BATCH };

#define CQP_MAX_RATES 16
#define CQP_MAX_SPINS 8
/* --threads: benchmark threads per side, each with its own QPs, CQs and
 * completion channel. */
#define CQP_MAX_THREADS 16
/* --clients: one server, at most this many clients in a run. */
#define CQP_MAX_CLIENTS 1024
#define CQP_RATE_MAX	UINT64_MAX /* --rates max */

#define CQP_DEFAULT_PORT 18600 /* not perftest's 18515: both can run */
#define CQP_DEFAULT_QKEY 0x11111111u
/* --inline -1 asks for perftest's default inline size. */
#define CQP_AUTO_INLINE 236
/* --post-list: the sender's chain is an array of this many on its stack;
 * more is refused at parse time, not cut short in silence. */
#define CQP_POST_LIST_MAX 64

struct cqp_params {
	/* Local: each side sets its own. */
	char ib_dev[64];	       /* "" = first device */
	uint32_t ib_port;	       /* 1-based */
	int32_t gid_index;	       /* -1 = auto */
	uint32_t port;		       /* TCP port of the out-of-band channel */
	char host[256];		       /* "" = serve */
	uint32_t timeout_s;	       /* deadline for each wait on the peer */
	bool persistent;	       /* server: keep serving clients */
	int32_t cpu;		       /* -1 = no pinning; else cpus[0] */
	int32_t cpus[CQP_MAX_THREADS]; /* --cpu LIST: thread i on cpus[i] */
	uint32_t ncpu;
	bool per_thread;     /* human report: a block per thread */
	uint32_t clock;	     /* enum cqp_clock_mode */
	int32_t comp_vector; /* completion vector for the CQs; -1 auto */
	uint32_t pkey_index; /* P_Key table index of the QPs */
	uint32_t output;     /* enum cqp_output */
	bool report_gbits;
	bool wide;	    /* human report: a row and its cost on one line */
	bool quiet;	    /* no progress line on a terminal */
	uint64_t max_mem;   /* server: cap on what a client may allocate */
	uint32_t max_run_s; /* server: cap on one client's run; 0 none */
	uint32_t clients;   /* server: clients a run serves at once */
	uint32_t join_timeout_s; /* server: wait for all of them */
	bool rtt;		 /* latency as round trips, not one-way */
	bool histogram;		 /* ASCII latency histogram per row */
	uint64_t project_bps;	 /* 0 = no load projection */
	char cm_addr[256]; /* RDMA CM's address of the server ("": host) */
	char samples[256]; /* --samples FILE: every latency sample, CSV */

	/* Negotiated: the client sends these, the server adopts them. */
	uint64_t size;
	bool all;
	uint64_t iters;
	uint32_t duration_s;	/* 0 = iteration count mode */
	uint64_t warmup;	/* exchanges left out before measuring */
	bool compare_modes;	/* a step per completion mode */
	uint32_t compare_list;	/* --compare-modes LIST (0: the default) */
	uint32_t empty_n;	/* empty:N's N (0: not given, 64) */
	uint32_t p99_target_us; /* adaptive: what a sleep may add; 0 none */
	uint64_t rate;		/* open loop: requests per second; 0 = closed */
	uint32_t arrival;	/* enum cqp_arrival_kind */
	uint32_t burst;		/* --arrival burst:N */
	uint32_t on_ms, off_ms; /* --arrival onoff:ON_MS,OFF_MS */
	uint32_t pareto_milli;	/* --arrival pareto:ALPHA, ALPHA * 1000 */
	/* --rates: a row per rate, increasing; CQP_RATE_MAX (last only) is
	 * the closed-loop rate measured first. */
	uint64_t rates[CQP_MAX_RATES];
	uint32_t nrates;
	uint32_t p99_slack;	 /* % above the best p99 a choice may be */
	uint32_t client_cq_mode; /* open loop: how the load reaps */
	uint32_t idle_sec;	 /* 0 = no idle CPU measurement */
	uint32_t tx_depth;
	uint32_t rx_depth;
	uint32_t cq_depth;   /* 0 = derived from the queue depths */
	int32_t inline_size; /* -1 = device default */
	uint32_t mtu;	     /* 0 = port's active MTU */
	uint32_t sl;	     /* service level */
	uint32_t tclass;     /* GRH traffic class (RoCE v2: DSCP << 2 | ECN) */
	uint32_t post_list;  /* at most CQP_POST_LIST_MAX */
	uint32_t signal_every;
	uint32_t qps;
	uint32_t nthreads; /* --threads (bandwidth/latency tools), >= 1 */
	bool channel_per_cq;
	bool shared_channel; /* --threads: receivers' CQs on one channel */
	uint32_t cq_mode;    /* enum cqp_cq_mode */
	uint32_t verb;	     /* enum cqp_verb */
	uint32_t verbs;	     /* --verbs: a step set per verb, 1u << verb */
	uint32_t poll_batch;
	uint32_t ack_batch;
	uint32_t spin_us; /* the first of spin_list */
	/* --spin-us LIST: hybrid steps run once per budget. */
	uint32_t spin_list[CQP_MAX_SPINS];
	uint32_t nspin;
	bool solicited;
	bool nonblock;
	uint32_t cq_mod_count; /* 0 = no CQ moderation */
	uint32_t cq_mod_usec;
	/* UD */
	uint32_t qkey;
	bool srq;	   /* the server's receives on one shared queue */
	bool verify;	   /* payloads carry a checked pattern and sequence */
	bool rdma_cm;	   /* UD path through RDMA CM instead of the oob */
	char mcast[64];	   /* "" = unicast, else the group's GID */
	uint32_t retry_us; /* ud_send_lat: deadline of one exchange */
	/* cm_event_stress */
	uint32_t connections;
	uint32_t concurrency;
	uint32_t rounds;
	uint32_t msgs; /* sends per connection, 0 = none */
	bool no_qp;
	uint32_t reject_pct;
	uint32_t cm_mode; /* enum cqp_cm_mode */
	uint32_t cm_batch;
	uint32_t threads; /* 0 = the event thread handles events itself */
	uint32_t retries;
	uint32_t cm_timeout_ms;
};

enum cqp_opt_type {
	CQP_OPT_FLAG, /* bool, no argument */
	CQP_OPT_U32,  /* strict decimal (or 0x hex), range-checked */
	CQP_OPT_I32,  /* like U32 but min may be -1 (meaning "auto") */
	CQP_OPT_U64,
	CQP_OPT_SIZE, /* u64 with optional K/M/G suffix (powers of 1024) */
	CQP_OPT_RATE, /* u64 bit/s with optional k/m/g/t (powers of 1000) */
	CQP_OPT_ENUM, /* one of the words, stored as u32 index */
	CQP_OPT_STR,
	CQP_OPT_CQMOD,	 /* COUNT[,USEC] into cq_mod_count/cq_mod_usec */
	CQP_OPT_ARRIVAL, /* fixed|poisson|burst:N|onoff:ON,OFF|pareto:A */
	CQP_OPT_RATES,	 /* R1,R2,...[,max] into rates/nrates */
	CQP_OPT_SPINS,	 /* U1[,U2...] into spin_us/spin_list/nspin */
	CQP_OPT_CPUS,	 /* C1[,C2...] and ranges A-B into cpu/cpus/ncpu */
	CQP_OPT_WORDS,	 /* W1[,W2...] of words, a u32 mask (1u << index) */
	CQP_OPT_MODE,	 /* a completion mode word, or empty:N (empty_n) */
	CQP_OPT_MODES,	 /* a flag, or a list of modes (compare_list) */
	CQP_OPT_HELP,
	CQP_OPT_VERSION,
};

enum cqp_opt_flags {
	CQP_OPTF_NEGOTIATED = 1u << 0, /* sent to and adopted by the server */
	CQP_OPTF_AUTO = 1u << 1,       /* U32: "auto" is 0 */
};

/* --help's headings, in its order. */
enum cqp_opt_group {
	CQP_G_CONNECTION,
	CQP_G_TRAFFIC,
	CQP_G_COMPLETION,
	CQP_G_OPEN_LOOP,
	CQP_G_THREADS,
	CQP_G_OUTPUT,
	CQP_G__N
};

struct cqp_option {
	const char *name; /* long name, without "--" */
	enum cqp_opt_group group;
	char short_name; /* 0 = none */
	enum cqp_opt_type type;
	size_t offset;	/* into struct cqp_params */
	size_t str_cap; /* CQP_OPT_STR: buffer size */
	int64_t min;
	uint64_t max;
	/* The default of a number, flag or enum (0 unless given); the few
	 * that differ by tool are set in cqp_params_defaults. */
	int64_t def;
	const char *const *words; /* CQP_OPT_ENUM, NULL-terminated */
	const char *argname;	  /* "N", "SIZE", "DEV", ... for help */
	const char *help;
	unsigned tools; /* mask of enum cqp_tool */
	unsigned flags; /* enum cqp_opt_flags */
};

/* The table, terminated by a row with name == NULL. */
extern const struct cqp_option cqp_options[];

const char *cqp_cq_mode_name(uint32_t mode);
const char *cqp_output_name(uint32_t output);
const char *cqp_cm_mode_name(uint32_t mode);
const char *cqp_verb_name(uint32_t verb);

/* What a verb means for the completion path (cqperf(7) VERBS). */
/* The target sees a completion (a receive consumed): send, write-imm. */
static inline bool cqp_verb_target_cq(uint32_t verb)
{
	return verb == CQP_VERB_SEND || verb == CQP_VERB_WRITE_IMM;
}
/* A step's size fits its verb: a plain WRITE's target loads the last 8
 * bytes of the message at once (an acquire load), so they must be there
 * and aligned: misaligned, that load faults on Armv8.0-8.3 and is
 * undefined on x86.  Other verbs' targets poll no memory. */
static inline bool cqp_verb_size_ok(uint32_t verb, uint64_t size)
{
	return verb != CQP_VERB_WRITE || (size >= 8 && size % 8 == 0);
}
/* The target's CPU takes no part: read, atomic. */
static inline bool cqp_verb_passive(uint32_t verb)
{
	return verb == CQP_VERB_READ || verb == CQP_VERB_ATOMIC;
}
/* Outstanding requests bounded by the responder's rd_atom resources. */
static inline bool cqp_verb_rd_atom(uint32_t verb)
{
	return cqp_verb_passive(verb);
}
/* The completion modes a step of `verb` may run in, as a mask
 * (1u << enum cqp_cq_mode). */
uint32_t cqp_verb_modes(uint32_t verb);
/* empty:N's N for the run. */
#define CQP_EMPTY_DEFAULT 64
static inline uint32_t cqp_params_empty_n(const struct cqp_params *p)
{
	return p->empty_n ? p->empty_n : CQP_EMPTY_DEFAULT;
}
/* --compare-modes' modes (a mask). */
static inline uint32_t cqp_params_compare(const struct cqp_params *p)
{
	return p->compare_list ? p->compare_list : CQP_MODES_DEFAULT;
}
/* A mode's name as a word of --cq-mode, with empty's N ("empty:64"). */
void cqp_mode_word(const struct cqp_params *p, uint32_t mode, char *buf,
		   size_t cap);
/* The verbs of a run: --verbs, else --verb alone (a mask). */
static inline uint32_t cqp_params_verbs(const struct cqp_params *p)
{
	return p->verbs ? p->verbs : 1u << p->verb;
}

/* Default values for every field. */
void cqp_params_defaults(struct cqp_params *p, enum cqp_tool tool);
/* Entries of each CQ: --cq-depth, else both queues of one QP. */
uint32_t cqp_params_cq_depth(const struct cqp_params *p);
/* An estimate of the queue memory a driver allocates for nqps queue
 * pairs (send queues), nrqs receive queues and ncqs completion queues of
 * these parameters: 64 B a CQE and a receive WQE, 64 B plus the inline
 * size rounded up to 64 B a send WQE, each queue rounded up to 4 KiB
 * (mlx5's layout; cqperf(7) --max-mem). */
uint64_t cqp_queue_mem(const struct cqp_params *p, uint64_t nqps, uint64_t nrqs,
		       uint64_t ncqs);

enum cqp_parse_result {
	CQP_PARSE_OK = 0,
	CQP_PARSE_HELP = 1,    /* --help printed to stdout */
	CQP_PARSE_VERSION = 2, /* --version printed to stdout */
};
/* Parses argv for `tool` into p (which it first resets to defaults).
 * Returns a cqp_parse_result, or a negative CQP_E_USAGE failure whose
 * message names the option and its allowed range.  One positional
 * argument is accepted: the server host. */
int cqp_params_parse(struct cqp_params *p, enum cqp_tool tool, int argc,
		     char **argv, FILE *out);

/* Checks that only make sense across options (conflicts, -a with -s,
 * -n with -D, queue relations).  CQP_E_USAGE failure on a problem. */
int cqp_params_validate(const struct cqp_params *p, enum cqp_tool tool);

/* --arrival's fields of p, for cqp_arrivals_init. */
struct cqp_arrival_shape;
void cqp_params_arrival(const struct cqp_params *p,
			struct cqp_arrival_shape *s);

/* Prints --help for tool. */
void cqp_params_usage(enum cqp_tool tool, FILE *out);

/* Text value of option o in p, as it would be written on a command line
 * ("poll", "4096", "true"/"false" for flags, "16,10" for cq-mod). */
void cqp_option_format(const struct cqp_option *o, const struct cqp_params *p,
		       char *buf, size_t cap);
/* Parses text value for option o into p (same strictness and bounds as
 * the command line; for flags accepts "true"/"false"). */
int cqp_option_set(const struct cqp_option *o, struct cqp_params *p,
		   const char *val);
const struct cqp_option *cqp_option_find(const char *name);

/* Negotiation: the client writes its negotiated options as a kv record;
 * the server resets its negotiated fields to defaults, applies the record
 * with the same parser and bounds (unknown keys are an error naming them),
 * then validates.  Both return 0 or a negative cqp error. */
struct cqp_kv_writer;
void cqp_params_encode(const struct cqp_params *p, enum cqp_tool tool,
		       struct cqp_kv_writer *w);
int cqp_params_decode(struct cqp_params *p, enum cqp_tool tool,
		      const char *text, size_t len);
/* The first negotiated option whose value differs between a and b
 * (a group's clients must agree): its name, and both values as the wire
 * writes them.  NULL when they agree. */
const char *cqp_params_differ(const struct cqp_params *a,
			      const struct cqp_params *b, enum cqp_tool tool,
			      char *va, char *vb, size_t cap);
/* What a client asked of a server, for its log: the negotiated options
 * off their defaults as "--size 4096 --iters 1500" (a flag bare; "..."
 * where cut), or "the defaults". */
void cqp_params_asked(const struct cqp_params *p, enum cqp_tool tool, char *buf,
		      size_t cap);

#endif
