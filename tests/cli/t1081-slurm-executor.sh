#!/bin/sh
# The Slurm executor (issue 17, docs/scale-out.md): every builder, gate and
# train gate runs as a job of a real one-node Slurm cluster started here
# (tests/slurm/cluster.sh), the workspace moved through a bare repository
# (executor.remote), the reviewer over real HTTP with a token that must
# never reach a job. Then the crash rules: kill -9 of the tick while two jobs
# run (each followed again, not submitted twice, and landed once),
# scancel from outside (the attempt fails with the engine's reason and the
# retry rules run it again), and abandon (the job is cancelled).
. "$(dirname "$0")/lib.sh"

slurm_cluster start

TOKEN="sekrit-token-$$-never-in-a-job"
export REVIEW_TOKEN="$TOKEN"
echo "{}" >"$TRASH/script.json"
start_reviewer "$TRASH/script.json" || exit 1
echo "$REVIEWER_URL" >"$TRASH/url"

# A repository whose builders and gates are Slurm jobs, with its own bare remote.
slurm_repo() { # DIR [extra config lines...]
	slurm_repo_base "$@" &&
	cat >>"$1/.system/config.yaml" <<-EOF
	gates:
	  test: [sh, -c, 'env >"$TRASH/gate-env-\$SLUICE_GATE-\$\$"; test ! -e fail-gate']
	reviewer:
	  mode: http
	  url: $(cat "$TRASH/url")
	  token_env: REVIEW_TOKEN
	EOF
}

killpg() { python3 -c "import os, sys; os.killpg(int(sys.argv[1]), 9)" "$1"; }

jobs_of() { # DIR RUN: the handles of the run's jobs, one a line
	sluice -C "$1" log "$2" | sed -n 's/.* job \(slurm:[0-9]*\) submitted.*/\1/p'
}

# builders that wait until both started (a shared folder: the jobs' run folders are their own)
meet() { # A B EDIT
	for _me in "$1" "$2"; do
		if [ "$_me" = "$1" ]; then _other=$2; else _other=$1; fi
		_edit=$(printf "$3" "$_me")
		cat >"$BUILDERS/$_me.sh" <<-EOS || return 1
		: >"$TRASH/started-$_me"
		i=0
		while [ ! -f "$TRASH/started-$_other" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done
		$_edit
		EOS
	done
}

test_expect_success 'setup: builders that record their environment' '
	for w in A1 B1 A2 B2; do :; done &&
	cat >"$BUILDERS/A1.sh" <<-EOS &&
	env >"$TRASH/builder-env-A1"
	echo "from A1" >a.txt
	echo "A1 wrote a.txt" >"\$SLUICE_RUN_DIR/summary.md"
	EOS
	echo "echo from B1 >b.txt" >"$BUILDERS/B1.sh" &&
	echo "sed -i \"5s/.*/five by A3/\" lines.txt" >"$BUILDERS/A3.sh" &&
	echo "sed -i \"5s/.*/five by B3/\" lines.txt" >"$BUILDERS/B3.sh" &&
	sluice_repo chk &&
	cat >>chk/.system/config.yaml <<-\EOF &&
	executor:
	  kind: slurm
	EOF
	test_expect_failure_code 1 sluice -C chk check >out 2>&1 &&
	test_grep "executor.remote is not set" out &&
	for bad in "kind: slurmm" "remote: -upload-pack=evil" "remote: relative/dir" \
		"poll: fast" "slurm: {cpus: 0}" "slurm: {partition: \"a\\nb\"}" "kind: kubernetes" \
		"nodes: 3"; do
		sluice_repo bad-$$ &&
		printf "executor:\n  kind: slurm\n  remote: /r.git\n  %s\n" "$bad" >>bad-$$/.system/config.yaml &&
		{ sluice -C bad-$$ check >out 2>&1; test $? = 1; } &&
		test_grep "config.yaml:[0-9]*:[0-9]*: .*executor" out &&
		rm -rf bad-$$ || return 1
	done &&
	sluice_repo warn "worktree:" "  share: [node_modules]" &&
	printf "executor:\n  kind: slurm\n  remote: /r.git\n" >>warn/.system/config.yaml &&
	sluice -C warn check >out 2>&1 &&
	test_grep "warning: worktree.share .* the paths are missing there" out
'

test_expect_success 'scenario 2: same file, different lines: built apart, merged together' '
	slurm_repo two &&
	seq 1 10 >two/lines.txt && git -C two add lines.txt && git -C two commit -q -m lines &&
	echo "sed -i \"1s/.*/line by A2/\" lines.txt" >"$TRASH/edit-A2.sh" &&
	echo "sed -i \"9s/.*/line by B2/\" lines.txt" >"$TRASH/edit-B2.sh" &&
	meet A2 B2 "sh \"$TRASH/edit-%s.sh\"" &&
	wo two A2 && wo two B2 &&
	sluice -C two tick --jobs 2 >out &&
	test "$(state_of two $(run_of two A2))" = merged &&
	test "$(state_of two $(run_of two B2))" = merged &&
	git -C two show main:lines.txt >lines &&
	test_grep "^line by A2$" lines && test_grep "^line by B2$" lines &&
	sluice -C two audit
'

test_expect_success 'scenario 3: same lines with resolver none: merge_conflict, the rival loaded' '
	meet A3 B3 "sed -i \"5s/.*/five by %s/\" lines.txt" &&
	rm -f "$TRASH"/started-* &&
	slurm_repo three "merge:" "  resolver: none" &&
	seq 1 10 >three/lines.txt && git -C three add lines.txt && git -C three commit -q -m lines &&
	wo three A3 && wo three B3 &&
	sluice -C three tick --jobs 2 >out &&
	ra=$(run_of three A3) && rb=$(run_of three B3) &&
	sa=$(state_of three $ra) && sb=$(state_of three $rb) &&
	{ { test $sa = merged && test $sb = merge_conflict && l=$rb && w=$ra; } ||
	  { test $sb = merged && test $sa = merge_conflict && l=$ra && w=$rb; }; } &&
	c=three/.system/runs/$l/conflict.json &&
	test_grep "lines.txt" $c && test_grep "<<<<<<< " $c &&
	sluice -C three status --json $l >st &&
	test_grep "\"conflict_with_run_id\": \"$w\"" st
'

test_expect_success 'scenario 1: different files, both built, gated and merged by Slurm jobs' '
	slurm_repo one &&
	wo one A1 && wo one B1 &&
	sluice -C one tick --jobs 2 >out &&
	ra=$(run_of one A1) && rb=$(run_of one B1) &&
	test "$(state_of one $ra)" = merged &&
	test "$(state_of one $rb)" = merged &&
	git -C one show main:a.txt | grep -q "from A1" &&
	git -C one show main:b.txt | grep -q "from B1" &&
	sluice -C one log $ra >log &&
	test_grep "build job slurm:[0-9]* submitted" log &&
	test_grep "gates job slurm:[0-9]* submitted" log &&
	test_grep "train job slurm:[0-9]* submitted" log &&
	for j in $(jobs_of one $ra); do
		scontrol show job ${j#slurm:} >sc && test_grep "JobState=COMPLETED" sc || return 1
	done &&
	test_grep "A1 wrote a.txt" one/.system/runs/$ra/summary.md &&
	test_grep "ended: job slurm:[0-9]*, exit 0" one/.system/runs/$ra/builder.log &&
	test -f one/.system/runs/$ra/gates/test.log && test_grep "exit_code" one/.system/runs/$ra/gates.json &&
	sluice -C one audit
'

test_expect_success 'sluice show lists the jobs, with their outcome, in text and JSON' '
	ra=$(run_of one A1) &&
	sluice -C one show $ra >show &&
	test_grep "^jobs:" show &&
	test_grep "slurm:[0-9]* build, attempt 1: ended: COMPLETED" show &&
	test_grep "slurm:[0-9]* gates, attempt 1: ended: COMPLETED" show &&
	test_grep "slurm:[0-9]* train, attempt 1: ended: COMPLETED" show &&
	sluice -C one show --json $ra >show.json &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert len(d[\"jobs\"]) == 3, d[\"jobs\"]" show.json &&
	if python3 -c "import jsonschema" 2>/dev/null; then
		python3 -c "import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
			"$SLUICE_SOURCE_DIR/schema/show.schema.json" show.json
	fi
'

test_expect_success 'the environment contract holds in the job; the token never enters one' '
	ra=$(run_of one A1) &&
	test_grep "^SLUICE_RUN_ID=$ra$" "$TRASH/builder-env-A1" &&
	test_grep "^SLUICE_WORK_ORDER_ID=A1$" "$TRASH/builder-env-A1" &&
	test_grep "^SLUICE_ATTEMPT=1$" "$TRASH/builder-env-A1" &&
	test_grep "^GIT_CONFIG_VALUE_0=/dev/null$" "$TRASH/builder-env-A1" &&
	p=$(sed -n "s/^SLUICE_PROMPT_FILE=//p" "$TRASH/builder-env-A1") &&
	test -n "$p" && case "$p" in */sluice-job.*/in/prompt.md) ;; *) false ;; esac &&
	! grep -l "$TOKEN" "$TRASH"/builder-env-* "$TRASH"/gate-env-* &&
	! grep -rl "$TOKEN" one/.system &&
	for j in $(jobs_of one $ra); do
		scontrol write batch_script ${j#slurm:} - >script || return 1
		! grep -q "$TOKEN" script || return 1
		! grep -q REVIEW_TOKEN script || return 1
	done &&
	! git --git-dir="$TRASH/one.remote.git" for-each-ref | grep -q "refs/sluice/runs/$ra"
'

test_expect_success 'scenario 4: same lines conflict; the builder resolves it in a Slurm job' '
	meet A3 B3 "sed -i \"5s/.*/five by %s/\" lines.txt" &&
	rm -f "$TRASH"/started-* &&
	slurm_repo four &&
	seq 1 10 >four/lines.txt && git -C four add lines.txt && git -C four commit -q -m lines &&
	wo four A3 && wo four B3 &&
	sluice -C four tick --jobs 2 >out &&
	sluice -C four tick --jobs 2 >>out &&
	ra=$(run_of four A3) && rb=$(run_of four B3) &&
	test "$(state_of four $ra)" = merged &&
	test "$(state_of four $rb)" = merged &&
	sluice -C four log $rb >log && sluice -C four log $ra >>log &&
	test_grep "resolving" log &&
	test_grep "build job slurm:[0-9]* submitted (attempt 2)" log &&
	git -C four log -1 --format=%B main >msg &&
	test_grep "^Resolved-with: \\($ra\\|$rb\\)$" msg &&
	git -C four show main:lines.txt >lines &&
	test_grep "^five by A3$" lines && test_grep "^five by B3$" lines &&
	! grep -q "^<<<<<<<\\|^>>>>>>>\\|^=======$" lines &&
	sluice -C four audit
'

# what each of the next builders reports it spent (docs/budgets.md)
echo '{"cost_usd": 0.25}' >"$TRASH/usage-025.json"

test_expect_success 'kill -9 of the tick while two jobs run: followed again, one job each, one landing each, its usage once' '
	slurm_repo crash &&
	# each job builds once told to: still running when the tick is killed
	echo "$(wait_until_sh "[ -f $TRASH/crash-go ]" 600); echo slow >slow.txt; cp $TRASH/usage-025.json \"\$SLUICE_USAGE_FILE\"" >"$BUILDERS/S.sh" &&
	echo "$(wait_until_sh "[ -f $TRASH/crash-go ]" 600); echo tardy >tardy.txt; cp $TRASH/usage-025.json \"\$SLUICE_USAGE_FILE\"" >"$BUILDERS/T.sh" &&
	wo crash S && wo crash T &&
	(setsid "$SLUICE" -C crash tick --jobs 2 >tick1.out 2>&1 & echo $! >pid) &&
	wait_until "[ \"\$(squeue -h -t R -o %j | grep -c \"^sluice-.*-a1-build\$\")\" -ge 2 ]" &&
	rs=$(run_of crash S) && rt=$(run_of crash T) &&
	{ killpg $(cat pid) || { cat tick1.out; squeue; false; }; } &&
	test "$(state_of crash $rs)" = building &&
	test "$(state_of crash $rt)" = building &&
	: >"$TRASH/crash-go" &&
	sluice -C crash tick --jobs 2 >tick2.out 2>&1 &&
	for r in $rs $rt; do
		test "$(state_of crash $r)" = merged &&
		sluice -C crash log $r >log &&
		test "$(grep -c "build job slurm:[0-9]* submitted" log)" = 1 &&
		test_grep "is followed again" log &&
		sluice -C crash show --json $r | jq -c "[.usage.rows[] | [.attempt, .role, .cost_usd]]" >rows &&
		echo "[[1,\"builder\",0.25]]" >want.rows &&
		test_cmp want.rows rows || return 1
	done &&
	test "$(git -C crash log --merges --oneline main | wc -l)" = 2 &&
	git -C crash show main:slow.txt | grep -q slow &&
	git -C crash show main:tardy.txt | grep -q tardy &&
	sluice -C crash audit
'

test_expect_success 'scancel from outside: the attempt fails with the engine reason, the retry rules run it again' '
	slurm_repo cancel "retry:" "  - not: gate.job" "  - exit: 3" &&
	cat >"$BUILDERS/X.sh" <<-EOS &&
	if [ "\$SLUICE_ATTEMPT" = 1 ]; then sleep 600; fi
	echo done >x.txt
	EOS
	wo cancel X &&
	("$SLUICE" -C cancel tick --jobs 1 >tick.out 2>&1 & echo $! >pid) &&
	wait_until "squeue -h -t R -n \"sluice-\$(run_of cancel X)-a1-build\" 2>/dev/null | grep -q ." &&
	scancel -n "sluice-$(run_of cancel X)-a1-build" &&
	wait_pid=$(cat pid) && while kill -0 $wait_pid 2>/dev/null; do sleep 0.2; done &&
	rx=$(run_of cancel X) &&
	test "$(state_of cancel $rx)" = merged &&
	sluice -C cancel log $rx >log &&
	test_grep "the engine lost job slurm:[0-9]*: CANCELLED" log &&
	test_grep "attempt 2" log &&
	sluice -C cancel show $rx >show &&
	test_grep "CANCELLED" show
'

test_expect_success 'abandon of a run whose tick was killed cancels its job' '
	slurm_repo ab &&
	echo "sleep 600" >"$BUILDERS/L.sh" &&
	wo ab L &&
	(setsid "$SLUICE" -C ab tick --jobs 1 >tick.out 2>&1 & echo $! >pid) &&
	wait_until "squeue -h -t R -n \"sluice-\$(run_of ab L)-a1-build\" 2>/dev/null | grep -q ." &&
	rl=$(run_of ab L) && killpg $(cat pid) &&
	j=$(jobs_of ab $rl | head -n 1) && test -n "$j" &&
	sluice -C ab abandon $rl &&
	test "$(state_of ab $rl)" = abandoned &&
	{ wait_until "scontrol show job ${j#slurm:} | grep -q JobState=CANCELLED" || :; } &&
	scontrol show job ${j#slurm:} | grep -q "JobState=CANCELLED"
'

test_done
