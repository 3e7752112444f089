#!/bin/sh
# Text from work orders, builders and reviewers is printed escaped: no
# terminal escape code, no fake line in queue, runs or show.
. "$(dirname "$0")/lib.sh"

ESC=$(printf '\033')

test_expect_success 'setup' '
	sluice_repo repo &&
	printf "%s\n" "cat >/dev/null" \
		"printf \"%s\\n\" \"{\\\"verdict\\\": \\\"reject\\\", \\\"reviewer\\\": \\\"bot\\\", \\\"comments\\\": \\\"\\\\u001b[31mred\\\\nWO-FAKE  merged  fake line\\\"}\"" \
		>"$BUILDERS/reject.sh" &&
	printf "%s\n" "reviewer:" "  mode: command" "  command: [sh, $BUILDERS/reject.sh]" >>repo/.system/config.yaml &&
	echo "echo one >one.txt" >"$BUILDERS/E1.sh"
'

test_expect_success 'a title with an escape code is refused, and queue prints no escape' '
	mkdir -p repo/work_orders &&
	printf -- "---\nid: E2\ntitle: \"red \\\\e[31m title\\\\nE9  ready  fake\"\n---\nx\n" >repo/work_orders/E2.md &&
	sluice -C repo queue >out 2>&1 &&
	test_grep "^invalid .*E2 .*red .x1b.31m title.nE9" out &&
	! grep -q "$ESC" out &&
	test_grep -v "^E9" out
'

test_expect_success 'a reviewer comment with an escape code and a line break is shown escaped' '
	rm repo/work_orders/E2.md &&
	wo repo E1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo E1) &&
	sluice -C repo show $run >show &&
	test_grep "red" show &&
	! grep -q "$ESC" show &&
	test_grep -v "^WO-FAKE" show &&
	sluice -C repo runs >runs &&
	! grep -q "$ESC" runs &&
	test_grep -v "^WO-FAKE" runs &&
	sluice -C repo log >log &&
	! grep -q "$ESC" log &&
	test_grep -v "^WO-FAKE" log &&
	sluice -C repo status >status &&
	! grep -q "$ESC" status &&
	test_grep -v "^WO-FAKE" status
'

test_done
