#!/bin/sh
# The review step computes the diff from the recorded commits and keeps
# diff.patch and files_changed.json as exactly those bytes (t0700). When the
# files hold them already (the build step wrote them), they are left as they
# are: no second write. A file that differs, or a hard link that would let a
# later write outside the run folder change it, is replaced.
. "$(dirname "$0")/lib.sh"

echo 'echo one >one.txt' >"$BUILDERS/U1.sh"
# the builders of U2 and U3 tell the gate what to do to their run folder
printf '%s\n' 'echo two >two.txt' "touch \"$TRASH/\$(basename \"\$SLUICE_RUN_DIR\").link\"" >"$BUILDERS/U2.sh"
printf '%s\n' 'echo three >three.txt' "touch \"$TRASH/\$(basename \"\$SLUICE_RUN_DIR\").change\"" >"$BUILDERS/U3.sh"

# A gate that keeps what it saw before the review: the inodes of the two
# files; for U2 a hard link to diff.patch outside the run folder, for U3 a
# changed byte. No merge gates: the train would write both files again
# after its own run of the gates.
cat >"$BUILDERS/look.sh" <<EOF
r=\$(basename "\$SLUICE_RUN_DIR")
[ -e "$TRASH/\$r.ino" ] && exit 0
stat -c %i "\$SLUICE_RUN_DIR/diff.patch" "\$SLUICE_RUN_DIR/files_changed.json" >"$TRASH/\$r.ino"
if [ -e "$TRASH/\$r.link" ]; then ln "\$SLUICE_RUN_DIR/diff.patch" "$TRASH/outside.patch"; fi
if [ -e "$TRASH/\$r.change" ]; then echo changed >>"\$SLUICE_RUN_DIR/files_changed.json"; fi
exit 0
EOF

test_expect_success 'setup' '
	sluice_repo repo "$(approve_reviewer_config)" "gates:" "  look: [sh, $BUILDERS/look.sh]" \
		"merge:" "  gates: []" &&
	sluice -C repo check >/dev/null
'

test_expect_success 'unchanged files are not written again' '
	wo repo U1 && sluice -C repo tick >/dev/null &&
	r=$(run_of repo U1) && d=repo/.system/runs/$r &&
	test "$(state_of repo $r)" = merged &&
	stat -c %i $d/diff.patch $d/files_changed.json >now &&
	test_cmp "$TRASH/$r.ino" now &&
	git -C repo diff --binary --full-index -M main^1 main^2 >expect &&
	test_cmp expect $d/diff.patch &&
	sluice -C repo audit $r >/dev/null
'

test_expect_success 'a hard link to diff.patch is replaced, the outside file keeps nothing of it' '
	wo repo U2 && sluice -C repo tick >/dev/null &&
	r=$(run_of repo U2) && d=repo/.system/runs/$r &&
	test "$(state_of repo $r)" = merged &&
	test -f "$TRASH/outside.patch" &&
	test "$(stat -c %h $d/diff.patch)" = 1 &&
	test "$(head -n 1 "$TRASH/$r.ino")" != "$(stat -c %i $d/diff.patch)" &&
	git -C repo diff --binary --full-index -M main^1 main^2 >expect &&
	test_cmp expect $d/diff.patch &&
	sluice -C repo audit $r >/dev/null
'

test_expect_success 'a changed files_changed.json is written again from git' '
	wo repo U3 && sluice -C repo tick >/dev/null &&
	r=$(run_of repo U3) && d=repo/.system/runs/$r &&
	test "$(state_of repo $r)" = merged &&
	test_grep -v changed $d/files_changed.json &&
	test_grep three.txt $d/files_changed.json &&
	test "$(tail -n 1 "$TRASH/$r.ino")" != "$(stat -c %i $d/files_changed.json)" &&
	sluice -C repo audit $r >/dev/null
'

test_done
