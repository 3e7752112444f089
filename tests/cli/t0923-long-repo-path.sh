#!/bin/sh
# A repository at a path too long for SQLite's database file (504 bytes for
# .system/sluice.db, 512 with "-journal"): `sluice init` refuses it before
# creating anything, with the reason and what to do, and any other command
# says the same; at the longest path that works, init and a tick work. The
# refusal used to come after .system/ was half made, as "unable to open
# database file" after the whole path, which at 1000 bytes cut the message
# before its reason.
. "$(dirname "$0")/lib.sh"

# mkrepo DIR LEN: a repository whose .system/sluice.db path is LEN bytes
mkrepo() {
	_p=$TRASH/$1
	_n=$(($2 - ${#_p} - 18 - 1))
	while [ "$_n" -gt 200 ]; do
		_p=$_p/$(printf "%0150d" 0) && _n=$((_n - 151))
	done &&
	_p=$_p/$(printf "%0${_n}d" 0) &&
	test_repo "$_p" &&
	test "$(printf "%s/.system/sluice.db" "$_p" | wc -c)" = "$2" &&
	echo "$_p"
}

test_expect_success 'a database path of 505 bytes: refused, nothing made' '
	r=$(mkrepo long 505) &&
	test_expect_failure_code 1 sluice -C "$r" init 2>err &&
	test_grep "path is too long.* 505 bytes, and SQLite takes at most 504; move the repository" err &&
	test ! -e "$r/.system" &&
	test_expect_failure_code 1 sluice -C "$r" queue 2>err
'

test_expect_success 'a database path of 1500 bytes: the message keeps its reason' '
	r=$(mkrepo longer 1500) &&
	test_expect_failure_code 1 sluice -C "$r" init 2>err &&
	test_grep "path is too long.* 1500 bytes" err &&
	test ! -e "$r/.system"
'

test_expect_success 'a database path of 504 bytes: init and a tick work' '
	r=$(mkrepo ok 504) &&
	sluice -C "$r" init >out &&
	test -f "$r/.system/sluice.db" &&
	sluice -C "$r" tick >out &&
	test_grep "^tick: 0 started" out
'

test_done
