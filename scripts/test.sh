#!/usr/bin/env bash
# The test command: install what is missing, build with warnings as errors,
# run the whole suite (the crash tests included: a kill at every named fault
# point, t0750-t0753, and a bounded random kill -9 run with a fixed seed,
# t0245), then a seeded, bounded run of every libFuzzer target (clang, in
# build/fuzz), then build again with AddressSanitizer and
# UndefinedBehaviorSanitizer and run the suite again.
#
#   ./scripts/test.sh            everything
#   SLUICE_TEST_QUICK=1 ./scripts/test.sh   skip the fuzz and sanitizer passes
#   SLUICE_TEST_STRESS=1 ./scripts/test.sh  the random kill -9 test with a new
#                                           seed and 60 kills instead of seed 1 and 25
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

./scripts/deps.sh

build_and_test() { # DIR CMAKE-ARGS...
	dir=$1
	shift
	echo "== configure $dir $*"
	cmake -S "$root" -B "$dir" -DSLUICE_WERROR=ON "$@" >/dev/null
	echo "== build $dir"
	cmake --build "$dir" -j "$jobs"
	echo "== test $dir"
	# one `cpu` slot a core: at most one computing test a core, and the
	# scripts labelled `wait` (tests/CMakeLists.txt) in the jobs beside them
	printf '{"version": {"major": 1, "minor": 0}, "local": [{"cpu": [{"id": "0", "slots": %d}]}]}\n' \
		"$jobs" >"$dir/cpu-slots.json"
	(cd "$dir" && ctest --output-on-failure -j "$((jobs * 3))" --resource-spec-file cpu-slots.json \
		--timeout 1200)
}

# Every fuzz target that tests/fuzz/CMakeLists.txt defines, built with clang
# (-DSLUICE_FUZZ=ON) and run through its `ctest -R fuzz` smoke test, which
# bounds it (-runs); -seed=1 is appended to each (the emulator prefix of
# add_test), so that a run is the same run every time.
fuzz() {
	if ! command -v clang >/dev/null 2>&1; then
		echo "== fuzz: skipped, no clang (scripts/deps.sh installs it)"
		return 0
	fi
	# the inputs an earlier run added would make this run another one: start
	# from the fixtures alone (configure makes the folders again)
	rm -rf build/fuzz/tests/fuzz/corpus build/fuzz/tests/fuzz/corpus_*
	echo "== configure build/fuzz (clang, SLUICE_FUZZ=ON)"
	cmake -S "$root" -B build/fuzz -DCMAKE_C_COMPILER=clang -DSLUICE_WERROR=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_FUZZ=ON \
		'-DCMAKE_CROSSCOMPILING_EMULATOR=sh;-c;exec "$0" "$@" -seed=1' >/dev/null
	targets=$(cmake --build build/fuzz --target help | grep -oE '\bfuzz_[a-z0-9_]+' | sort -u)
	echo "== build build/fuzz:" $targets
	# shellcheck disable=SC2086
	cmake --build build/fuzz -j "$jobs" --target $targets
	echo "== fuzz build/fuzz"
	(cd build/fuzz && ctest --output-on-failure -j "$jobs" -R '^fuzz/' --no-tests=error)
}

build_and_test build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ "${SLUICE_TEST_QUICK:-0}" != 1 ]; then
	fuzz
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
	build_and_test build/asan -DCMAKE_BUILD_TYPE=Debug -DSLUICE_SANITIZE=address,undefined
fi
echo "== all tests passed"
