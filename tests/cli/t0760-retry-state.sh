#!/bin/sh
# The retry rules' state (which overrides are active) is kept in the store,
# never read back from the run folder: a gate that overwrites
# $SLUICE_RUN_DIR/retry.json with garbage, with a huge file, or with forged
# rule indices changes nothing. The run follows the configured rules (the
# override from attempt 3, the exit at 3) and ends; `sluice retry` starts
# the rules over (its round has a new run's attempts, docs/builders.md).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a failing gate that rewrites retry.json, an override from attempt 3' '
	sluice_repo repo &&
	cat >"$BUILDERS/hostile-gate.sh" <<-\EOS &&
	r="$SLUICE_RUN_DIR/retry.json"
	case $(cat mode.txt) in
	garbage) printf "{not json" >"$r" ;;
	huge) { printf "{\"builder_rule\": 0, \"prompt_rule\": 0, \"pad\": \""
		head -c 80000000 /dev/zero | tr "\0" x; printf "\"}"; } >"$r" ;;
	forged) printf "%s\n" "{\"builder_rule\": 0, \"prompt_rule\": 0, \"reset_rule\": 0," \
		"\"attempt\": 0, \"attempts\": 0, \"exit\": 99}" >"$r" ;;
	esac
	exit 1
	EOS
	for m in garbage huge forged; do
		printf "%s\n" "echo \"\$SLUICE_ATTEMPT normal\" >>\"$TRASH/builds-\$SLUICE_WORK_ORDER_ID\"" \
			"echo $m >mode.txt; echo \$SLUICE_ATTEMPT >>work.txt" >"$BUILDERS/$m.sh" || return 1
	done &&
	cat >>repo/.system/config.yaml <<-EOF &&
	gates:
	  test: [sh, "$BUILDERS/hostile-gate.sh"]
	retry:
	  - attempt: 3
	    builder: [sh, -c, '"'"'echo "\$SLUICE_ATTEMPT override" >>"$TRASH/builds-\$SLUICE_WORK_ORDER_ID"; echo \$SLUICE_ATTEMPT >>work.txt'"'"']
	  - exit: 3
	EOF
	sluice -C repo check
'

ticks() { # DIR WO: tick until the run is final (at most 6 ticks)
	for _i in 1 2 3 4 5 6; do
		sluice -C "$1" tick >>tick.out 2>&1
		_s=$(state_of "$1" "$(run_of "$1" "$2")")
		case $_s in failed|merged|rejected|abandoned) return 0 ;; esac
	done
	echo "run of $2 is still $_s" >&2
	return 1
}

for m in garbage huge forged; do
	test_expect_success "a gate that writes $m into retry.json: three attempts by the rules, then failed" "
		wo repo $m &&
		ticks repo $m &&
		run=\$(run_of repo $m) &&
		test \"\$(state_of repo \$run)\" = failed &&
		printf '%s\n' '1 normal' '2 normal' '3 override' >expect &&
		test_cmp expect builds-$m &&
		sluice -C repo status --json \$run >st &&
		test_grep 'retry exit at 3' st &&
		test_grep -v 'remove it to start over' tick.out
	"
done

test_expect_success 'the store holds what sluice decided: the override of rule 1, from attempt 3' '
	test_skip_unless_tool sqlite3 &&
	for m in garbage huge forged; do
		run=$(run_of repo $m) &&
		sqlite3 repo/.system/sluice.db "SELECT builder_rule, prompt_rule, reset_rule FROM run_retry WHERE run_id = '"'"'$run'"'"'" >rs &&
		echo "0|-1|-1" >expect && test_cmp expect rs || return 1
	done
'

# A retry's round is a new run's: attempts 4 and 5 normal (no sticky
# override), the override at the round's third (6), then its exit.
test_expect_success 'sluice retry starts the rules over: no sticky override, forged or not' '
	run=$(run_of repo forged) &&
	sluice -C repo retry $run >out &&
	ticks repo forged &&
	test "$(state_of repo $run)" = failed &&
	sed -n 4,6p builds-forged >round &&
	printf "%s\n" "4 normal" "5 normal" "6 override" >expect &&
	test_cmp expect round &&
	test $(wc -l <builds-forged) = 6
'

test_done
