#!/bin/sh
# The worktree pool (issue 14) with what lives beside a worktree's files.
# worktree.share links and worktree.copy copies: a reused worktree's `git
# clean` removes the link, never what it points at (the main checkout's
# folder), and the next run has the link and a fresh copy again (also with
# keep-ignored, where an edited copy would otherwise stay). And a process a
# builder left running (setsid, out of its process group) with its current
# folder in the worktree: when the next run takes that worktree from the
# pool, the process must not be able to write into the next run's change.
# (Without a pool the folder is deleted and such a process writes nowhere.)
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid

# A: records what it sees of the shared and copied paths, edits its copy.
cat >"$BUILDERS/A.sh" <<'EOS'
{ ls -l deps | cut -c1; cat deps/lib.js; cat .env; } >"$SEEN/A" 2>&1
echo "edited by A" >>.env
echo "written by A through the link" >deps/by-a.txt
echo A >A.txt
EOS
cat >"$BUILDERS/B.sh" <<'EOS'
{ ls -l deps | cut -c1; cat deps/lib.js; cat .env; } >"$SEEN/B" 2>&1
echo B >B.txt
EOS

share_repo() { # DIR RECYCLE
	sluice_repo "$1" "$(approve_reviewer_config)" "worktree:" "  pool: 2" "  recycle: $2" \
		"  share: [deps]" "  copy: [.env]" &&
	printf "deps/\n.env\n" >"$1/.gitignore" && git -C "$1" add .gitignore &&
	git -C "$1" commit -q -m ignores &&
	mkdir "$1/deps" && echo "the main checkout's lib" >"$1/deps/lib.js" &&
	echo "SECRET=main" >"$1/.env"
}

for mode in clean keep-ignored; do
	test_expect_success "share and copy with recycle: $mode: the link is removed, not followed; a fresh copy" "
		SEEN=\$TRASH/seen-$mode && export SEEN && mkdir -p \"\$SEEN\" &&
		share_repo r-$mode $mode &&
		wo r-$mode A && sluice -C r-$mode tick >tick.out 2>&1 &&
		test \"\$(state_of r-$mode \"\$(run_of r-$mode A)\")\" = merged &&
		wo r-$mode B && sluice -C r-$mode tick >tick.out 2>&1 &&
		b=\$(run_of r-$mode B) && test \"\$(state_of r-$mode \$b)\" = merged &&
		sluice -C r-$mode log \$b | grep -q 'worktree from the pool' &&
		test \"\$(cat r-$mode/deps/lib.js)\" = \"the main checkout's lib\" &&
		test -f r-$mode/deps/by-a.txt &&
		test \"\$(cat r-$mode/.env)\" = SECRET=main &&
		printf '%s\n' l \"the main checkout's lib\" SECRET=main >want &&
		test_cmp want \"\$SEEN/A\" && test_cmp want \"\$SEEN/B\"
	"
done

# L leaves a process behind in its worktree (in a session of its own: L
# waits until it is up, so that the end of L's process group cannot take
# it along), which waits until the next
# run's builder started, then writes leak.txt into its current folder and
# says so (also when its folder is gone and the write fails); N waits for
# that (at most 30 s) before it adds its own file.
cat >"$BUILDERS/L.sh" <<EOS
setsid sh -c ': >"$TRASH/daemon-up"; i=0; while [ ! -f "$TRASH/next-started" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done; (echo leak >leak.txt) 2>/dev/null; : >"$TRASH/leaked"' </dev/null >/dev/null 2>&1 &
i=0
while [ ! -f "$TRASH/daemon-up" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
echo L >L.txt
EOS
cat >"$BUILDERS/N.sh" <<EOS
: >"$TRASH/next-started"
i=0
while [ ! -f "$TRASH/leaked" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
echo N >N.txt
EOS

test_expect_success 'a process a builder left in its worktree does not write into the next run' '
	sluice_repo lp "$(approve_reviewer_config)" "worktree:" "  pool: 2" &&
	wo lp L && sluice -C lp tick >tick.out 2>&1 &&
	test "$(state_of lp "$(run_of lp L)")" = merged &&
	wo lp N && sluice -C lp tick >tick.out 2>&1 &&
	n=$(run_of lp N) && test "$(state_of lp $n)" = merged &&
	test -f leaked &&
	grep "^diff --git" lp/.system/runs/$n/diff.patch >heads &&
	echo "diff --git a/N.txt b/N.txt" >want && test_cmp want heads &&
	test -z "$(git -C lp ls-tree -r --name-only main | grep leak)"
'

# The same with the process's current folder deeper in the worktree.
cat >"$BUILDERS/L2.sh" <<EOS
mkdir -p deep/er && echo k >deep/er/keep.txt && cd deep/er &&
setsid sh -c ': >"$TRASH/daemon2-up"; i=0; while [ ! -f "$TRASH/next2-started" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done; (echo leak >leak2.txt) 2>/dev/null; : >"$TRASH/leaked2"' </dev/null >/dev/null 2>&1 &
i=0
while [ ! -f "$TRASH/daemon2-up" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
echo L2 >L2.txt
EOS
cat >"$BUILDERS/N2.sh" <<EOS
: >"$TRASH/next2-started"
i=0
while [ ! -f "$TRASH/leaked2" ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
echo N2 >N2.txt
EOS

test_expect_success 'nor does one whose current folder is deeper in the worktree' '
	sluice_repo lp2 "$(approve_reviewer_config)" "worktree:" "  pool: 2" &&
	wo lp2 L2 && sluice -C lp2 tick >tick.out 2>&1 &&
	test "$(state_of lp2 "$(run_of lp2 L2)")" = merged &&
	wo lp2 N2 && sluice -C lp2 tick >tick.out 2>&1 &&
	n=$(run_of lp2 N2) && test "$(state_of lp2 $n)" = merged &&
	test -f leaked2 &&
	grep "^diff --git" lp2/.system/runs/$n/diff.patch >heads &&
	echo "diff --git a/N2.txt b/N2.txt" >want && test_cmp want heads
'

test_done
