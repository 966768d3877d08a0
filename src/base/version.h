/* SPDX-License-Identifier: BSD-2-Clause */
/* The version every binary reports: configure's (AM_CPPFLAGS passes
 * -DCQP_VERSION), else "dev" for a build outside automake such as the
 * fuzz targets (tests/fuzz/smoke.sh). */
#ifndef CQP_VERSION_H
#define CQP_VERSION_H

#ifndef CQP_VERSION
#define CQP_VERSION "dev"
#endif

#endif
