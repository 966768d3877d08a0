#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Regenerate the build system from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
# Every tool's program, sources and page, from src/base/tools.h, and the
# committed lists of tools that cannot read it.
python3 gen/gen-tools-am.py
python3 gen/sync-tool-lists.py
autoreconf --install --force
