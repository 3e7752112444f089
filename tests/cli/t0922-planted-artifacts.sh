#!/bin/sh
# A builder that fails its first attempt after planting, in place of the
# JSON files the next steps read back or write (review.json, gates.json,
# attempts/2/prompt.md), a folder, JSON nested 100000 deep, invalid UTF-8
# or a NUL byte: each is refused or removed, logged, and the run goes on
# and merges on attempt 2. A folder named gates.json used to wedge the run
# in gating for good ("cannot rename ... Is a directory", every tick).
. "$(dirname "$0")/lib.sh"

# plant FORM: a builder that plants FORM on attempt 1 and fails, then works
plant() { # NAME COMMAND-WITH-$F
	cat >"$BUILDERS/$1.sh" <<-EOS || return 1
	if [ "\$SLUICE_ATTEMPT" = 1 ]; then
		for F in "\$SLUICE_RUN_DIR/review.json" "\$SLUICE_RUN_DIR/gates.json"; do
			$2
		done
		exit 1
	fi
	echo $1 >$1.txt
	EOS
	wo repo "$1"
}

test_expect_success 'setup: four builders that plant something and fail once' '
	sluice_repo repo "$(approve_reviewer_config)" "retry:" "  - exit: 3" "queue:" "  jobs: 4" &&
	plant DIR "rm -f \"\$F\"; mkdir -p \"\$F/sub\" \"\$SLUICE_RUN_DIR/attempts/2/prompt.md\"" &&
	plant DEEP "awk \"BEGIN { for (i = 0; i < 100000; i++) printf \\\"[\\\"; for (i = 0; i < 100000; i++) printf \\\"]\\\" }\" >\"\$F\"" &&
	plant UTF "printf \"{\\\"comments\\\": \\\"\\\\377 HOSTILE\\\"}\" >\"\$F\"" &&
	plant NUL "printf \"{\\\"comments\\\": \\\"a\\\\000 HOSTILE\\\"}\" >\"\$F\"" &&
	sluice -C repo check
'

test_expect_success 'each is refused or removed, and each run merges on attempt 2' '
	sluice -C repo tick >out 2>&1 &&
	for w in DIR DEEP UTF NUL; do
		run=$(run_of repo $w) &&
		test "$(state_of repo $run)" = merged &&
		test -f repo/.system/runs/$run/attempts/2/prompt.md &&
		test_grep -v HOSTILE repo/.system/runs/$run/attempts/2/prompt.md &&
		git -C repo show main:$w.txt >/dev/null || return 1
	done &&
	test_grep "removed the folder .*/gates.json" out &&
	test_grep "removed the folder .*/attempts/2/prompt.md" out &&
	test_grep "review.json. is not valid JSON.*depth" out &&
	test_grep "gates.json. is not valid JSON.*byte 0xff" out &&
	test_grep "review.json. is not valid JSON.*control character" out
'

test_done
