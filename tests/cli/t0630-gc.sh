#!/bin/sh
# sluice gc: old finished runs go, unmerged ones only with --force, active ones never;
# tombstones keep show and audit whole.
. "$(dirname "$0")/lib.sh"

run_of() { # WO-ID: the newest run of a work order (in the current repository)
	sluice runs --wo "$1" --json | sed -n 's/^    "id": "\(.*\)",$/\1/p' | head -n 1
}

merge_wo() { # N: drop WO-N, build, approve, merge, seal (until the merge step seals)
	printf -- '---\nid: WO-%s\ntitle: Work order %s\n---\n' $1 $1 >work_orders/WO-$1.md &&
	sluice tick >/dev/null && r=$(run_of WO-$1) && sluice approve "$r" >/dev/null &&
	sluice tick >/dev/null && { test -f .system/runs/$r/manifest.json ||
		sluice audit --write-manifest "$r" >/dev/null; }
}

test_expect_success 'setup: one failed run, four merged, one awaiting review' '
	test_repo repo && (cd repo && sluice init >/dev/null &&
	cat >>.system/config.yaml <<-\EOF &&
	builder:
	  command: [sh, -c, "test \"$SLUICE_WORK_ORDER_ID\" != WO-F || exit 3; echo $SLUICE_WORK_ORDER_ID >$SLUICE_WORK_ORDER_ID.txt"]
	EOF
	printf -- "---\nid: WO-F\ntitle: Fails\n---\n" >work_orders/WO-F.md &&
	sluice tick >/dev/null 2>&1 && { sluice runs --state failed --json | grep -q "\"WO-F\""; } &&
	merge_wo 1 && merge_wo 2 && merge_wo 3 && merge_wo 4 &&
	printf -- "---\nid: WO-W\ntitle: Waits\n---\n" >work_orders/WO-W.md &&
	sluice tick >/dev/null && sluice runs --state awaiting_review --json | grep -q "\"WO-W\"" &&
	sluice audit >../audit.before)
'

test_expect_success 'gc --dry-run lists the oldest merged runs and removes nothing' '
	(cd repo && ls .system/runs >../before && sluice gc --dry-run --keep-last 1 >../out &&
	 ls .system/runs >../after) && test_cmp before after &&
	(cd repo && for i in 1 2 3; do test_grep "^would remove $(run_of WO-$i)  WO-$i " ../out || exit 1; done) &&
	test_grep "^kept 1 run that did not merge; .sluice gc --force --keep-last 1. removes them$" out &&
	test_grep "^gc: would remove 3 runs and free [1-9][0-9]* bytes (dry run)$" out &&
	test $(grep -c "^would remove" out) -eq 3
'

test_expect_success 'gc --keep-last 1 removes three merged runs, verifies, keeps the rest' '
	(cd repo && w=$(run_of WO-W) && f=$(run_of WO-F) &&
	 wbranch=$(git branch --list "run/WO-W-*") &&
	 sluice gc --keep-last 1 </dev/null >../out &&
	 for i in 1 2 3; do r=$(run_of WO-$i) &&
		test_grep "^removed $r  WO-$i " ../out && test ! -e .system/runs/$r &&
		test -f .system/runs/$r.gc && test -z "$(git branch --list "run/WO-$i-*")" || exit 1
	 done &&
	 test -d .system/runs/$(run_of WO-4) && test -d .system/runs/$f &&
	 test -d .system/runs/$w/worktree && test -n "$wbranch" &&
	 test -n "$(git branch --list "run/WO-W-*")" &&
	 sluice runs --state awaiting_review --json | grep -q "\"WO-W\"") &&
	test_grep "^gc: removed 3 runs, freed [1-9][0-9]* bytes; verified: nothing of them is left$" out
'

test_expect_success 'the bytes freed are the sum of the folders removed' '
	test_grep "freed $(sed -n "s/^removed .* \([0-9]*\) bytes$/\1/p" out | awk "{s+=\$1} END {print s}") bytes" out
'

test_expect_success 'audit after gc: removed runs counted, the chain still holds' '
	(cd repo && sluice audit >../out) &&
	test_grep "^audit: 4 merged runs, [0-9]* artifacts, chain of 4 manifests (3 removed by gc): all hold$" out
'

test_expect_success 'show of a removed run says so; the store keeps it' '
	(cd repo && sluice show $(run_of WO-1) >../out) &&
	test_grep "^artifacts removed by gc" out && test_grep "^run .*  merged$" out
'

test_expect_success 'a merge after gc chains to the newest manifest; audit clean' '
	(cd repo && merge_wo 5 && r4=$(run_of WO-4) && r5=$(run_of WO-5) &&
	 test_grep "\"previous_run\": \"$r4\"" .system/runs/$r5/manifest.json &&
	 sluice gc --keep-last 1 </dev/null >/dev/null && test -f .system/runs/$r4.gc &&
	 merge_wo 6 && r6=$(run_of WO-6) &&
	 test_grep "\"previous_run\": \"$r5\"" .system/runs/$r6/manifest.json &&
	 sluice gc --keep-last 1 </dev/null >/dev/null &&
	 sluice audit >../out) &&
	test_grep "^audit: 6 merged runs, .* chain of 6 manifests (5 removed by gc): all hold$" out
'

test_expect_success 'on a terminal gc asks before removing a run that did not merge' '
	test_skip_unless_tool script &&
	(cd repo && f=$(run_of WO-F) &&
	 echo n | script -qec "\"$SLUICE\" gc --keep-last 1" /dev/null >../out 2>&1 &&
	 test -d .system/runs/$f) &&
	test_grep "remove this 1 run that did not merge? \[y/N\]" out &&
	test_grep "kept 1 run that did not merge" out
'

test_expect_success 'the hint names the command that removes what was kept, --keep-last too' '
	(cd repo && sluice gc --keep-last 0 </dev/null >../out) &&
	test_grep "^kept 1 run that did not merge; .sluice gc --force --keep-last 0. removes them$" out &&
	sed -n "s/^kept .*; .\(sluice gc .*\). removes them$/\1/p" out >hinted &&
	echo "sluice gc --force --keep-last 0" >expect && test_cmp expect hinted
'

test_expect_success 'gc --force removes the failed run too; never the one awaiting review' '
	(cd repo && f=$(run_of WO-F) && w=$(run_of WO-W) &&
	 $(cat ../hinted) >../out &&
	 test_grep "^removed $f  WO-F .*failed" ../out && test ! -e .system/runs/$f &&
	 test -z "$(git branch --list "run/WO-F-*")" && test -z "$(git worktree list | grep $f)" &&
	 test -d .system/runs/$w/worktree && test -n "$(git branch --list "run/WO-W-*")" &&
	 sluice audit >/dev/null)
'

test_expect_success 'gc.keep_last from the config; nothing to do is fine' '
	(cd repo && printf "gc:\n  keep_last: 5\n" >>.system/config.yaml &&
	 sluice gc --dry-run >../out && test_grep "^gc: would remove 0 runs" ../out &&
	 sluice gc --json >../out.json) && test_grep "\"verified\": true" out.json &&
	(cd repo && test_expect_failure_code 2 sluice gc --keep-last x 2>/dev/null)
'

test_done
