#!/bin/sh
# --json on every command of `sluice --help`: a command either honours it
# (one JSON document on stdout) or refuses it, exit 2, with "'sluice X' has
# no --json output" (issue 25). Before, approve, reject, retry, abandon,
# init, report and serve took it silently and printed text (report: HTML).
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool python3

echo "echo w >w.txt" >"$BUILDERS/W.sh"
echo "echo v >v.txt" >"$BUILDERS/V.sh"

test_expect_success 'setup: a repository with one merged run and one more work order' '
	sluice_repo r "$(approve_reviewer_config)" &&
	wo r W && sluice -C r tick >/dev/null &&
	run=$(run_of r W) && test "$(state_of r $run)" = merged &&
	echo $run >run.id &&
	wo r V &&
	sluice_repo e
'

# The arguments that make command $1 do its work, with --json (JSON, or refused);
# the tick runs in the repository e with nothing to do, so that run has V to run.
args_of() { # COMMAND RUN
	case $1 in
	tick) echo "-C e --json" ;;
	check|queue|runs|status|log|notify|audit|init|report|serve|cost|watch) echo "--json" ;;
	run) echo "--json V" ;;
	show|approve|reject|retry|abandon|diff|request-changes) echo "--json $2" ;;
	gc) echo "--json --dry-run" ;;
	merge-preview) echo "--json main main" ;;
	accept-target) echo "--json main" ;;
	freeze) echo "--json -m t1110" ;;
	unfreeze) echo "--json" ;;
	worktree) echo "status --json" ;;
	*) return 1 ;;
	esac
}

test_expect_success 'every command honours --json or refuses it with exit 2' '
	run=$(cat run.id) &&
	sluice --help | sed -n "/^commands:/,/^\$/s/^  \([a-z-]*\) .*/\1/p" >commands &&
	test "$(wc -l <commands)" -ge 20 &&
	: >honoured && : >refused &&
	for c in $(cat commands); do
		a=$(args_of $c $run) || { echo "t1110 has no arguments for command $c" >&2; return 1; }
		rc=0 && timeout 60 "$SLUICE" -C r $c $a </dev/null >out 2>err || rc=$?
		if [ $rc = 2 ]; then
			test_grep "^sluice $c: .sluice $c. has no --json output\$" err &&
			test_grep "^see .sluice $c --help.\$" err &&
			test ! -s out &&
			echo $c >>refused || return 1
		else
			python3 -c "import json, sys; json.load(open(sys.argv[1]))" out ||
			{ echo "sluice $c --json (exit $rc) printed no JSON:" >&2; cat out err >&2; return 1; }
			echo $c >>honoured || return 1
		fi
	done &&
	printf "%s\n" init diff approve reject request-changes retry abandon accept-target report serve >expect &&
	test_cmp expect refused &&
	test "$(wc -l <honoured)" = $(($(wc -l <commands) - 10))
'

test_expect_success 'a refused --json changed nothing: the run is still merged, V merged by run' '
	run=$(cat run.id) &&
	test "$(state_of r $run)" = merged &&
	test "$(state_of r $(run_of r V))" = merged &&
	sluice -C r audit >/dev/null
'

test_expect_success 'worktree: every subcommand takes --json (its output is JSON anyway)' '
	sluice -C r worktree pool --json >out &&
	test_grep "\"success\": true" out &&
	sluice -C r worktree create x --json >out &&
	test_grep "\"success\": true" out &&
	sluice -C r worktree cleanup r/.system/worktrees/quick-build-x --json >out 2>err &&
	test_grep "\"removed\": true" out
'

test_done
