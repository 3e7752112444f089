# A small test library for sluice's CLI tests, in the manner of git's t/.
#
#   . "$(dirname "$0")/lib.sh"
#   test_expect_success 'title' '
#       commands && more commands
#   '
#   test_done
#
# Each test script runs in its own trash directory under $TMPDIR, removed at
# the end unless SLUICE_TEST_KEEP=1. $SLUICE is the binary under test,
# $SLUICE_SOURCE_DIR the checkout (fixtures/ lives there).
#
# As in git, the commands of a body are joined by && (a body runs without
# set -e), and a body whose top-level chain is broken fails without running
# ("broken &&-chain in test N"); a loop ends each pass with `|| return 1`.
# A missing tool skips (test_skip_unless_tool): the script exits 77, which
# ctest shows as skipped. See tests/README.md.
set -u

: "${SLUICE:?set SLUICE to the sluice binary}"
: "${SLUICE_SOURCE_DIR:?set SLUICE_SOURCE_DIR to the source checkout}"
FIXTURES="$SLUICE_SOURCE_DIR/fixtures"
TEST_NAME=$(basename "$0" .sh)
TRASH=$(mktemp -d "${TMPDIR:-/tmp}/sluice-$TEST_NAME.XXXXXX")
TRASH=$(cd "$TRASH" && pwd -P)
HOME="$TRASH/home"
mkdir -p "$HOME"
export HOME
export GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME='Test Author' GIT_AUTHOR_EMAIL='author@example.com'
export GIT_COMMITTER_NAME='Test Committer' GIT_COMMITTER_EMAIL='committer@example.com'
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
unset GIT_DIR GIT_WORK_TREE
git config --global init.defaultBranch main
git config --global user.name 'Test User'
git config --global user.email 'user@example.com'
git config --global protocol.file.allow always

test_count=0
test_failed=0
test_skipped=0
test_known=0
test_cleanup_cmds=""

sluice() { "$SLUICE" "$@"; }

# Undo CODE (shell code) even when a test fails: stop a background server,
# restore a setting. As in git, inside a body it runs when that test ends
# (passed, failed or skipped), in the test's own shell, so that a pid or a
# variable of the body still means what it did; outside a body it runs when
# the script ends. The newest runs first. Its status does not change the
# test's: a server that already stopped is no failure.
test_when_finished() { # CODE
	if [ -n "${_test_in_body_:-}" ]; then
		_test_body_cleanup_="$1
$_test_body_cleanup_"
	else
		test_cleanup_cmds="$1
$test_cleanup_cmds"
	fi
}

# The EXIT trap of a test's shell: its test_when_finished code, where the
# body ended (as in git), keeping the test's status.
test_body_finish_() {
	eval "${_test_body_cleanup_:-}" || :
}

# A body runs in a function, so that `return` ends it (as in git).
test_eval_() { # BODY
	_test_body_=$1
	shift
	eval "$_test_body_"
}

# The &&-chain lint of git's test_run_: with "(exit 117) &&" in front, a body
# whose top-level commands are all joined by && runs nothing and ends with
# 117; a command not joined (a missing &&, a stray ;, a here-document that
# runs away with the rest) runs and changes the status. Run in a subshell
# with its output kept, so that nothing it starts can reach this shell.
test_chain_lint_() { # BODY
	(_test_in_body_=1 && cd "$TRASH" && test_eval_ "(exit 117) && $1

echo OK-\$?") </dev/null >"$TRASH/.lint.$test_count" 2>&1
	_lint=$(tail -n 1 "$TRASH/.lint.$test_count")
	rm -f "$TRASH/.lint.$test_count" "$TRASH/.skip.$test_count"
	[ "$_lint" = OK-117 ]
}

test_run_() { # success|failure TITLE BODY
	test_count=$((test_count + 1))
	_title=$2
	_body=$3
	if [ "${SLUICE_TEST_CHAIN_LINT:-1}" != 0 ] && ! test_chain_lint_ "$_body"; then
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $_title (broken &&-chain in test $test_count)"
		echo "#	broken &&-chain in test $test_count: join its commands with &&, end each pass"
		echo "#	of a loop with || return 1 (tests/README.md). The test was not run; the"
		echo "#	commands after the break ran once, in the check. The body:"
		printf '%s\n' "$_body" | sed 's/^/#	| /'
		return
	fi
	(_test_in_body_=1 && _test_body_cleanup_= && trap test_body_finish_ EXIT &&
		cd "$TRASH" && test_eval_ "$_body") </dev/null >"$TRASH/.out.$test_count" 2>&1
	_rc=$?
	if [ -f "$TRASH/.skip.$test_count" ] && { [ $_rc -eq 0 ] || [ $_rc -eq 77 ]; }; then
		test_skipped=$((test_skipped + 1))
		echo "ok $test_count - $_title # skipped: $(cat "$TRASH/.skip.$test_count")"
	elif [ "$1" = failure ]; then
		test_known=$((test_known + 1))
		if [ $_rc -eq 0 ]; then
			echo "ok $test_count - $_title # TODO known breakage vanished: make it test_expect_success"
		else
			echo "not ok $test_count - $_title # TODO known breakage (exit $_rc)"
			sed 's/^/#	/' "$TRASH/.out.$test_count" | tail -n 20
		fi
	elif [ $_rc -eq 0 ]; then
		echo "ok $test_count - $_title"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $_title (exit $_rc)"
		sed 's/^/#	/' "$TRASH/.out.$test_count" | tail -n 60
	fi
}

test_expect_success() { # TITLE BODY
	test_run_ success "$1" "$2"
}

# A known bug of sluice, written as the test that will pass once it is fixed:
# shown as "not ok ... # TODO known breakage", it does not fail the script.
test_expect_failure() { # TITLE BODY
	test_run_ failure "$1" "$2"
}

# Skip because REASON: inside a body the rest of this test, outside of one
# the whole script. A script with a skipped test exits 77 (unless one failed).
test_skip() { # REASON
	if [ -n "${_test_in_body_:-}" ]; then
		printf '%s\n' "$1" >"$TRASH/.skip.$test_count"
		echo "skipped: $1" >&2
		exit 77
	fi
	test_skip_all "$1"
}

# Skip (as test_skip) unless each TOOL is a command here.
test_skip_unless_tool() { # TOOL...
	for _tool in "$@"; do
		command -v "$_tool" >/dev/null 2>&1 || test_skip "$_tool not installed"
	done
}

test_expect_failure_code() { # CODE command...: the command must exit with CODE
	_want=$1
	shift
	_got=0
	"$@" || _got=$?
	if [ "$_got" -ne "$_want" ]; then
		echo "expected exit $_want, got $_got: $*" >&2
		return 1
	fi
}

test_grep() { # [-v] PATTERN FILE: grep with the file shown on failure
	if [ "$1" = "-v" ]; then
		shift
		if grep -q -e "$1" "$2"; then
			echo "did not expect '$1' in $2:" >&2
			cat "$2" >&2
			return 1
		fi
		return 0
	fi
	if ! grep -q -e "$1" "$2"; then
		echo "expected '$1' in $2:" >&2
		cat "$2" >&2
		return 1
	fi
}

test_cmp() { # EXPECTED ACTUAL
	diff -u "$1" "$2"
}

# A fresh repository with one commit on main.
test_repo() { # DIR
	git init -q "$1"
	(cd "$1" && echo "# project" >README.md && git add README.md &&
		git commit -q -m 'initial commit')
}

# A repository set up for sluice whose builder runs "$BUILDERS/<WO-ID>.sh"
# in the worktree (and "$BUILDERS/resolve.sh" in resolve mode). The default
# resolver keeps both sides of every conflict (drops the marker lines).
BUILDERS="$TRASH/builders"
mkdir -p "$BUILDERS"
sluice_repo() { # DIR [extra config lines...]
	_dir=$1
	shift
	test_repo "$_dir" || return 1
	mkdir -p "$BUILDERS"
	[ -f "$BUILDERS/resolve.sh" ] || cat >"$BUILDERS/resolve.sh" <<-'EOS'
	git diff --name-only --diff-filter=U | while read -r f; do
		sed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' "$f"
	done
	echo "kept both sides of every conflict" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	(cd "$_dir" && "$SLUICE" init >/dev/null) || return 1
	cat >>"$_dir/.system/config.yaml" <<-EOC || return 1
	builder:
	  command: [sh, -c, 'if [ "\$SLUICE_MODE" = resolve ]; then exec sh "$BUILDERS/resolve.sh"; fi; exec sh "$BUILDERS/\$SLUICE_WORK_ORDER_ID.sh"']
	EOC
	for _line in "$@"; do
		printf '%s\n' "$_line" >>"$_dir/.system/config.yaml" || return 1
	done
}

# Builder scripts "$BUILDERS/A.sh" and "$BUILDERS/B.sh" that each wait (at
# most 300 s, a guard against a hang) until the other one started, then run EDIT (a command, with %s
# standing for the work-order id): the two runs of one `tick --jobs 2` are
# built on the same base, so a second merge of the same lines conflicts
# however loaded the machine is.
meeting_builders() { # A B EDIT
	for _me in "$1" "$2"; do
		if [ "$_me" = "$1" ]; then _other=$2; else _other=$1; fi
		# shellcheck disable=SC2059
		_edit=$(printf "$3" "$_me")
		_meet=$(wait_until_sh "[ -f \"\$SLUICE_RUN_DIR/../started-$_other\" ]")
		cat >"$BUILDERS/$_me.sh" <<-EOS || return 1
		: >"\$SLUICE_RUN_DIR/../started-$_me"
		$_meet
		$_edit
		EOS
	done
}

# Config lines for a command reviewer that approves everything it is shown.
APPROVE_REVIEWER="$BUILDERS/approve-reviewer.sh"
printf '%s\n' 'cat >/dev/null' 'echo "{\"verdict\": \"approve\", \"reviewer\": \"approve-bot\"}"' >"$APPROVE_REVIEWER"
approve_reviewer_config() {
	printf '%s\n' "reviewer:" "  mode: command" "  command: [sh, $APPROVE_REVIEWER]"
}

# The test cluster (tests/slurm/cluster.sh) of this test: $CLUSTER, its folder $C
# ($TRASH/slurm), stopped at the end; skips (77) without Slurm, munge or root.
# With "start" it is started here and SLURM_CONF exported.
slurm_cluster() { # [start]
	CLUSTER="$SLUICE_SOURCE_DIR/tests/slurm/cluster.sh"
	C="$TRASH/slurm"
	test_skip_unless_tool munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo python3
	[ "$(id -u)" = 0 ] || test_skip "not root (the test cluster's daemons run as root: SlurmUser=root)"
	test_when_finished "sh '$CLUSTER' stop '$C' >/dev/null 2>&1"
	[ "${1:-}" = start ] || return 0
	sh "$CLUSTER" start "$C" >"$TRASH/cluster.out" 2>&1 || { cat "$TRASH/cluster.out"; exit 1; }
	eval "$(sh "$CLUSTER" env "$C")"
}

# sluice_repo DIR whose builders and gates run as jobs of that cluster, with its own
# bare remote $TRASH/DIR.remote.git (executor.kind slurm, poll 1s).
slurm_repo_base() { # DIR [extra config lines...]
	_srd=$1
	shift
	git init -q --bare "$TRASH/$_srd.remote.git" &&
	sluice_repo "$_srd" "$@" &&
	printf '%s\n' "executor:" "  kind: slurm" "  remote: $TRASH/$_srd.remote.git" "  poll: 1s" \
		>>"$_srd/.system/config.yaml"
}

# Write a work order: wo DIR ID [front-matter lines...]; the builder script
# for it is "$BUILDERS/ID.sh" (write it yourself).
wo() {
	_dir=$1
	_id=$2
	shift 2
	mkdir -p "$_dir/work_orders"
	{
		echo "---"
		echo "id: $_id"
		echo "title: Work order $_id"
		for _line in "$@"; do echo "$_line"; done
		echo "---"
		echo "Do the work of $_id."
	} >"$_dir/work_orders/$_id.md"
}

# The id of the newest run of a work order.
run_of() { # DIR WO-ID
	"$SLUICE" -C "$1" runs --wo "$2" | grep -E "^[0-9]{8}-[0-9]{6}-" | head -n 1 | cut -d' ' -f1
}

# The state of a run.
state_of() { # DIR RUN
	"$SLUICE" -C "$1" status --json "$2" | sed -n 's/^ *"state": "\(.*\)",\{0,1\}$/\1/p' | head -n 1
}

# Start the loopback reviewer; sets REVIEWER_URL and REVIEWER_DIR. It ends
# with the script (test_when_finished), or after an hour if it is left: not
# 10 minutes, which a Slurm test on a loaded machine outlasts (t1081).
start_reviewer() { # SCRIPT-FILE
	[ -x "${FAKE_REVIEWER:-}" ] || test_skip "the fake reviewer is not built (libmicrohttpd-dev not installed)"
	REVIEWER_DIR="$TRASH/reviewer.$$"
	mkdir -p "$REVIEWER_DIR/requests"
	"$FAKE_REVIEWER" --port 0 --port-file "$REVIEWER_DIR/port" --record "$REVIEWER_DIR/requests" \
		--script "$1" --max-seconds 3600 >"$REVIEWER_DIR/log" 2>&1 &
	REVIEWER_PID=$!
	test_when_finished "kill $REVIEWER_PID 2>/dev/null"
	wait_until "[ -s '$REVIEWER_DIR/port' ] || ! kill -0 $REVIEWER_PID 2>/dev/null" &&
	[ -s "$REVIEWER_DIR/port" ] || { echo "fake reviewer did not start:" >&2; cat "$REVIEWER_DIR/log" >&2; return 1; }
	REVIEWER_URL="http://127.0.0.1:$(cat "$REVIEWER_DIR/port")/review"
}

# A digest of a checkout's user-visible state: HEAD, index, work tree and untracked files.
checkout_digest() { # DIR
	(cd "$1" && {
		git status --porcelain=v2 -z --untracked-files=all --ignored=no
		git diff --binary
		git diff --cached --binary
		git ls-files -o --exclude-standard -z | xargs -0 -r sha256sum
	} | sha256sum | cut -d' ' -f1)
}

# Crash tests at named fault points (src/core/fault.h; SLUICE_FAULT).
# The names of the table in fault.h, one a line.
fault_points() {
	sed -n 's/^ \*   \([a-z_]*\.[a-z_]*\)  *[a-z].*/\1/p' "$SLUICE_SOURCE_DIR/src/core/fault.h"
}

# Run sluice with SLUICE_FAULT=POINT; fails unless the point fired (its log
# line is in OUT). FAULT_RC is sluice's exit status: 137 when the process
# killed is the one started here, not one of its workers. With FAULT_GROUP=1
# sluice runs in a session of its own and the point kills its whole process
# group (SLUICE_FAULT_GROUP): the tick and every worker at once.
fault_fire() { # POINT OUT sluice-args...
	_fp=$1
	_fo=$2
	shift 2
	FAULT_RC=0
	if [ "${FAULT_GROUP:-0}" = 1 ]; then
		SLUICE_FAULT=$_fp SLUICE_FAULT_GROUP=1 setsid -w "$SLUICE" "$@" >"$_fo" 2>&1 ||
			FAULT_RC=$?
	else
		SLUICE_FAULT=$_fp "$SLUICE" "$@" >"$_fo" 2>&1 || FAULT_RC=$?
	fi
	grep -q "fault point '${_fp%%:*}' reached" "$_fo" && return 0
	echo "fault point '$_fp' did not fire (exit $FAULT_RC):" >&2
	cat "$_fo" >&2
	return 1
}

# Ticks, as cron runs them, until every run of DIR is final or waits for a
# person and no merge journal is left (a killed merge's locks age out after
# 10 s): a second apart after the first three, at most 100 (a guard against
# a hang: a loaded machine needs no more ticks, only more time).
settle() { # DIR
	_sn=0
	while [ $_sn -lt 100 ]; do
		"$SLUICE" -C "$1" tick >>"$TRASH/settle.out" 2>&1
		_sn=$((_sn + 1))
		if [ ! -e "$1/.system/merge.journal" ] &&
			! "$SLUICE" -C "$1" runs | awk '{ print $3 }' |
				grep -qxE 'queued|preparing|building|gating|reviewing|approved|merging|resolving|interrupted'; then
			return 0
		fi
		[ $_sn -lt 3 ] || sleep 1
	done
	echo "not settled after $_sn ticks:" >&2
	"$SLUICE" -C "$1" runs >&2
	tail -n 40 "$TRASH/settle.out" >&2
	return 1
}

# A repository for the fault tests: main checked out with an uncommitted
# edit of the tracked notes.txt (its bytes kept in $TRASH/notes.orig), the
# builders of $BUILDERS, worktree.setup, two gates, queue.jobs 2, and the
# config lines given (a reviewer: the default is manual).
fault_repo() { # DIR [config lines...]
	sluice_repo "$@" "queue:" "  jobs: 2" "worktree:" "  setup: [\"true\"]" "gates:" \
		"  g1: [\"true\"]" "  g2: [\"true\"]" || return 1
	seq 1 20 >"$1/lines.txt"
	echo "the user's notes" >"$1/notes.txt"
	git -C "$1" add lines.txt notes.txt && git -C "$1" commit -q -m "lines and notes" || return 1
	echo "an uncommitted line" >>"$1/notes.txt"
	cp "$1/notes.txt" "$TRASH/notes.orig"
}

# Cases that start from the same repository build it once (it may have run
# ticks: worktrees, a pool, runs) and each takes a copy. `repo_template DIR
# T` keeps the repository DIR (a folder of $TRASH) as the template T, moving
# it; `repo_copy T DIR` makes DIR again as a copy of T. The copy is at the
# very path the template was built at, so that every absolute path in it (a
# worktree's .git file and gitdir, a pool slot's entry, a run's records)
# names the copy, as in a repository built there. Its files are new inodes:
# record an inode only after the copy.
repo_template() { # DIR T
	[ -d "$TRASH/${1:?}" ] || { echo "no repository $1 to keep as a template" >&2; return 1; }
	rm -rf "$TRASH/${2:?}" "$TRASH/$2.at" &&
	mv "$TRASH/$1" "$TRASH/$2" && printf '%s\n' "$1" >"$TRASH/$2.at"
}

repo_copy() { # T DIR
	[ "$(cat "$TRASH/$1.at" 2>/dev/null)" = "$2" ] ||
		{ echo "template $1 was not built as $2 (its paths would name another folder)" >&2; return 1; }
	rm -rf "$TRASH/${2:?}" && cp -a "$TRASH/$1" "$TRASH/$2"
}

# No worktree but the main checkout and the slots of the worktree pool
# (.system/pool, at most POOL_MAX of them, default 2), each whole: listed by
# git, no intent of a move left, nothing for `git worktree prune` to prune.
pool_check() { # DIR
	git -C "$1" worktree list --porcelain | sed -n 's/^worktree //p' | sed 1d >"$TRASH/wts"
	if grep -v "/\.system/pool/_pool-[0-9-]*\$" "$TRASH/wts" >&2; then
		echo "stray worktrees (above)" >&2
		return 1
	fi
	[ "$(wc -l <"$TRASH/wts")" -le "${POOL_MAX:-2}" ] ||
		{ echo "more than ${POOL_MAX:-2} worktrees in the pool:" >&2; cat "$TRASH/wts" >&2; return 1; }
	while read -r _pw; do
		[ -d "$_pw" ] || { echo "pooled worktree $_pw is gone" >&2; return 1; }
	done <"$TRASH/wts"
	[ -z "$(ls "$1/.system/pool" 2>/dev/null | grep -v '^_pool-[0-9-]*$')" ] ||
		{ echo "left in the pool:" >&2; ls -la "$1/.system/pool" >&2; return 1; }
	[ -z "$(git -C "$1" worktree prune -n -v 2>&1)" ] ||
		{ echo "git worktree prune would prune:" >&2; git -C "$1" worktree prune -n -v >&2; return 1; }
}

# kill_ticks DIR SEED KILLS MAX_MS WANT [TICK-OPTIONS]: start `sluice -C DIR
# tick TICK-OPTIONS` in a session of its own and SIGKILL the whole session after a delay below
# MAX_MS ms drawn from a sequence seeded with SEED, at most KILLS times or
# until WANT runs are merged. Prints "# N ticks, K killed, M of WANT merged
# by then" (for fd 3: the test's log).
kill_ticks() {
	_kn=0 _kk=0 _kr=$2
	while [ $_kn -lt "$3" ]; do
		_kn=$((_kn + 1))
		_kr=$(( (_kr * 1103515245 + 12345) % 2147483648 ))
		rm -f tick.sid
		setsid sh -c "echo \$\$ >tick.sid; exec \"$SLUICE\" -C $1 tick ${6:-} >>ticks.out 2>&1" &
		wait_until "[ -s tick.sid ]" || return 1
		sleep "$(awk -v ms=$((_kr % $4)) "BEGIN { printf \"%.3f\", ms / 1000 }")"
		if pkill -KILL -s "$(cat tick.sid)" 2>/dev/null; then _kk=$((_kk + 1)); fi
		wait
		if [ "$("$SLUICE" -C "$1" runs --state merged | wc -l)" = "$5" ]; then break; fi
	done
	echo "# $_kn ticks, $_kk killed, $("$SLUICE" -C "$1" runs --state merged | wc -l) of $5 merged by then"
}

# The promises after a crash in a fault_repo: each of the work orders MERGED
# landed exactly once on the first-parent line and is done, each of FAILED
# is failed, the user's uncommitted edit is there byte for byte and nothing
# else differs from HEAD, `sluice audit` holds, and no worktree, run/
# branch, lock or journal is left behind.
fault_check() { # DIR "MERGED..." "FAILED..."
	_fd=$1
	_fm=0
	"$SLUICE" -C "$_fd" queue >"$TRASH/queue.now" || return 1
	for _w in $2; do
		_fm=$((_fm + 1))
		_fc=$(git -C "$_fd" log --first-parent --merges --format=%B main | grep -c "^Work-Order: $_w\$")
		[ "$_fc" = 1 ] || { echo "$_w landed $_fc times" >&2; return 1; }
		grep -q "^done  *[0-9]*  *$_w " "$TRASH/queue.now" ||
			{ echo "$_w is not done" >&2; cat "$TRASH/queue.now" >&2; return 1; }
	done
	_fc=$(git -C "$_fd" log --first-parent --format=%B main | grep -c "^Sluice-Run: ")
	[ "$_fc" = "$_fm" ] || { echo "$_fc Sluice-Run trailers on main, want $_fm" >&2; return 1; }
	for _w in $3; do
		grep -q "^failed  *[0-9]*  *$_w " "$TRASH/queue.now" ||
			{ echo "$_w is not failed" >&2; cat "$TRASH/queue.now" >&2; return 1; }
	done
	cmp "$TRASH/notes.orig" "$_fd/notes.txt" || { echo "the user's edit changed" >&2; return 1; }
	printf '%s\n' " M notes.txt" "?? work_orders/" >"$TRASH/status.want"
	git -C "$_fd" status --porcelain >"$TRASH/status.now"
	diff -u "$TRASH/status.want" "$TRASH/status.now" >&2 || { echo "the checkout is not HEAD" >&2; return 1; }
	"$SLUICE" -C "$_fd" audit >"$TRASH/audit.out" 2>&1 || { cat "$TRASH/audit.out" >&2; return 1; }
	[ -z "$(git -C "$_fd" branch --list 'run/*')" ] ||
		{ echo "stray branches:" >&2; git -C "$_fd" branch --list 'run/*' >&2
		  grep -E 'warning|error' "$TRASH/settle.out" | tail -n 20 >&2; return 1; }
	pool_check "$_fd" || return 1
	[ -z "$(ls -d "$_fd"/.system/runs/*/worktree* 2>/dev/null)" ] ||
		{ echo "stray worktree folders:" >&2; ls -d "$_fd"/.system/runs/*/worktree* >&2; return 1; }
	[ -z "$(find "$_fd/.git" -name '*.lock')" ] ||
		{ echo "locks left:" >&2; find "$_fd/.git" -name '*.lock' >&2; return 1; }
	[ ! -e "$_fd/.system/merge.journal" ] || { echo "merge journal left" >&2; return 1; }
}

test_finish_() {
	eval "$test_cleanup_cmds"
	if [ "${SLUICE_TEST_KEEP:-0}" != 1 ]; then
		chmod -R u+w "$TRASH" 2>/dev/null
		rm -rf "$TRASH"
	else
		echo "# kept $TRASH"
	fi
}

# Skip the whole script (ctest reports it as skipped: SKIP_RETURN_CODE 77).
test_skip_all() { # REASON
	test_finish_
	echo "# skipped: $1"
	exit 77
}

# The end of a script: 1 if a test failed, else 77 if one was skipped, else 0.
test_done() {
	test_finish_
	_known=""
	[ "$test_known" -eq 0 ] || _known=", $test_known known breakage"
	echo "$((test_count - test_failed - test_skipped - test_known)) passed, $test_failed failed, $test_skipped skipped$_known"
	[ "$test_failed" -eq 0 ] || exit 1
	[ "$test_skipped" -eq 0 ] || exit 77
	exit 0
}

# The merge train (t080x). How many merges of work order WO the first-parent
# line of BRANCH (default main) holds.
merges_of() { # DIR WO [BRANCH]
	git -C "$1" log --first-parent --merges --format=%B "${3:-main}" | grep -c "^Work-Order: $2\$"
}

# Run GATE (a shell command) on a copy of the tree of each first-parent
# commit of BRANCH (default main) after BASE: fails naming each red one.
gate_first_parents() { # DIR BASE GATE [BRANCH]
	_gbad=0
	for _gc in $(git -C "$1" rev-list --first-parent "$2..${4:-main}"); do
		rm -rf "$TRASH/gate-tree" && mkdir "$TRASH/gate-tree" &&
			git -C "$1" archive "$_gc" | tar -x -C "$TRASH/gate-tree" || return 1
		(cd "$TRASH/gate-tree" && eval "$3") >"$TRASH/gate-tree.out" 2>&1 || {
			echo "the gate is red on $_gc ($(git -C "$1" log -1 --format=%s "$_gc")):" >&2
			cat "$TRASH/gate-tree.out" >&2
			_gbad=$((_gbad + 1))
		}
	done
	rm -rf "$TRASH/gate-tree"
	[ "$_gbad" = 0 ]
}

# Each sluice merge on the first-parent line of BRANCH (default main) has a
# train.json that names it: commit = the merge, tree = its tree, base = its
# first parent, head = its second, green.
train_records_hold() { # DIR [BRANCH]
	for _tc in $(git -C "$1" rev-list --first-parent --merges "${2:-main}"); do
		_tr=$(git -C "$1" log -1 --format=%B "$_tc" | sed -n 's/^Sluice-Run: //p')
		[ -n "$_tr" ] || continue
		_tj=$1/.system/runs/$_tr/train.json
		[ -f "$_tj" ] || { echo "run $_tr landed $_tc without train.json" >&2; return 1; }
		jq -e --arg c "$_tc" --arg t "$(git -C "$1" rev-parse "$_tc^{tree}")" \
			--arg b "$(git -C "$1" rev-parse "$_tc^1")" --arg h "$(git -C "$1" rev-parse "$_tc^2")" \
			'.commit == $c and .tree == $t and .base == $b and .head == $h and .green == true' \
			"$_tj" >/dev/null || { echo "train.json of $_tr does not name $_tc:" >&2; cat "$_tj" >&2; return 1; }
	done
}

# With fixtures/train/hold-gate.sh as the train's gate (logging to
# GATEDIR/gates.log): each sluice merge on the first-parent line of main was
# tested by its run, as that very commit and tree, clean, and passed, and no
# test of it failed. Or, as merge.reuse_green allows (docs/RELIABILITY.md,
# "No tree tested twice"): a car made again after a kill or a car leaving in
# front of it is a new commit on a tree already tested; it lands untested
# only when its run's train.json says every gate was reused as green on that
# very tree, the log has a clean green test of the tree and no red one.
landed_tested() { # DIR GATEDIR
	for _tc in $(git -C "$1" rev-list --first-parent --merges main); do
		_tr=$(git -C "$1" log -1 --format=%B "$_tc" | sed -n 's/^Sluice-Run: //p')
		[ -n "$_tr" ] || continue
		_tt=$(git -C "$1" rev-parse "$_tc^{tree}")
		if ! grep -qx "$_tr $_tc $_tt clean 0" "$2/gates.log"; then
			_tj="$1/.system/runs/$_tr/train.json"
			_tw="green on tree $(printf %s "$_tt" | cut -c1-12) already"
			{ jq -e --arg w "$_tw" '(.gates | length) > 0 and
				all(.gates[]; (.reused // "") | startswith($w))' "$_tj" >/dev/null 2>&1 &&
				grep -q "^[^ ]* [^ ]* $_tt clean 0\$" "$2/gates.log"; } ||
				{ echo "$_tc (run $_tr) landed untested:" >&2; cat "$2/gates.log" >&2
				  cat "$_tj" >&2 2>/dev/null; return 1; }
			! grep " $_tt [a-z]* [1-9][0-9]*\$" "$2/gates.log" >&2 ||
				{ echo "$_tc (run $_tr) landed, reused, on a tree once red" >&2; return 1; }
		fi
		! grep " $_tc .* [1-9][0-9]*\$" "$2/gates.log" >&2 ||
			{ echo "$_tc (run $_tr) landed after a red test" >&2; return 1; }
	done
}

# schema_validate SCHEMA FILE: FILE against schema/SCHEMA (with $refs to its
# siblings), by $PY (default python3) with jsonschema (scripts/deps.sh
# installs python3-jsonschema).
schema_validate() {
	${PY:-python3} - "$SLUICE_SOURCE_DIR/schema" "$1" "$2" <<-\EOF
	import json, os, sys
	import jsonschema
	d, name, path = sys.argv[1], sys.argv[2], sys.argv[3]
	store = {}
	for f in os.listdir(d):
	    if f.endswith(".json"):
	        s = json.load(open(os.path.join(d, f)))
	        store[s.get("$id", f)] = s
	        store[f] = s
	schema = json.load(open(os.path.join(d, name)))
	resolver = jsonschema.RefResolver(base_uri=schema.get("$id", ""), referrer=schema, store=store)
	jsonschema.validate(json.load(open(path)), schema, resolver=resolver)
	EOF
}

# desk_up DIR: `sluice serve` on a free loopback port for DIR, its URL (with
# the token) in $TRASH/desk.url and its pid in $TRASH/desk.pid; stop it with
# test_when_finished "kill $(cat "$TRASH/desk.pid")".
desk_up() {
	"$SLUICE" -C "$1" serve --listen 127.0.0.1:0 >"$TRASH/desk.out" 2>&1 &
	echo $! >"$TRASH/desk.pid"
	wait_until "grep -q http:// '$TRASH/desk.out'" ||
		{ cat "$TRASH/desk.out" >&2; return 1; }
	grep -o "http://[^ ]*" "$TRASH/desk.out" | head -n 1 >"$TRASH/desk.url"
}

# desk_page PATH: the desk's page at PATH (desk_up's server, its token).
desk_page() {
	_u=$(cat "$TRASH/desk.url")
	_port=$(echo "$_u" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|')
	curl -s -f -u "sluice:${_u##*=}" "http://127.0.0.1:$_port$1"
}

# Wait until CONDITION (shell code, eval'd in the caller's shell) holds,
# polled ten times a second. BOUND (seconds of wall clock, default 300) only
# guards against a hang: it is no deadline, a loaded machine is slow, not
# wrong. Wait on the event itself (a file, a line in a log, a port, a state),
# never on a sleep long enough for it (tests/README.md).
wait_until() { # CONDITION [BOUND]
	_wu_end=$(($(date +%s) + ${2:-300}))
	while ! eval "$1"; do
		[ "$(date +%s)" -lt $_wu_end ] ||
			{ echo "gave up after ${2:-300} s waiting for: $1" >&2; return 1; }
		sleep 0.1
	done
}

# For scripts/shape.py's tests: a fresh copy of what the check reads
# (src/, schema/, CMakeLists.txt) in DIR.
copy_tree() { # DIR
	rm -rf "$1" && mkdir "$1" &&
	cp -R "$SLUICE_SOURCE_DIR/src" "$SLUICE_SOURCE_DIR/schema" \
		"$SLUICE_SOURCE_DIR/CMakeLists.txt" "$1/"
}

# The process PID runs (no such process, a zombie or a dead one does not).
# /proc/PID/stat is read once: read twice, a process that ends between the
# reads looked alive (t0240 under ASan) or not gone (t0940).
proc_alive() { # PID
	_pa=$(cat /proc/$1/stat 2>/dev/null) && test -n "$_pa" &&
		! printf '%s\n' "$_pa" | sed "s/.*) //" | grep -q "^[ZX]"
}

# Wait (at most BOUND s, default 300) until FILE (a glob) exists.
wait_for() { # GLOB [BOUND]
	wait_until "ls $1 >/dev/null 2>&1" "${2:-300}"
}

# A loop, for a builder or gate script (where lib.sh is not loaded), that
# waits until CONDITION holds, at most BOUND s (default 300) of wall clock.
wait_until_sh() { # CONDITION [BOUND]
	printf '%s\n' "_wu_end=\$((\$(date +%s) + ${2:-300})); while ! { $1; } && [ \$(date +%s) -lt \$_wu_end ]; do sleep 0.1; done"
}

# With hold-gate.sh (GATEDIR/hold-all there) and a manual reviewer: approve
# the runs of the work orders given, awaiting review, one at a time, each
# with a tick of its own in the background that carries it into the train
# and waits until its car holds in the gate or waits for a place: the train
# is in this order whatever order the workers would reach it. The ticks'
# pids are appended to $TRASH/ticks.
train_join_in_order() { # DIR GATEDIR WO...
	_jd=$1 _jg=$2 && shift 2 &&
	for _jw in "$@"; do
		_jr=$(run_of "$_jd" "$_jw") &&
		"$SLUICE" -C "$_jd" approve "$_jr" >/dev/null &&
		{ "$SLUICE" -C "$_jd" tick >"$TRASH/tick-$_jw.out" 2>&1 & } &&
		echo $! >>"$TRASH/ticks" &&
		wait_until "[ -f '$_jg/waiting-$_jr' ] ||
			'$SLUICE' -C '$_jd' runs --wo '$_jw' | grep -q 'waits for a place'" ||
			{ echo "$_jw did not reach its place in the train" >&2; return 1; }
	done
}
