#!/bin/sh
# Random merge scenarios: sluice merge-preview against git merge-tree --write-tree.
#
#   SLUICE=path/to/sluice tests/merge/gen.sh [-n COUNT] [-s SEED] [-k] [-l]
#
# Builds one repository with a small base tree (text files in three
# directories, an empty file, a binary file, a symlink, an executable) and,
# per case, two branches from it (sometimes a criss-cross history with two
# merge bases) with 1-4 random operations each: edit a line, append, delete,
# rename (also across directories), toggle the executable bit, add a file
# (sometimes the same name on both sides), rewrite the binary file, move a
# whole directory, turn a file into a symlink, rename the empty file. Then,
# for OURS=a THEIRS=b, sluice merge-preview and git merge-tree --write-tree
# (on the commit ids) must give the same verdict, the same clean tree and
# the same conflicted paths (--name-only; a "<path>~<side>" name counted as
# <path>): git is sluice's authority.
# -l also counts how often libgit2's opinion (--libgit2) differs from git's
# verdict or clean tree.
# -k keeps the scratch repository. The RNG is seeded, so a failing case reproduces with the same -s and -n.
# Prints a summary line; exits 1 on any violation.
set -u

count=200
seed=42
keep=0
lg=0
while getopts n:s:kl opt; do
	case $opt in
	n) count=$OPTARG ;;
	s) seed=$OPTARG ;;
	k) keep=1 ;;
	l) lg=1 ;;
	*) echo "usage: $0 [-n COUNT] [-s SEED] [-k] [-l]" >&2; exit 2 ;;
	esac
done
: "${SLUICE:?set SLUICE to the sluice binary}"
case $SLUICE in /*) ;; *) SLUICE=$(pwd)/$SLUICE ;; esac
seed0=$seed

dir=$(mktemp -d "${TMPDIR:-/tmp}/sluice-merge-gen.XXXXXX")
cleanup() { [ "$keep" = 1 ] && echo "# kept $dir" >&2 || rm -rf "$dir"; }
trap cleanup EXIT
export HOME="$dir" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=gen GIT_AUTHOR_EMAIL=gen@example.com
export GIT_COMMITTER_NAME=gen GIT_COMMITTER_EMAIL=gen@example.com
unset GIT_DIR GIT_WORK_TREE

# A linear congruential generator: rand N sets r to 0..N-1.
rand() {
	seed=$(((seed * 1103515245 + 12345) % 2147483648))
	r=$(((seed / 65536) % $1))
}

# A random tracked path of the current checkout (regular files and links).
pick() {
	n=$(git ls-files | wc -l)
	[ "$n" -gt 0 ] || { p=""; return; }
	rand "$n"
	p=$(git ls-files | sed -n "$((r + 1))p")
}

dirs="src docs lib"
pick_dir() {
	rand 4
	case $r in 0) d=src ;; 1) d=docs ;; 2) d=lib ;; 3) d=. ;; esac
}

op() { # one random operation on the checkout; $1 = side tag for unique names
	rand 12
	case $r in
	0 | 1 | 2) # edit a line of a text file
		pick
		[ -n "$p" ] && [ -f "$p" ] && [ ! -L "$p" ] && grep -Iq . "$p" 2>/dev/null || return 0
		rand 10
		sed -i "$((r + 1))s/.*/$1 edit $seed/" "$p" ;;
	3) # append
		pick
		[ -n "$p" ] && [ -f "$p" ] && [ ! -L "$p" ] && echo "$1 tail $seed" >>"$p" ;;
	4) # delete
		pick
		[ -n "$p" ] && git rm -qf "$p" ;;
	5) # rename, maybe to another directory
		pick
		[ -n "$p" ] || return 0
		pick_dir
		mkdir -p "$d"
		rand 3
		git mv -k "$p" "$d/ren$r-$(basename "$p")" ;;
	6) # toggle the executable bit
		pick
		[ -n "$p" ] && [ -f "$p" ] && [ ! -L "$p" ] && { [ -x "$p" ] && chmod -x "$p" || chmod +x "$p"; } ;;
	7) # add a file; half of the time a name both sides may pick
		pick_dir
		mkdir -p "$d"
		rand 2
		if [ "$r" = 0 ]; then name="$d/new-$1-$seed.txt"; else rand 3; name="$d/common$r.txt"; fi
		rand 3
		printf 'new %s\nline2\nline3\n' "$r" >"$name" ;;
	8) # rewrite the binary file
		[ -f bin.dat ] && printf 'bin\000%s\000' "$1$seed" >bin.dat ;;
	9) # move a whole directory
		rand 3
		set -- $dirs
		shift "$r"
		[ -d "$1" ] && [ ! -e "$1-moved" ] && git mv -k "$1" "$1-moved" ;;
	10) # a file becomes a symlink
		pick
		[ -n "$p" ] && [ -f "$p" ] && [ ! -L "$p" ] && rm "$p" && ln -s target-of-link "$p" ;;
	11) # rename the empty file
		[ -f empty.c ] && git mv -k empty.c "empty-$1.c" ;;
	esac
	return 0
}

commit_side() { # $1 tag: 1-4 random ops, commit
	rand 4
	k=$((r + 1))
	while [ "$k" -gt 0 ]; do
		op "$1"
		k=$((k - 1))
	done
	git add -A && git commit -qm "$1" --allow-empty
}

fail=0
clean_agree=0
conflict_agree=0
lg_wrong=0
criss=0

cd "$dir" && git init -q -b main repo && cd repo || exit 1
for d in $dirs; do
	mkdir "$d"
	for f in a b c d; do
		i=1
		while [ $i -le 10 ]; do echo "$d/$f line $i"; i=$((i + 1)); done >"$d/$f.txt"
	done
done
: >empty.c
printf 'bin\000base\000' >bin.dat
ln -s src/a.txt link
printf '#!/bin/sh\necho hi\n' >run.sh && chmod +x run.sh
git add -A && git commit -qm base || exit 1

check() { # case number; compares merge-preview a b with merge-tree on a's and b's ids
	ha=$(git rev-parse a) && hb=$(git rev-parse b) || { fail=$((fail + 1)); return; }
	git merge-tree --write-tree --name-only "$ha" "$hb" >"$dir/git.out" 2>"$dir/git.err"
	g_rc=$?
	"$SLUICE" merge-preview $lgopt a b >"$dir/sl.out" 2>"$dir/sl.err"
	s_rc=$?
	if [ "$g_rc" -gt 1 ] || [ "$s_rc" -gt 1 ]; then
		echo "case $1: error (git $g_rc, sluice $s_rc)"; cat "$dir/git.err" "$dir/sl.err"
		fail=$((fail + 1)); return
	fi
	g_tree=$(head -n 1 "$dir/git.out")
	grep -v "^libgit2: " "$dir/sl.out" >"$dir/sl.main"
	if [ "$s_rc" != "$g_rc" ]; then
		echo "case $1: sluice exit $s_rc, git merge-tree exit $g_rc"; fail=$((fail + 1))
	elif [ "$s_rc" = 0 ]; then
		if [ "$(sed -n 2p "$dir/sl.main")" != "$g_tree" ]; then
			echo "case $1: clean trees differ"; fail=$((fail + 1))
		else
			clean_agree=$((clean_agree + 1))
		fi
	else
		# git --name-only: tree, paths, blank line, messages; "<path>~<id>" is <path>
		awk 'NR > 1 && /^$/ { exit } NR > 1' "$dir/git.out" |
			sed "s/~$ha\$//; s/~$hb\$//" | LC_ALL=C sort -u >"$dir/g.paths"
		tail -n +2 "$dir/sl.main" | LC_ALL=C sort -u >"$dir/s.paths"
		if ! cmp -s "$dir/g.paths" "$dir/s.paths"; then
			echo "case $1: conflicted paths differ (git, sluice):"
			diff "$dir/g.paths" "$dir/s.paths"
			fail=$((fail + 1))
		else
			conflict_agree=$((conflict_agree + 1))
		fi
	fi
	# libgit2's opinion, for the record: how often it differs from git's
	l_line=$(grep "^libgit2: " "$dir/sl.out")
	if [ "$lg" = 1 ] && { { [ "$g_rc" = 0 ] && [ "$l_line" != "libgit2: clean $g_tree" ]; } ||
		{ [ "$g_rc" = 1 ] && [ "${l_line#libgit2: clean}" != "$l_line" ]; }; }; then
		lg_wrong=$((lg_wrong + 1))
	fi
}

lgopt=
[ "$lg" = 1 ] && lgopt=--libgit2

i=1
while [ "$i" -le "$count" ]; do
	git checkout -q -f --detach main && git clean -qfdx
	rand 5
	if [ "$r" = 0 ]; then # criss-cross: two merge bases
		criss=$((criss + 1))
		git checkout -q -B a main && commit_side A0
		git checkout -q -B b main && commit_side B0
		if git merge -q --no-edit a >/dev/null 2>&1 && git checkout -q a &&
			git merge -q --no-edit "b^1" >/dev/null 2>&1; then
			git checkout -q a && commit_side A
			git checkout -q b && commit_side B
		else
			git merge --abort >/dev/null 2>&1
			git checkout -q -f b
			git reset -q --hard "b^1" 2>/dev/null
		fi
	else
		git checkout -q -B a main && commit_side A
		git checkout -q -B b main && commit_side B
	fi
	check "$i"
	i=$((i + 1))
done

echo "# $count merges (seed $seed0, $criss criss-cross): $clean_agree clean agreed," \
	"$conflict_agree conflict agreed," \
	"libgit2's opinion differed $lg_wrong times (counted with -l), $fail violations"
[ "$fail" = 0 ]
