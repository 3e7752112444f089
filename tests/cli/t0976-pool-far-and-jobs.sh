#!/bin/sh
# The worktree pool (issue 14), two more ways to be wrong. A pooled worktree
# whose base is far from the new run's (a person's commit changed, deleted,
# added and renamed hundreds of files, turned a file into a folder and a
# folder into a file, made files executable, added a symbolic link) is
# still, for the next run, what a fresh checkout of its base is: status,
# index, bytes, modes and types of every file. So it is after a commit that
# only adds a .gitattributes giving files whose bytes in git did not change
# other line endings on disk, and after the one that removes it (whether
# the run then takes the pooled worktree or a fresh one), and when the line
# endings change by .git/info/attributes or core.autocrlf. And `tick
# --jobs 2` with runs taking from the pool at once: two builders that run at
# the same time (each waits until the other started) are in different
# worktrees, each its run's own, and every run merges.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq sha256sum stat

# record.sh DIR OUT: what a worktree holds (tests/cli/record-worktree.sh).
cp "$SLUICE_SOURCE_DIR/tests/cli/record-worktree.sh" "$TRASH/record.sh"

for w in P1 P2 P2b P3 P4 P5; do
	printf '%s\n' "sh \"$TRASH/record.sh\" . \"$TRASH/seen/$w\"" "echo $w >$w.txt" >"$BUILDERS/$w.sh"
done

field() { # DIR RUN FIELD
	sluice -C "$1" status --json "$2" | jq -r ".$3"
}

compare_fresh() { # DIR RUN WO
	_base=$(field "$1" "$2" base_commit) &&
	rm -rf "$TRASH/fresh" "$TRASH/seen/fresh" &&
	git -C "$1" worktree add -q --detach "$TRASH/fresh" "$_base" &&
	sh "$TRASH/record.sh" "$TRASH/fresh" "$TRASH/seen/fresh" &&
	git -C "$1" worktree remove --force "$TRASH/fresh" &&
	for f in status index flags tree; do
		test_cmp "$TRASH/seen/fresh/$f" "$TRASH/seen/$3/$f" ||
			{ echo "$f differs from a fresh checkout" >&2; return 1; }
	done &&
	test "$(cat "$TRASH/seen/$3/head")" = "$_base" &&
	test "$(cat "$TRASH/seen/$3/git-dir")" = "$TRASH/$1/.git/worktrees/$2"
}

test_expect_success 'setup: 600 files in 20 folders, a pooled worktree of them' '
	sluice_repo far "$(approve_reviewer_config)" "worktree:" "  pool: 2" &&
	(cd far && for d in $(seq -w 1 20); do
		mkdir -p d$d && for f in $(seq -w 1 30); do
			printf "line one of %s/%s\nline two\n" $d $f >d$d/f$f.txt || exit 1
		done || exit 1
	 done &&
	 echo "a file" >becomes-dir && mkdir becomes-file && echo x >becomes-file/x.txt &&
	 git add -A && git commit -q -m "600 files") &&
	wo far P1 && sluice -C far tick >tick.out 2>&1 &&
	test "$(state_of far "$(run_of far P1)")" = merged &&
	test "$(ls -d far/.system/pool/_* | wc -l)" = 1
'

test_expect_success 'a person moves main far away' '
	(cd far &&
	 for d in $(seq -w 1 10); do sed -i "s/line two/line 2 changed/" d$d/f*.txt || exit 1; done &&
	 git rm -q -r d11 d12 d13 &&
	 git mv d14 renamed14 &&
	 mkdir -p new && for f in $(seq 1 100); do echo "new $f" >new/n$f.txt || exit 1; done &&
	 chmod +x d15/*.txt &&
	 git rm -q becomes-dir && mkdir becomes-dir && echo inside >becomes-dir/inside.txt &&
	 git rm -q -r becomes-file && echo "now a file" >becomes-file &&
	 ln -s d16/f01.txt link-to-f01 &&
	 git add -A && git commit -q -m "far away" &&
	 git diff --shortstat HEAD~1 HEAD >../far.stat) &&
	test_grep "[4-9][0-9][0-9] files changed" far.stat
'

test_expect_success 'the next run takes the pooled worktree and it is a fresh checkout of the far base' '
	wo far P2 && sluice -C far tick >tick.out 2>&1 &&
	r=$(run_of far P2) && test "$(state_of far "$r")" = merged &&
	test "$(cat seen/P1/inode)" = "$(cat seen/P2/inode)" &&
	sluice -C far log "$r" | grep -q "worktree from the pool" &&
	compare_fresh far "$r" P2
'

test_expect_success 'a .gitattributes that changes line endings of files whose bytes in git did not: as fresh' '
	(cd far && printf "d17/*.txt eol=crlf\n" >.gitattributes && git add .gitattributes &&
	 git commit -q -m "crlf in d17") &&
	wo far P2b && sluice -C far tick >tick.out 2>&1 &&
	r=$(run_of far P2b) && test "$(state_of far "$r")" = merged &&
	compare_fresh far "$r" P2b &&
	grep "^./d17/f01.txt " seen/P2b/tree >crlf &&
	test "$(printf "line one of 17/01\r\nline two\r\n" | sha256sum | cut -c1-64)" = "$(cut -d" " -f4 crlf)"
'

test_expect_success 'and back: the attributes undone, the same again' '
	(cd far && git rm -q .gitattributes && git commit -q -m "no attributes") &&
	wo far P3 && sluice -C far tick >tick.out 2>&1 &&
	r=$(run_of far P3) && test "$(state_of far "$r")" = merged &&
	compare_fresh far "$r" P3
'

# Line endings changed outside the tree between runs (found 2026-11-24 as a
# known breakage): each worktree's entry keeps a digest of info/attributes,
# the attributes file and the config's core.autocrlf/eol/safecrlf and
# filter.*, and a slot checked out under others is dropped for a fresh one.
test_expect_success 'line endings from .git/info/attributes, changed between runs: as fresh' '
	printf "d18/*.txt eol=crlf\n" >far/.git/info/attributes &&
	wo far P4 && sluice -C far tick >tick.out 2>&1 &&
	r=$(run_of far P4) && test "$(state_of far "$r")" = merged &&
	compare_fresh far "$r" P4 &&
	grep -q "^./d18/f01.txt file 644 $(printf "line one of 18/01\r\nline two\r\n" | sha256sum | cut -c1-64)\$" seen/P4/tree
'

test_expect_success 'line endings from core.autocrlf, set between runs: as fresh' '
	rm far/.git/info/attributes &&
	git -C far config core.autocrlf true &&
	test_when_finished "git -C \"$TRASH/far\" config --unset core.autocrlf" &&
	wo far P5 && sluice -C far tick >tick.out 2>&1 &&
	r=$(run_of far P5) && test "$(state_of far "$r")" = merged &&
	compare_fresh far "$r" P5 &&
	grep -q "^./d19/f01.txt file 644 $(printf "line one of 19/01\r\nline two\r\n" | sha256sum | cut -c1-64)\$" seen/P5/tree
'

# pair_builders A B: each records where it runs, waits (at most 300 s and more, a guard against a hang) until
# the other one started, then checks that the other is elsewhere.
pair_builders() {
	for _me in "$1" "$2"; do
		if [ "$_me" = "$1" ]; then _other=$2; else _other=$1; fi
		cat >"$BUILDERS/$_me.sh" <<-EOS || return 1
		echo "\$SLUICE_RUN_ID \$(git rev-parse --absolute-git-dir) \$(pwd -P) \$(stat -c %i .)" >"$TRASH/at-$_me.tmp"
		mv "$TRASH/at-$_me.tmp" "$TRASH/at-$_me"
		echo "\$SLUICE_RUN_ID" >>"$TRASH/at-all"
		i=0
		while [ ! -f "$TRASH/at-$_other" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done
		[ -f "$TRASH/at-$_other" ] || { echo "NEVER-MET $_me" >>"$TRASH/jobs.log"; exit 0; }
		read -r r1 g1 p1 i1 <"$TRASH/at-$_me"
		read -r r2 g2 p2 i2 <"$TRASH/at-$_other"
		[ "\$g1" != "\$g2" ] && [ "\$p1" != "\$p2" ] && [ "\$i1" != "\$i2" ] || echo "SHARED $_me $_other" >>"$TRASH/jobs.log"
		[ "\$g1" = "$TRASH/jobs/.git/worktrees/\$SLUICE_RUN_ID" ] || echo "ENTRY $_me \$g1" >>"$TRASH/jobs.log"
		[ "\$p1" = "$TRASH/jobs/.system/runs/\$SLUICE_RUN_ID/worktree" ] || echo "PATH $_me \$p1" >>"$TRASH/jobs.log"
		echo $_me >$_me.txt
		EOS
	done
}

test_expect_success 'tick --jobs 2: two runs take from the pool at once, each its own worktree' '
	sluice_repo jobs "$(approve_reviewer_config)" "worktree:" "  pool: 2" &&
	: >jobs.log &&
	for round in 1 2 3; do
		pair_builders A$round B$round &&
		rm -f at-A$round at-B$round &&
		wo jobs A$round && wo jobs B$round &&
		sluice -C jobs tick --jobs 2 >tick-$round.out 2>&1 &&
		test "$(state_of jobs "$(run_of jobs A$round)")" = merged &&
		test "$(state_of jobs "$(run_of jobs B$round)")" = merged || return 1
	done &&
	test_grep -v . jobs.log &&
	n=0 && for round in 2 3; do
		for w in A$round B$round; do
			if sluice -C jobs log "$(run_of jobs $w)" | grep -q "worktree from the pool"; then
				n=$((n + 1))
			fi || return 1
		done || return 1
	done &&
	test "$n" = 4 &&
	test "$(ls -d jobs/.system/pool/_* | wc -l)" = 2 &&
	test -z "$(git -C jobs worktree prune --dry-run -v 2>&1)" &&
	git -C jobs fsck --no-progress >/dev/null 2>&1 &&
	sluice -C jobs audit >/dev/null
'

test_done
