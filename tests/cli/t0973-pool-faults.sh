#!/bin/sh
# The worktree pool is crash-safe (issue 14): a process killed (SIGKILL, by
# SLUICE_FAULT) at each of the pool's named fault points (sl_fault("pool...")
# in src/, found there, not listed here), alone or with its whole tick, loses
# no worktree and gives none to two runs. After the next ticks every work
# order landed once, and the pool is consistent: each slot folder is a
# registered, detached worktree whose entry points back at it, no entry or
# folder is left that git or sluice does not account for (`git worktree prune
# --dry-run -v` says nothing), the pool holds at most worktree.pool slots,
# each builder ran in its own run's worktree (.system/runs/<run>/worktree,
# entry .git/worktrees/<run>) and never saw another run's file there, the
# two runs of the killed tick ran in worktrees of the pool (a slot taken
# when the tick died went back, it was not dropped), `git fsck` and `sluice
# audit` hold.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid jq

# SLUICE_POOL_POINTS="a b" runs only these (to replay one).
# Also the points written sl_fault(error ? NULL : "pool...").
POINTS=${SLUICE_POOL_POINTS:-$(grep -rh 'sl_fault' "$SLUICE_SOURCE_DIR/src" |
	grep -oE '"pool\.[a-z_.]+"' | tr -d '"' | sort -u)}
echo "# pool fault points: $(echo $POINTS)"

# A builder: records where it runs, checks that no other run's marker is in
# its worktree (a shared worktree), then its file. *.owner is ignored.
# S1 and S2 (which fill the pool) wait (at most 300 s and more, a guard against a hang) until the other
# started: both hold a worktree at once, so both go to the pool.
for w in S1 S2 A B C D; do
	case $w in S1) other=S2 ;; S2) other=S1 ;; *) other= ;; esac
	cat >"$BUILDERS/$w.sh" <<-EOS
	: >"\$SLUICE_RUN_DIR/../met-$w"
	i=0
	while [ -n "$other" ] && [ ! -f "\$SLUICE_RUN_DIR/../met-$other" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done
	echo "\$SLUICE_RUN_ID \$(git rev-parse --absolute-git-dir) \$(pwd -P) \$(stat -c %i .)" >>"\$SLUICE_RUN_DIR/../../seen.log"
	echo "\$SLUICE_RUN_ID" >"\$SLUICE_RUN_ID.owner"
	for o in *.owner; do [ "\$o" = "\$SLUICE_RUN_ID.owner" ] || echo "SHARED \$SLUICE_RUN_ID \$o" >>"\$SLUICE_RUN_DIR/../../seen.log"; done
	echo $w >$w.txt
	EOS
done

# pool_repo DIR: a fault_repo (dirty checkout, two gates, jobs 2, an approving
# reviewer) whose pool (size 2) holds two worktrees. Built once, as the
# template of every case (lib.sh, repo_template); a case records the inodes
# of its copy's slots (slot-inodes, for from_slots).
pool_repo() {
	rm -rf "$1" &&
	fault_repo "$1" "$(approve_reviewer_config)" &&
	sed -i "s/^worktree:\$/worktree:\n  pool: 2/" "$1/.system/config.yaml" &&
	echo "*.owner" >"$1/.gitignore" && git -C "$1" add .gitignore && git -C "$1" commit -q -m ignore &&
	wo "$1" S1 && wo "$1" S2 && "$SLUICE" -C "$1" tick >"$TRASH/seed.out" 2>&1 &&
	test "$("$SLUICE" -C "$1" runs --state merged | wc -l)" = 2 &&
	test "$(ls -A "$1/.system/pool" | wc -l)" = 2 ||
		{ echo "the seed did not fill the pool:" >&2; cat "$TRASH/seed.out" >&2; return 1; }
}

# pool_check DIR MERGED...: the promises after the crash and the settling ticks.
pool_check() {
	_d=$1 && shift &&
	for _w in "$@"; do
		test "$(merges_of "$_d" "$_w")" = 1 || { echo "$_w landed $(merges_of "$_d" "$_w") times" >&2; return 1; }
	done &&
	test "$("$SLUICE" -C "$_d" runs --state merged | wc -l)" = "$#" ||
		{ echo "not all merged:" >&2; "$SLUICE" -C "$_d" runs >&2; return 1; }
	cmp "$TRASH/notes.orig" "$_d/notes.txt" &&
	test -z "$(git -C "$_d" branch --list "run/*")" ||
		{ echo "branches left:" >&2; git -C "$_d" branch --list "run/*" >&2; return 1; }
	test -z "$(find "$_d/.git" -name "*.lock")" ||
		{ echo "locks left:" >&2; find "$_d/.git" -name "*.lock" >&2; return 1; }
	test -z "$(git -C "$_d" worktree prune --dry-run -v 2>&1)" ||
		{ echo "git would prune:" >&2; git -C "$_d" worktree prune --dry-run -v >&2; return 1; }
	# every linked worktree is a pool slot, detached, its entry pointing back
	git -C "$_d" worktree list --porcelain | sed -n "s/^worktree //p" | tail -n +2 >"$TRASH/listed" &&
	ls -A "$_d/.system/pool" 2>/dev/null | sed "s|^|$TRASH/$_d/.system/pool/|" | sort >"$TRASH/slots" &&
	sort "$TRASH/listed" >"$TRASH/listed.sorted" &&
	test_cmp "$TRASH/slots" "$TRASH/listed.sorted" &&
	test "$(wc -l <"$TRASH/slots")" -le 2 &&
	ls -A "$_d/.git/worktrees" 2>/dev/null | wc -l >"$TRASH/nentries" &&
	test "$(cat "$TRASH/nentries")" = "$(wc -l <"$TRASH/slots")" ||
		{ echo "entries and slots differ:" >&2; ls -A "$_d/.git/worktrees" "$_d/.system/pool" >&2; return 1; }
	for _s in $(cat "$TRASH/slots"); do
		_g=$(git -C "$_s" rev-parse --absolute-git-dir) &&
		test "$(cat "$_g/gitdir")" = "$_s/.git" &&
		test "$(git -C "$_s" rev-parse --abbrev-ref HEAD)" = HEAD || return 1
	done &&
	# no worktree left anywhere else under .system
	test -z "$(find "$_d/.system" -name .git ! -path "$_d/.system/pool/*")" ||
		{ echo "worktrees outside the pool:" >&2; find "$_d/.system" -name .git >&2; return 1; }
	# each builder in its own worktree, none shared
	! grep "^SHARED" "$_d/.system/seen.log" >&2 &&
	while read -r _r _g _p _i; do
		test "$_g" = "$TRASH/$_d/.git/worktrees/$_r" &&
		test "$_p" = "$TRASH/$_d/.system/runs/$_r/worktree" ||
			{ echo "run $_r built in $_p ($_g)" >&2; return 1; }
	done <"$_d/.system/seen.log" &&
	git -C "$_d" fsck --no-progress >"$TRASH/fsck.out" 2>&1 &&
	"$SLUICE" -C "$_d" audit >"$TRASH/audit.out" 2>&1 ||
		{ echo "fsck or audit:" >&2; cat "$TRASH/fsck.out" "$TRASH/audit.out" >&2; return 1; }
}

# from_slots DIR WO...: the builders of these work orders (each attempt) ran
# in worktrees that were in the pool before the crash: a slot taken by the
# killed tick went back to the pool, it was not dropped for a fresh one.
from_slots() {
	_d=$1 && shift &&
	for _w in "$@"; do
		_r=$(run_of "$_d" "$_w") &&
		grep "^$_r " "$_d/.system/seen.log" | cut -d" " -f4 >"$TRASH/inodes" &&
		test -s "$TRASH/inodes" &&
		for _i in $(cat "$TRASH/inodes"); do
			grep -qx "$_i" "$_d/.system/slot-inodes" ||
				{ echo "$_w ($_r) ran in a worktree that was not in the pool" >&2; return 1; }
		done || return 1
	done
}

# fire DIR POINT GROUP: kill at POINT in a tick that builds A and B; if no tick
# reaches the point, in `sluice gc`, then in `sluice worktree cleanup --pool`.
fire() {
	for _cmd in tick gc "worktree cleanup --pool"; do
		if [ "$3" = 1 ]; then
			SLUICE_FAULT=$2 SLUICE_FAULT_GROUP=1 setsid -w "$SLUICE" -C "$1" $_cmd </dev/null >fire.out 2>&1
		else
			SLUICE_FAULT=$2 "$SLUICE" -C "$1" $_cmd </dev/null >fire.out 2>&1
		fi
		grep -q "fault point '$2' reached" fire.out && return 0
		cat fire.out >>fire.all
	done
	echo "fault point $2 fired nowhere:" >&2
	cat fire.all >&2
	return 1
}

test_expect_success 'the pool has named fault points' '
	test -n "$POINTS"
'

test_expect_success 'the starting repository, built once: S1 and S2 landed, the pool full' '
	pool_repo r && repo_template r seeded
'

for p in $POINTS; do
	for g in 0 1; do
		test_expect_success "killed at $p (group $g): nothing lost, nothing given twice" "
			repo_copy seeded r &&
			stat -c %i r/.system/pool/* >r/.system/slot-inodes &&
			wo r A && wo r B && rm -f fire.all &&
			fire r $p $g &&
			settle r &&
			pool_check r S1 S2 A B &&
			from_slots r A B &&
			wo r C && wo r D && settle r &&
			pool_check r S1 S2 A B C D
		"
	done
done

test_done
