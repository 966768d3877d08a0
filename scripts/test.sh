#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The test command: install what is missing, lint the tree (scripts/dev/lint.sh),
# build (rdma-core's warning set, warnings are errors),
# run the unit tests and `make distcheck`, build with AddressSanitizer and
# UBSan, then run the soft-RoCE integration suite (on the host's rxe when
# the kernel has it, else in a throw-away QEMU guest).  The last line is
# "N passed, N failed, N skipped"; the exit status is non-zero on failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
log=${CQPERF_TEST_LOG:-$top/build/test-logs}
passed=0 failed=0 skipped=0
times="" # "name Ns" per step, printed before the totals: where CI's time goes
mark=$SECONDS
took() { # took NAME: the time since the last mark
	times+="$1 $((SECONDS - mark))s; "
	mark=$SECONDS
}

step() { # step NAME COMMAND...: one counted check with its log
	local name=$1
	shift
	echo "== $name"
	if "$@" >"$log/$name.log" 2>&1; then
		echo "ok - $name"
		passed=$((passed + 1))
		took "$name"
		return 0
	fi
	took "$name"
	echo "not ok - $name (log: $log/$name.log)"
	tail -n 40 "$log/$name.log" | sed 's/^/# /'
	failed=$((failed + 1))
	return 1
}

summary() {
	echo "# times: ${times}all ${SECONDS}s"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

"$top/scripts/deps.sh" || { echo "0 passed, 1 failed"; exit 1; }
took deps
# Python: the system's interpreter, which the packages depend on and
# deps.sh installs modules for (the guests run it too), ahead of a
# version manager's shim on PATH: pyenv's costs 0.3 s a start, which was
# most of the unit tests' time.
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$top/build/python-bin" &&
		ln -sf /usr/bin/python3 "$top/build/python-bin/python3" &&
		export PATH="$top/build/python-bin:$PATH"
fi
mkdir -p "$log"
# Formatting, shellcheck and pyflakes: findings fail the run, not the build.
step lint scripts/dev/lint.sh
step autogen ./autogen.sh || summary
step configure sh -c 'mkdir -p build && cd build && ../configure --enable-werror' || summary
step build make -C build -j"$(nproc)" || summary

# Unit tests: count automake's results one by one.
make -C build -j"$(nproc)" check >"$log/check.log" 2>&1
for t in build/tests/*.trs; do
	res=$(sed -n 's/^:test-result: //p' "$t")
	name=$(basename "$t" .trs)
	case $res in
	PASS) echo "ok - unit $name"; passed=$((passed + 1)) ;;
	SKIP) echo "skip - unit $name"; skipped=$((skipped + 1)) ;;
	*)
		echo "not ok - unit $name"
		sed 's/^/# /' "build/tests/$name.log" | tail -n 40
		failed=$((failed + 1))
		;;
	esac
done
took check

# distcheck: the tarball builds, installs and passes every test that
# reads what it built (the suites that read only the source tree ran
# above: Makefile.am's CQP_SOURCE_TESTS); dist-complete: it holds every
# tracked file, theirs too.
dist_tests=$(make -s -C build print-dist-tests | tr '\n' ' ')
step distcheck make -C build -j"$(nproc)" distcheck TESTS="$dist_tests"
tarball=$(find build -maxdepth 1 -name 'cqperf-*.tar.gz' | head -n 1)
dist_complete() { # dist_complete TARBALL: no tracked file missing from it
	local missing
	missing=$(comm -23 <(git ls-files | grep -vxE '\.gitignore|m4/\.gitkeep' | sort) \
		<(tar -tzf "$1" | sed 's|^[^/]*/||' | sort))
	[ -z "$missing" ] || { echo "missing from $1:"; echo "$missing"; return 1; }
}
if git rev-parse --git-dir >/dev/null 2>&1; then
	step dist-complete dist_complete "$tarball"
else
	echo "skip - dist-complete (not a git checkout)"
	skipped=$((skipped + 1))
fi
# The packages, from the tarball distcheck made (scripts/dev/test-packages.sh).
step package-deb scripts/dev/test-packages.sh deb "$tarball"
step package-rpm scripts/dev/test-packages.sh rpm "$tarball"
step asan-build sh -c 'mkdir -p build-asan && cd build-asan &&
	../configure --enable-werror --enable-sanitizers && make -j'"$(nproc)"

# A suite that prints "N passed, N failed, N skipped": add its counts.
# add_suite NAME LOG EXIT-STATUS (77 alone means the whole suite skipped).
add_suite() {
	local name=$1 suite_log=$2 rc=$3 line p f s
	took "$name"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$suite_log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "not ok - $name suite did not complete (exit $rc)"
		failed=$((failed + 1))
		return
	fi
	read -r p _ f _ s _ <<<"${line//,/}"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name suite exited $rc"
		failed=$((failed + 1))
	fi
}

# Fuzz smoke: both libFuzzer targets briefly, from a copy of the committed
# corpus (FUZZ_TIME seconds each, default 20); skipped without clang.
fz_log=$log/fuzz.log
"$top/tests/fuzz/smoke.sh" "$top/build-fuzz" 2>&1 | tee "$fz_log"
add_suite fuzz "$fz_log" "${PIPESTATUS[0]}"

# Integration on soft-RoCE: its checks are counted individually.
it_log=$log/integration.log
CQPERF_PASS_ENV="CQPERF_ASAN_BIN" CQPERF_ASAN_BIN="$top/build-asan/src" \
	"$top/scripts/guest/softroce-run.sh" --timeout "${CQPERF_IT_TIMEOUT:-3600}" -- \
	"$top/tests/integration/run.sh" "$top/build/src" 2>&1 | tee "$it_log"
add_suite integration "$it_log" "${PIPESTATUS[0]}"

# --clock in a guest whose clocksource is the HPET, and in the usual one
# (boots each itself; a host with its own rxe runs it in guests too).
ck_log=$log/clock.log
"$top/tests/clock/run.sh" "$top/build/src" 2>&1 | tee "$ck_log"
add_suite clock "$ck_log" "${PIPESTATUS[0]}"

# qemu-plugins/libqcount.so in a guest booted with it (boots its own).
qc_log=$log/qcount.log
"$top/tests/qcount/run.sh" "$top/build/src" 2>&1 | tee "$qc_log"
add_suite qcount "$qc_log" "${PIPESTATUS[0]}"

# Two nodes: every binary's server and client in two QEMU guests joined by
# a socket network (run here: it boots the guests itself).
tn_log=$log/twonode.log
"$top/tests/twonode/run.sh" "$top/build/src" 2>&1 | tee "$tn_log"
add_suite two-node "$tn_log" "${PIPESTATUS[0]}"

# cqperf-sweep's launchers for real on two guests: --server-ssh against an
# sshd on the server node, --slurm in a two-node Slurm cluster.
ln_log=$log/launchers.log
"$top/tests/twonode/launchers.sh" "$top/build/src" 2>&1 | tee "$ln_log"
add_suite launchers "$ln_log" "${PIPESTATUS[0]}"

# The regression gate users run in their CI (scripts/installed/cqperf-regress against
# the committed ci/baseline), and proof that it catches planted regressions.
rg_log=$log/regress.log
"$top/tests/regress/run.sh" "$top/build/src" 2>&1 | tee "$rg_log"
add_suite regress-gate "$rg_log" "${PIPESTATUS[0]}"
summary
