/* SPDX-License-Identifier: BSD-2-Clause */
/* The local port against the peer's: open the device, check what this
 * tool needs of it, tell the peer our port facts and agree with it on the
 * path MTU and on GRH or LID addressing.  Shared by the RC and UD setups. */
#ifndef CQP_PATH_H
#define CQP_PATH_H

#include <stdbool.h>
#include <stdint.h>

struct cqp_dev;
struct cqp_run;

/* On success the device is open and run->dev describes it and the path
 * (for UD also what a packet carries on the wire, and --mcast is checked
 * against the link); *mtu is the agreed path MTU in bytes.  On failure the
 * device is closed again.  rc_qps: the tool connects RC QPs by hand (else
 * UD). */
int cqp_path_open(struct cqp_dev *d, struct cqp_run *run, bool rc_qps,
		  uint32_t *mtu);

#endif
