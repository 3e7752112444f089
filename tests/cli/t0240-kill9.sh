#!/bin/sh
# A kill -9 of the tick (and everything it started) at each stage loses
# nothing: the next tick requeues the run (a review is simply asked again) and reaches the same end as an
# uninterrupted run, with exactly one merge commit per work order.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid

# pause STAGE: in the stage named by $TRASH/pause-at, note it and sleep.
cat >"$BUILDERS/pause.sh" <<-EOS
if [ "\$(cat "$TRASH/pause-at" 2>/dev/null)" = "\$1" ]; then
	echo \$\$ >"$TRASH/paused.pid"
	echo "\$1" >"$TRASH/paused"
	sleep 600
fi
EOS

# Start a tick in its own session, wait until it pauses at STAGE, kill -9 the session.
kill_at() { # STAGE
	echo "$1" >"$TRASH/pause-at"
	rm -f "$TRASH/paused" tick.sid
	setsid sh -c "echo \$\$ >tick.sid; exec \"$SLUICE\" -C repo tick >tick.out 2>&1" &
	wait_until "[ -f '$TRASH/paused' ] && [ -s tick.sid ]" || { cat tick.out; return 1; }
	if [ "${2:-}" = sluice-only ]; then
		pkill -KILL -s "$(cat tick.sid)" -x sluice
	else
		pkill -KILL -s "$(cat tick.sid)"
	fi
	wait
	rm -f "$TRASH/pause-at"
}

test_expect_success 'setup' '
	sluice_repo repo &&
	cat >>repo/.system/config.yaml <<-EOF &&
	worktree:
	  setup: [sh, $BUILDERS/pause.sh, preparing]
	gates:
	  check: [sh, $BUILDERS/pause.sh, gating]
	reviewer:
	  mode: command
	  command: [sh, -c, "sh $BUILDERS/pause.sh reviewing; exec sh $APPROVE_REVIEWER"]
	EOF
	for s in preparing building gating reviewing; do
		cat >"$BUILDERS/K-$s.sh" <<-EOS || return 1
		echo "work of $s" >$s.txt
		sh "$BUILDERS/pause.sh" building
		EOS
	done
'

for stage in preparing building gating reviewing; do
	test_expect_success "kill -9 while $stage, then a tick finishes the run" "
		wo repo K-$stage &&
		kill_at $stage &&
		run=\$(run_of repo K-$stage) &&
		test \"\$(state_of repo \$run)\" = $stage &&
		sluice -C repo tick >out &&
		{ test $stage = reviewing || test_grep interrupted out; } &&
		test \"\$(state_of repo \$run)\" = merged &&
		test \"\$(git -C repo log --merges --grep '^Work-Order: K-$stage\$' --oneline main | wc -l)\" = 1 &&
		git -C repo show main:$stage.txt >got && test_grep 'work of $stage' got &&
		sluice -C repo log \$run >log &&
		{ test $stage = reviewing || test_grep 'interrupted' log; }
	"
done

# Alive and not a zombie.
alive() { proc_alive "$1"; }

test_expect_success 'kill -9 of sluice alone: the next tick ends the builder it left running' '
	cat >"$BUILDERS/K-orphan.sh" <<-EOS &&
	echo "work of orphan" >orphan.txt
	sh "$BUILDERS/pause.sh" building
	EOS
	wo repo K-orphan &&
	kill_at building sluice-only &&
	pid=$(cat "$TRASH/paused.pid") &&
	alive $pid &&
	sluice -C repo tick >out &&
	! alive $pid &&
	test "$(state_of repo $(run_of repo K-orphan))" = merged
'

test_expect_success 'a merge cut off after the target moved is recorded, never made twice' '
	sluice_repo m &&
	echo "echo once >once.txt" >"$BUILDERS/M1.sh" &&
	wo m M1 &&
	sluice -C m tick >/dev/null &&
	run=$(run_of m M1) &&
	sluice -C m approve $run >/dev/null &&
	mkdir -p m/.system/runs/$run/merge.json/blocker &&
	sluice -C m tick >out 2>&1 &&
	test "$(state_of m $run)" = merging &&
	test "$(git -C m log --merges --oneline main | wc -l)" = 1 &&
	rm -r m/.system/runs/$run/merge.json &&
	sluice -C m tick >out 2>&1 &&
	test "$(state_of m $run)" = merged &&
	test "$(git -C m log --merges --oneline main | wc -l)" = 1 &&
	test "$(git -C m rev-parse main^1)" = "$(sed -n "/\"parents\"/{n;p}" m/.system/runs/$run/merge.json | tr -d " \",")" &&
	sluice -C m audit
'

test_expect_success 'no run is left active, no lock or worktree left behind' '
	test -z "$(sluice -C repo runs | grep -v merged)" &&
	test -z "$(ls repo/.system/runs/*/worktree 2>/dev/null)" &&
	test -z "$(git -C repo branch --list "run/*")" &&
	test -z "$(find repo/.git -name "*.lock")"
'

test_done
