/* SPDX-License-Identifier: BSD-2-Clause */
/* The TCP out-of-band channel between client and server.
 *
 * Frame: 12-byte header in network byte order -- magic "CQPF" (u32),
 * protocol version (u16), message type (u16), payload length (u32) --
 * then the payload (at most CQP_OOB_MAX_PAYLOAD bytes, usually a kv
 * record).  Every read and write loops until complete and every wait has
 * a deadline of o->timeout_ms, so a dead or stalled peer ends the run with
 * CQP_E_TIMEOUT or CQP_E_PEER_CLOSED instead of a hang.
 */
#ifndef CQP_OOB_H
#define CQP_OOB_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>

#define CQP_OOB_MAGIC	    0x43515046u /* "CQPF" */
#define CQP_OOB_VERSION	    1
#define CQP_OOB_HDR_LEN	    12
#define CQP_OOB_MAX_PAYLOAD (1024u * 1024u)

enum cqp_msg {
	CQP_MSG_HELLO = 1, /* kv: proto, tool, version */
	CQP_MSG_PARAMS,	   /* kv: negotiated options (client -> server) */
	CQP_MSG_ACCEPT,	   /* kv: whatever the server adds (device limits) */
	CQP_MSG_REJECT,	   /* kv: reason */
	CQP_MSG_ENDPOINT,  /* kv: QP endpoints */
	CQP_MSG_BARRIER,   /* kv: name of the phase */
	CQP_MSG_RESULTS,   /* kv: one side's figures */
	CQP_MSG_ERROR,	   /* kv: reason; the sender is giving up */
	CQP_MSG_BYE,	   /* empty: orderly end of the session */
	CQP_MSG_PORT,	   /* kv: port facts (MTU, link, LID, prefix) */
	CQP_MSG_ALIVE,	   /* empty: a READ's or atomic's requester runs */
	CQP_MSG__MAX
};

struct cqp_oob {
	int fd;
	int timeout_ms; /* deadline for each wait; <= 0 waits forever */
	char peer[96];	/* "host:port" for messages */
	/* From the hello: the peer runs on this machine (the same
	 * boot_id) as process peer_pid. */
	bool peer_local;
	int peer_pid;
};

/* Server side: listen on all addresses (IPv4 and IPv6) at port. */
int cqp_oob_listen(uint16_t port, int *lfd);
/* Wait up to timeout_ms (<= 0: forever) for one client. */
int cqp_oob_accept(int lfd, int timeout_ms, struct cqp_oob *o);
/* How a client waits for its server: note_as, the program's name for
 * one note on stderr when it starts retrying (NULL: none); stop, a flag a
 * signal handler sets (NULL: none), looked at between attempts, since a
 * signal that lands outside a blocking call interrupts nothing. */
struct cqp_oob_wait {
	const char *note_as; /* the retry note's tool name; NULL: no note */
	const volatile sig_atomic_t *stop;
	const char *tool; /* for the failure's hint; NULL: none */
};
/* Client side: resolve host, retry the connect until timeout_ms passes
 * (the server may still be starting), then fail naming host:port; a
 * signal (EINTR, or *how->stop set) ends the wait as CQP_E_INTERRUPTED.
 * how may be NULL. */
int cqp_oob_connect(const char *host, uint16_t port, int timeout_ms,
		    const struct cqp_oob_wait *how, struct cqp_oob *o);
/* Why a connect never succeeded, for a person (exposed for the tests):
 * refused (nothing listens: start a server, named by tool when known),
 * unreachable (the address or its route), or no answer, by the last
 * errno; refused says so when any try was refused.  waited_ms 0: the
 * first try failed and no retry was made. */
void cqp_oob_unreached(char *buf, size_t cap, const char *tool,
		       const char *where, int err, bool refused, int waited_ms);
/* Wrap an already connected socket (tests use socketpair). */
void cqp_oob_from_fd(struct cqp_oob *o, int fd, int timeout_ms,
		     const char *peer);
void cqp_oob_close(struct cqp_oob *o);
/* Our end's address as a 16-byte GID (IPv4 mapped into ::ffff:0:0/96):
 * the RoCE GID of the interface the peer reached us by.  -1: unknown. */
int cqp_oob_local_gid(const struct cqp_oob *o, uint8_t gid[16]);

/* Header encode/decode, exposed for the fuzz target and unit tests.
 * decode returns 0 or CQP_E_PROTO (bad magic, oversized length, unknown
 * type) / CQP_E_VERSION (other protocol version). */
void cqp_oob_hdr_encode(uint8_t hdr[CQP_OOB_HDR_LEN], uint16_t type,
			uint32_t len);
int cqp_oob_hdr_decode(const uint8_t hdr[CQP_OOB_HDR_LEN], uint16_t *type,
		       uint32_t *len);

int cqp_oob_send(struct cqp_oob *o, uint16_t type, const void *buf,
		 uint32_t len);
/* Receive one frame into buf (cap bytes; a payload larger than cap is
 * CQP_E_PROTO).  Writes a NUL after the payload when it fits, so kv
 * payloads can be used as strings. */
int cqp_oob_recv(struct cqp_oob *o, uint16_t *type, void *buf, uint32_t cap,
		 uint32_t *len);
/* Receive and require `type`.  A CQP_MSG_ERROR or CQP_MSG_REJECT from the
 * peer becomes CQP_E_PEER_FAILED / CQP_E_REJECTED carrying the peer's
 * reason; any other type is CQP_E_PROTO. */
int cqp_oob_expect(struct cqp_oob *o, uint16_t type, void *buf, uint32_t cap,
		   uint32_t *len);

/* Peer-supplied text ends up on the user's terminal: replace control
 * characters (C0, DEL, C1: escape sequences, newlines that would forge
 * log lines) and bytes that are not UTF-8 by one '?' each, in place;
 * UTF-8 text otherwise passes. */
void cqp_oob_sanitize(char *s);

/* Send an ERROR frame with a reason (best effort, never blocks long). */
void cqp_oob_send_error(struct cqp_oob *o, const char *reason);

/* True when the peer has sent something (or hung up) that we have not
 * read: lets a loop that waits on the network notice its peer.  Never
 * blocks. */
bool cqp_oob_pending(const struct cqp_oob *o);
/* The type of the frame waiting on the channel, left unread: 1 with *type
 * set, 0 when nothing (or not a whole header) waits, CQP_E_PEER_CLOSED
 * when the peer hung up. */
int cqp_oob_peek(const struct cqp_oob *o, uint16_t *type);

#endif
