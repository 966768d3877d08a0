/* SPDX-License-Identifier: BSD-2-Clause */
/* The one option table of every tool and its parser, validator, kv
 * encoding for the negotiation and --help.  Long because the table is:
 * the code around it is short. */
#include "base/options.h"

#include <ctype.h>
#include <errno.h>
#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/arrival.h"
#include "base/error.h"
#include "base/kv.h"
#include "base/version.h"

#define RDMA_TOOLS                                                             \
	(CQP_TOOL_CQ_POLL_BW | CQP_TOOL_CQ_EVENT_LAT | CQP_TOOL_UD_SEND_BW |   \
	 CQP_TOOL_UD_SEND_LAT)
#define BW_TOOLS  (CQP_TOOL_CQ_POLL_BW | CQP_TOOL_UD_SEND_BW)
#define LAT_TOOLS (CQP_TOOL_CQ_EVENT_LAT | CQP_TOOL_UD_SEND_LAT)
#define UD_TOOLS  (CQP_TOOL_UD_SEND_BW | CQP_TOOL_UD_SEND_LAT)
/* --threads so far: all but ud_send_lat and cm_event_stress (its own). */
#define THREAD_TOOLS                                                           \
	(CQP_TOOL_CQ_POLL_BW | CQP_TOOL_CQ_EVENT_LAT | CQP_TOOL_UD_SEND_BW)
#define ALL	   CQP_TOOL_ALL
#define NEG	   CQP_OPTF_NEGOTIATED
#define OFF(field) offsetof(struct cqp_params, field)
#define KIB	   ((uint64_t)1024)
#define MIB	   (1024 * KIB)
#define GIB	   (1024 * MIB)

/* In the order of enum cqp_cq_mode; empty takes ":N". */
static const char *const cq_mode_words[] = {
    "poll",  "event", "hybrid",	  "mem",      "empty",
    "timer", "ski",   "ski:rand", "adaptive", NULL};
/* In the order of enum cqp_verb. */
static const char *const verb_words[] = {"send", "write-imm", "write",
					 "read", "atomic",    NULL};
static const char *const output_words[] = {"human", "json", "csv", NULL};
static const char *const cm_mode_words[] = {"block", "nonblock", "batch", NULL};
/* In the order of enum cqp_clock_mode. */
static const char *const clock_words[] = {"auto", "tsc", "monotonic",
					  "force-tsc", NULL};
/* In the order of enum cqp_arrival_kind; burst, onoff and pareto take
 * ":" and their parameters. */
static const char *const arrival_words[] = {"fixed", "poisson", "burst",
					    "onoff", "pareto",	NULL};
#define CM CQP_TOOL_CM_EVENT_STRESS

const struct cqp_option cqp_options[] = {
    {.name = "ib-dev",
     .group = CQP_G_CONNECTION,
     .short_name = 'd',
     .type = CQP_OPT_STR,
     .offset = OFF(ib_dev),
     .str_cap = sizeof(((struct cqp_params *)0)->ib_dev),
     .argname = "DEV",
     .tools = ALL,
     .help = "RDMA device to use (default: the first one)"},
    {.name = "ib-port",
     .group = CQP_G_CONNECTION,
     .short_name = 'i',
     .type = CQP_OPT_U32,
     .offset = OFF(ib_port),
     .min = 1,
     .max = 255,
     .def = 1,
     .argname = "PORT",
     .tools = RDMA_TOOLS,
     .help = "port of the RDMA device"},
    {.name = "gid-index",
     .group = CQP_G_CONNECTION,
     .short_name = 'x',
     .type = CQP_OPT_I32,
     .offset = OFF(gid_index),
     .min = -1,
     .max = 255,
     .def = -1,
     .argname = "IDX",
     .tools = RDMA_TOOLS,
     .help = "GID index (-1: the GID of the oob connection's address, else"
	     " RoCEv2 IPv4-mapped, ...)"},
    {.name = "sl",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_U32,
     .offset = OFF(sl),
     .max = 15,
     .argname = "SL",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "service level of every packet (InfiniBand; on RoCE the VLAN "
	     "priority where the driver maps it)"},
    {.name = "tclass",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_U32,
     .offset = OFF(tclass),
     .max = 255,
     .argname = "TC",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "traffic class of the GRH; on RoCE v2 the IP DSCP and ECN "
	     "bits (DSCP 26: 104)"},
    {.name = "pkey-index",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_U32,
     .offset = OFF(pkey_index),
     .max = 65535,
     .argname = "IDX",
     .tools = RDMA_TOOLS,
     .help = "P_Key table index of the queue pairs"},
    {.name = "port",
     .group = CQP_G_CONNECTION,
     .short_name = 'p',
     .type = CQP_OPT_U32,
     .offset = OFF(port),
     .min = 1,
     .max = 65535,
     .def = CQP_DEFAULT_PORT,
     .argname = "PORT",
     .tools = ALL,
     .help = "TCP port of the out-of-band channel"},
    {.name = "size",
     .group = CQP_G_TRAFFIC,
     .short_name = 's',
     .type = CQP_OPT_SIZE,
     .offset = OFF(size),
     .min = 1,
     .max = 2 * GIB,
     .def = 65536,
     .argname = "SIZE",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "message size in bytes (K, M, G suffixes)"},
    {.name = "all",
     .group = CQP_G_TRAFFIC,
     .short_name = 'a',
     .type = CQP_OPT_FLAG,
     .offset = OFF(all),
     .max = 1,
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "every power of two from 2 bytes to 8 MiB (or the device's "
	     "maximum), a row each"},
    {.name = "iters",
     .group = CQP_G_TRAFFIC,
     .short_name = 'n',
     .type = CQP_OPT_U64,
     .offset = OFF(iters),
     .min = 1,
     .max = 1ull << 40,
     .def = 1000,
     .argname = "N",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "messages (or exchanges) per size"},
    {.name = "duration",
     .group = CQP_G_TRAFFIC,
     .short_name = 'D',
     .type = CQP_OPT_U32,
     .offset = OFF(duration_s),
     .min = 1,
     .max = 86400,
     .argname = "SEC",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "run each size for SEC seconds (after the warm-up) instead of"
	     " --iters"},
    {.name = "warmup",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U64,
     .offset = OFF(warmup),
     .max = 1000000000,
     .argname = "N",
     .tools = LAT_TOOLS | CQP_TOOL_CQ_POLL_BW,
     .flags = NEG,
     .help = "exchanges (cq_poll_bw: sends per QP, with --iters) before "
	     "the measured ones, left out of every figure"},
    {.name = "samples",
     .group = CQP_G_OUTPUT,
     .type = CQP_OPT_STR,
     .offset = OFF(samples),
     .str_cap = sizeof(((struct cqp_params *)0)->samples),
     .argname = "FILE",
     .tools = LAT_TOOLS,
     .help = "client: write every measured latency sample to FILE as CSV "
	     "(seq, scheduled, posted and completed ns, latency, size, "
	     "mode)"},
    {.name = "rate",
     .group = CQP_G_OPEN_LOOP,
     .type = CQP_OPT_RATE,
     .offset = OFF(rate),
     .min = 1,
     .max = 100000000,
     .argname = "R",
     .tools = LAT_TOOLS | BW_TOOLS,
     .flags = NEG,
     .help = "open loop: send R requests (bandwidth tools: messages, over "
	     "all QPs) per second (k, m suffixes) on a schedule that does "
	     "not wait for replies; latency counts from each request's "
	     "scheduled time"},
    {.name = "arrival",
     .group = CQP_G_OPEN_LOOP,
     .type = CQP_OPT_ARRIVAL,
     .offset = OFF(arrival),
     .min = 1,
     .max = 32768,
     .words = arrival_words,
     .argname = "KIND",
     .tools = LAT_TOOLS | BW_TOOLS,
     .flags = NEG,
     .help = "with --rate: when requests are due: fixed (every 1/R s), "
	     "poisson (exponential gaps), burst:N (N at once every N/R "
	     "s), onoff:ON_MS,OFF_MS (rate R for ON_MS, then none for "
	     "OFF_MS) or pareto:ALPHA (heavy-tailed gaps of mean 1/R)"},
    {.name = "rates",
     .group = CQP_G_OPEN_LOOP,
     .type = CQP_OPT_RATES,
     .offset = OFF(rates),
     .min = 1,
     .max = 100000000,
     .argname = "LIST",
     .tools = LAT_TOOLS,
     .flags = NEG,
     .help = "open loop, a row per rate: increasing rates (k, m suffixes),"
	     " optionally ending in max (the closed-loop rate, measured "
	     "first)"},
    {.name = "client-cq-mode",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_MODE,
     .offset = OFF(client_cq_mode),
     .min = 1,
     .max = 1000000,
     .words = cq_mode_words,
     .argname = "MODE",
     .tools = LAT_TOOLS,
     .flags = NEG,
     .help = "with --rate or --rates: how the client (the load) reaps its "
	     "replies, a --cq-mode word; --cq-mode is the server's"},
    {.name = "p99-slack",
     .group = CQP_G_OPEN_LOOP,
     .type = CQP_OPT_U32,
     .offset = OFF(p99_slack),
     .max = 1000,
     .def = 10,
     .argname = "PCT",
     .tools = LAT_TOOLS,
     .flags = NEG,
     .help = "with --rates and --compare-modes: the strategy at each rate "
	     "is the cheapest mode whose p99 is within PCT % of the best"},
    {.name = "rtt",
     .group = CQP_G_OUTPUT,
     .type = CQP_OPT_FLAG,
     .offset = OFF(rtt),
     .max = 1,
     .tools = LAT_TOOLS,
     .flags = NEG,
     .help = "report full round trips instead of one-way latency (round "
	     "trip / 2)"},
    {.name = "histogram",
     .group = CQP_G_OUTPUT,
     .short_name = 'H',
     .type = CQP_OPT_FLAG,
     .offset = OFF(histogram),
     .max = 1,
     .tools = LAT_TOOLS,
     .help = "print an ASCII latency histogram under each row"},
    {.name = "compare-modes",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_MODES,
     .offset = OFF(compare_modes),
     .min = 1,
     .max = 1000000,
     .words = cq_mode_words,
     .argname = "LIST",
     .tools = LAT_TOOLS,
     .flags = NEG,
     .help = "run each mode of LIST (--cq-mode words; default poll,event,"
	     "hybrid) back to back, a row per mode"},
    {.name = "p99-target",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_U32,
     .offset = OFF(p99_target_us),
     .min = 1,
     .max = 10000000,
     .argname = "USEC",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "adaptive: a latency tail to keep, so a sleep delays at "
	     "most 0.5 % of the completions (the p99 stays a spinning one)"},
    {.name = "idle-sec",
     .group = CQP_G_OPEN_LOOP,
     .type = CQP_OPT_U32,
     .offset = OFF(idle_sec),
     .min = 1,
     .max = 3600,
     .argname = "SEC",
     .tools = LAT_TOOLS,
     .flags = NEG,
     .help = "after the traffic, measure each side's CPU over SEC seconds "
	     "with the connection up and idle"},
    {.name = "project",
     .group = CQP_G_OPEN_LOOP,
     .type = CQP_OPT_RATE,
     .offset = OFF(project_bps),
     .min = 1000,
     .max = 10000000000000ull,
     .argname = "RATE",
     .tools = LAT_TOOLS | BW_TOOLS,
     .help = "project the completion load at this line rate in bit/s (k, "
	     "m, g, t suffixes: 100g) from the measured wakeup cost "
	     "(bandwidth tools: the receiver's; with --rate, also its "
	     "model checked against the run)"},
    {.name = "tx-depth",
     .group = CQP_G_TRAFFIC,
     .short_name = 't',
     .type = CQP_OPT_U32,
     .offset = OFF(tx_depth),
     .min = 1,
     .max = 32768,
     .def = 128,
     .argname = "N",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "send queue depth (work requests in flight)"},
    {.name = "rx-depth",
     .group = CQP_G_TRAFFIC,
     .short_name = 'r',
     .type = CQP_OPT_U32,
     .offset = OFF(rx_depth),
     .min = 1,
     .max = 32768,
     .def = 512,
     .argname = "N",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "receive queue depth (receives kept posted)"},
    {.name = "cq-depth",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_U32,
     .offset = OFF(cq_depth),
     .min = 1,
     .max = 4194304,
     .argname = "N",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "completion queue depth (default: tx-depth + rx-depth)"},
    {.name = "inline",
     .group = CQP_G_TRAFFIC,
     .short_name = 'I',
     .type = CQP_OPT_I32,
     .offset = OFF(inline_size),
     .max = 4096,
     .def = -1,
     .argname = "SIZE",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "max inline data; an explicit size the device will not grant "
	     "is an error (default: what the device grants up to 236)"},
    {.name = "mtu",
     .group = CQP_G_CONNECTION,
     .short_name = 'm',
     .type = CQP_OPT_U32,
     .offset = OFF(mtu),
     .min = 256,
     .max = 4096,
     .argname = "MTU",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "path MTU: 256, 512, 1024, 2048 or 4096, at most both ports' "
	     "active MTU (default: the smaller)"},
    {.name = "post-list",
     .group = CQP_G_TRAFFIC,
     .short_name = 'l',
     .type = CQP_OPT_U32,
     .offset = OFF(post_list),
     .min = 1,
     .max = CQP_POST_LIST_MAX,
     .def = 1,
     .argname = "N",
     .tools = BW_TOOLS,
     .flags = NEG,
     .help = "work requests chained in one post call"},
    {.name = "signal-every",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U32,
     .offset = OFF(signal_every),
     .min = 1,
     .max = 32768,
     .def = 1,
     .argname = "N",
     .tools = BW_TOOLS | CQP_TOOL_CQ_EVENT_LAT,
     .flags = NEG,
     .help = "request a send completion every N messages (selective "
	     "signaling; cq_event_lat: at most the requests in flight, and "
	     "READs and atomics always)"},
    {.name = "qps",
     .group = CQP_G_TRAFFIC,
     .short_name = 'q',
     .type = CQP_OPT_U32,
     .offset = OFF(qps),
     .min = 1,
     .max = 1024,
     .def = 1,
     .argname = "N",
     .tools = BW_TOOLS | CQP_TOOL_UD_SEND_LAT,
     .flags = NEG,
     .help = "queue pairs, each with its own CQ"},
    {.name = "threads",
     .group = CQP_G_THREADS,
     .type = CQP_OPT_U32,
     .offset = OFF(nthreads),
     .min = 1,
     .max = CQP_MAX_THREADS,
     .def = 1,
     .argname = "T",
     .tools = THREAD_TOOLS,
     .flags = NEG,
     .help = "benchmark threads on each side, on one device context: each "
	     "with its own QPs (-q each), CQs and completion channel"},
    {.name = "shared-channel",
     .group = CQP_G_THREADS,
     .type = CQP_OPT_FLAG,
     .offset = OFF(shared_channel),
     .max = 1,
     .tools = THREAD_TOOLS | LAT_TOOLS,
     .flags = NEG,
     .help = "with --threads: every receiving thread's CQs on one "
	     "completion channel that all of them sleep on (event and "
	     "hybrid modes)"},
    {.name = "channel-per-cq",
     .group = CQP_G_THREADS,
     .type = CQP_OPT_FLAG,
     .offset = OFF(channel_per_cq),
     .max = 1,
     .tools = BW_TOOLS | CQP_TOOL_UD_SEND_LAT,
     .flags = NEG,
     .help = "give every CQ its own completion channel instead of sharing "
	     "one"},
    {.name = "cq-mode",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_MODE,
     .offset = OFF(cq_mode),
     .min = 1,
     .max = 1000000,
     .def = CQP_CQ_POLL,
     .words = cq_mode_words,
     .argname = "MODE",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "how completions are reaped: poll (spin on the CQ), event "
	     "(sleep until the CQ's event), hybrid (spin --spin-us after the "
	     "last completion, then sleep), empty:N (sleep after N empty "
	     "polls), timer (nap half the mean gap), ski (spin what a wakeup "
	     "costs), ski:rand (spin a random share of that), adaptive (the "
	     "spin of least CPU over the recent gaps); mem: spin on the "
	     "buffer's last bytes (--verb write's target); cqperf(7) "
	     "POLICIES"},
    {.name = "verb",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_ENUM,
     .offset = OFF(verb),
     .max = CQP_VERB__N - 1,
     .def = CQP_VERB_SEND,
     .words = verb_words,
     .argname = "VERB",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "the operation: send, write-imm (the target gets a receive "
	     "completion), write (it polls memory), read or atomic (its CPU "
	     "takes no part; fetch-and-add, 8 bytes)"},
    {.name = "verbs",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_WORDS,
     .offset = OFF(verbs),
     .max = CQP_VERB__N - 1,
     .words = verb_words,
     .argname = "LIST",
     .tools = CQP_TOOL_CQ_POLL_BW | CQP_TOOL_CQ_EVENT_LAT,
     .flags = NEG,
     .help = "a set of steps per verb, in this order: send, write-imm, "
	     "write, read, atomic (with --compare-modes each in every mode "
	     "it allows)"},
    {.name = "poll-batch",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_U32,
     .offset = OFF(poll_batch),
     .min = 1,
     .max = 4096,
     .def = 16,
     .argname = "N|auto",
     .tools = RDMA_TOOLS,
     .flags = NEG | CQP_OPTF_AUTO,
     .help = "work completions asked of each ibv_poll_cq call; auto: from "
	     "16, doubled after a full poll up to 1024, halved below 85 % "
	     "(perftest 6.27's dynamic polling)"},
    {.name = "ack-batch",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_U32,
     .offset = OFF(ack_batch),
     .min = 1,
     .max = 65536,
     .def = 16,
     .argname = "N",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "completion events acknowledged per ibv_ack_cq_events call"},
    {.name = "spin-us",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_SPINS,
     .offset = OFF(spin_us),
     .max = 10000000,
     .def = 50,
     .argname = "USEC[,...]",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "hybrid: keep polling this long after the last completion "
	     "before sleeping; a list runs each hybrid row once per budget"},
    {.name = "solicited",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_FLAG,
     .offset = OFF(solicited),
     .max = 1,
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "arm CQs for solicited completions only (senders set the "
	     "solicited flag)"},
    {.name = "nonblock",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_FLAG,
     .offset = OFF(nonblock),
     .max = 1,
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "non-blocking completion channel served with epoll and a "
	     "timeout"},
    {.name = "cq-mod",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_CQMOD,
     .min = 1,
     .max = 65535,
     .argname = "COUNT[,USEC]",
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "hardware CQ moderation via ibv_modify_cq (USEC 0..65535)"},
    {.name = "qkey",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_U32,
     .offset = OFF(qkey),
     .max = 0x7fffffff,
     .def = CQP_DEFAULT_QKEY,
     .argname = "KEY",
     .tools = UD_TOOLS,
     .flags = NEG,
     .help = "Q_Key of the UD QPs (keys with the top bit set are "
	     "privileged)"},
    {.name = "srq",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_FLAG,
     .offset = OFF(srq),
     .max = 1,
     .tools = UD_TOOLS,
     .flags = NEG,
     .help = "post the receiving side's receives on one shared receive "
	     "queue for all its QPs"},
    {.name = "verify",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_FLAG,
     .offset = OFF(verify),
     .max = 1,
     .tools = RDMA_TOOLS,
     .flags = NEG,
     .help = "payloads carry a pattern (UD: and a sequence number) "
	     "that the receiver checks (RC: at each step's end; atomics: "
	     "the peer's count); a mismatch fails the run"},
    {.name = "rdma-cm",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_FLAG,
     .offset = OFF(rdma_cm),
     .max = 1,
     .tools = UD_TOOLS,
     .flags = NEG,
     .help = "set the UD path up through RDMA CM (RDMA_PS_UDP) instead of "
	     "exchanging QP numbers over TCP"},
    {.name = "mcast",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_STR,
     .offset = OFF(mcast),
     .str_cap = sizeof(((struct cqp_params *)0)->mcast),
     .argname = "GID",
     .tools = CQP_TOOL_UD_SEND_BW,
     .flags = NEG,
     .help = "send to this multicast group; the server's QPs join it "
	     "(ff0e::1, or ::ffff:239.1.1.1 on RoCE v2)"},
    {.name = "cm-addr",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_STR,
     .offset = OFF(cm_addr),
     .str_cap = sizeof(((struct cqp_params *)0)->cm_addr),
     .argname = "ADDR",
     .tools = UD_TOOLS | CM,
     .help = "RDMA CM: the server's address on the RDMA network, where "
	     "HOST (the TCP channel's) is another"},
    {.name = "retry-us",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U32,
     .offset = OFF(retry_us),
     .min = 1000,
     .max = 60000000,
     .def = 100000,
     .argname = "USEC",
     .tools = CQP_TOOL_UD_SEND_LAT,
     .flags = NEG,
     .help = "deadline of one exchange; a datagram lost on the way is "
	     "retried and counted"},
    {.name = "connections",
     .group = CQP_G_TRAFFIC,
     .short_name = 'c',
     .type = CQP_OPT_U32,
     .offset = OFF(connections),
     .min = 1,
     .max = 1000000,
     .def = 100,
     .argname = "N",
     .tools = CM,
     .flags = NEG,
     .help = "connections per round"},
    {.name = "concurrency",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U32,
     .offset = OFF(concurrency),
     .min = 1,
     .max = 65536,
     .def = 16,
     .argname = "W",
     .tools = CM,
     .flags = NEG,
     .help = "connections in flight at once"},
    {.name = "rounds",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U32,
     .offset = OFF(rounds),
     .min = 1,
     .max = 100000,
     .def = 1,
     .argname = "R",
     .tools = CM,
     .flags = NEG,
     .help = "rounds of connect, traffic and disconnect"},
    {.name = "msgs",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U32,
     .offset = OFF(msgs),
     .max = 4096,
     .argname = "K",
     .tools = CM,
     .flags = NEG,
     .help = "small sends on each connection between connect and "
	     "disconnect"},
    {.name = "no-qp",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_FLAG,
     .offset = OFF(no_qp),
     .max = 1,
     .tools = CM,
     .flags = NEG,
     .help = "connect without QPs: the cost of RDMA CM alone"},
    {.name = "reject-pct",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U32,
     .offset = OFF(reject_pct),
     .max = 100,
     .argname = "P",
     .tools = CM,
     .flags = NEG,
     .help = "the server rejects this share of requests, with private data"
	     " in the reject"},
    {.name = "cm-mode",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_ENUM,
     .offset = OFF(cm_mode),
     .max = 2,
     .words = cm_mode_words,
     .argname = "MODE",
     .tools = CM,
     .flags = NEG,
     .help = "how events are taken: block (rdma_get_cm_event), nonblock "
	     "(poll, drained to EAGAIN each wakeup) or batch (take up to "
	     "--cm-batch, ack, then process copies)"},
    {.name = "cm-batch",
     .group = CQP_G_COMPLETION,
     .type = CQP_OPT_U32,
     .offset = OFF(cm_batch),
     .min = 1,
     .max = 4096,
     .def = 32,
     .argname = "N",
     .tools = CM,
     .flags = NEG,
     .help = "batch mode: events taken and acked per pass"},
    {.name = "threads",
     .group = CQP_G_THREADS,
     .type = CQP_OPT_U32,
     .offset = OFF(threads),
     .max = 64,
     .argname = "T",
     .tools = CM,
     .flags = NEG,
     .help = "worker threads that process event copies while the event "
	     "thread alone acks (0: the event thread processes)"},
    {.name = "retries",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U32,
     .offset = OFF(retries),
     .max = 100,
     .def = 3,
     .argname = "N",
     .tools = CM,
     .flags = NEG,
     .help = "retries of a failed address or route resolution"},
    {.name = "cm-timeout-ms",
     .group = CQP_G_TRAFFIC,
     .type = CQP_OPT_U32,
     .offset = OFF(cm_timeout_ms),
     .min = 10,
     .max = 600000,
     .def = 2000,
     .argname = "MS",
     .tools = CM,
     .flags = NEG,
     .help = "timeout given to rdma_resolve_addr and rdma_resolve_route"},
    {.name = "output",
     .group = CQP_G_OUTPUT,
     .type = CQP_OPT_ENUM,
     .offset = OFF(output),
     .max = 2,
     .def = CQP_OUT_HUMAN,
     .words = output_words,
     .argname = "FMT",
     .tools = ALL,
     .help = "report format: human, json or csv"},
    {.name = "report-gbits",
     .group = CQP_G_OUTPUT,
     .type = CQP_OPT_FLAG,
     .offset = OFF(report_gbits),
     .max = 1,
     .tools = BW_TOOLS,
     .help = "report bandwidth in Gb/s instead of MB/s"},
    {.name = "wide",
     .group = CQP_G_OUTPUT,
     .type = CQP_OPT_FLAG,
     .offset = OFF(wide),
     .max = 1,
     .tools = ALL,
     .help = "human report: each row with its cost on one line (the layout "
	     "before 100 columns), for scripts that read the text"},
    {.name = "quiet",
     .group = CQP_G_OUTPUT,
     .type = CQP_OPT_FLAG,
     .offset = OFF(quiet),
     .max = 1,
     .tools = ALL,
     .help = "nothing on stderr but errors: no progress line, no "
	     "server's serving lines, no client's note while it waits"},
    {.name = "timeout",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_U32,
     .offset = OFF(timeout_s),
     .min = 1,
     .max = 86400,
     .def = 30,
     .argname = "SEC",
     .tools = ALL,
     .help = "deadline for every wait on the peer"},
    {.name = "persistent",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_FLAG,
     .offset = OFF(persistent),
     .max = 1,
     .tools = ALL,
     .help = "server: keep serving clients until interrupted"},
    {.name = "max-mem",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_SIZE,
     .offset = OFF(max_mem),
     .min = MIB,
     .max = 64 * GIB,
     .def = 1 * GIB,
     .argname = "SIZE",
     .tools = ALL,
     .help = "server: most memory (buffers and queues) a client may make "
	     "it allocate"},
    {.name = "max-run-sec",
     .group = CQP_G_CONNECTION,
     .type = CQP_OPT_U32,
     .offset = OFF(max_run_s),
     .max = 86400,
     .argname = "SEC",
     .tools = ALL,
     .help = "server: end a client's run still going after SEC seconds (0:"
	     " no limit)"},
    {.name = "comp-vector",
     .group = CQP_G_THREADS,
     .type = CQP_OPT_I32,
     .offset = OFF(comp_vector),
     .min = -1,
     .max = 1023,
     .argname = "N|auto",
     .tools = RDMA_TOOLS,
     .help = "completion vector (interrupt) for the CQs; auto (-1): every "
	     "thread's CQs round robin over the device's vectors"},
    {.name = "cpu",
     .group = CQP_G_THREADS,
     .type = CQP_OPT_CPUS,
     .offset = OFF(cpu),
     .max = 4095,
     .def = -1,
     .argname = "CPU[,...]",
     .tools = ALL,
     .help = "pin the benchmark thread to this CPU; with --threads a list "
	     "(2,3 or 2-5): thread i on the i-th"},
    {.name = "per-thread",
     .group = CQP_G_THREADS,
     .type = CQP_OPT_FLAG,
     .offset = OFF(per_thread),
     .max = 1,
     .tools = THREAD_TOOLS,
     .help = "human report: each thread's figures under the table "
	     "(--threads)"},
    {.name = "clock",
     .group = CQP_G_OUTPUT,
     .type = CQP_OPT_ENUM,
     .offset = OFF(clock),
     .max = 3,
     .words = clock_words,
     .argname = "SRC",
     .tools = ALL,
     .help = "timestamp source: the TSC where it is invariant and the "
	     "kernel's clocksource (auto), always (tsc, force-tsc: without "
	     "the checks), or clock_gettime (monotonic)"},
    {.name = "help",
     .group = CQP_G_OUTPUT,
     .short_name = 'h',
     .type = CQP_OPT_HELP,
     .tools = ALL,
     .help = "print this help and exit"},
    {.name = "version",
     .group = CQP_G_OUTPUT,
     .short_name = 'V',
     .type = CQP_OPT_VERSION,
     .tools = ALL,
     .help = "print the version and exit"},
    {.name = NULL},
};

/* The parser's per-option arrays live on the stack, sized by this. */
enum { MAXOPT = 96 };
_Static_assert(sizeof(cqp_options) / sizeof(cqp_options[0]) <= MAXOPT + 1,
	       "the option table outgrew cqp_params_parse's arrays");

uint32_t cqp_params_cq_depth(const struct cqp_params *p)
{
	/* Both at most 32768 (the table's bounds): no overflow. */
	return p->cq_depth ? p->cq_depth : p->tx_depth + p->rx_depth;
}

void cqp_params_arrival(const struct cqp_params *p, struct cqp_arrival_shape *s)
{
	*s = (struct cqp_arrival_shape){
	    .kind = p->arrival,
	    .burst = p->burst,
	    .on_ms = p->on_ms,
	    .off_ms = p->off_ms,
	    .pareto_milli = p->pareto_milli,
	};
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

uint64_t cqp_queue_mem(const struct cqp_params *p, uint64_t nqps, uint64_t nrqs,
		       uint64_t ncqs)
{
	uint64_t inl =
	    p->inline_size < 0 ? CQP_AUTO_INLINE : (uint64_t)p->inline_size;
	uint64_t sqe = 64 + round_up(inl, 64);

	return nqps * round_up(p->tx_depth * sqe, 4096) +
	       nrqs * round_up(p->rx_depth * 64ull, 4096) +
	       ncqs * round_up(cqp_params_cq_depth(p) * 64ull, 4096);
}

const char *cqp_tool_name(enum cqp_tool tool)
{
	switch (tool) {
	case CQP_TOOL_CQ_POLL_BW:
		return "cq_poll_bw";
	case CQP_TOOL_CQ_EVENT_LAT:
		return "cq_event_lat";
	case CQP_TOOL_UD_SEND_BW:
		return "ud_send_bw";
	case CQP_TOOL_UD_SEND_LAT:
		return "ud_send_lat";
	case CQP_TOOL_CM_EVENT_STRESS:
		return "cm_event_stress";
	default:
		return "cqperf";
	}
}

const char *cqp_cq_mode_name(uint32_t mode)
{
	return mode < CQP_CQ__N ? cq_mode_words[mode] : "?";
}

void cqp_mode_word(const struct cqp_params *p, uint32_t mode, char *buf,
		   size_t cap)
{
	if (mode == CQP_CQ_EMPTY)
		snprintf(buf, cap, "empty:%" PRIu32, cqp_params_empty_n(p));
	else
		snprintf(buf, cap, "%s", cqp_cq_mode_name(mode));
}

const char *cqp_verb_name(uint32_t verb)
{
	return verb < CQP_VERB__N ? verb_words[verb] : "?";
}

uint32_t cqp_verb_modes(uint32_t verb)
{
	uint32_t cq = ((1u << CQP_CQ__N) - 1) & ~(1u << CQP_CQ_MEM);

	return verb == CQP_VERB_WRITE ? 1u << CQP_CQ_MEM : cq;
}

const char *cqp_cm_mode_name(uint32_t mode)
{
	return mode <= CQP_CM_BATCH ? cm_mode_words[mode] : "?";
}

const char *cqp_output_name(uint32_t output)
{
	return output <= CQP_OUT_CSV ? output_words[output] : "?";
}

static void *field(const struct cqp_option *o, struct cqp_params *p)
{
	return (char *)p + o->offset;
}

static void set_default(const struct cqp_option *o, struct cqp_params *p)
{
	char *f = field(o, p);

	switch (o->type) {
	case CQP_OPT_FLAG:
		*(bool *)f = o->def != 0;
		break;
	case CQP_OPT_U32:
	case CQP_OPT_ENUM:
	case CQP_OPT_MODE:
		*(uint32_t *)f = (uint32_t)o->def;
		break;
	case CQP_OPT_I32:
	case CQP_OPT_CPUS:
		*(int32_t *)f = (int32_t)o->def;
		break;
	case CQP_OPT_U64:
	case CQP_OPT_SIZE:
	case CQP_OPT_RATE:
		*(uint64_t *)f = (uint64_t)o->def;
		break;
	case CQP_OPT_SPINS:
		/* One budget, also the list's only entry. */
		p->spin_us = (uint32_t)o->def;
		p->spin_list[0] = p->spin_us;
		p->nspin = 1;
		break;
	default:
		break;
	}
}

void cqp_params_defaults(struct cqp_params *p, enum cqp_tool tool)
{
	memset(p, 0, sizeof(*p));
	for (const struct cqp_option *o = cqp_options; o->name; o++)
		if (o->def || o->type == CQP_OPT_SPINS)
			set_default(o, p);
	p->burst = 1; /* --arrival burst:N's N, when it is not burst */
	if (tool & LAT_TOOLS) {
		/* One message in flight: perftest's latency defaults. */
		p->size = 2;
		p->tx_depth = 16;
		p->rx_depth = 16;
		p->warmup = 100;
	}
	/* -n on a fast link is milliseconds: one send queue's worth of
	 * warm-up first (-D warms up for a second). */
	if (tool == CQP_TOOL_CQ_POLL_BW)
		p->warmup = 128;
	/* A UD message is one packet: fit the smallest RoCE path MTU on
	 * standard Ethernet. */
	if (tool == CQP_TOOL_UD_SEND_BW)
		p->size = 1024;
}

static const void *cfield(const struct cqp_option *o,
			  const struct cqp_params *p)
{
	return (const char *)p + o->offset;
}

/* Strict unsigned number: the whole string, decimal or 0x hex, no sign or
 * blanks; with `size`, one K/M/G suffix (powers of 1024). */
/* Line rates: decimal suffixes, as in "100g" (10^9 bit/s). */
static int parse_rate(const char *s, uint64_t *out)
{
	static const char units[] = "kmgt";
	size_t n = strlen(s);
	const char *u =
	    n ? strchr(units, tolower((unsigned char)s[n - 1])) : NULL;
	char num[32];
	uint64_t v, mult = 1;

	if (u && *u) {
		for (const char *k = units; k <= u; k++)
			mult *= 1000;
		n--;
	}
	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)num[i]))
			return -1;
	errno = 0;
	v = strtoull(num, NULL, 10);
	if (errno || v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

static int parse_number(const char *s, bool size, uint64_t *out)
{
	const char *digits = s;
	int base = 10;
	char *end;
	uint64_t v, mult = 1;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		digits = s + 2;
		/* strtoull would take a second prefix: "0x0x10" */
		if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
			return -1;
	}
	if (!isxdigit((unsigned char)digits[0]) ||
	    (base == 10 && !isdigit((unsigned char)digits[0])))
		return -1;
	errno = 0;
	v = strtoull(digits, &end, base);
	if (errno)
		return -1;
	if (size && *end && !end[1]) {
		switch (*end) {
		case 'k':
		case 'K':
			mult = KIB;
			break;
		case 'm':
		case 'M':
			mult = MIB;
			break;
		case 'g':
		case 'G':
			mult = GIB;
			break;
		default:
			return -1;
		}
		end++;
	}
	if (*end)
		return -1;
	if (v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

static void format_size(uint64_t v, char *buf, size_t cap)
{
	if (v && v % GIB == 0)
		snprintf(buf, cap, "%" PRIu64 "G", v / GIB);
	else if (v && v % MIB == 0)
		snprintf(buf, cap, "%" PRIu64 "M", v / MIB);
	else if (v && v % KIB == 0)
		snprintf(buf, cap, "%" PRIu64 "K", v / KIB);
	else
		snprintf(buf, cap, "%" PRIu64, v);
}

/* "1..32768", "256..4096", "poll, event or hybrid" */
static void format_range(const struct cqp_option *o, char *buf, size_t cap)
{
	char lo[32], hi[32];
	size_t n = 0;

	if (o->type == CQP_OPT_MODE || o->type == CQP_OPT_MODES) {
		snprintf(buf, cap,
			 "%spoll, event, hybrid, mem, empty:N (N %" PRId64
			 "..%" PRIu64 "), timer, ski, ski:rand or adaptive",
			 o->type == CQP_OPT_MODES ? "a list of " : "", o->min,
			 o->max);
		return;
	}
	if (o->flags & CQP_OPTF_AUTO) {
		snprintf(buf, cap, "%" PRId64 "..%" PRIu64 " or auto", o->min,
			 o->max);
		return;
	}
	if (o->type == CQP_OPT_ENUM || o->type == CQP_OPT_WORDS) {
		buf[0] = '\0';
		for (unsigned i = 0; o->words[i] && n < cap; i++)
			n += snprintf(buf + n, cap - n, "%s%s",
				      i == 0		? ""
				      : o->words[i + 1] ? ", "
							: " or ",
				      o->words[i]);
		return;
	}
	if (o->type == CQP_OPT_ARRIVAL) {
		snprintf(buf, cap,
			 "fixed, poisson, burst:%" PRId64 "..%" PRIu64
			 ", onoff:1..%d,1..%d or pareto:1.1..10",
			 o->min, o->max, CQP_ONOFF_MS_MAX, CQP_ONOFF_MS_MAX);
		return;
	}
	if (o->type == CQP_OPT_SIZE) {
		format_size((uint64_t)o->min, lo, sizeof(lo));
		format_size(o->max, hi, sizeof(hi));
	} else {
		snprintf(lo, sizeof(lo), "%" PRId64, o->min);
		snprintf(hi, sizeof(hi), "%" PRIu64, o->max);
	}
	snprintf(buf, cap, "%s..%s", lo, hi);
}

static int bad_value(const struct cqp_option *o, const char *val,
		     const char *what)
{
	char range[128];

	format_range(o, range, sizeof(range));
	return cqp_fail(CQP_E_USAGE, "--%s: '%s' %s (allowed: %s)", o->name,
			val, what, range);
}

static int set_number(const struct cqp_option *o, struct cqp_params *p,
		      const char *val)
{
	/* -1 is "auto" where an option allows it. */
	bool neg = o->type == CQP_OPT_I32 &&
		   (strcmp(val, "-1") == 0 || strcmp(val, "auto") == 0);
	uint64_t v = 0;

	if (o->flags & CQP_OPTF_AUTO && strcmp(val, "auto") == 0) {
		*(uint32_t *)field(o, p) = 0;
		return 0;
	}
	if (neg && o->min >= 0)
		return bad_value(o, val, "is out of range");
	if (o->type == CQP_OPT_RATE) {
		if (parse_rate(val, &v) < 0)
			return bad_value(o, val,
					 "is not a rate (a whole number, "
					 "optionally with k, m, g or t)");
	} else if (!neg && parse_number(val, o->type == CQP_OPT_SIZE, &v) < 0)
		return bad_value(o, val,
				 o->type == CQP_OPT_SIZE
				     ? "is not a size (a whole number, "
				       "optionally with K, M or G)"
				     : "is not a whole number");
	if (!neg && ((int64_t)o->min > 0 && v < (uint64_t)o->min))
		return bad_value(o, val, "is out of range");
	if (!neg && v > o->max)
		return bad_value(o, val, "is out of range");
	switch (o->type) {
	case CQP_OPT_U32:
		*(uint32_t *)field(o, p) = (uint32_t)v;
		break;
	case CQP_OPT_I32:
		*(int32_t *)field(o, p) = neg ? -1 : (int32_t)v;
		break;
	default:
		*(uint64_t *)field(o, p) = v;
		break;
	}
	return 0;
}

static int set_cqmod(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	char count[32];
	const char *comma = strchr(val, ',');
	size_t n = comma ? (size_t)(comma - val) : strlen(val);
	uint64_t c, u = 0;

	if (n >= sizeof(count))
		return bad_value(o, val, "is not COUNT[,USEC]");
	memcpy(count, val, n);
	count[n] = '\0';
	if (parse_number(count, false, &c) < 0 ||
	    (comma && parse_number(comma + 1, false, &u) < 0))
		return bad_value(o, val, "is not COUNT[,USEC]");
	if (c < 1 || c > 65535 || u > 65535)
		return bad_value(o, val,
				 "is out of range (COUNT 1..65535, "
				 "USEC 0..65535)");
	p->cq_mod_count = (uint32_t)c;
	p->cq_mod_usec = (uint32_t)u;
	return 0;
}

/* A decimal of at most three places in thousandths ("1.25" is 1250):
 * what cannot be said exactly in thousandths is refused, not rounded. */
static int parse_milli(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int places = -1;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; *s; s++) {
		if (*s == '.' && places < 0) {
			places = 0;
			continue;
		}
		if (!isdigit((unsigned char)*s) || places == 3 ||
		    v > UINT64_MAX / 100)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		places += places >= 0;
	}
	if (places == 0)
		return -1; /* "2." */
	for (places = places < 0 ? 0 : places; places < 3; places++)
		v *= 10;
	*out = v;
	return 0;
}

/* fixed, poisson, burst:N (N in the row's range), onoff:ON_MS,OFF_MS or
 * pareto:ALPHA. */
static int set_arrival(const struct cqp_option *o, struct cqp_params *p,
		       const char *val)
{
	const char *colon = strchr(val, ':'), *comma;
	size_t n = colon ? (size_t)(colon - val) : strlen(val);
	uint64_t burst = 1, on = 0, off = 0, milli = 0;
	char on_text[16];
	uint32_t kind;

	for (kind = 0; o->words[kind]; kind++)
		if (strlen(o->words[kind]) == n &&
		    strncmp(val, o->words[kind], n) == 0)
			break;
	if (!o->words[kind] || (kind >= CQP_ARRIVAL_BURST) != !!colon)
		return cqp_fail(CQP_E_USAGE,
				"--%s: '%s' is not fixed, poisson, burst:N, "
				"onoff:ON_MS,OFF_MS or pareto:ALPHA",
				o->name, val);
	switch (kind) {
	case CQP_ARRIVAL_BURST:
		if (parse_number(colon + 1, false, &burst) < 0 ||
		    burst < (uint64_t)o->min || burst > o->max)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s': N of burst:N must be "
					"%" PRId64 "..%" PRIu64,
					o->name, val, o->min, o->max);
		break;
	case CQP_ARRIVAL_ONOFF:
		comma = strchr(colon + 1, ',');
		n = comma ? (size_t)(comma - colon - 1) : 0;
		if (comma && n < sizeof(on_text)) {
			memcpy(on_text, colon + 1, n);
			on_text[n] = '\0';
		}
		if (!comma || n >= sizeof(on_text) ||
		    parse_number(on_text, false, &on) < 0 ||
		    parse_number(comma + 1, false, &off) < 0 || on < 1 ||
		    on > CQP_ONOFF_MS_MAX || off < 1 || off > CQP_ONOFF_MS_MAX)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s' is not onoff:ON_MS,OFF_MS "
					"(each 1..%d)",
					o->name, val, CQP_ONOFF_MS_MAX);
		break;
	case CQP_ARRIVAL_PARETO:
		if (parse_milli(colon + 1, &milli) < 0)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s': ALPHA of pareto:ALPHA is "
					"a decimal number of at most 3 places, "
					"1.1..10",
					o->name, val);
		if (milli < CQP_PARETO_MILLI_MIN ||
		    milli > CQP_PARETO_MILLI_MAX)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s': ALPHA of pareto:ALPHA "
					"must be 1.1..10 (a finite mean needs "
					"ALPHA > 1)",
					o->name, val);
		break;
	default:
		break;
	}
	p->arrival = kind;
	p->burst = (uint32_t)burst;
	p->on_ms = (uint32_t)on;
	p->off_ms = (uint32_t)off;
	p->pareto_milli = (uint32_t)milli;
	return 0;
}

/* U1[,U2...]: distinct budgets in the row's range, at most
 * CQP_MAX_SPINS; the first is the one used outside sweeps. */
/* A comma list that fits a parse buffer of cap: no empty item. */
static bool list_fits(const char *val, size_t cap)
{
	size_t n = strlen(val);

	return n && n < cap && val[0] != ',' && val[n - 1] != ',' &&
	       !strstr(val, ",,");
}

#define LIST_MAX 64 /* items of any list option, beyond its own limit */

/* The comma-separated items of val, split in buf (cap bytes) into
 * items[0..*n): false when an item is empty, or val does not fit. */
static bool split_list(const char *val, char *buf, size_t cap,
		       char *items[LIST_MAX], unsigned *n)
{
	char *save = NULL;

	*n = 0;
	if (!list_fits(val, cap))
		return false;
	strcpy(buf, val);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (*n == LIST_MAX)
			return false;
		items[(*n)++] = t;
	}
	return true;
}

static int set_spins(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	char buf[128], *items[LIST_MAX];
	unsigned n;

	if (!split_list(val, buf, sizeof(buf), items, &n))
		return bad_value(o, val, "is not USEC[,USEC...]");
	for (unsigned i = 0; i < n; i++) {
		uint64_t v;

		if (parse_number(items[i], false, &v) < 0 || v > o->max)
			return bad_value(o, val, "is not USEC[,USEC...]");
		if (i == CQP_MAX_SPINS)
			return cqp_fail(CQP_E_USAGE, "--%s: at most %d budgets",
					o->name, CQP_MAX_SPINS);
		for (unsigned k = 0; k < i; k++)
			if (p->spin_list[k] == v)
				return cqp_fail(CQP_E_USAGE,
						"--%s: %" PRIu64
						" is there twice",
						o->name, v);
		p->spin_list[i] = (uint32_t)v;
	}
	p->nspin = n;
	p->spin_us = p->spin_list[0];
	return 0;
}

/* An item's index (0..31) in a list option, or a failure naming it. */
typedef int item_fn(const struct cqp_option *o, struct cqp_params *p,
		    const char *item);

/* A comma list of items, each once: the mask of their indexes. */
static int list_mask(const struct cqp_option *o, struct cqp_params *p,
		     const char *val, item_fn *index, uint32_t *mask)
{
	char buf[256], *items[LIST_MAX];
	unsigned n;

	*mask = 0;
	if (!split_list(val, buf, sizeof(buf), items, &n))
		return bad_value(o, val, "is not a comma-separated list");
	for (unsigned k = 0; k < n; k++) {
		int i = index(o, p, items[k]);

		if (i < 0)
			return i;
		if (*mask & 1u << i)
			return cqp_fail(CQP_E_USAGE, "--%s: %s is there twice",
					o->name, items[k]);
		*mask |= 1u << i;
	}
	return 0;
}

static int word_index(const struct cqp_option *o, struct cqp_params *p,
		      const char *item)
{
	(void)p;
	for (int i = 0; o->words[i]; i++)
		if (strcmp(item, o->words[i]) == 0)
			return i;
	return bad_value(o, item, "is not a known word");
}

/* W1,W2,... of o->words, each once: a mask in the words' order. */
static int set_words(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	uint32_t mask;
	int rc = list_mask(o, p, val, word_index, &mask);

	if (rc == 0)
		*(uint32_t *)field(o, p) = mask;
	return rc;
}

/* One completion mode word, or empty:N (N in o's range, one N a run:
 * --cq-mode, --client-cq-mode and --compare-modes share it).  At or
 * above CQP_CQ__N: why it is none (bad_mode). */
#define MODE_BAD_N   (UINT32_MAX - 1)
#define MODE_OTHER_N (UINT32_MAX - 2)
static uint32_t parse_mode(const struct cqp_option *o, struct cqp_params *p,
			   const char *val)
{
	const char *n = strncmp(val, "empty:", 6) == 0 ? val + 6 : NULL;
	uint64_t v;

	if (n) {
		if (parse_number(n, false, &v) < 0 || v < (uint64_t)o->min ||
		    v > o->max)
			return MODE_BAD_N;
		if (p->empty_n && p->empty_n != v)
			return MODE_OTHER_N;
		p->empty_n = (uint32_t)v;
		return CQP_CQ_EMPTY;
	}
	for (uint32_t i = 0; o->words[i]; i++)
		if (strcmp(val, o->words[i]) == 0)
			return i;
	return UINT32_MAX;
}

static int bad_mode(const struct cqp_option *o, const struct cqp_params *p,
		    const char *val, uint32_t why)
{
	if (why == MODE_BAD_N)
		return cqp_fail(CQP_E_USAGE,
				"--%s: '%s': N of empty:N must be %" PRId64
				"..%" PRIu64,
				o->name, val, o->min, o->max);
	if (why == MODE_OTHER_N)
		return cqp_fail(CQP_E_USAGE,
				"--%s: '%s': this run's empty:N is already "
				"empty:%" PRIu32 " (one N a run)",
				o->name, val, p->empty_n);
	return bad_value(o, val, "is not a completion mode");
}

static int set_mode(const struct cqp_option *o, struct cqp_params *p,
		    const char *val)
{
	uint32_t m = parse_mode(o, p, val);

	if (m >= CQP_CQ__N)
		return bad_mode(o, p, val, m);
	*(uint32_t *)field(o, p) = m;
	return 0;
}

static int mode_index(const struct cqp_option *o, struct cqp_params *p,
		      const char *item)
{
	uint32_t m = parse_mode(o, p, item);

	return m < CQP_CQ__N ? (int)m : bad_mode(o, p, item, m);
}

/* --compare-modes: true or false (the flag), or a list of modes. */
static int set_modes(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	uint32_t mask;
	int rc;

	if (!val || strcmp(val, "true") == 0 || strcmp(val, "false") == 0) {
		p->compare_modes = !val || val[0] == 't';
		p->compare_list = 0;
		return 0;
	}
	if ((rc = list_mask(o, p, val, mode_index, &mask)) < 0)
		return rc;
	p->compare_modes = true;
	p->compare_list = mask;
	return 0;
}

/* Whether val is meant as a list of modes: the argument after
 * --compare-modes is its list when it is one, or has a comma or an
 * "empty:" (no host has), else it is the HOST. */
static bool is_modes_list(const struct cqp_option *o, const char *val)
{
	struct cqp_params scratch;

	memset(&scratch, 0, sizeof(scratch));
	return val && val[0] != '-' &&
	       (strchr(val, ',') || strncmp(val, "empty:", 6) == 0 ||
		set_modes(o, &scratch, val) == 0);
}

/* C1,C2,... with ranges A-B: distinct CPUs this machine has, at most
 * CQP_MAX_THREADS. */
static int set_cpus(const struct cqp_option *o, struct cqp_params *p,
		    const char *val)
{
	long have = sysconf(_SC_NPROCESSORS_CONF);
	char buf[256], *items[LIST_MAX];
	uint32_t n = 0;
	unsigned nitems;

	if (!split_list(val, buf, sizeof(buf), items, &nitems))
		return bad_value(o, val, "is not CPU[,CPU...] (or A-B)");
	for (unsigned i = 0; i < nitems; i++) {
		char *tok = items[i], *dash = strchr(tok, '-');
		uint64_t lo, hi;

		if (dash)
			*dash = '\0';
		if (parse_number(tok, false, &lo) < 0 ||
		    (dash && parse_number(dash + 1, false, &hi) < 0))
			return bad_value(o, val,
					 "is not CPU[,CPU...] (or A-B)");
		if (!dash)
			hi = lo;
		if (hi < lo || hi > o->max)
			return bad_value(o, val,
					 "is not CPU[,CPU...] (or A-B)");
		for (uint64_t c = lo; c <= hi; c++) {
			if (have > 0 && c >= (uint64_t)have)
				return cqp_fail(CQP_E_USAGE,
						"--%s %s: this machine has no "
						"CPU %" PRIu64
						" (it has 0..%ld)",
						o->name, val, c, have - 1);
			if (n == CQP_MAX_THREADS)
				return cqp_fail(CQP_E_USAGE,
						"--%s: at most %d CPUs",
						o->name, CQP_MAX_THREADS);
			for (uint32_t k = 0; k < n; k++)
				if (p->cpus[k] == (int32_t)c)
					return cqp_fail(CQP_E_USAGE,
							"--%s: CPU %" PRIu64
							" is there twice",
							o->name, c);
			p->cpus[n++] = (int32_t)c;
		}
	}
	p->ncpu = n;
	p->cpu = p->cpus[0];
	return 0;
}

/* R1,R2,...: increasing, each in the row's range, max only last. */
static int set_rates(const struct cqp_option *o, struct cqp_params *p,
		     const char *val)
{
	char buf[512], *items[LIST_MAX];
	uint64_t prev = 0;
	uint32_t n = 0;
	unsigned nitems;

	if (!split_list(val, buf, sizeof(buf), items, &nitems))
		return cqp_fail(CQP_E_USAGE,
				"--%s: '%s' is not a list of rates "
				"(R1,R2,... increasing, %" PRId64 "..%" PRIu64
				", optionally ending in max)",
				o->name, val, o->min, o->max);
	for (unsigned i = 0; i < nitems; i++) {
		const char *tok = items[i];
		uint64_t v;

		if (n == CQP_MAX_RATES)
			return cqp_fail(CQP_E_USAGE, "--%s: at most %d rates",
					o->name, CQP_MAX_RATES);
		if (prev == CQP_RATE_MAX)
			return cqp_fail(CQP_E_USAGE,
					"--%s: max must be the last rate",
					o->name);
		if (strcmp(tok, "max") == 0)
			v = CQP_RATE_MAX;
		else if (parse_rate(tok, &v) < 0 || v < (uint64_t)o->min ||
			 v > o->max)
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s' is not a rate (%" PRId64
					"..%" PRIu64
					", k and m suffixes) or max",
					o->name, tok, o->min, o->max);
		if (v <= prev)
			return cqp_fail(CQP_E_USAGE,
					"--%s: rates must increase ('%s' "
					"after %" PRIu64 ")",
					o->name, tok, prev);
		p->rates[n++] = prev = v;
	}
	if (!n)
		return cqp_fail(CQP_E_USAGE, "--%s: '%s' holds no rate",
				o->name, val);
	p->nrates = n;
	return 0;
}

int cqp_option_set(const struct cqp_option *o, struct cqp_params *p,
		   const char *val)
{
	switch (o->type) {
	case CQP_OPT_FLAG:
		if (!val || strcmp(val, "true") == 0)
			*(bool *)field(o, p) = true;
		else if (strcmp(val, "false") == 0)
			*(bool *)field(o, p) = false;
		else
			return cqp_fail(CQP_E_USAGE,
					"--%s: '%s' is not true or false",
					o->name, val);
		return 0;
	case CQP_OPT_U32:
	case CQP_OPT_I32:
	case CQP_OPT_U64:
	case CQP_OPT_SIZE:
	case CQP_OPT_RATE:
		return set_number(o, p, val);
	case CQP_OPT_ENUM:
		for (unsigned i = 0; o->words[i]; i++) {
			if (strcmp(val, o->words[i]) == 0) {
				*(uint32_t *)field(o, p) = i;
				return 0;
			}
		}
		return bad_value(o, val, "is not a known word");
	case CQP_OPT_STR:
		if (strlen(val) >= o->str_cap || !val[0])
			return cqp_fail(CQP_E_USAGE,
					"--%s: value must be 1..%zu characters",
					o->name, o->str_cap - 1);
		strcpy((char *)field(o, p), val);
		return 0;
	case CQP_OPT_CQMOD:
		return set_cqmod(o, p, val);
	case CQP_OPT_ARRIVAL:
		return set_arrival(o, p, val);
	case CQP_OPT_RATES:
		return set_rates(o, p, val);
	case CQP_OPT_SPINS:
		return set_spins(o, p, val);
	case CQP_OPT_CPUS:
		return set_cpus(o, p, val);
	case CQP_OPT_WORDS:
		return set_words(o, p, val);
	case CQP_OPT_MODE:
		return set_mode(o, p, val);
	case CQP_OPT_MODES:
		return set_modes(o, p, val);
	default:
		return cqp_fail(CQP_E_USAGE, "--%s takes no value", o->name);
	}
}

/* Thousandths as the shortest decimal: 1500 "1.5", 2000 "2", 1250 "1.25". */
static void format_milli(uint32_t milli, const char *prefix, char *buf,
			 size_t cap)
{
	uint32_t frac = milli % 1000;
	int places = 3;

	while (frac && frac % 10 == 0) {
		frac /= 10;
		places--;
	}
	if (frac)
		snprintf(buf, cap, "%s%" PRIu32 ".%0*" PRIu32, prefix,
			 milli / 1000, places, frac);
	else
		snprintf(buf, cap, "%s%" PRIu32, prefix, milli / 1000);
}

void cqp_option_format(const struct cqp_option *o, const struct cqp_params *p,
		       char *buf, size_t cap)
{
	const void *f = cfield(o, p);

	switch (o->type) {
	case CQP_OPT_FLAG:
		snprintf(buf, cap, "%s", *(const bool *)f ? "true" : "false");
		break;
	case CQP_OPT_U32:
		if (o->flags & CQP_OPTF_AUTO && !*(const uint32_t *)f)
			snprintf(buf, cap, "auto");
		else
			snprintf(buf, cap, "%" PRIu32, *(const uint32_t *)f);
		break;
	case CQP_OPT_I32:
		snprintf(buf, cap, "%" PRId32, *(const int32_t *)f);
		break;
	case CQP_OPT_MODE:
		cqp_mode_word(p, *(const uint32_t *)f, buf, cap);
		break;
	case CQP_OPT_MODES: {
		size_t n = 0;

		snprintf(buf, cap, "%s", p->compare_modes ? "true" : "false");
		for (uint32_t m = 0;
		     p->compare_list && m < CQP_CQ__N && n < cap; m++)
			if (p->compare_list & 1u << m) {
				char w[32];

				cqp_mode_word(p, m, w, sizeof(w));
				n += (size_t)snprintf(buf + n, cap - n, "%s%s",
						      n ? "," : "", w);
			}
		break;
	}
	case CQP_OPT_U64:
	case CQP_OPT_SIZE:
	case CQP_OPT_RATE:
		snprintf(buf, cap, "%" PRIu64, *(const uint64_t *)f);
		break;
	case CQP_OPT_ENUM:
		snprintf(buf, cap, "%s", o->words[*(const uint32_t *)f]);
		break;
	case CQP_OPT_STR:
		snprintf(buf, cap, "%s", (const char *)f);
		break;
	case CQP_OPT_WORDS: {
		size_t n = 0;

		buf[0] = '\0';
		for (unsigned i = 0; o->words[i] && n < cap; i++)
			if (*(const uint32_t *)f & 1u << i)
				n +=
				    (size_t)snprintf(buf + n, cap - n, "%s%s",
						     n ? "," : "", o->words[i]);
		break;
	}
	case CQP_OPT_CQMOD:
		snprintf(buf, cap, "%" PRIu32 ",%" PRIu32, p->cq_mod_count,
			 p->cq_mod_usec);
		break;
	case CQP_OPT_SPINS: {
		size_t n = 0;

		buf[0] = '\0';
		for (uint32_t i = 0; i < p->nspin && n < cap; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%" PRIu32,
					      i ? "," : "", p->spin_list[i]);
		break;
	}
	case CQP_OPT_CPUS: {
		size_t n = 0;

		snprintf(buf, cap, "%" PRId32, p->cpu);
		for (uint32_t i = 0; p->ncpu > 1 && i < p->ncpu && n < cap; i++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId32,
					      i ? "," : "", p->cpus[i]);
		break;
	}
	case CQP_OPT_RATES: {
		size_t n = 0;

		buf[0] = '\0';
		for (uint32_t i = 0; i < p->nrates && n < cap; i++) {
			if (p->rates[i] == CQP_RATE_MAX)
				n += (size_t)snprintf(buf + n, cap - n, "%smax",
						      i ? "," : "");
			else
				n += (size_t)snprintf(
				    buf + n, cap - n, "%s%" PRIu64,
				    i ? "," : "", p->rates[i]);
		}
		break;
	}
	case CQP_OPT_ARRIVAL:
		if (p->arrival == CQP_ARRIVAL_BURST)
			snprintf(buf, cap, "burst:%" PRIu32, p->burst);
		else if (p->arrival == CQP_ARRIVAL_ONOFF)
			snprintf(buf, cap, "onoff:%" PRIu32 ",%" PRIu32,
				 p->on_ms, p->off_ms);
		else if (p->arrival == CQP_ARRIVAL_PARETO)
			format_milli(p->pareto_milli, "pareto:", buf, cap);
		else
			snprintf(buf, cap, "%s", o->words[p->arrival]);
		break;
	default:
		snprintf(buf, cap, "%s", "");
		break;
	}
}

const struct cqp_option *cqp_option_find(const char *name)
{
	for (const struct cqp_option *o = cqp_options; o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* Two tools may give one name two rows (--threads). */
static const struct cqp_option *find_for(const char *name, enum cqp_tool tool)
{
	for (const struct cqp_option *o = cqp_options; o->name; o++)
		if (strcmp(o->name, name) == 0 && (o->tools & tool))
			return o;
	return NULL;
}

static bool takes_arg(const struct cqp_option *o)
{
	return o->type != CQP_OPT_FLAG && o->type != CQP_OPT_HELP &&
	       o->type != CQP_OPT_VERSION && o->type != CQP_OPT_MODES;
}

/* A default outside the option's range means "not set": say so. */
static void default_text(const struct cqp_option *o, const struct cqp_params *d,
			 char *buf, size_t cap)
{
	const void *f = cfield(o, d);

	if (o->type == CQP_OPT_SIZE) {
		format_size(*(const uint64_t *)f, buf, cap);
	} else if ((o->type == CQP_OPT_CQMOD && !d->cq_mod_count) ||
		   (o->type == CQP_OPT_RATES && !d->nrates) ||
		   (o->type == CQP_OPT_WORDS && !*(const uint32_t *)f) ||
		   (o->type == CQP_OPT_MODES && !d->compare_modes) ||
		   (o->type == CQP_OPT_U32 && *(const uint32_t *)f < o->min) ||
		   (o->type == CQP_OPT_RATE &&
		    *(const uint64_t *)f < (uint64_t)o->min) ||
		   ((o->type == CQP_OPT_I32 || o->type == CQP_OPT_CPUS) &&
		    *(const int32_t *)f < o->min)) {
		snprintf(buf, cap, "%s", "none");
	} else {
		cqp_option_format(o, d, buf, cap);
	}
}

/* --help's width: the terminal's, else 80 (piped, or too narrow to
 * read at all). */
static unsigned help_width(FILE *out)
{
	struct winsize ws;
	int fd = fileno(out);

	if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col >= 60)
		return ws.ws_col;
	return 80;
}

/* text from column `at` on, folded at blanks within width and going on
 * in column `indent`; a word longer than a line has one of its own. */
static void fold(FILE *out, const char *text, unsigned at, unsigned indent,
		 unsigned width)
{
	unsigned col = at;
	bool first = true;

	while (*text) {
		size_t len = strcspn(text, " ");

		if (!first && col + 1 + len > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
			first = true;
		}
		fprintf(out, "%s%.*s", first ? "" : " ", (int)len, text);
		col += (first ? 0 : 1) + (unsigned)len;
		first = false;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

static const char *const group_names[CQP_G__N] = {
    [CQP_G_CONNECTION] = "Connection", [CQP_G_TRAFFIC] = "Traffic",
    [CQP_G_COMPLETION] = "Completion", [CQP_G_OPEN_LOOP] = "Open loop",
    [CQP_G_THREADS] = "Threads",       [CQP_G_OUTPUT] = "Output",
};

static void usage_option(const struct cqp_option *o, const struct cqp_params *d,
			 unsigned width, FILE *out)
{
	/* --rates' default and range: a few dozen characters. */
	char left[64], def[64], range[96], text[640];
	bool modes = o->type == CQP_OPT_MODES;
	int n;

	snprintf(left, sizeof(left), "%c%c%s--%s%s%s%s",
		 o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
		 o->short_name ? ", " : "  ", o->name,
		 takes_arg(o) ? "="
		 : modes      ? "[="
			      : "",
		 takes_arg(o) || modes ? o->argname : "", modes ? "]" : "");
	n = snprintf(text, sizeof(text), "%s", o->help);
	if ((takes_arg(o) || modes) && o->type != CQP_OPT_STR && n > 0 &&
	    (size_t)n < sizeof(text)) {
		default_text(o, d, def, sizeof(def));
		format_range(o, range, sizeof(range));
		snprintf(text + n, sizeof(text) - (size_t)n,
			 " [%s; default %s]", range, def);
	}
	n = fprintf(out, "  %-28s ", left);
	fold(out, text, n > 0 ? (unsigned)n : 0, 31, width);
}

void cqp_params_usage(enum cqp_tool tool, FILE *out)
{
	struct cqp_params d;
	const char *name = cqp_tool_name(tool);
	unsigned width = help_width(out);

	cqp_params_defaults(&d, tool);
	fprintf(out,
		"Usage: %s [OPTIONS]         serve (wait for a client)\n"
		"       %s [OPTIONS] HOST    run against the server on HOST\n"
		"The server takes the test parameters from the client.\n",
		name, name);
	for (unsigned g = 0; g < CQP_G__N; g++) {
		bool heading = false;

		for (const struct cqp_option *o = cqp_options; o->name; o++) {
			if (!(o->tools & tool) || o->group != g)
				continue;
			if (!heading)
				fprintf(out, "\n%s:\n", group_names[g]);
			heading = true;
			usage_option(o, &d, width, out);
		}
	}
}

/* Builds getopt_long's tables for the options `tool` uses. */
static int build_getopt(enum cqp_tool tool, struct option *longs, char *shorts,
			const struct cqp_option **by_index)
{
	int n = 0;
	size_t s = 0;

	shorts[s++] = ':';
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		if (!(o->tools & tool))
			continue;
		longs[n].name = o->name;
		longs[n].has_arg = takes_arg(o) ? required_argument
				   : o->type == CQP_OPT_MODES
				       ? optional_argument
				       : no_argument;
		longs[n].flag = NULL;
		longs[n].val = 256 + n;
		by_index[n] = o;
		if (o->short_name) {
			shorts[s++] = o->short_name;
			if (takes_arg(o))
				shorts[s++] = ':';
		}
		n++;
	}
	memset(&longs[n], 0, sizeof(longs[n]));
	shorts[s] = '\0';
	return n;
}

static const struct cqp_option *
by_short(char c, const struct cqp_option **by_index, int n)
{
	for (int i = 0; i < n; i++)
		if (by_index[i]->short_name == c)
			return by_index[i];
	return NULL;
}

/* Edit distance of a and b (each at most 63 characters counted). */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[64], la = (unsigned)strnlen(a, 63),
			  lb = (unsigned)strnlen(b, 63);

	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The tool's option nearest to an unknown "--name[=value]", when it is
 * near enough to be a typo (two edits, one for short names). */
static const struct cqp_option *nearest_option(enum cqp_tool tool,
					       const char *arg)
{
	const struct cqp_option *best = NULL;
	unsigned best_d = ~0u;
	char name[64];

	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	snprintf(name, sizeof(name), "%s", arg + 2);
	name[strcspn(name, "=")] = '\0';
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		unsigned d;

		if (!(o->tools & tool))
			continue;
		d = edit_distance(name, o->name);
		if (d < best_d) {
			best_d = d;
			best = o;
		}
	}
	return best_d <= (strlen(name) > 4 ? 2u : 1u) ? best : NULL;
}

int cqp_params_parse(struct cqp_params *p, enum cqp_tool tool, int argc,
		     char **argv, FILE *out)
{
	struct option longs[MAXOPT + 1];
	const struct cqp_option *by_index[MAXOPT];
	char shorts[2 * MAXOPT + 2];
	bool seen[MAXOPT] = {false};
	int n, c, idx, rc;

	cqp_params_defaults(p, tool);
	n = build_getopt(tool, longs, shorts, by_index);
	opterr = 0;
	optind = 0; /* full reset: parse may run more than once (tests) */
	while ((c = getopt_long(argc, argv, shorts, longs, &idx)) != -1) {
		const struct cqp_option *o;

		if (c == '?') {
			if (optopt >= 256)
				return cqp_fail(CQP_E_USAGE,
						"--%s takes no value",
						by_index[optopt - 256]->name);
			if (optopt)
				return cqp_fail(
				    CQP_E_USAGE,
				    "unknown option '-%c' (see --help)",
				    optopt);
			o = nearest_option(tool, argv[optind - 1]);
			if (o)
				return cqp_fail(CQP_E_USAGE,
						"unknown option '%s' (did you "
						"mean --%s? see --help)",
						argv[optind - 1], o->name);
			return cqp_fail(CQP_E_USAGE,
					"unknown option '%s' (see --help)",
					argv[optind - 1]);
		}
		if (c == ':') {
			/* a long option's full name, even when abbreviated */
			const struct cqp_option *m =
			    optopt >= 256 ? by_index[optopt - 256]
			    : optopt	  ? by_short((char)optopt, by_index, n)
					  : NULL;
			if (m)
				return cqp_fail(CQP_E_USAGE,
						"--%s needs a value", m->name);
			return cqp_fail(CQP_E_USAGE, "%s needs a value",
					argv[optind - 1]);
		}
		o = c >= 256 ? by_index[c - 256]
			     : by_short((char)c, by_index, n);
		if (!o)
			return cqp_fail(CQP_E_USAGE, "unknown option '-%c'", c);
		if (o->type == CQP_OPT_HELP) {
			cqp_params_usage(tool, out);
			return CQP_PARSE_HELP;
		}
		if (o->type == CQP_OPT_VERSION) {
			fprintf(out, "%s (cqperf) %s\n", cqp_tool_name(tool),
				CQP_VERSION);
			return CQP_PARSE_VERSION;
		}
		/* --compare-modes LIST, as well as --compare-modes=LIST. */
		if (o->type == CQP_OPT_MODES && !optarg && optind < argc &&
		    is_modes_list(o, argv[optind]))
			optarg = argv[optind++];
		rc = cqp_option_set(
		    o, p,
		    takes_arg(o) || o->type == CQP_OPT_MODES ? optarg : NULL);
		if (rc < 0)
			return rc;
		seen[o - cqp_options] = true;
	}
	if (optind < argc - 1)
		return cqp_fail(CQP_E_USAGE,
				"unexpected argument '%s': only one HOST may "
				"be given",
				argv[optind + 1]);
	if (optind == argc - 1) {
		if (strlen(argv[optind]) >= sizeof(p->host) || !argv[optind][0])
			return cqp_fail(CQP_E_USAGE, "HOST '%s' is not a host",
					argv[optind]);
		strcpy(p->host, argv[optind]);
	}
	if (seen[cqp_option_find("all") - cqp_options] &&
	    seen[cqp_option_find("size") - cqp_options])
		return cqp_fail(CQP_E_USAGE,
				"--all and --size conflict: --all runs every "
				"size");
	if (seen[cqp_option_find("iters") - cqp_options] &&
	    seen[cqp_option_find("duration") - cqp_options])
		return cqp_fail(CQP_E_USAGE,
				"--iters and --duration conflict: pick one");
	if (tool & LAT_TOOLS &&
	    seen[cqp_option_find("client-cq-mode") - cqp_options] && !p->rate &&
	    !p->nrates)
		return cqp_fail(CQP_E_USAGE,
				"--client-cq-mode needs --rate or --rates: in "
				"ping-pong both sides reap in --cq-mode");
	if (seen[cqp_option_find("verb") - cqp_options] &&
	    seen[cqp_option_find("verbs") - cqp_options])
		return cqp_fail(CQP_E_USAGE,
				"--verb and --verbs conflict: one verb, or a "
				"set of steps per verb");
	/* A verb's own default: atomics are 8 bytes, and the target of a
	 * plain WRITE has only memory to poll. */
	if (cqp_params_verbs(p) & 1u << CQP_VERB_ATOMIC &&
	    !seen[cqp_option_find("size") - cqp_options] && !p->all)
		p->size = 8;
	if (p->verb == CQP_VERB_WRITE && !p->verbs &&
	    !seen[cqp_option_find("cq-mode") - cqp_options])
		p->cq_mode = CQP_CQ_MEM;
	return cqp_params_validate(p, tool);
}

/* The checks of --verb and --verbs against the modes and sizes. */
static int validate_verbs(const struct cqp_params *p, enum cqp_tool tool)
{
	uint32_t verbs = cqp_params_verbs(p);
	bool write = verbs & 1u << CQP_VERB_WRITE;

	if (tool & UD_TOOLS && p->verb != CQP_VERB_SEND)
		return cqp_fail(CQP_E_USAGE,
				"--verb: '%s' is not for UD, whose queue pairs "
				"carry SEND only (allowed: send)",
				cqp_verb_name(p->verb));
	if (p->verbs && p->verb != CQP_VERB_SEND)
		return cqp_fail(CQP_E_USAGE,
				"--verb and --verbs conflict: one verb, or a "
				"set of steps per verb");
	if (!write &&
	    (p->cq_mode == CQP_CQ_MEM || p->client_cq_mode == CQP_CQ_MEM ||
	     (p->compare_modes && cqp_params_compare(p) & 1u << CQP_CQ_MEM)))
		return cqp_fail(
		    CQP_E_USAGE,
		    "--cq-mode mem is for --verb write only: memory "
		    "polling waits where a plain RDMA WRITE leaves "
		    "no completion; other verbs have one to reap");
	if (p->verb == CQP_VERB_WRITE && !p->verbs && !p->compare_modes &&
	    p->cq_mode != CQP_CQ_MEM)
		return cqp_fail(
		    CQP_E_USAGE,
		    "--verb write --cq-mode %s: a plain RDMA WRITE "
		    "raises no completion at the target; use --verb "
		    "write-imm for events (allowed: --cq-mode mem)",
		    cqp_cq_mode_name(p->cq_mode));
	if (verbs & 1u << CQP_VERB_ATOMIC && (p->all || p->size != 8))
		return cqp_fail(CQP_E_USAGE,
				"--verb atomic: atomics are 8 bytes (allowed: "
				"--size 8, without --all)");
	/* The target loads the last 8 bytes at once (acquire): misaligned,
	 * that faults on Armv8.0-8.3 (LDAR) and is undefined on x86.  A
	 * write-imm's target polls no memory, so any size does there. */
	if (write && !p->all && !cqp_verb_size_ok(CQP_VERB_WRITE, p->size))
		return cqp_fail(CQP_E_USAGE,
				"--size %" PRIu64 ": --verb write polls the "
				"last 8 bytes of a message for its sequence "
				"number, an aligned 8-byte load (allowed: a "
				"multiple of 8, from 8)",
				p->size);
	return 0;
}

/* A multicast GID: ff00::/8, or an IPv4-mapped 224.0.0.0/4 (RoCE v2). */
static bool is_mcast_gid(const char *text)
{
	struct in6_addr a;

	if (inet_pton(AF_INET6, text, &a) != 1)
		return false;
	if (a.s6_addr[0] == 0xff)
		return true;
	return IN6_IS_ADDR_V4MAPPED(&a) && (a.s6_addr[12] & 0xf0) == 0xe0;
}

/* Whether a step of the run may reap in `mode`. */
static bool uses_mode(const struct cqp_params *p, uint32_t mode)
{
	return p->cq_mode == mode || p->client_cq_mode == mode ||
	       (p->compare_modes && cqp_params_compare(p) & 1u << mode);
}

int cqp_params_validate(const struct cqp_params *p, enum cqp_tool tool)
{
	int rc = validate_verbs(p, tool);

	if (rc < 0)
		return rc;
	if (p->p99_target_us && !uses_mode(p, CQP_CQ_ADAPTIVE))
		return cqp_fail(CQP_E_USAGE,
				"--p99-target is the adaptive policy's: give "
				"--cq-mode adaptive (or adaptive in "
				"--compare-modes or --client-cq-mode)");
	if (p->arrival != CQP_ARRIVAL_FIXED && !p->rate && !p->nrates)
		return cqp_fail(CQP_E_USAGE,
				"--arrival needs --rate or --rates: without a "
				"rate the client sends each request when the "
				"last reply is in (ping-pong)");
	if (p->rate && p->nrates)
		return cqp_fail(CQP_E_USAGE,
				"--rate and --rates conflict: one rate, or a "
				"row per rate");
	if ((p->rate || p->nrates) && p->cq_depth &&
	    p->cq_depth < p->tx_depth + p->rx_depth)
		return cqp_fail(CQP_E_USAGE,
				"--cq-depth %u is below tx-depth + rx-depth "
				"(%u): an open loop can have both queues' "
				"completions waiting at once",
				p->cq_depth, p->tx_depth + p->rx_depth);
	if (p->nrates && p->all)
		return cqp_fail(CQP_E_USAGE,
				"--rates and --all conflict: one axis at a "
				"time (a row per rate of one --size)");
	if (p->cm_addr[0] && !p->rdma_cm && tool != CQP_TOOL_CM_EVENT_STRESS)
		return cqp_fail(CQP_E_USAGE,
				"--cm-addr needs --rdma-cm: without it the "
				"path is set up over the TCP channel");
	if (p->mcast[0] && !is_mcast_gid(p->mcast))
		return cqp_fail(
		    CQP_E_USAGE,
		    "--mcast: '%s' is not a multicast GID (ff00::/8, "
		    "or ::ffff:224.0.0.0/100 for RoCE v2)",
		    p->mcast);
	if (p->msgs && p->no_qp)
		return cqp_fail(CQP_E_USAGE,
				"--msgs and --no-qp conflict: traffic needs "
				"QPs");
	if (p->rdma_cm && p->qkey != CQP_DEFAULT_QKEY)
		return cqp_fail(
		    CQP_E_USAGE,
		    "--qkey and --rdma-cm conflict: RDMA CM fixes "
		    "the Q_Key of its UDP port space at 0x01234567");
	if (p->mcast[0] && p->rdma_cm)
		return cqp_fail(CQP_E_USAGE,
				"--mcast and --rdma-cm conflict: multicast "
				"joins with ibv_attach_mcast");
	if (p->mtu && (p->mtu & (p->mtu - 1)))
		return cqp_fail(CQP_E_USAGE,
				"--mtu: '%u' is not one of 256, 512, 1024, "
				"2048 or 4096",
				p->mtu);
	if (p->ncpu && p->ncpu < p->nthreads)
		return cqp_fail(CQP_E_USAGE,
				"--cpu lists %u CPUs for --threads %u: one "
				"per thread",
				p->ncpu, p->nthreads);
	if (p->shared_channel && (tool & LAT_TOOLS))
		return cqp_fail(
		    CQP_E_USAGE,
		    "--shared-channel does not fit ping-pong: each thread "
		    "waits for its own reply before the next request, so a "
		    "reply another thread reaped would stall it; use a "
		    "bandwidth tool");
	if (p->shared_channel && p->nthreads < 2)
		return cqp_fail(CQP_E_USAGE,
				"--shared-channel needs --threads 2 or more: "
				"one thread has no one to share with");
	if (p->shared_channel && cqp_cq_mode_polls(p->cq_mode))
		return cqp_fail(CQP_E_USAGE,
				"--shared-channel needs --cq-mode event or "
				"hybrid: poll mode never sleeps on a channel");
	if (p->shared_channel && p->nonblock)
		return cqp_fail(CQP_E_USAGE,
				"--shared-channel and --nonblock conflict: "
				"threads sharing a channel take one event "
				"each, with a blocking read");
	if (p->shared_channel && p->channel_per_cq)
		return cqp_fail(CQP_E_USAGE,
				"--shared-channel and --channel-per-cq "
				"conflict: one channel, or one per CQ");
	if ((uint64_t)p->nthreads * p->qps > 1024)
		return cqp_fail(CQP_E_USAGE,
				"--threads %u times --qps %u is %u QPs: at "
				"most 1024 in all",
				p->nthreads, p->qps, p->nthreads * p->qps);
	if (p->nthreads > 1 && p->rate && p->rate < p->nthreads)
		return cqp_fail(CQP_E_USAGE,
				"--rate %" PRIu64 " is below --threads %u: "
				"the rate is split over the threads",
				p->rate, p->nthreads);
	if (p->signal_every > p->tx_depth)
		return cqp_fail(CQP_E_USAGE,
				"--signal-every %u exceeds --tx-depth %u: the "
				"send queue would fill with unsignaled work",
				p->signal_every, p->tx_depth);
	if (p->post_list > p->tx_depth)
		return cqp_fail(CQP_E_USAGE,
				"--post-list %u exceeds --tx-depth %u",
				p->post_list, p->tx_depth);
	if (p->cq_depth &&
	    p->cq_depth <
		(p->tx_depth > p->rx_depth ? p->tx_depth : p->rx_depth))
		return cqp_fail(CQP_E_USAGE,
				"--cq-depth %u is below the queue depth it "
				"serves (tx-depth %u, rx-depth %u)",
				p->cq_depth, p->tx_depth, p->rx_depth);
	return 0;
}

/* Calls fn for each negotiated option of tool whose value in p differs
 * from the default, with its text. */
static void each_asked(const struct cqp_params *p, enum cqp_tool tool,
		       void (*fn)(void *, const struct cqp_option *,
				  const char *),
		       void *arg)
{
	struct cqp_params d;

	cqp_params_defaults(&d, tool);
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		/* --rates: 16 rates of up to 9 digits and their commas. */
		char mine[512], def[512];

		if (!(o->flags & CQP_OPTF_NEGOTIATED) || !(o->tools & tool))
			continue;
		cqp_option_format(o, p, mine, sizeof(mine));
		cqp_option_format(o, &d, def, sizeof(def));
		if (strcmp(mine, def) != 0)
			fn(arg, o, mine);
	}
}

static void encode_one(void *w, const struct cqp_option *o, const char *val)
{
	cqp_kv_add_str(w, o->name, val);
}

void cqp_params_encode(const struct cqp_params *p, enum cqp_tool tool,
		       struct cqp_kv_writer *w)
{
	/* Only what differs from the defaults travels: the server starts
	 * from the same defaults (the hello checked both run one version). */
	each_asked(p, tool, encode_one, w);
}

struct asked_text {
	char *buf;
	size_t cap, len;
};

static void asked_one(void *arg, const struct cqp_option *o, const char *val)
{
	struct asked_text *t = arg;
	/* As a user types it: a flag, or --compare-modes with its default
	 * list, alone (the wire's "true" is not a word of the option). */
	bool flag = (o->type == CQP_OPT_FLAG || o->type == CQP_OPT_MODES) &&
		    strcmp(val, "true") == 0;
	int n;

	if (t->len >= t->cap)
		return;
	n = snprintf(t->buf + t->len, t->cap - t->len, "%s--%s%s%s",
		     t->len ? " " : "", o->name, flag ? "" : " ",
		     flag ? "" : val);
	t->len += n > 0 ? (size_t)n : 0;
}

void cqp_params_asked(const struct cqp_params *p, enum cqp_tool tool, char *buf,
		      size_t cap)
{
	struct asked_text t = {buf, cap, 0};

	buf[0] = '\0';
	each_asked(p, tool, asked_one, &t);
	if (t.len >= cap && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
	else if (!t.len)
		snprintf(buf, cap, "%s", "the defaults");
}

struct decode_ctx {
	struct cqp_params *p;
	enum cqp_tool tool;
};

static int decode_one(void *ctx, const char *key, const char *val)
{
	struct decode_ctx *d = ctx;
	const struct cqp_option *o = find_for(key, d->tool);

	if (!o || !(o->flags & CQP_OPTF_NEGOTIATED))
		return cqp_fail(CQP_E_USAGE,
				"parameter '%s' is not one %s accepts", key,
				cqp_tool_name(d->tool));
	return cqp_option_set(o, d->p, val);
}

int cqp_params_decode(struct cqp_params *p, enum cqp_tool tool,
		      const char *text, size_t len)
{
	struct cqp_params d;
	struct decode_ctx ctx = {p, tool};
	int rc;

	cqp_params_defaults(&d, tool);
	for (const struct cqp_option *o = cqp_options; o->name; o++) {
		if (!(o->flags & CQP_OPTF_NEGOTIATED))
			continue;
		if (o->type == CQP_OPT_CQMOD) {
			p->cq_mod_count = d.cq_mod_count;
			p->cq_mod_usec = d.cq_mod_usec;
		} else if (o->type == CQP_OPT_ARRIVAL) {
			p->arrival = d.arrival;
			p->burst = d.burst;
			p->on_ms = d.on_ms;
			p->off_ms = d.off_ms;
			p->pareto_milli = d.pareto_milli;
		} else if (o->type == CQP_OPT_RATES) {
			p->nrates = 0;
		} else if (o->type == CQP_OPT_MODE ||
			   o->type == CQP_OPT_MODES) {
			p->compare_modes = d.compare_modes;
			p->compare_list = d.compare_list;
			p->cq_mode = d.cq_mode;
			p->client_cq_mode = d.client_cq_mode;
			p->empty_n = d.empty_n;
		} else if (o->type == CQP_OPT_SPINS) {
			p->spin_us = d.spin_us;
			p->nspin = d.nspin;
			memcpy(p->spin_list, d.spin_list, sizeof(p->spin_list));
		} else {
			size_t sz = o->type == CQP_OPT_FLAG  ? sizeof(bool)
				    : o->type == CQP_OPT_STR ? o->str_cap
				    : o->type == CQP_OPT_U64 ||
					    o->type == CQP_OPT_SIZE ||
					    o->type == CQP_OPT_RATE
					? sizeof(uint64_t)
					: sizeof(uint32_t);
			memcpy(field(o, p), cfield(o, &d), sz);
		}
	}
	rc = cqp_kv_parse(text, len, decode_one, &ctx);
	if (rc < 0)
		return rc;
	return cqp_params_validate(p, tool);
}
