#!/bin/sh
# The run folder is the builder's to write. A builder that fails its first
# attempt after leaving an oversized review.json and gates.json there (the
# two files the next attempt's prompt reads back) has them refused at the
# bound (16 MiB), never loaded: attempt 2's prompt carries neither, the
# refusal is logged with the file's name, and the run goes on and merges.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a builder that leaves 17 MB JSON files behind and fails once' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	printf "%s\n" "retry:" "  - exit: 3" >>repo/.system/config.yaml &&
	cat >"$BUILDERS/BIG.sh" <<-\EOS &&
	if [ "$SLUICE_ATTEMPT" = 1 ]; then
		pad() { head -c 17000000 /dev/zero | tr "\0" x; }
		{ printf "{\"comments\": \"HOSTILE-REVIEW\", \"pad\": \""; pad; printf "\"}"; } \
			>"$SLUICE_RUN_DIR/review.json"
		{ printf "[{\"name\": \"HOSTILE-GATE\", \"log\": \"gates/x.log\", \"argv\": [\"x\"], "
		  printf "\"passed\": false, \"exit_code\": 7, \"pad\": \""; pad; printf "\"}]"; } \
			>"$SLUICE_RUN_DIR/gates.json"
		exit 1
	fi
	echo done >big.txt
	EOS
	wo repo BIG &&
	sluice -C repo check
'

test_expect_success 'oversized review.json and gates.json: refused, not loaded; the run merges' '
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo BIG) &&
	d=repo/.system/runs/$run &&
	test -f $d/attempts/2/prompt.md &&
	test_grep "this is attempt 2" $d/attempts/2/prompt.md &&
	test_grep -v HOSTILE-REVIEW $d/attempts/2/prompt.md &&
	test_grep -v HOSTILE-GATE $d/attempts/2/prompt.md &&
	test_grep "review.json.* over the limit" out &&
	test_grep "gates.json.* over the limit" out &&
	test "$(state_of repo $run)" = merged
'

test_done
