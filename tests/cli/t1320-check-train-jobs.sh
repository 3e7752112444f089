#!/bin/sh
# Which limit holds what (issue 28, "Gate runners"): a tick's worker
# processes (queue.jobs, or tick --jobs) build runs and test the merge
# train's cars alike, so merge.train_depth above queue.jobs never tests more
# than queue.jobs cars at once. sluice check says so, as a warning that
# names both settings, their values and what to do; it does not fail check.
. "$(dirname "$0")/lib.sh"

# with JOBS [DEPTH]: the setup's config with queue.jobs JOBS and merge.train_depth DEPTH
with() {
	cp config.orig r/.system/config.yaml &&
	sed -i "s/^queue:\$/queue:\n  jobs: $1/" r/.system/config.yaml &&
	if test -n "${2:-}"; then printf "merge:\n  train_depth: %s\n" "$2" >>r/.system/config.yaml; fi
}

test_expect_success 'setup' '
	sluice_repo r &&
	cp r/.system/config.yaml config.orig
'

test_expect_success 'train_depth 3 with queue.jobs 2: a warning naming both, exit 0' '
	with 2 3 &&
	sluice -C r check >out 2>err &&
	test_grep "^.system/config.yaml: warning: merge.train_depth is 3 but queue.jobs is 2: a tick.s 2 worker processes build runs and test the train.s cars alike, so at most 2 cars are tested at once; set queue.jobs to 3 or more, or merge.train_depth to 2$" out &&
	test_grep "^ok: the config and 0 work orders are valid" out
'

test_expect_success '--json: the warning under "warnings", "ok" true' '
	test_skip_unless_tool python3 &&
	sluice -C r check --json >out &&
	python3 -c "import json, sys; j = json.load(open(sys.argv[1])); assert j[\"ok\"], j; assert sum(\"merge.train_depth is 3 but queue.jobs is 2\" in w for w in j[\"warnings\"]) == 1, j" out
'

test_expect_success 'no warning when the jobs hold the train: equal, fewer, or the default depth' '
	for jd in "3 3" "4 1" "1"; do
		with $jd &&
		sluice -C r check >out 2>&1 && grep -q "^ok: " out &&
		! grep "train_depth" out || return 1
	done
'

test_done
