#!/bin/sh
# Worktree acquisition: sluice (libgit2 git_worktree_add without checkout +
# `git reset --hard` in the new worktree, what worktree_add does, run
# through `sluice worktree create`) against `git worktree add -b` and against
# a pure libgit2 checkout (git_worktree_add with GIT_CHECKOUT_SAFE, the
# research's baseline), on generated repositories of 1k, 10k and 50k files.
#
#   bench/worktree.sh [SLUICE_BINARY]     (default: build/h2/sluice)
#   SIZES="1000 10000" ITER=3 bench/worktree.sh
#
# Prints one markdown table row per size: median seconds and ratios to git.
# Repositories live under ${TMPDIR:-/tmp} and are removed afterwards.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${1:-${SLUICE:-$here/build/h2/sluice}}
SIZES=${SIZES:-"1000 10000 50000"}
SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE") # it runs from the repositories
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-wt.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b

# A pure libgit2 add with a SAFE checkout, for comparison.
cat >"$work/lg2add.c" <<'C'
#include <git2.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	git_repository *r; git_reference *br; git_object *c; git_worktree *wt;
	git_worktree_add_options o;
	git_libgit2_init();
	if (argc != 4 || git_repository_open(&r, argv[1]) || git_revparse_single(&c, r, "HEAD") ||
	    git_branch_create(&br, r, argv[2], (git_commit *)c, 0))
		return 1;
	git_worktree_add_options_init(&o, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	o.ref = br;
	if (git_worktree_add(&wt, r, argv[2], argv[3], &o)) {
		fprintf(stderr, "%s\n", git_error_last()->message);
		return 1;
	}
	return 0;
}
C
cc -O2 -o "$work/lg2add" "$work/lg2add.c" $(pkg-config --cflags --libs libgit2)

make_repo() { # DIR N: N files of ~1 KiB in 100-file directories, one packed commit
	git init -q -b main "$1"
	(cd "$1" && awk -v n="$2" 'BEGIN {
		for (i = 0; i < n; i++) {
			d = sprintf("d%03d", int(i / 100)); f = sprintf("%s/f%05d.txt", d, i)
			if (i % 100 == 0) system("mkdir -p " d)
			for (l = 0; l < 16; l++) printf("file %d line %d %s\n", i, l, "abcdefghijklmnopqrstuvwxyz0123456789abcdef") > f
			close(f)
		} }' && git add -A && git -c gc.auto=0 commit -q -m base && git gc -q)
}

now() { date +%s%N; }
secs() { awk -v ns="$1" 'BEGIN { printf "%.3f", ns / 1e9 }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

clean_wt() { # REPO PATH BRANCH
	git -C "$1" worktree remove --force "$2" && git -C "$1" branch -q -D "$3"
}

echo "| files | iterations | git worktree add -b | sluice worktree create | libgit2 SAFE checkout | sluice/git | libgit2/git |"
echo "|---|---|---|---|---|---|---|"
for n in $SIZES; do
	repo="$work/r$n"
	make_repo "$repo" "$n"
	iter=${ITER:-$([ "$n" -ge 50000 ] && echo 2 || { [ "$n" -ge 10000 ] && echo 3 || echo 5; })}
	: >"$work/g" && : >"$work/s" && : >"$work/l"
	i=0
	while [ $i -lt "$iter" ]; do
		i=$((i + 1))
		t=$(now); git -C "$repo" worktree add -q -b "g$i" "$repo/.system/worktrees/g$i" HEAD
		echo $(($(now) - t)) >>"$work/g"; clean_wt "$repo" "$repo/.system/worktrees/g$i" "g$i"
		t=$(now); (cd "$repo" && "$SLUICE" worktree create "s$i" >/dev/null 2>&1)
		echo $(($(now) - t)) >>"$work/s"
		clean_wt "$repo" "$repo/.system/worktrees/quick-build-s$i" "quick-build-s$i"
		t=$(now); "$work/lg2add" "$repo" "l$i" "$repo/.system/worktrees/l$i"
		echo $(($(now) - t)) >>"$work/l"; clean_wt "$repo" "$repo/.system/worktrees/l$i" "l$i"
	done
	g=$(median <"$work/g"); s=$(median <"$work/s"); l=$(median <"$work/l")
	echo "| $n | $iter | $(secs "$g") s | $(secs "$s") s | $(secs "$l") s |" \
		"$(awk -v a="$s" -v b="$g" 'BEGIN { printf "%.2f", a / b }') |" \
		"$(awk -v a="$l" -v b="$g" 'BEGIN { printf "%.2f", a / b }') |"
	rm -rf "$repo"
done
