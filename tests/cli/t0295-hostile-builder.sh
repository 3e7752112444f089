#!/bin/sh
# A builder that attacks the service from inside: links and FIFOs planted in
# its run folder, a git config that runs a program in every later git
# command. Nothing outside .system/ changes, nothing hangs, and the reviewer
# token reaches no program sluice starts.
. "$(dirname "$0")/lib.sh"

TOKEN="hostile-token-$$"
export HOSTILE_TOKEN="$TOKEN"

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	printf "%s\n" "  token_env: HOSTILE_TOKEN" >>repo/.system/config.yaml &&
	printf "%s\n" "gates:" "  unit: [sh, -c, \"echo gate output\"]" >>repo/.system/config.yaml &&
	sluice -C repo check &&
	mkdir outside &&
	for f in patch json request gatelog files; do echo "precious $f" >outside/$f || return 1; done &&
	sha256sum outside/* >before &&
	cat >"$TRASH/spy.sh" <<-EOF &&
	#!/bin/sh
	env >>"$TRASH/spy.env"
	cat
	EOF
	chmod +x "$TRASH/spy.sh" &&
	cat >"$BUILDERS/H1.sh" <<-EOF &&
	echo work >work.txt
	d="\$SLUICE_RUN_DIR"
	ln -s "$TRASH/outside/patch" "\$d/diff.patch.tmp.\$PPID"
	ln -s "$TRASH/outside/files" "\$d/files_changed.json.tmp.\$PPID"
	ln -s "$TRASH/outside/request" "\$d/review-request.json.tmp.\$PPID"
	mkdir -p "\$d/gates" && ln -sf "$TRASH/outside/gatelog" "\$d/gates/unit.log"
	mkfifo "\$d/summary.md"
	git config core.fsmonitor "$TRASH/spy.sh"
	git config filter.spy.smudge "$TRASH/spy.sh"
	git config filter.spy.clean "$TRASH/spy.sh"
	echo "* filter=spy" >.gitattributes
	EOF
	echo "echo more >more.txt" >"$BUILDERS/H2.sh"
'

test_expect_success 'the run goes through; files outside are untouched' '
	wo repo H1 &&
	timeout 600 "$SLUICE" -C repo tick >out 2>err &&
	run=$(run_of repo H1) &&
	test "$(state_of repo $run)" = merged &&
	sha256sum outside/* >after &&
	test_cmp before after &&
	test -f repo/.system/runs/$run/review-request.json &&
	! test -L repo/.system/runs/$run/review-request.json &&
	test_grep "gate output" repo/.system/runs/$run/gates/unit.log &&
	! test -p repo/.system/runs/$run/summary.md
'

test_expect_success 'no program sluice started saw the token' '
	wo repo H2 &&
	"$SLUICE" -C repo tick >out 2>err &&
	test "$(state_of repo $(run_of repo H2))" = merged &&
	test -s "$TRASH/spy.env" &&
	! grep -q "$TOKEN" "$TRASH/spy.env" &&
	! grep -r -q "$TOKEN" repo/.system
'

# The worktree entry's gitdir file names the directory git (and libgit2's
# prune) would delete as "the worktree": a builder points it at a person's
# repository, or makes its worktree a link to a copy of itself elsewhere.
# Neither the merge's cleanup, nor the pool, nor gc --force deletes or
# changes anything there, and no link goes into the pool. (With the gitdir
# changed, libgit2 would take the named directory for the work tree: the
# snapshot refuses it and the run fails, committing nothing of it.)
printf '%s\n' 'echo x >gitdir.txt' 'git add -A && git commit -q -m x' \
	"echo \"$TRASH/victim/.git\" >\"\$(git rev-parse --git-dir)/gitdir\"" >"$BUILDERS/Rgitdir.sh"
printf '%s\n' 'echo x >link.txt' 'git add -A && git commit -q -m x' \
	"cp -a . \"$TRASH/victim/moved\" && cd .. && rm -rf worktree && ln -s \"$TRASH/victim/moved\" worktree" \
	>"$BUILDERS/Rlink.sh"
for how in gitdir link; do
	test_expect_success "a builder that redirects its worktree ($how): nothing outside .system/ goes, on merge and on gc" '
		rm -rf victim && git init -q victim && echo precious >victim/.git/precious &&
		(cd victim && find . -type f -print | sort | xargs sha256sum) >victim.before &&
		wo repo R$how &&
		timeout 600 "$SLUICE" -C repo tick >out 2>err &&
		run=$(run_of repo R$how) &&
		if test $how = gitdir
		then
			test "$(state_of repo $run)" = failed &&
			test_grep "names another folder" out
		else
			test "$(state_of repo $run)" = merged
		fi &&
		"$SLUICE" -C repo tick >out2 2>&1 &&
		{ "$SLUICE" -C repo gc --keep-last 0 --force >gc.out 2>&1 || true; } &&
		test -f victim/.git/precious &&
		(cd victim && find . -path ./moved -prune -o -type f -print | sort | xargs sha256sum) >victim.after &&
		test_cmp victim.before victim.after &&
		for d in repo/.system/pool/_pool-*; do test ! -L "$d" || return 1; done
	'
done

test_done
