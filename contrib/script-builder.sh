#!/bin/sh
# A builder with no agent: it runs the work order's first ```sh block in the
# run's worktree (its cwd) and writes what it ran as the summary.
set -eu
script="$SLUICE_RUN_DIR/script.sh"
awk '/^```sh$/ { on = 1; next } /^```$/ && on { exit } on' \
	"$SLUICE_RUN_DIR/work_order.md" >"$script"
[ -s "$script" ] || { echo "script-builder: no \`\`\`sh block in the work order" >&2; exit 1; }
sh -eu "$script"
{ echo "Ran the work order's script:"; sed 's/^/    /' "$script"; } >"$SLUICE_SUMMARY_FILE"
