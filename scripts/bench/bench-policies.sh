#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The adaptive completion policy against the best fixed one at each rate
# of an open-loop sweep (1 % to 90 % of the closed-loop rate; fixed,
# poisson and onoff arrivals), in rounds on one soft-RoCE guest, with the order
# statistics' intervals.  Usage and environment: scripts/policybench.py.
exec python3 "$(dirname "$0")/policybench.py" "$@"
