#!/bin/sh
# sluice audit: manifests, the chain, and every kind of tampering found and named.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool sqlite3

run_of() { # WO-ID: the newest run of a work order (in the current repository)
	sluice runs --wo "$1" --json | sed -n 's/^    "id": "\(.*\)",$/\1/p' | head -n 1
}

validate() { # SCHEMA FILE: validate against schema/SCHEMA; skips without python3-jsonschema
	python3 -c "import jsonschema" 2>/dev/null || test_skip "python3-jsonschema not installed"
	python3 -c "import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
		"$SLUICE_SOURCE_DIR/schema/$1" "$2"
}

# A repository with merged runs of WO-1..WO-N, each writing its own file.
setup_merged() { # DIR N
	test_repo "$1" && (
	cd "$1" && sluice init >/dev/null &&
	cat >>.system/config.yaml <<-\EOF
	builder:
	  command: [sh, -c, 'echo "$SLUICE_WORK_ORDER_ID" >>"$SLUICE_WORK_ORDER_ID.txt"; echo "built $SLUICE_WORK_ORDER_ID" >"$SLUICE_RUN_DIR/summary.md"']
	EOF
	i=1
	while [ "$i" -le "$2" ]; do
		printf -- '---\nid: WO-%s\ntitle: Work order %s\n---\nDo %s.\n' $i $i $i >work_orders/WO-$i.md
		sluice tick >/dev/null && r=$(run_of WO-$i) && test -n "$r" &&
		sluice approve "$r" >/dev/null && sluice tick >/dev/null &&
		test "$(sluice runs --wo WO-$i --json | sed -n 's/^    "state": "\(.*\)",$/\1/p')" = merged || exit 1
		# until the merge step writes the manifest itself (see the test below)
		test -f .system/runs/$r/manifest.json || sluice audit --write-manifest "$r" >/dev/null || exit 1
		i=$((i + 1))
	done)
}

run_dir() { # REPO WO-ID
	echo "$1/.system/runs/$(cd "$1" && run_of "$2")"
}

test_expect_success 'setup: three merged runs' '
	setup_merged repo 3 &&
	for r in $(ls repo/.system/runs); do test -f repo/.system/runs/$r/manifest.json || exit 1; done
'

test_expect_success 'the merge step writes manifest.json itself' '
	test_repo wired && (cd wired && sluice init >/dev/null &&
	printf "builder:\n  command: [sh, -c, \"echo x >x.txt\"]\n" >>.system/config.yaml &&
	printf -- "---\nid: WO-1\ntitle: One\n---\n" >work_orders/WO-1.md &&
	sluice tick >/dev/null && sluice approve "$(run_of WO-1)" >/dev/null && sluice tick >/dev/null &&
	test -f .system/runs/$(run_of WO-1)/manifest.json)
'

test_expect_success 'an untouched history audits clean' '
	(cd repo && sluice audit >../out) &&
	test_grep "^audit: 3 merged runs, [0-9]* artifacts, chain of 3 manifests: all hold$" out
'

test_expect_success 'the manifest lists every artifact and chains to the previous one' '
	d1=$(run_dir repo WO-1) && d2=$(run_dir repo WO-2) &&
	for f in work_order.md diff.patch merge.json review.json summary.md files_changed.json; do
		test_grep "\"$f\": \"$(sha256sum <$d2/$f | cut -c1-64)\"" $d2/manifest.json || exit 1
	done &&
	test_grep "\"previous_run\": \"$(basename $d1)\"" $d2/manifest.json &&
	test_grep "\"previous_manifest\": \"$(sha256sum <$d1/manifest.json | cut -c1-64)\"" $d2/manifest.json &&
	test_grep "\"previous_run\": null" $d1/manifest.json &&
	test_grep -v "\"lock\"" $d2/manifest.json &&
	validate manifest.schema.json $d1/manifest.json && validate manifest.schema.json $d2/manifest.json
'

# tamper COPY: a fresh copy of the repository to spoil
tamper() { rm -rf "$1" && cp -a repo "$1"; }

test_expect_success 'a changed byte of diff.patch is found and named' '
	tamper t1 && d=$(run_dir t1 WO-2) &&
	sed -i "s/^+WO-2/+WO-X/" $d/diff.patch &&
	(cd t1 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$(basename $d): artifact changed since the manifest.*, diff.patch$" out &&
	test_grep "^$(basename $d): diff.patch is not the diff git computes now" out &&
	test $(wc -l <out) -eq 2
'

test_expect_success 'a changed byte of review.json is found and named' '
	tamper t2 && d=$(run_dir t2 WO-1) &&
	sed -i "s/approve/approvE/" $d/review.json &&
	(cd t2 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$(basename $d): artifact changed since the manifest.*, review.json$" out &&
	test $(wc -l <out) -eq 1
'

test_expect_success 'a changed work_order.md is found twice: hash and revision' '
	tamper t3 && d=$(run_dir t3 WO-3) &&
	sed -i "s/Do 3/Do three/" $d/work_order.md &&
	(cd t3 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$(basename $d): artifact changed since the manifest.*, work_order.md$" out &&
	test_grep "^$(basename $d): work order bytes are not the revision run.*, work_order.md$" out
'

test_expect_success 'a deleted artifact and an added one are found' '
	tamper t4 && d=$(run_dir t4 WO-1) &&
	rm $d/summary.md && echo extra >$d/notes.txt &&
	(cd t4 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$(basename $d): artifact missing (listed in the manifest), summary.md$" out &&
	test_grep "^$(basename $d): artifact not in the manifest (added after the merge), notes.txt$" out &&
	test $(wc -l <out) -eq 2
'

test_expect_success 'a rewritten target history is found (merge commit unreachable)' '
	tamper t5 && d=$(run_dir t5 WO-3) &&
	git -C t5 reset -q --hard HEAD~1 &&
	(cd t5 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$(basename $d): merge commit [0-9a-f]* is not reachable from the target (history rewritten?), refs/heads/main$" out &&
	test $(wc -l <out) -eq 1
'

test_expect_success 'swapped manifests are found in both runs' '
	tamper t6 && d1=$(run_dir t6 WO-1) && d2=$(run_dir t6 WO-2) &&
	mv $d1/manifest.json tmp.json && mv $d2/manifest.json $d1/manifest.json &&
	mv tmp.json $d2/manifest.json &&
	(cd t6 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$(basename $d1): manifest names run .$(basename $d2)., not this one" out &&
	test_grep "^$(basename $d2): manifest names run .$(basename $d1)., not this one" out &&
	test_grep "^$(basename $d1): manifest chain broken" out &&
	test_grep "^$(basename $d2): manifest chain broken" out
'

test_expect_success 'a re-sealed manifest breaks the chain of the next run' '
	tamper t7 && d1=$(run_dir t7 WO-1) && d2=$(run_dir t7 WO-2) &&
	sed -i "s/approve/approvE/" $d1/review.json && rm $d1/manifest.json &&
	(cd t7 && sluice audit --write-manifest $(basename $d1) >/dev/null &&
	 test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$(basename $d2): manifest chain broken" out
'

test_expect_success 'a merge commit replaced on the target is found; so is a wrong trailer' '
	tamper t8 && d=$(run_dir t8 WO-3) && r=$(basename $d) &&
	(cd t8 && git cat-file commit HEAD | sed "s/^Reviewed-by: .*/Reviewed-by: nobody/" >c &&
	 new=$(git hash-object -t commit -w c) && git update-ref refs/heads/main $new &&
	 test_expect_failure_code 1 sluice audit $r >../out &&
	 sqlite3 .system/sluice.db "UPDATE runs SET merge_commit = '\''$new'\'' WHERE id = '\''$r'\''" &&
	 test_expect_failure_code 1 sluice audit $r >../out2) &&
	test_grep "^$r: merge commit [0-9a-f]* is not reachable from the target" out &&
	test_grep "^$r: merge commit says Reviewed-by: nobody, the run says" out2 &&
	test_grep "^$r: merge commit differs: store says" out2
'

test_expect_success 'an approved tree that is not the merged one is found' '
	tamper t9 && r=$(basename $(run_dir t9 WO-2)) &&
	(cd t9 && sqlite3 .system/sluice.db "UPDATE runs SET approved_tree = '\''0123456789012345678901234567890123456789'\'' WHERE id = '\''$r'\''" &&
	 test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$r: approved tree differs: store says 012345678901, manifest says" out &&
	test_grep "^$r: the merged head.s tree [0-9a-f]* is not the approved tree 012345678901, " out
'

test_expect_success 'a run folder removed by hand (no gc tombstone) is found' '
	tamper t10 && d=$(run_dir t10 WO-1) && rm -rf $d &&
	(cd t10 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$(basename $d): run folder missing (and no gc tombstone says gc removed it), " out &&
	test_grep "^$(basename $(run_dir t10 WO-2)): manifest chain broken" out
'

test_expect_success 'audit RUN: only that run; by prefix; --json' '
	r=$(basename $(run_dir repo WO-2)) &&
	(cd repo && sluice audit $(echo $r | cut -c1-21) >../out) &&
	test_grep "^audit: 1 merged run," out &&
	(cd t4 && test_expect_failure_code 1 sluice audit --json >../out.json) &&
	test_grep "\"ok\": false" out.json &&
	test_grep "\"where\": \"notes.txt\"" out.json &&
	(cd repo && sluice audit --json >../ok.json) && test_grep "\"ok\": true" ok.json &&
	validate audit.schema.json out.json && validate audit.schema.json ok.json
'

test_expect_success 'audit of a run that is not merged is an error' '
	(cd repo && printf -- "---\nid: WO-9\ntitle: Nine\n---\n" >work_orders/WO-9.md &&
	 sluice tick >/dev/null && test_expect_failure_code 1 sluice audit $(run_of WO-9) 2>../err) &&
	test_grep "is awaiting_review, not merged" err &&
	(cd repo && sluice abandon $(run_of WO-9) >/dev/null)
'

test_done
