#!/bin/sh
# libcurl is loaded by the first HTTP request (reviewer/http.c), not linked:
# a sluice process that talks no HTTP (every run's worker with a command
# reviewer, the tick, the other commands) never maps it. Shown with a
# library named libcurl.so.4 that is not libcurl, first on the search path:
# nothing needs it until an HTTP reviewer is asked, which then fails closed
# with a message that names it.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool cc ldd

test_expect_success 'the binary does not link libcurl' '
	ldd "$SLUICE" >libs &&
	test_grep libgit2 libs &&
	test_grep -v libcurl libs
'

test_expect_success 'setup: a libcurl.so.4 that is not libcurl' '
	mkdir fake &&
	echo "int not_curl(void) { return 0; }" >fake/c.c &&
	cc -shared -fPIC -Wl,-soname,libcurl.so.4 -o fake/libcurl.so.4 fake/c.c &&
	echo "echo c >c.txt" >"$BUILDERS/C1.sh" &&
	echo "echo h >h.txt" >"$BUILDERS/H1.sh" &&
	sluice_repo repo "$(approve_reviewer_config)"
'

test_expect_success 'a command reviewer: the run merges, libcurl is never loaded' '
	wo repo C1 &&
	LD_LIBRARY_PATH="$PWD/fake" sluice -C repo tick >out 2>err &&
	test "$(state_of repo $(run_of repo C1))" = merged
'

test_expect_success 'an HTTP reviewer: fails closed, the reason names the library' '
	sed -i "/^reviewer:/,\$d" repo/.system/config.yaml &&
	printf "%s\n" "reviewer:" "  mode: http" "  url: http://127.0.0.1:1/review" \
		>>repo/.system/config.yaml &&
	sluice -C repo check >/dev/null &&
	wo repo H1 &&
	LD_LIBRARY_PATH="$PWD/fake" sluice -C repo tick >out 2>err &&
	run=$(run_of repo H1) &&
	test "$(state_of repo $run)" = reviewing &&
	sluice -C repo runs >runs &&
	test_grep "libcurl.so.4 has no curl_global_init" runs &&
	sluice -C repo tick >out 2>err &&
	test "$(state_of repo $run)" = reviewing
'

test_done
