#!/bin/sh
# Packaging: `cmake --install` puts the binary, the man page, the bash
# completion, the systemd user unit templates and the docs with their
# examples under the prefix; `cpack -G DEB` (the CPack configuration of the
# build directory) makes sluice_<version>_<arch>.deb with its dependencies and
# exactly those files, and the package, unpacked into a staging root, works:
# the staged sluice runs, `man -l` shows its page, its completion completes.
# Everything is written under this script's trash directory (the build
# directory gets only cmake's install_manifest.txt).
. "$(dirname "$0")/lib.sh"

: "${SLUICE_BUILD_DIR:?set SLUICE_BUILD_DIR to the build directory}"
command -v cpack >/dev/null 2>&1 || test_skip_all "cpack not installed (Debian package cmake)"
command -v dpkg-deb >/dev/null 2>&1 || test_skip_all "dpkg-deb not installed (Debian package dpkg)"

VERSION=$(sed -n 's/^project(sluice VERSION \([0-9][0-9.]*\) .*/\1/p' "$SLUICE_SOURCE_DIR/CMakeLists.txt")
ARCH=$(dpkg-deb --print-architecture 2>/dev/null || dpkg --print-architecture)
DEB="$TRASH/pkg/sluice_${VERSION}_${ARCH}.deb"
ROOT="$TRASH/root"
COMPLETION="$SLUICE_SOURCE_DIR/contrib/sluice.bash-completion"

# complete ROOT WORDS...: what the completion installed under ROOT offers
# for the last word, as bash's programmable completion would call it.
cat >"$TRASH/complete.bash" <<'EOF'
root=$1
shift
. "$root/usr/share/bash-completion/completions/sluice" || exit 1
complete -p sluice | grep -q -- '-F _sluice' || { echo "no 'complete -F _sluice sluice'" >&2; exit 1; }
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
_sluice
printf '%s\n' "${COMPREPLY[@]}"
EOF

test_expect_success 'the version is the project version of CMakeLists.txt' '
	test -n "$VERSION" &&
	sluice --version >out &&
	echo "sluice $VERSION" >want &&
	test_cmp want out
'

test_expect_success 'cmake --install puts the binary, the man page and the completion under the prefix' '
	{ cmake --install "$SLUICE_BUILD_DIR" --prefix "$TRASH/prefix" >install.out 2>&1 ||
		{ cat install.out >&2; false; }; } &&
	test -x prefix/bin/sluice &&
	cmp "$SLUICE_SOURCE_DIR/docs/sluice.1" prefix/share/man/man1/sluice.1 &&
	cmp "$COMPLETION" prefix/share/bash-completion/completions/sluice &&
	(cd prefix && find . -type f ! -path "./share/doc/*" | sort) >files &&
	printf "%s\n" ./bin/sluice "./lib/systemd/user/sluice-tick@.service" \
		"./lib/systemd/user/sluice-tick@.timer" ./share/bash-completion/completions/sluice \
		./share/man/man1/sluice.1 >want &&
	test_cmp want files &&
	cmp "$SLUICE_SOURCE_DIR/README.md" prefix/share/doc/sluice/README.md &&
	cmp "$SLUICE_SOURCE_DIR/contrib/cron.example" prefix/share/doc/sluice/examples/cron.example &&
	prefix/bin/sluice --version >out &&
	test_grep "^sluice $VERSION\$" out
'

test_expect_success 'cpack -G DEB builds sluice_<version>_<arch>.deb into a folder of its own' '
	{ test -f "$SLUICE_BUILD_DIR/CPackConfig.cmake" ||
		{ echo "no CPackConfig.cmake in $SLUICE_BUILD_DIR" >&2; false; }; } &&
	{ cpack -G DEB -B "$TRASH/pkg" --config "$SLUICE_BUILD_DIR/CPackConfig.cmake" >cpack.out 2>&1 ||
		{ cat cpack.out >&2; false; }; } &&
	{ test -f "$DEB" ||
		{ echo "no $DEB:" >&2; ls -l pkg >&2; cat cpack.out >&2; false; }; } &&
	ls pkg/*.deb >debs &&
	test "$(wc -l <debs)" = 1
'

test_expect_success 'dpkg-deb -I: name, version, architecture, maintainer, section, description' '
	dpkg-deb -I "$DEB" >info &&
	test_grep "^ Package: sluice$" info &&
	test_grep "^ Version: $VERSION$" info &&
	test_grep "^ Architecture: $ARCH$" info &&
	test_grep "^ Maintainer: .*<.*@.*>$" info &&
	test_grep "^ Section: devel$" info &&
	test_grep "^ Priority: optional$" info &&
	test_grep "^ Description: .*merge" info &&
	test_grep "^ Installed-Size: [0-9]" info
'

test_expect_success 'dpkg-deb -I: Depends names git and the package of every library sluice links' '
	dpkg-deb -f "$DEB" Depends | tr "," "\n" | sed "s/^ *//; s/ *(.*//" | sort -u >depends &&
	test_grep "^git$" depends &&
	for lib in "libgit2-[0-9.]*" "libsqlite3-[0-9]" "libcurl[0-9]" "libyaml-0-[0-9]" \
		"libjansson[0-9]" "libssl[0-9]" "libc6"; do
		grep -q "^$lib$" depends ||
			{ echo "Depends lacks $lib:" >&2; cat depends >&2; return 1; }
	done &&
	objdump -p "$SLUICE" | awk "\$1 == \"NEEDED\" { print \$2 }" >needed &&
	test "$(wc -l <needed)" -ge 6 &&
	while read -r so; do
		dpkg -S "*/$so" 2>/dev/null | sed "s/[:,].*//" | sort -u >owners &&
		test -s owners ||
			{ echo "no Debian package holds $so" >&2; return 1; }
		grep -qxF -f owners depends ||
			{ echo "Depends lacks the package of $so ($(cat owners)):" >&2; cat depends >&2; return 1; }
	done <needed
'

test_expect_success 'dpkg-deb -c: the binary, the man page, the completion, the units, the docs, nothing else' '
	dpkg-deb -c "$DEB" >contents &&
	awk "{ print \$6 }" contents | sort >paths &&
	sort >want <<-EOF &&
	./usr/
	./usr/bin/
	./usr/bin/sluice
	./usr/lib/
	./usr/lib/systemd/
	./usr/lib/systemd/user/
	./usr/lib/systemd/user/sluice-tick@.service
	./usr/lib/systemd/user/sluice-tick@.timer
	./usr/share/
	./usr/share/bash-completion/
	./usr/share/bash-completion/completions/
	./usr/share/bash-completion/completions/sluice
	./usr/share/doc/
	./usr/share/doc/sluice/
	./usr/share/doc/sluice/ARCHITECTURE.md.gz
	./usr/share/doc/sluice/CHANGELOG.md.gz
	./usr/share/doc/sluice/README.md.gz
	./usr/share/doc/sluice/RELIABILITY.md.gz
	./usr/share/doc/sluice/agents.md.gz
	./usr/share/doc/sluice/audit.md.gz
	./usr/share/doc/sluice/builders.md.gz
	./usr/share/doc/sluice/changelog.gz
	./usr/share/doc/sluice/config.md.gz
	./usr/share/doc/sluice/copyright
	./usr/share/doc/sluice/examples/
	./usr/share/doc/sluice/examples/README.md
	./usr/share/doc/sluice/examples/cron.example
	./usr/share/doc/sluice/examples/script-builder.sh
	./usr/share/doc/sluice/examples/sluice.logrotate
	./usr/share/doc/sluice/reviewer.md.gz
	./usr/share/doc/sluice/scale-out.md.gz
	./usr/share/doc/sluice/serve.md.gz
	./usr/share/doc/sluice/work-orders.md.gz
	./usr/share/man/
	./usr/share/man/man1/
	./usr/share/man/man1/sluice.1.gz
	EOF
	test_cmp want paths &&
	awk "\$2 != \"root/root\" { print; bad = 1 } END { exit bad }" contents &&
	test_grep "^-rwxr-xr-x .* ./usr/bin/sluice$" contents &&
	test "$(grep -c "^-rw-r--r-- " contents)" = 22 &&
	test "$(grep -c "^drwxr-xr-x " contents)" = 13
'

test_expect_success 'dpkg -x stages the package; the staged sluice runs --help, --version and init' '
	dpkg -x "$DEB" "$ROOT" &&
	"$ROOT/usr/bin/sluice" --help >out &&
	test_grep "^usage: sluice" out &&
	test_grep "^commands:" out &&
	"$ROOT/usr/bin/sluice" --version >out &&
	test_grep "^sluice $VERSION\$" out &&
	objdump -p "$ROOT/usr/bin/sluice" >dyn &&
	test_grep -v "RPATH\|RUNPATH" dyn &&
	test_repo repo &&
	{ (cd repo && "$ROOT/usr/bin/sluice" init >../init.out 2>&1) || { cat init.out >&2; false; }; } &&
	test -f repo/.system/config.yaml &&
	{ "$ROOT/usr/bin/sluice" -C repo check >check.out 2>&1 || { cat check.out >&2; false; }; }
'

test_expect_success 'the staged man page is docs/sluice.1 gzipped, and man -l shows it' '
	gzip -t "$ROOT/usr/share/man/man1/sluice.1.gz" &&
	gzip -dc "$ROOT/usr/share/man/man1/sluice.1.gz" | cmp - "$SLUICE_SOURCE_DIR/docs/sluice.1" &&
	{ LC_ALL=C MANPAGER=cat MANWIDTH=80 man -P cat -l "$ROOT/usr/share/man/man1/sluice.1.gz" >man.out 2>man.err ||
		{ cat man.err >&2; false; }; } &&
	test_grep "^SLUICE(1)" man.out &&
	test_grep "^NAME" man.out &&
	test_grep "sluice - " man.out &&
	test_grep "bash-completion/completions/sluice" man.out
'

test_expect_success 'the staged copyright file is in the Debian format' '
	test_grep "^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" \
		"$ROOT/usr/share/doc/sluice/copyright" &&
	test_grep "^Upstream-Name: sluice$" "$ROOT/usr/share/doc/sluice/copyright" &&
	test_grep "^Files: \*$" "$ROOT/usr/share/doc/sluice/copyright" &&
	test_grep "^License: Apache-2.0$" "$ROOT/usr/share/doc/sluice/copyright"
'

test_expect_success 'the staged completion is contrib'"'"'s, and completes "sluice ti" to tick' '
	cmp "$COMPLETION" "$ROOT/usr/share/bash-completion/completions/sluice" &&
	PATH="$ROOT/usr/bin:$PATH" bash complete.bash "$ROOT" sluice ti >offered &&
	echo tick >want &&
	test_cmp want offered &&
	PATH="$ROOT/usr/bin:$PATH" bash complete.bash "$ROOT" sluice merge-preview --l >offered &&
	echo --libgit2 >want &&
	test_cmp want offered
'

test_done
