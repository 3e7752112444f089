#!/bin/sh
# No tree tested twice (merge.reuse_green, default true): a merge gate
# whose command already has a green on the car's tree, and no red there,
# is not run again; the car's train/gates.json says "green on tree ...
# already", and `sluice audit` still passes. A different command, a flaky
# tree (green and red), a tree only red, or merge.reuse_green: false: the
# gate runs. The earlier green is written into gate_runs as an earlier
# train test leaves it. With merge.reuse_gating, a run's own gate green in a
# clean worktree counts too; an ignored file there does not.
. "$(dirname "$0")/lib.sh"

# REPO [extra config lines]: a repository whose gate counts its calls in REPO.calls
setup_repo() {
	_r=$1
	shift
	printf 'echo run >>"%s"\nexit 0\n' "$TRASH/$_r.calls" >"$TRASH/$_r-gate.sh" &&
	sluice_repo $_r "gates:" "  t: [sh, $TRASH/$_r-gate.sh]" "$@" "$(approve_reviewer_config)" &&
	echo "echo one >one.txt" >"$BUILDERS/O.sh" &&
	sluice -C $_r check >/dev/null &&
	rm -rf scratch-$_r && git clone -q $_r scratch-$_r &&
	echo one >scratch-$_r/one.txt && git -C scratch-$_r add one.txt &&
	git -C scratch-$_r write-tree >$_r.tree
}

# REPO ARGV-JSON GREENS REDS: an earlier train test's outcome on the car's tree
seed() {
	sqlite3 $1/.system/sluice.db "INSERT INTO gate_runs (gate, command, tree, greens, reds,
		updated_ms) VALUES ('t', '$2', '$(cat $1.tree)', $3, $4, 0)"
}

# REPO: the work order lands; prints the run
land() {
	wo $1 O &&
	settle $1 &&
	_run=$(run_of $1 O) &&
	test "$(state_of $1 $_run)" = merged &&
	test "$(git -C $1 rev-parse "main^{tree}")" = "$(cat $1.tree)" &&
	echo $_run
}

test_expect_success 'a green on the tree stands: the merge gate is not run again' '
	setup_repo a &&
	seed a "[\"sh\",\"$TRASH/a-gate.sh\"]" 1 0 &&
	run=$(land a) &&
	test "$(wc -l <"$TRASH/a.calls")" = 1 &&
	g=a/.system/runs/$run/train/gates.json &&
	test "$(jq -r ".[0].passed" $g)" = true &&
	jq -r ".[0].reused" $g | grep -q "^green on tree $(cut -c1-12 a.tree) already" &&
	jq -r ".gates[0].reused" a/.system/runs/$run/train.json | grep -q "already (train test)" &&
	test "$(sqlite3 a/.system/sluice.db "SELECT greens FROM gate_runs")" = 1 &&
	sluice -C a audit
'

test_expect_success 'a different command on the tree: the gate runs' '
	setup_repo b &&
	seed b "[\"sh\",\"$TRASH/other.sh\"]" 1 0 &&
	run=$(land b) &&
	test "$(wc -l <"$TRASH/b.calls")" = 2 &&
	test "$(jq -r ".[0].reused" b/.system/runs/$run/train/gates.json)" = null
'

test_expect_success 'a flaky tree (green and red) is not green: the gate runs' '
	setup_repo c &&
	seed c "[\"sh\",\"$TRASH/c-gate.sh\"]" 1 1 &&
	land c >/dev/null &&
	test "$(wc -l <"$TRASH/c.calls")" = 2
'

test_expect_success 'a red never stands: the gate runs' '
	setup_repo d &&
	seed d "[\"sh\",\"$TRASH/d-gate.sh\"]" 0 1 &&
	land d >/dev/null &&
	test "$(wc -l <"$TRASH/d.calls")" = 2
'

test_expect_success 'merge.reuse_green: false runs the gate' '
	setup_repo e "merge:" "  reuse_green: false" &&
	seed e "[\"sh\",\"$TRASH/e-gate.sh\"]" 1 0 &&
	land e >/dev/null &&
	test "$(wc -l <"$TRASH/e.calls")" = 2
'

test_expect_success 'merge.reuse_gating: the run'"'"'s own green in a clean worktree stands' '
	setup_repo g "merge:" "  reuse_gating: true" &&
	run=$(land g) &&
	test "$(wc -l <"$TRASH/g.calls")" = 1 &&
	jq -r ".gates[0].reused" g/.system/runs/$run/train.json >reused &&
	test_grep "^green on tree $(cut -c1-12 g.tree) already (the run.s own gates, in a clean worktree), not run again\$" reused &&
	test "$(sqlite3 g/.system/sluice.db "SELECT greens, reds, gating_greens FROM gate_runs")" = "0|0|1" &&
	sluice -C g status --json >st.json &&
	test "$(jq "[.merge_gates[]?] | length" st.json)" = 0 &&
	sluice -C g audit
'

test_expect_success 'merge.reuse_gating: an ignored file in the worktree: not counted, the merge gate runs' '
	setup_repo h "merge:" "  reuse_gating: true" &&
	echo "*.o" >>h/.git/info/exclude &&
	echo "echo one >one.txt; echo x >build.o" >"$BUILDERS/O.sh" &&
	land h >/dev/null &&
	test "$(wc -l <"$TRASH/h.calls")" = 2 &&
	test "$(sqlite3 h/.system/sluice.db "SELECT count(*) FROM gate_runs WHERE gating_greens > 0")" = 0
'

test_expect_success 'merge.reuse_gating: a file the builder hid from git status (skip-worktree): the merge gate runs' '
	setup_repo j "merge:" "  reuse_gating: true" &&
	hide=$(git -C j ls-files | head -n 1) && test -n "$hide" &&
	printf "%s\n" "echo one >one.txt" "git update-index --skip-worktree \"$hide\"" \
		"echo hidden >>\"$hide\"" >"$BUILDERS/O.sh" &&
	land j >/dev/null &&
	test "$(wc -l <"$TRASH/j.calls")" = 2 &&
	test "$(sqlite3 j/.system/sluice.db "SELECT count(*) FROM gate_runs WHERE gating_greens > 0")" = 0
'

test_expect_success 'without merge.reuse_gating the run'"'"'s own green is not recorded' '
	setup_repo i &&
	land i >/dev/null &&
	test "$(wc -l <"$TRASH/i.calls")" = 2 &&
	test "$(sqlite3 i/.system/sluice.db "SELECT count(*) FROM gate_runs WHERE gating_greens > 0")" = 0
'

# The kill tests (t0803, t0806) take a landed commit that no gate ran on as
# tested only when its run says every gate was reused on its very tree and
# the gate log has a clean green of that tree, never a red (landed_tested).
test_expect_success 'landed_tested takes a reused green only as the train records it' '
	G=$TRASH/glog && mkdir -p "$G" &&
	sluice_repo f "gates:" "  t: [sh, $FIXTURES/train/hold-gate.sh, $G]" \
		"$(approve_reviewer_config)" &&
	rm -rf scratch-f && git clone -q f scratch-f &&
	echo one >scratch-f/one.txt && git -C scratch-f add one.txt &&
	git -C scratch-f write-tree >f.tree &&
	seed f "[\"sh\",\"$FIXTURES/train/hold-gate.sh\",\"$G\"]" 1 0 &&
	land f >/dev/null &&
	grep -q " $(cat f.tree) clean 0\$" "$G/gates.log" &&
	landed_tested f "$G" &&
	: >"$G/gates.log" &&
	! landed_tested f "$G" 2>/dev/null &&
	echo "other-run 0123 $(cat f.tree) clean 0" >>"$G/gates.log" &&
	landed_tested f "$G" &&
	echo "other-run 4567 $(cat f.tree) clean 1" >>"$G/gates.log" &&
	! landed_tested f "$G" 2>/dev/null
'

test_done
