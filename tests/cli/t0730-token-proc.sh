#!/bin/sh
# The reviewer token is readable by nothing sluice starts: not in the
# environment of the builder or gate, not in /proc/<pid>/environ or
# /proc/<pid>/cmdline of any sluice process above them (the tick and the
# run's worker), and still the reviewer gets it.
. "$(dirname "$0")/lib.sh"

TOKEN="proc-token-$$-do-not-leak"
export PROC_TOKEN="$TOKEN"

echo "{}" >"$TRASH/script.json"
start_reviewer "$TRASH/script.json" || exit 1
echo "$REVIEWER_URL" >"$TRASH/url"

# Look at our own environment and every ancestor up to pid 1: the environ of
# each sluice process, the cmdline of all. Counts the sluice processes seen.
cat >"$TRASH/spy.sh" <<EOF
#!/bin/sh
out="$TRASH/spy.\$1"
seen=0
if tr '\0' '\n' </proc/self/environ | grep -q "$TOKEN" || env | grep -q "$TOKEN"; then
	echo "leak: own environ" >>"\$out"
fi
p=\$PPID
while [ -n "\$p" ] && [ "\$p" -gt 1 ]; do
	if tr '\0' ' ' </proc/\$p/cmdline | grep -q "$TOKEN"; then
		echo "leak: cmdline of \$p" >>"\$out"
	fi
	if [ "\$(readlink /proc/\$p/exe)" = "$SLUICE" ]; then
		seen=\$((seen + 1))
		if tr '\0' '\n' </proc/\$p/environ | grep -q "$TOKEN"; then
			echo "leak: environ of \$p (\$(tr '\0' ' ' </proc/\$p/cmdline))" >>"\$out"
		fi
	fi
	p=\$(sed -n 's/^PPid:[[:space:]]*//p' /proc/\$p/status)
done
echo "sluice ancestors: \$seen" >>"\$out"
EOF
chmod +x "$TRASH/spy.sh"

test_expect_success 'setup: a repository, the loopback reviewer, a spying builder and gate' '
	sluice_repo repo &&
	cat >>repo/.system/config.yaml <<-EOF &&
	gates:
	  spy: [sh, $TRASH/spy.sh, gate]
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $(cat url)
	  token_env: PROC_TOKEN
	  timeout: 60s
	  retries: 1
	EOF
	printf "%s\n" "echo work >work.txt" "sh $TRASH/spy.sh builder" >"$BUILDERS/S1.sh" &&
	sluice -C repo check
'

test_expect_success 'a tick: the run merges, the reviewer got the token' '
	wo repo S1 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo S1) &&
	test "$(state_of repo $run)" = merged &&
	req=$(grep -l "$run" "$REVIEWER_DIR"/requests/*.body | head -n 1) && test -n "$req" &&
	test_grep "Authorization: Bearer $TOKEN" ${req%.body}.headers
'

test_expect_success 'the builder and the gate saw two sluice processes above them' '
	test_grep "sluice ancestors: 2" spy.builder &&
	test_grep "sluice ancestors: 2" spy.gate
'

test_expect_success 'neither found the token in any environ or cmdline' '
	test_grep -v "leak" spy.builder &&
	test_grep -v "leak" spy.gate
'

test_expect_success 'sluice run (foreground) holds too' '
	printf "%s\n" "echo work2 >work2.txt" "sh $TRASH/spy.sh run" >"$BUILDERS/S2.sh" &&
	wo repo S2 &&
	sluice -C repo run S2 >out 2>err &&
	test "$(state_of repo $(run_of repo S2))" = merged &&
	test_grep "sluice ancestors: 2" spy.run &&
	test_grep -v "leak" spy.run
'

test_expect_success 'the token appears in no file under .system/' '
	! grep -r -l "$TOKEN" repo/.system
'

test_done
