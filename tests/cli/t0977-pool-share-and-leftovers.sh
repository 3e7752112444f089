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
# run's builder started, then writes leak<SFX>.txt into its current folder and
# says so (also when its folder is gone and the write fails); N waits for
# that (at most 300 s and more, a guard against a hang) before it adds its own file.
# leftover_builders SFX DIR: L<SFX> leaves its process with DIR (in the
# worktree) as its current folder, N<SFX> is the next run.
leftover_builders() {
	cat >"$BUILDERS/L$1.sh" <<EOS
mkdir -p $2 && echo k >$2/keep$1.txt && cd $2 &&
setsid sh -c ': >"$TRASH/daemon$1-up"; i=0; while [ ! -f "$TRASH/next$1-started" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done; (echo leak >leak$1.txt) 2>/dev/null; : >"$TRASH/leaked$1"' </dev/null >/dev/null 2>&1 &
i=0
while [ ! -f "$TRASH/daemon$1-up" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done
echo L$1 >L$1.txt
EOS
	cat >"$BUILDERS/N$1.sh" <<EOS
: >"$TRASH/next$1-started"
i=0
while [ ! -f "$TRASH/leaked$1" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done
echo N$1 >N$1.txt
EOS
}

# At the top of the worktree, and with the process's current folder deeper in it.
for c in "1 ." "2 deep/er"; do
	sfx=${c%% *} dir=${c#* }
	leftover_builders "$sfx" "$dir"
	test_expect_success "a process a builder left in its worktree ($dir) does not write into the next run" '
		sluice_repo lp$sfx "$(approve_reviewer_config)" "worktree:" "  pool: 2" &&
		wo lp$sfx L$sfx && sluice -C lp$sfx tick >tick.out 2>&1 &&
		test "$(state_of lp$sfx "$(run_of lp$sfx L$sfx)")" = merged &&
		wo lp$sfx N$sfx && sluice -C lp$sfx tick >tick.out 2>&1 &&
		n=$(run_of lp$sfx N$sfx) && test "$(state_of lp$sfx $n)" = merged &&
		test -f leaked$sfx &&
		grep "^diff --git" lp$sfx/.system/runs/$n/diff.patch >heads &&
		echo "diff --git a/N$sfx.txt b/N$sfx.txt" >want && test_cmp want heads &&
		test -z "$(git -C lp$sfx ls-tree -r --name-only main | grep leak)"
	'
done

test_done
