#!/bin/sh
# The README's tour without an agent account (issue 26): its ~~~sh block,
# run as it is written with sluice on PATH, builds the work order with the
# ten-line script builder, waits for the person, and lands it on approval.
# The builder in it is contrib/script-builder.sh, line for line.
. "$(dirname "$0")/lib.sh"

README="$SLUICE_SOURCE_DIR/README.md"

test_expect_success 'the README has the block; its builder is contrib/script-builder.sh' '
	awk "/^~~~sh\$/ { on = 1; next } /^~~~\$/ && on { exit } on" "$README" >tour.sh &&
	test_grep "^sluice init$" tour.sh &&
	sed -n "/^cat >.system\/script-builder.sh <<.EOF.\$/,/^EOF\$/p" tour.sh | sed "1d;\$d" >builder &&
	test_cmp "$SLUICE_SOURCE_DIR/contrib/script-builder.sh" builder &&
	test "$(wc -l <builder)" -le 10
'

test_expect_success 'run as written, the work order lands and the checkout has its file' '
	mkdir -p bin &&
	ln -s "$SLUICE" bin/sluice &&
	{ PATH="$TRASH/bin:$PATH" sh -e tour.sh >tour.out 2>&1 || { cat tour.out >&2; false; }; } &&
	test_grep "awaiting_review" tour.out &&
	test_grep "Ran the work order.s script:" tour.out &&
	test_grep "^tick: 0 started, 1 merged" tour.out &&
	test "$(cat hello/hello.txt)" = hello &&
	git -C hello log -1 --format=%s >subject &&
	test_grep "HELLO" subject
'

test_done
