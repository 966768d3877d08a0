#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the libFuzzer targets with clang (ASan and UBSan, any finding
# fatal) and runs each briefly from a copy of its seed corpus, so the
# repository's corpus stays as committed.  Any crash, leak, sanitizer
# report, exit() or timeout fails the target; what triggered it is kept
# in the build directory.
#
# Usage: tests/fuzz/smoke.sh [BUILDDIR]  (default: a temporary directory,
# removed afterwards).  FUZZ_TIME: seconds per target (default 20);
# FUZZ_RUNS: most inputs per target (default 5000000); CLANG: the
# compiler (default clang).
# Prints "ok - fuzz NAME (N execs)" / "not ok - ..." a target and a last
# line "N passed, N failed, N skipped"; exit 0 all passed, 1 one failed,
# 77 no clang or no libFuzzer (every target skipped).
set -u

here=$(cd "$(dirname "$0")" && pwd) || exit 99
top=$(cd "$here/../.." && pwd) || exit 99
clang=${CLANG:-clang}
time_s=${FUZZ_TIME:-20}
runs=${FUZZ_RUNS:-5000000}
targets="oob options"

# The sources each target links (as in its build-by-hand comment).
options="src/base/options.c src/base/options_table.c src/base/option_value.c
	src/base/words.c src/base/params.c src/base/tools.c"
sources() {
	case $1 in
	oob) echo "src/oob/oob.c src/oob/socket.c src/oob/wait.c src/base/kv.c src/base/error.c $options" ;;
	options) echo "$options src/base/kv.c src/base/error.c" ;;
	esac
}

if [ $# -ge 1 ]; then
	build=$1
	mkdir -p "$build" || exit 99
	build=$(cd "$build" && pwd) || exit 99
else
	build=$(mktemp -d "${TMPDIR:-/tmp}/cqperf-fuzz.XXXXXX") || exit 99
	# kept when a target fails: it holds the input and the log
	trap '[ "${failed:-0}" -eq 0 ] && rm -rf "$build"' EXIT
fi

skip_all() {
	echo "SKIP: $*"
	local t n=0
	for t in $targets; do
		echo "skip - fuzz $t"
		n=$((n + 1))
	done
	echo "0 passed, 0 failed, $n skipped"
	exit 77
}

command -v "$clang" >/dev/null 2>&1 || skip_all "$clang is not installed"
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
	'{ (void)d; (void)n; return 0; }' >"$build/probe.c"
"$clang" -fsanitize=fuzzer,address,undefined -o "$build/probe" \
	"$build/probe.c" >"$build/probe.log" 2>&1 ||
	skip_all "$clang cannot link -fsanitize=fuzzer (libFuzzer missing?)"

# fuzz_one TARGET: builds and runs one target; its "ok"/"not ok" lines
# on stdout, status 0 when it passed.
fuzz_one() {
	local t=$1 bin log corpus found rc execs input
	bin=$build/fuzz_$t
	log=$build/fuzz_$t.log
	corpus=$build/corpus-$t
	# shellcheck disable=SC2046 # the source list is split on purpose
	if ! "$clang" -g -O1 -std=gnu11 -D_GNU_SOURCE -Isrc \
		-fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o "$bin" "tests/fuzz/fuzz_$t.c" \
		$(sources "$t") >"$log" 2>&1; then
		echo "not ok - fuzz $t (build failed)"
		sed 's/^/# /' "$log" | tail -n 20
		echo "# log: $log"
		return 1
	fi
	found=$build/found-$t
	rm -rf "$corpus" "$found"
	mkdir -p "$found" || exit 99
	cp -R "tests/fuzz/corpus/$t" "$corpus" || exit 99
	# -error_exitcode: libFuzzer's default, 77, would read as a skip
	UBSAN_OPTIONS=print_stacktrace=1 "$bin" -max_total_time="$time_s" \
		-runs="$runs" -timeout=10 -rss_limit_mb=2048 \
		-error_exitcode=1 -print_final_stats=1 \
		-artifact_prefix="$found/" "$corpus" >>"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" |
		tail -n 1)
	input=$(find "$found" -type f | head -n 1)
	if [ "$rc" -eq 0 ] && [ -z "$input" ] && [ -n "$execs" ]; then
		echo "ok - fuzz $t ($execs execs)"
		return 0
	fi
	echo "not ok - fuzz $t (exit $rc, ${execs:-?} execs${input:+, input: $input})"
	grep -E 'ERROR|SUMMARY|runtime error|^ +#[0-9]+ ' "$log" |
		head -n 30 | sed 's/^/# /'
	echo "# log: $log"
	return 1
}

# The targets side by side (one core each: libFuzzer runs one thread),
# then their lines in order.
passed=0 failed=0
cd "$top" || exit 99
pids=()
for t in $targets; do
	fuzz_one "$t" >"$build/result-$t" &
	pids+=($!)
done
i=0
for t in $targets; do
	if wait "${pids[i]}"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	cat "$build/result-$t"
	i=$((i + 1))
done
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
