#!/bin/sh
# The manifest chain's index in the store (table manifest_chain, issue 14):
# a merge records its manifest's link, then writes manifest.json. Killed
# between the two (merge.after_chain), the run is merged with a row and no
# file; the next merge or tick seals it again with the same previous link,
# and the chain on disk holds for `sluice audit`.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid sqlite3

printf '%s\n' 'echo a >a.txt' >"$BUILDERS/A.sh"
printf '%s\n' 'echo b >b.txt' >"$BUILDERS/B.sh"
printf '%s\n' 'echo c >c.txt' >"$BUILDERS/C.sh"

# The rows, "run sha256 previous_run" in merge order, and the same from the files.
rows() { # DIR
	sqlite3 "$1/.system/sluice.db" \
		"SELECT run_id || ' ' || sha256 || ' ' || ifnull(previous_run, '-') FROM manifest_chain ORDER BY merged_at, run_id"
}
files() { # DIR: each run folder with a manifest, in the rows' order
	rows "$1" | while read -r r _ _; do
		m=$1/.system/runs/$r/manifest.json
		p=$(sed -n 's/^  "previous_run": "\(.*\)",\{0,1\}$/\1/p' "$m")
		echo "$r $(sha256sum <"$m" | cut -c1-64) ${p:--}"
	done
}

for group in 0 1; do
	test_expect_success "killed at merge.after_chain (group $group): sealed again, the chain holds" "
		rm -rf r && fault_repo r \"\$(approve_reviewer_config)\" \"queue:\" \"  jobs: 1\" &&
		wo r A &&
		FAULT_GROUP=$group fault_fire merge.after_chain tick.out -C r tick &&
		a=\$(run_of r A) &&
		test \"\$(state_of r \$a)\" = merged &&
		test ! -e r/.system/runs/\$a/manifest.json &&
		test \"\$(sqlite3 r/.system/sluice.db \"SELECT count(*) FROM manifest_chain WHERE run_id = '\$a'\")\" = 1 &&
		wo r B && settle r &&
		test -f r/.system/runs/\$a/manifest.json &&
		rows r >rows && files r >files && test_cmp rows files &&
		test \$(wc -l <rows) = 2 &&
		fault_check r 'A B' ''
	"
done

test_expect_success 'a manifest rewritten after its seal is found (the store has its hash)' '
	rm -rf r && fault_repo r "$(approve_reviewer_config)" &&
	wo r A && wo r B && settle r &&
	rows r >rows && files r >files && test_cmp rows files &&
	last=$(tail -n 1 rows | cut -d" " -f1) && d=r/.system/runs/$last &&
	old=$(sha256sum <$d/builder.log | cut -c1-64) &&
	echo "not what was reviewed" >>$d/builder.log &&
	new=$(sha256sum <$d/builder.log | cut -c1-64) &&
	test_grep "\"builder.log\": \"$old\"" $d/manifest.json &&
	sed -i "s/$old/$new/" $d/manifest.json &&
	(cd r && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "^$last: manifest is not the one sealed at the merge: its sha256 is " out &&
	test $(wc -l <out) -eq 1
'

test_expect_success 'a database from before the index: the next merge fills it from the files' '
	rm -rf r && fault_repo r "$(approve_reviewer_config)" &&
	wo r A && wo r B && settle r &&
	rows r >before &&
	sqlite3 r/.system/sluice.db "DELETE FROM manifest_chain; INSERT INTO store_meta VALUES ('\''manifest_chain_backfill'\'', '\''pending'\'')" &&
	wo r C && settle r &&
	rows r >rows && files r >files && test_cmp rows files &&
	head -n 2 rows >two && test_cmp before two &&
	test $(wc -l <rows) = 3 &&
	test "$(sqlite3 r/.system/sluice.db "SELECT count(*) FROM store_meta WHERE key = '\''manifest_chain_backfill'\''")" = 0 &&
	fault_check r "A B C" ""
'

test_done
