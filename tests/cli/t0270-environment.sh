#!/bin/sh
# The worktree's environment contract: worktree.share (symlinks), .copy,
# .setup (after creation), and the repository's hooks off for the builder.
# Shared and copied paths are never committed.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: dependencies, a secret file and a failing hook in main' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	mkdir -p repo/deps && echo "library v1" >repo/deps/lib.txt &&
	echo "TOKEN=local" >repo/.env &&
	printf "#!/bin/sh\necho hook ran >&2\nexit 1\n" >repo/.git/hooks/pre-commit &&
	chmod +x repo/.git/hooks/pre-commit &&
	cat >>repo/.system/config.yaml <<-EOF &&
	worktree:
	  share: [deps]
	  copy: [.env]
	  setup: [sh, -c, "pwd >../setup-ran"]
	EOF
	sluice -C repo check &&
	cat >"$BUILDERS/E1.sh" <<-\EOS
	cat deps/lib.txt .env >seen.txt
	git add seen.txt && git commit -q -m "the builder commits; no hook stops it"
	echo "after" >>seen.txt
	EOS
'

test_expect_success 'the builder sees shared and copied paths; setup ran; hooks off' '
	wo repo E1 &&
	sluice -C repo tick >out &&
	run=$(run_of repo E1) &&
	test "$(state_of repo $run)" = merged &&
	git -C repo show main:seen.txt >seen &&
	test_grep "library v1" seen && test_grep "TOKEN=local" seen && test_grep "after" seen &&
	test "$(cat repo/.system/runs/$run/setup-ran)" = "$TRASH/repo/.system/runs/$run/worktree" &&
	git -C repo log --format=%s main^2 >subjects &&
	test_grep "no hook stops it" subjects
'

test_expect_success 'shared and copied paths are not committed' '
	git -C repo ls-tree -r --name-only main >tree &&
	test_grep -v "^deps" tree && test_grep -v "^.env" tree
'

test_expect_success 'a shared path that points outside the repository is refused' '
	sluice_repo evil &&
	ln -s /etc evil/outside &&
	printf "%s\n" "worktree:" "  share: [outside]" >>evil/.system/config.yaml &&
	echo "echo x >x.txt" >"$BUILDERS/E2.sh" &&
	wo evil E2 &&
	sluice -C evil tick >out &&
	run=$(run_of evil E2) &&
	test "$(state_of evil $run)" = failed &&
	sluice -C evil status --json $run >st && test_grep "outside" st &&
	! test -e evil/.system/runs/$run/worktree/outside
'

test_done
