#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The packages, built from the make dist tarball as a packager would:
#   test-packages.sh deb TARBALL   dpkg-buildpackage -us -uc -b, lintian
#                                  (an error fails), and dpkg -c holding
#                                  every file `make install` installs
#   test-packages.sh rpm TARBALL   rpmbuild -ta --nodeps, and rpm -qlp
#                                  holding the same files
# Work happens in build/pkg/ (next to this script's tree).  Prints "ok -"
# / "not ok -" per check and the summary line; exit 1 on a failure.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/checks.sh"
kind=${1:?usage: test-packages.sh deb|rpm TARBALL}
tarball=$(realpath "${2:?usage: test-packages.sh deb|rpm TARBALL}")
work=$top/build/pkg/$kind
rm -rf "$work" && mkdir -p "$work" || exit 1
name=$(basename "$tarball" .tar.gz) # cqperf-VERSION
version=${name#cqperf-}

# installed_files: what `make install` puts under /usr, one path a line,
# man pages as packagers compress them.  From this tree's build when it
# made the tarball (scripts/test.sh's: the same Makefile.am, and the
# tarball holds every tracked file), installed with prefix /usr; else the
# tarball is configured and built here.
installed_files() {
	local src=$work/install
	mkdir -p "$src" || return 1
	if grep -qx "PACKAGE_VERSION = $version" "$top/build/Makefile" 2>/dev/null &&
		[ "$(dirname "$tarball")" = "$top/build" ]; then
		make -s -C "$top/build" install prefix=/usr DESTDIR="$src/root" \
			>"$work/install.log" 2>&1 || return 1
	else
		tar -C "$src" -xzf "$tarball" || return 1
		(cd "$src/$name" && ./configure -q --prefix=/usr \
			--with-bashcompletiondir=/usr/share/bash-completion/completions &&
			make -s -j"$(nproc)" && make -s install DESTDIR="$src/root") \
			>"$work/install.log" 2>&1 || return 1
	fi
	(cd "$src/root" && find . ! -type d | sed 's|^\.||; s|\(/man/man[0-9]/.*\)$|\1.gz|') |
		sort
}

# same_files WHAT LISTED: every installed file is among LISTED (a file),
# man pages compressed or not (Debian's rpm leaves them as they are:
# its brp-compress needs bash's read -d).
same_files() {
	local missing strip='s/\.\(gz\|xz\|bz2\|zst\)$//'
	missing=$(comm -23 <(sed "$strip" "$work/installed" | sort) \
		<(sed "$strip" "$2" | sort))
	check "the $1 holds every file make install installs ($(wc -l <"$work/installed") files)" \
		test -z "$missing" || sed 's/^/# missing: /' <<<"$missing"
}

installed_files >"$work/installed" || {
	not_ok "make install from $tarball (log: $work/install.log)"
	tail -20 "$work/install.log" | sed 's/^/# /'
	exit 1
}

case $kind in
deb)
	tar -C "$work" -xzf "$tarball" || exit 1
	# A native package's tarball is cqperf_VERSION.tar.xz; -b needs none.
	(cd "$work/$name" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
		dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1
	check "dpkg-buildpackage -us -uc -b (log: $work/build.log)" test $? -eq 0 ||
		tail -30 "$work/build.log" | sed 's/^/# /'
	deb=$(find "$work" -maxdepth 1 -name "cqperf_${version}_*.deb" | head -n 1)
	check "the .deb is cqperf_${version}_ARCH.deb" test -n "$deb" || exit 1
	dpkg -c "$deb" | awk '{print $6}' | sed 's|^\.||' | grep -v '/$' |
		sort >"$work/listed"
	same_files ".deb" "$work/listed"
	check "the .deb carries the JSON Schema and cqperflib" \
		grep -qx /usr/share/cqperf/cqperf-1.schema.json "$work/listed"
	mkdir -p "$work/x" && dpkg -x "$deb" "$work/x"
	check "its tools look for cqperflib in /usr/share/cqperf" \
		grep -q '"/usr/share/cqperf"' "$work/x/usr/bin/cqperf-compare"
	check "it depends on python3 and the verbs libraries" \
		sh -c "dpkg-deb -f '$deb' Depends | grep -q python3 &&
			dpkg-deb -f '$deb' Depends | grep -q libibverbs"
	lintian --fail-on error "$work"/cqperf_"$version"_*.changes \
		>"$work/lintian.log" 2>&1
	check "debian/changelog's version is configure's ($version)" \
		test "$(dpkg-parsechangelog -l "$work/$name/debian/changelog" -S Version)" = "$version"
	check "lintian finds no error" test $? -eq 0 ||
		sed 's/^/# /' "$work/lintian.log" | head -20
	grep -E '^W: ' "$work/lintian.log" | sed 's/^/# lintian: /' | head -10
	;;
rpm)
	rpmbuild -ta --nodeps --nocheck --define "_topdir $work/rpmbuild" \
		--define 'debug_package %{nil}' "$tarball" >"$work/build.log" 2>&1
	check "rpmbuild -ta --nodeps (log: $work/build.log)" test $? -eq 0 ||
		tail -30 "$work/build.log" | sed 's/^/# /'
	rpm=$(find "$work/rpmbuild/RPMS" -name "cqperf-$version-*.rpm" 2>/dev/null | head -n 1)
	check "the .rpm is cqperf-$version-RELEASE.ARCH.rpm" test -n "$rpm" || exit 1
	rpm -qlp "$rpm" 2>/dev/null | sort >"$work/listed"
	same_files ".rpm" "$work/listed"
	;;
*)
	echo "usage: test-packages.sh deb|rpm TARBALL" >&2
	exit 2
	;;
esac
echo "$CHECKS_PASSED passed, $CHECKS_FAILED failed, 0 skipped"
[ "$CHECKS_FAILED" -eq 0 ]
