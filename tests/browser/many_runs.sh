#!/bin/sh
# Make DIR a sluice repository whose store holds N runs (10,000 by default),
# for t1076-serve-many-runs.sh and bench/serve.sh: one work order goes
# through a real tick (a shell builder, a command reviewer that approves) and
# merges; the other N - 1 runs are copies of that run's row, inserted with
# the sqlite3 CLI into .system/sluice.db: every column copied but the id (a
# new one, older than the real run), created_ms and updated_ms (one second
# apart, older), and the work order (PER_WO runs each, 3 by default:
# MANY-0001, MANY-0002, ... in turns). No
# run folder, attempt or event is made for the copies: the runs pages read
# the rows only.
#
#   tests/browser/many_runs.sh SLUICE DIR [N [PER_WO]]
set -eu
SLUICE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
DIR=$2
N=${3:-10000}
PER_WO=${4:-3}

git init -q "$DIR"
cd "$DIR"
git config user.name many-runs && git config user.email many-runs@example.com
echo "# many runs" >README.md && git add README.md && git commit -q -m init
"$SLUICE" init >/dev/null
cat >>.system/config.yaml <<'EOC'
builder:
  command: [sh, -c, 'echo "built by the builder" >built.txt']
reviewer:
  mode: command
  command: [sh, -c, 'cat >/dev/null; echo "{\"verdict\": \"approve\", \"reviewer\": \"many-bot\"}"']
EOC
mkdir -p work_orders
printf '%s\n' --- "id: REAL" "title: The one real run" --- "Build it." >work_orders/REAL.md
"$SLUICE" tick >/dev/null
db=.system/sluice.db
real=$(sqlite3 "$db" "SELECT id FROM runs WHERE work_order_id = 'REAL'")
[ "$(sqlite3 "$db" "SELECT state FROM runs WHERE id = '$real'")" = merged ] || {
	echo "many_runs: the real run $real did not merge" >&2
	exit 1
}
cols=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('runs')")
sel=$(sqlite3 "$db" "SELECT group_concat(CASE name
	WHEN 'id' THEN 'printf(''19990101-000000-m%07d'', n.i)'
	WHEN 'work_order_id' THEN 'printf(''MANY-%04d'', 1 + n.i % ($N / $PER_WO))'
	WHEN 'created_ms' THEN 'r.created_ms - 1000 * n.i'
	WHEN 'updated_ms' THEN 'r.updated_ms - 1000 * n.i'
	ELSE 'r.' || name END, ', ') FROM pragma_table_info('runs')")
sqlite3 "$db" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $N - 1)
INSERT INTO runs ($cols) SELECT $sel FROM runs r, n WHERE r.id = '$real'"
echo "$real"
