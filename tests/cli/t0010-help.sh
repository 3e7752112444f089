#!/bin/sh
# Every command's --help and usage errors; the man page and the README cover
# every command, with the usage lines exactly as --help prints them.
. "$(dirname "$0")/lib.sh"

MAN="$SLUICE_SOURCE_DIR/docs/sluice.1"
README="$SLUICE_SOURCE_DIR/README.md"

# The commands `sluice --help` lists, one per line.
"$SLUICE" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { on = 0 }
	on && /^  [a-z]/ { print $1 }' >"$TRASH/commands"

# The man page with roff's \- turned into -, for grepping.
sed 's/\\-/-/g' "$MAN" >"$TRASH/man.txt"

# The man page's COMMANDS section.
awk '/^\.SH COMMANDS/ { on = 1; next } /^\.SH / { on = 0 } on' "$TRASH/man.txt" >"$TRASH/man-commands"

test_expect_success 'sluice --help lists the commands and exits 0' '
	sluice --help >out &&
	test_grep "^usage: sluice" out &&
	test "$(wc -l <commands)" -ge 18 &&
	test_grep "^init$" commands && test_grep "^merge-preview$" commands &&
	test_grep "^worktree$" commands
'

test_expect_success 'an unknown command or global option exits 2' '
	test_expect_failure_code 2 sluice no-such-command 2>err &&
	test_grep "no-such-command" err &&
	test_expect_failure_code 2 sluice --no-such-option 2>err
'

test_expect_success 'every command: --help exits 0 and prints a usage line naming it' '
	while read -r c; do
		sluice "$c" --help >"help.$c" 2>"help.$c.err" ||
			{ echo "sluice $c --help failed" >&2; cat "help.$c.err" >&2; exit 1; }
		grep -q "^usage: sluice $c\( \|$\)" "help.$c" ||
			{ echo "no usage line naming $c:" >&2; cat "help.$c" >&2; exit 1; }
	done <commands
'

test_expect_success 'every command: -h is --help' '
	while read -r c; do
		sluice "$c" -h >h.out && test_cmp "help.$c" h.out || return 1
	done <commands
'

test_expect_success 'every command: an unknown option exits 2 (outside a repository too)' '
	mkdir notrepo &&
	while read -r c; do
		(cd notrepo && test_expect_failure_code 2 "$SLUICE" "$c" --no-such-option 2>../err) ||
			exit 1
		test -s err || { echo "sluice $c: nothing on stderr" >&2; exit 1; }
	done <commands
'

test_expect_success 'the worktree subcommands have their own help' '
	for s in create cleanup pool status; do
		sluice worktree $s --help >out &&
		test_grep "^usage: sluice worktree $s" out || return 1
	done
'

test_expect_success 'the man page renders without warnings' '
	test_grep "^\.TH SLUICE 1" "$MAN" &&
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS "WORK ORDERS" CONFIGURATION FILES \
		"RUN STATES" "EXIT STATUS" ENVIRONMENT EXAMPLES "SEE ALSO"; do
		grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}$" "$MAN" ||
			{ echo "no section $s" >&2; exit 1; }
	done &&
	test_skip_unless_tool groff &&
	groff -man -Tutf8 -ww -z "$MAN" 2>warnings &&
	{ test ! -s warnings || { cat warnings >&2; exit 1; }; }
'

test_expect_success 'every command has a .SS entry in COMMANDS' '
	while read -r c; do
		grep -q "^\.SS \"sluice $c\( \|\"\)" man-commands ||
			{ echo "man page: no .SS for $c" >&2; exit 1; }
	done <commands
'

test_expect_success 'the man page has each usage line exactly as --help prints it' '
	for f in help.*; do
		case $f in *.err) continue ;; esac
		sed -n -e "s/^usage: //p" -e "s/^       \(sluice .*\)/\1/p" "$f" || return 1
	done >usages &&
	for s in create cleanup pool status; do
		sluice worktree $s --help | sed -n "s/^usage: //p" || return 1
	done >>usages &&
	sort -u usages >usages.sorted &&
	test "$(wc -l <usages.sorted)" -ge 18 &&
	while read -r u; do
		grep -qxF ".SS \"$u\"" man-commands ||
			{ echo "man page lacks the synopsis: $u" >&2; exit 1; }
	done <usages.sorted
'

test_expect_success 'every long option of every --help is in the man page' '
	cat help.* | grep -o -- "--[a-z][a-z-]*" | sort -u >options &&
	test_grep "^--max-runs$" options &&
	while read -r o; do
		grep -q -- "$o" man.txt || { echo "man page lacks $o" >&2; exit 1; }
	done <options
'

test_expect_success 'the man page lists every run state' '
	sluice runs --help | tr -s " ,:" "\n" | sed -n "/^STATE$/,\$p" >words &&
	for st in queued preparing building gating reviewing awaiting_review approved \
		merging merged resolving merge_conflict rejected failed abandoned interrupted; do
		test_grep "^$st$" words &&
		awk "/^\.SH RUN STATES/ { on = 1; next } /^\.SH / { on = 0 } on" man.txt |
			grep -q "^\.B[R]\{0,1\} .*$st" ||
			{ echo "RUN STATES lacks $st" >&2; exit 1; }
	done
'

COMPLETION="$SLUICE_SOURCE_DIR/contrib/sluice.bash-completion"

# complete WORDS...: what contrib's bash completion offers for the last word.
cat >"$TRASH/complete.bash" <<'EOF'
. "$COMPLETION"
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_sluice
printf '%s\n' "${COMPREPLY[@]}"
EOF
complete_words() { # the completion finds sluice in PATH
	PATH="$(dirname "$SLUICE"):$PATH" COMPLETION="$COMPLETION" bash "$TRASH/complete.bash" "$@"
}

test_expect_success 'bash completion offers exactly the commands of --help' '
	test_skip_unless_tool bash &&
	complete_words sluice "" | sort >offered &&
	sort commands >listed &&
	test_cmp listed offered
'

test_expect_success 'bash completion offers every option of each usage line' '
	test_skip_unless_tool bash &&
	while read -r u; do
		set -- $u &&
		if [ "$2" = worktree ]; then words="sluice worktree $3"; else words="sluice $2"; fi &&
		complete_words $words - >offered &&
		for o in $(echo "$u" | grep -o -- "\[-[-a-zA-Z0-9]*" | tr -d "["); do
			grep -qx -- "$o" offered ||
				{ echo "completion of \"$words -\" lacks $o" >&2; cat offered >&2; exit 1; }
		done || return 1
	done <usages.sorted
'

test_expect_success 'bash completion offers run ids and work-order ids from the repository' '
	test_skip_unless_tool bash &&
	sluice_repo r1 &&
	wo r1 WO-1 && wo r1 WO-2 "depends_on: [WO-1]" &&
	echo "echo one >one.txt" >"$BUILDERS/WO-1.sh" &&
	complete_words sluice -C r1 run "" >offered &&
	test_grep "^WO-1$" offered && test_grep -v "^WO-2$" offered &&
	sluice -C r1 tick >/dev/null &&
	run=$(run_of r1 WO-1) && test -n "$run" &&
	complete_words sluice -C r1 approve "" >offered &&
	test "$(cat offered)" = "$run" &&
	complete_words sluice -C r1 runs --wo "" >offered &&
	test_grep "^WO-2$" offered
'

test_expect_success 'the README mentions every command' '
	while read -r c; do
		grep -q "sluice $c\b" "$README" ||
			{ echo "README.md does not mention sluice $c" >&2; exit 1; }
	done <commands
'

test_expect_success 'sluice help COMMAND: its --help, the internal worker too; an unknown one is an error' '
	sluice help status >out && test_grep "^usage: sluice status" out &&
	sluice help advance-run >out && test_grep "^usage: sluice .*advance-run RUN" out &&
	test_expect_failure_code 2 sluice help no-such-command 2>err &&
	test_grep "not a sluice command" err
'

test_done
