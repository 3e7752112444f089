#!/bin/sh
# License and package (issue 26): the source tree carries the Apache-2.0
# LICENSE and README says so (SPDX); the Debian package passes lintian with
# no error and no warning, states the license in its copyright file, ships a
# changelog in Debian's format, the docs and examples (a logrotate snippet
# among them), and systemd user unit templates whose instance is a
# repository's escaped path. Everything is written under the trash directory.
. "$(dirname "$0")/lib.sh"

: "${SLUICE_BUILD_DIR:?set SLUICE_BUILD_DIR to the build directory}"
command -v cpack >/dev/null 2>&1 || test_skip_all "cpack not installed (Debian package cmake)"
command -v dpkg-deb >/dev/null 2>&1 || test_skip_all "dpkg-deb not installed (Debian package dpkg)"

ROOT="$TRASH/root"

test_expect_success 'LICENSE is the Apache License 2.0; README names it by SPDX' '
	test_grep "Apache License" "$SLUICE_SOURCE_DIR/LICENSE" &&
	test_grep "Version 2.0, January 2004" "$SLUICE_SOURCE_DIR/LICENSE" &&
	test_grep "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" "$SLUICE_SOURCE_DIR/LICENSE" &&
	test_grep "^SPDX-License-Identifier: Apache-2.0" "$SLUICE_SOURCE_DIR/README.md"
'

test_expect_success 'cpack -G DEB builds the package' '
	{ cpack -G DEB -B "$TRASH/pkg" --config "$SLUICE_BUILD_DIR/CPackConfig.cmake" >cpack.out 2>&1 ||
		{ cat cpack.out >&2; false; }; } &&
	ls pkg/*.deb >debs &&
	test "$(wc -l <debs)" = 1 &&
	dpkg -x "$(cat debs)" "$ROOT"
'

test_expect_success 'lintian: no error and no warning' '
	test_skip_unless_tool lintian &&
	{ lintian --pedantic "$(cat debs)" >lintian.out 2>lintian.err || :; } &&
	cat lintian.out &&
	{ grep -v "running with root privileges" lintian.err >lintian.errs || :; } &&
	{ test ! -s lintian.errs || { cat lintian.errs >&2; false; }; } &&
	test_grep -v "^[EW]: " lintian.out
'

test_expect_success 'the copyright file states Apache-2.0 with its notice' '
	c="$ROOT/usr/share/doc/sluice/copyright" &&
	test_grep "^License: Apache-2.0$" "$c" &&
	test_grep "^Copyright: " "$c" &&
	test_grep "Licensed under the Apache License, Version 2.0" "$c" &&
	test_grep "/usr/share/common-licenses/Apache-2.0" "$c" &&
	test_grep -v "unspecified" "$c"
'

test_expect_success 'the changelog is in Debian format with the version; the docs are there' '
	d="$ROOT/usr/share/doc/sluice" &&
	version=$(sluice --version | cut -d" " -f2) &&
	gzip -dc "$d/changelog.gz" >changelog &&
	test_grep "^sluice ($version) unstable; urgency=medium$" changelog &&
	test_grep "^ -- .* <.*>  [A-Z][a-z][a-z], [0-9]* [A-Z][a-z][a-z] [0-9]* " changelog &&
	{ ! command -v dpkg-parsechangelog >/dev/null 2>&1 ||
		dpkg-parsechangelog -l changelog -S Version >v && test "$(cat v)" = "$version"; } &&
	gzip -dc "$d/CHANGELOG.md.gz" | cmp - "$SLUICE_SOURCE_DIR/CHANGELOG.md" &&
	gzip -dc "$d/README.md.gz" | cmp - "$SLUICE_SOURCE_DIR/README.md" &&
	gzip -dc "$d/config.md.gz" | cmp - "$SLUICE_SOURCE_DIR/docs/config.md" &&
	for f in README.md cron.example sluice.logrotate script-builder.sh; do
		cmp "$SLUICE_SOURCE_DIR/contrib/$f" "$d/examples/$f" || return 1
	done
'

test_expect_success 'the logrotate snippet is valid for logrotate' '
	test_skip_unless_tool logrotate &&
	mkdir -p lr/repo/.system &&
	echo tick >lr/repo/.system/tick.log &&
	sed "s|/path/to/repo|$TRASH/lr/repo|" "$ROOT/usr/share/doc/sluice/examples/sluice.logrotate" >lr/conf &&
	logrotate -d -s lr/state lr/conf >lr/out 2>&1 &&
	test_grep "tick.log" lr/out
'

test_expect_success 'the unit templates: one instance per repository, its path escaped' '
	u="$ROOT/usr/lib/systemd/user" &&
	test_grep "^ExecStart=/usr/bin/sluice -C %f tick$" "$u/sluice-tick@.service" &&
	test_grep "^ConditionPathIsDirectory=%f/.system$" "$u/sluice-tick@.service" &&
	test_grep "^OnCalendar=minutely$" "$u/sluice-tick@.timer" &&
	test_grep "^WantedBy=timers.target$" "$u/sluice-tick@.timer" &&
	test_skip_unless_tool systemd-escape &&
	test "$(systemd-escape --path /home/me/my-repo)" = "home-me-my\\x2drepo" &&
	test "$(systemd-escape --unescape --path "home-me-my\\x2drepo")" = /home/me/my-repo
'

test_expect_success 'systemd-analyze verify finds nothing wrong in an instance but the missing binary' '
	test_skip_unless_tool systemd-analyze &&
	mkdir -p units &&
	cp "$ROOT/usr/lib/systemd/user/sluice-tick@.service" "units/sluice-tick@home-me-repo.service" &&
	cp "$ROOT/usr/lib/systemd/user/sluice-tick@.timer" "units/sluice-tick@home-me-repo.timer" &&
	{ (cd units && systemd-analyze verify ./sluice-tick@home-me-repo.timer \
		./sluice-tick@home-me-repo.service) >verify.out 2>&1 || :; } &&
	{ grep -v "/usr/bin/sluice is not executable\|man sluice(1)\|RuntimeDirectory\|initialize manager" \
		verify.out >verify.rest || :; } &&
	{ test ! -s verify.rest || { cat verify.rest >&2; false; }; }
'

test_done
