#!/bin/sh
# sluice audit and the merge train's gate record (issue 12): every landing
# through the train has train.json, green, for exactly its merge commit;
# removing or editing it, or landing a car the train saw red, is a finding;
# a person's commit and a run that landed before the train are notes. A car
# the train saw red and someone moved the target to is taken today by the
# runner as a landing cut short by a crash (train.json then says red): the
# audit fails on it either way.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool sqlite3

validate() { # SCHEMA FILE: validate against schema/SCHEMA; skips without python3-jsonschema
	python3 -c "import jsonschema" 2>/dev/null || test_skip "python3-jsonschema not installed"
	python3 -c "import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
		"$SLUICE_SOURCE_DIR/schema/$1" "$2"
}

# The merge gate `test` fails when X1.txt and X2.txt are both there: runs X1
# and X2 each pass it alone and break it together (a semantic conflict).
train_repo() { # DIR [config lines...]
	_tr=$1
	shift
	sluice_repo "$_tr" "gates:" \
		"  test: [sh, -c, 'if test -e X1.txt && test -e X2.txt; then echo X1 and X2 break the build together; exit 1; fi']" \
		"merge:" "  gates: [test]" "  resolve_attempts: 0" "queue:" "  jobs: 2" \
		"$(approve_reviewer_config)" "$@"
}

# A json value of a run: json_of DIR RUN KEY (first match, strings only)
json_of() {
	"$SLUICE" -C "$1" status --json "$2" | sed -n "s/^ *\"$3\": \"\(.*\)\",\{0,1\}\$/\1/p" | head -n 1
}

tamper() { rm -rf "$1" && cp -a repo "$1"; }

test_expect_success 'setup: two runs land through the merge train' '
	train_repo repo &&
	echo "echo a1 >a1.txt" >"$BUILDERS/A1.sh" &&
	echo "echo a2 >a2.txt" >"$BUILDERS/A2.sh" &&
	wo repo A1 && wo repo A2 &&
	settle repo &&
	for w in A1 A2; do
		r=$(run_of repo $w) &&
		test "$(state_of repo $r)" = merged &&
		test -f repo/.system/runs/$r/train.json &&
		echo $r >$w.id || return 1
	done
'

test_expect_success 'the gate record is the landed commit: its tree, parents, green gates' '
	r=$(cat A2.id) && m=$(json_of repo $r merge_commit) &&
	t=repo/.system/runs/$r/train.json &&
	test_grep "\"commit\": \"$m\"" $t &&
	test_grep "\"tree\": \"$(git -C repo rev-parse $m^{tree})\"" $t &&
	test_grep "\"base\": \"$(git -C repo rev-parse $m^1)\"" $t &&
	test_grep "\"head\": \"$(git -C repo rev-parse $m^2)\"" $t &&
	test_grep "\"green\": true" $t &&
	test_grep "\"name\": \"test\"" $t &&
	test_grep "\"train.json\"" repo/.system/runs/$r/manifest.json
'

test_expect_success 'audit after landings through the train: clean, both gate records counted' '
	(cd repo && sluice audit >../out) &&
	test_grep "^audit: 2 merged runs, [0-9]* artifacts, chain of 2 manifests: all hold$" out &&
	test_grep "^audit: 2 landings with a green gate record, 0 landed before the merge train, 0 commits by a person$" out &&
	test_grep -v "^note:" out &&
	(cd repo && sluice audit --json >../ok.json) &&
	test_grep "\"gated\": 2" ok.json && test_grep "\"notes\": \[\]" ok.json &&
	validate audit.schema.json ok.json
'

test_expect_success 'train.json removed: the manifest and the gate record say so' '
	tamper t1 && r=$(cat A1.id) && m=$(json_of t1 $r merge_commit) &&
	rm t1/.system/runs/$r/train.json &&
	(cd t1 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$r: artifact missing (listed in the manifest), train.json$" out &&
	test_grep "^$r: missing gate record: no green gate record for the tree [0-9a-f]\{12\} of merge commit $(echo $m | cut -c1-12), train.json$" out &&
	test $(wc -l <out) -eq 2
'

test_expect_success 'the tree of train.json edited: hash mismatch and tree differs' '
	tamper t2 && r=$(cat A2.id) && m=$(json_of t2 $r merge_commit) &&
	other=$(git -C t2 rev-parse $m^1^{tree}) &&
	sed -i "s/\"tree\": \"[0-9a-f]*\"/\"tree\": \"$other\"/" t2/.system/runs/$r/train.json &&
	(cd t2 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$r: artifact changed since the manifest .*, train.json$" out &&
	test_grep "^$r: tree differs: the gate record says $(echo $other | cut -c1-12), the merge commit.s tree is $(git -C t2 rev-parse $m^{tree} | cut -c1-12), train.json$" out &&
	(cd t2 && test_expect_failure_code 1 sluice audit --json >../out.json) &&
	validate audit.schema.json out.json
'

test_expect_success 'a red gate written into the record is named' '
	tamper t3 && r=$(cat A1.id) &&
	sed -i -e "s/\"exit_code\": 0/\"exit_code\": 1/" -e "s/\"passed\": true/\"passed\": false/" \
		-e "s/\"green\": true/\"green\": false/" t3/.system/runs/$r/train.json &&
	(cd t3 && test_expect_failure_code 1 sluice audit $r >../out) &&
	test_grep "^$r: the gate record is not green, train.json$" out &&
	test_grep "^$r: red gate test (exit 1), train.json$" out
'

test_expect_success 'a person.s commit on the target is reported, and audit exits 0' '
	tamper t4 &&
	echo "by hand" >t4/hand.txt && git -C t4 add hand.txt && git -C t4 commit -q -m "by hand" &&
	c=$(git -C t4 rev-parse HEAD) &&
	(cd t4 && sluice audit >../out) &&
	test_grep "^note: main: a person.s commit (no Sluice-Run: trailer): no gate record, $c$" out &&
	test_grep "1 commit by a person$" out &&
	sluice -C t4 tick >/dev/null &&
	(cd t4 && sluice audit --json >../p.json) &&
	test_grep "\"kind\": \"person\"" p.json && test_grep "\"commit\": \"$c\"" p.json &&
	validate audit.schema.json p.json
'

test_expect_success 'runs merged before the train are reported, not failed' '
	tamper t5 && r1=$(cat A1.id) && r2=$(cat A2.id) &&
	# the run that landed last can be sealed again without breaking the chain
	later=$(( $(date +%s) * 1000 + 86400000 )) &&
	sqlite3 t5/.system/sluice.db "UPDATE store_meta SET value = '\''$later'\'' WHERE key = '\''train_since_ms'\''" &&
	(cd t5 && sluice audit >../out) &&
	test_grep "^note: $r1: landed before the merge train: its gate record is not required, " out &&
	test_grep "0 landings with a green gate record, 2 landed before the merge train" out &&
	tip=$(git -C t5 rev-parse main) &&
	if test "$(json_of t5 $r1 merge_commit)" = $tip; then r2=$r1; fi &&
	d=t5/.system/runs/$r2 &&
	rm $d/train.json $d/manifest.json &&
	sluice -C t5 audit --write-manifest $r2 >/dev/null &&
	(cd t5 && sluice audit >../out) &&
	test_grep "^note: $r2: landed before the merge train: no gate record, $(json_of t5 $r2 merge_commit)$" out &&
	sqlite3 t5/.system/sluice.db "DELETE FROM store_meta WHERE key = '\''train_since_ms'\''" &&
	(cd t5 && sluice audit >../out) &&
	test_grep "^note: $r2: landed before the merge train: no gate record, " out &&
	sqlite3 t5/.system/sluice.db "INSERT INTO store_meta (key, value) VALUES ('\''train_since_ms'\'', '\''0'\'')" &&
	(cd t5 && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$r2: missing gate record: " out
'

test_expect_success 'setup: X1 and X2 break the gate together; the second car goes red' '
	train_repo red &&
	meeting_builders X1 X2 "echo x >%s.txt" &&
	wo red X1 && wo red X2 &&
	settle red &&
	x1=$(run_of red X1) && x2=$(run_of red X2) &&
	if test "$(state_of red $x1)" = merged; then g=$x1 b=$x2; else g=$x2 b=$x1; fi &&
	test "$(state_of red $g)" = merged &&
	test "$(state_of red $b)" = merge_conflict &&
	test_grep "\"passed\": false" red/.system/runs/$b/train/gates.json &&
	echo $b >red.id &&
	(cd red && sluice audit >../out)
'

test_expect_success 'the red car forged onto the target: audit fails, naming it and its red gate' '
	b=$(cat red.id) && h=$(json_of red $b head_commit) && w=$(json_of red $b work_order) &&
	m=$(printf "Merge %s\n\nWork-Order: %s\nSluice-Run: %s\nReviewed-by: approve-bot\n" $w $w $b |
		git -C red commit-tree $(git -C red merge-tree --write-tree main $h) -p main -p $h) &&
	git -C red update-ref refs/heads/main $m &&
	(cd red && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$b: no green gate record for the tree [0-9a-f]* of this merge commit: it did not land through the merge train, $m$" out &&
	test_grep "^$b: the merge train tested run $b red (train/gates.json): red gate test (exit 1), $m$" out
'

test_expect_success 'a car the train saw red, landed by hand: audit fails on its red gate' '
	printf "%s\n" "git symbolic-ref -q HEAD >/dev/null && exit 0" "echo red on the merge" \
		"exit 1" >"$BUILDERS/red-on-merge.sh" &&
	sluice_repo forged "gates:" "  test: [sh, $BUILDERS/red-on-merge.sh]" "merge:" \
		"  gates: [test]" "$(approve_reviewer_config)" &&
	echo "echo f >f.txt" >"$BUILDERS/F1.sh" &&
	wo forged F1 &&
	fault_fire train.after_result fault.out -C forged tick &&
	r=$(run_of forged F1) &&
	sluice -C forged show $r >show.out &&
	test_grep "^train: out of the line, red$" show.out &&
	car=$(git -C forged rev-parse refs/sluice/train/$r) &&
	git -C forged update-ref refs/heads/main $car &&
	{ sluice -C forged tick >tick.out 2>&1 || true; } &&
	(cd forged && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$r: .*red gate test (exit 1), " out
'

# The red car moved onto the target is no landing (the alarm holds it) until
# a person accepts it; then the run is recorded as landed, from the store.
test_expect_success 'a train.json a builder planted is never the record of an untested landing' '
	sluice_repo planted "gates:" "  test: [sh, $BUILDERS/red-on-merge.sh]" "merge:" \
		"  gates: [test]" "$(approve_reviewer_config)" &&
	echo "echo p >p.txt" >"$BUILDERS/P1.sh" &&
	wo planted P1 &&
	fault_fire train.after_result fault.out -C planted tick &&
	r=$(run_of planted P1) &&
	car=$(git -C planted rev-parse refs/sluice/train/$r) &&
	jq -n --arg c $car --arg t $(git -C planted rev-parse $car^{tree}) \
		--arg b $(git -C planted rev-parse $car^1) --arg h $(git -C planted rev-parse $car^2) \
		"{commit: \$c, tree: \$t, base: \$b, head: \$h, tested_commit: \$c, tested_base: \$b,
		  green: true, gates: [{name: \"test\", passed: true, exit_code: 0, timed_out: false}]}" \
		>planted/.system/runs/$r/train.json &&
	git -C planted update-ref refs/heads/main $car &&
	test_expect_failure_code 1 sluice -C planted tick >tick.out 2>&1 &&
	test "$(state_of planted $r)" = approved &&
	sluice -C planted accept-target $car >/dev/null &&
	sluice -C planted tick >tick.out 2>&1 &&
	test "$(state_of planted $r)" = merged &&
	test "$(jq -r .green planted/.system/runs/$r/train.json)" = false &&
	(cd planted && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$r: .*red gate test (exit 1), \|^$r: the gate record is not green" out
'

test_done
