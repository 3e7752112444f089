#!/bin/sh
# sluice serve keeps its token out of argv (issue 25): /proc/PID/cmdline is
# readable by every local user, so --token HEX is refused with what to use
# instead; the token comes from a file only its owner can read
# (--token-file) or from SLUICE_SERVE_TOKEN, which serve takes out of its
# environment. A running serve's cmdline holds no token either way.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool curl
[ -r /proc/self/cmdline ] || test_skip_all "no /proc/PID/cmdline here"

T=0123456789abcdef0123456789abcdef
# A serve that should refuse to start is bounded (timeout): one that starts
# instead would serve until killed.
# serve_up NAME [serve args...]: started in the background, its address awaited.
serve_up() {
	_n=$1
	shift
	"$SLUICE" -C repo serve "$@" >"$_n.out" 2>&1 &
	echo $! >"$_n.pid"
	_i=0
	while ! grep -q "http://" "$_n.out" && [ $_i -lt 6000 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	grep -o "http://[^ ]*" "$_n.out" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|' >"$_n.port"
	test -s "$_n.port" || { cat "$_n.out"; return 1; }
}
test_when_finished "kill \$(cat '$TRASH/env.pid' '$TRASH/file.pid' 2>/dev/null) 2>/dev/null"

test_expect_success 'setup: a repository' '
	sluice_repo repo
'

test_expect_success '--token is refused and says what to use instead' '
	test_expect_failure_code 2 timeout 120 "$SLUICE" -C repo serve --token $T 2>err &&
	test_grep "every local user" err &&
	test_grep "[-]-token-file PATH" err && test_grep "SLUICE_SERVE_TOKEN" err
'

test_expect_success 'a token file others can read, a link, a missing file, both ways: refused' '
	printf "%s\n" $T >tok.open && chmod 644 tok.open &&
	test_expect_failure_code 1 timeout 120 "$SLUICE" -C repo serve --token-file tok.open 2>err &&
	test_grep "chmod 600" err &&
	printf "%s\n" $T >tok && chmod 600 tok && ln -s tok tok.link &&
	test_expect_failure_code 1 timeout 120 "$SLUICE" -C repo serve --token-file tok.link 2>err &&
	test_grep "cannot read the token file" err &&
	test_expect_failure_code 1 timeout 120 "$SLUICE" -C repo serve --token-file nothing 2>err &&
	test_grep "cannot read the token file" err &&
	test_expect_failure_code 2 timeout 120 env SLUICE_SERVE_TOKEN=$T "$SLUICE" -C repo serve --token-file tok 2>err &&
	test_grep "not both" err &&
	test_expect_failure_code 1 timeout 120 env SLUICE_SERVE_TOKEN=xyz "$SLUICE" -C repo serve 2>err &&
	test_grep "hexadecimal" err
'

test_expect_success 'SLUICE_SERVE_TOKEN: served with it, in no cmdline and wiped from environ' '
	export SLUICE_SERVE_TOKEN=$T && serve_up env &&
	test_grep "token=$T" env.out &&
	tr "\0" " " </proc/$(cat env.pid)/cmdline >cmdline &&
	test_grep "serve" cmdline && test_grep -v "$T" cmdline &&
	tr "\0" "\n" </proc/$(cat env.pid)/environ >environ &&
	test_grep -v "$T" environ &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -u "sluice:$T" "http://127.0.0.1:$(cat env.port)/")" = 200
'

test_expect_success '--token-file: served with its token, which is in no cmdline' '
	serve_up file --token-file tok &&
	test_grep "token=$T" file.out &&
	tr "\0" " " </proc/$(cat file.pid)/cmdline >cmdline &&
	test_grep "[-]-token-file tok" cmdline && test_grep -v "$T" cmdline &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -u "sluice:$T" "http://127.0.0.1:$(cat file.port)/")" = 200
'

test_done
