// The desk's forms bind to what their page showed (tests/cli/
// t1131-serve-browser-stale-form.sh runs it), in Debian's chromium driven by
// puppeteer-core as desk.js is. Two tabs on a run awaiting review at attempt
// 1: in the first the person types a comment into Approve (the page then
// keeps its content: busy()); the second is left alone. Meanwhile the run is
// rejected, retried and rebuilt with the CLI (attempt 2). The second tab's
// forms follow from the event stream (attempt 2, no reload); the first
// tab's Approve is answered 409 with what changed, and the page it gets
// (the run as it is now) approves attempt 2. Hard failures print
// "not ok - ..." (exit 1).
//
// Environment: DESK_URL, DESK_REPO, DESK_RUN, SLUICE, DESK_PROFILE,
// DESK_ARTIFACTS (screenshots), CHROMIUM.
"use strict";
const puppeteer = require("puppeteer-core");
const path = require("path");
const { execFile } = require("child_process");

const env = (k) => {
	const v = process.env[k];
	if (!v) throw new Error(`${k} is not set`);
	return v;
};
const origin = new URL(env("DESK_URL")).origin;
const run = env("DESK_RUN");

function ok(what) {
	console.log(`ok - ${what}`);
}
function check(cond, what, detail) {
	if (!cond) throw new Error(`${what}${detail ? `: ${detail}` : ""}`);
	ok(what);
}
function sluice(args) {
	return new Promise((resolve, reject) => {
		execFile(env("SLUICE"), ["-C", env("DESK_REPO"), ...args], { timeout: 120000 },
			(err, stdout, stderr) => err ? reject(new Error(`sluice ${args.join(" ")}: ${stderr}`)) : resolve(stdout));
	});
}
const field = (page, name) => page.$eval(`form[action="/runs/${run}/approve"] input[name=${name}]`, (e) => e.value);
const text = (page, sel) => page.$eval(sel, (e) => e.textContent);
const shot = (page, name) => page.screenshot({ path: path.join(env("DESK_ARTIFACTS"), `${name}.png`), fullPage: true });

async function openRun(browser) {
	const page = await browser.newPage();
	await page.goto(`${origin}/runs/${run}`, { waitUntil: "load" });
	await page.waitForFunction(() => document.getElementById("live-state").textContent === "live",
		{ timeout: 30000, polling: 100 });
	return page;
}

// Reject, retry and rebuild the run from the CLI: attempt 2, a new head.
async function moveOn() {
	await sluice(["reject", run, "-m", "not like this"]);
	await sluice(["retry", run]);
	await sluice(["tick"]);
	const st = JSON.parse(await sluice(["status", "--json", run]));
	const r = st.run || st;
	check(r.state === "awaiting_review" && r.attempt === 2,
		"the CLI rejected, retried and rebuilt the run: attempt 2 awaits review", JSON.stringify(r).slice(0, 200));
	return r.head_commit;
}

async function scenario(browser) {
	const signin = await browser.newPage();
	await signin.goto(env("DESK_URL"), { waitUntil: "load" });
	await signin.close();
	const typing = await openRun(browser), idle = await openRun(browser);
	const head1 = await field(typing, "head");
	check((await field(typing, "attempt")) === "1" && head1.length === 40, "both tabs show attempt 1 and its head");
	await typing.bringToFront();
	await typing.type(`form[action="/runs/${run}/approve"] input[name=comment]`, "looks right");
	const head2 = await moveOn();
	await idle.waitForFunction((r) => {
		const a = document.querySelector(`form[action="/runs/${r}/approve"] input[name=attempt]`);
		return a && a.value === "2";
	}, { timeout: 30000, polling: 100 }, run);
	check((await field(idle, "head")) === head2, "the idle tab's forms followed the run from the event stream: attempt 2, its head");
	await typing.waitForFunction(() => document.getElementById("live").textContent.includes("awaiting_review"),
		{ timeout: 30000, polling: 100 });
	check((await field(typing, "attempt")) === "1" && (await field(typing, "head")) === head1,
		"the tab being typed in kept what it showed: attempt 1");
	await typing.bringToFront(); // a background tab of headless Chromium takes no click
	const [answer] = await Promise.all([typing.waitForNavigation(), typing.click(`#approve-${run}`)]);
	check(answer.status() === 409, "its Approve is refused: 409", String(answer.status()));
	const notice = await text(typing, "#notice");
	check(notice.includes(`is now awaiting_review on attempt 2 (head ${head2.slice(0, 12)})`) &&
		notice.includes(`not awaiting_review on attempt 1 (head ${head1.slice(0, 12)}) that this page showed`),
		"the page says what changed", notice);
	await shot(typing, "stale-409");
	const st = JSON.parse(await sluice(["status", "--json", run]));
	check((st.run || st).state === "awaiting_review", "nothing was approved");
	check((await field(typing, "attempt")) === "2", "the 409 page shows the run as it is now: attempt 2");
	await typing.type(`form[action="/runs/${run}/approve"] input[name=comment]`, "seen attempt 2");
	await Promise.all([typing.waitForNavigation(), typing.click(`#approve-${run}`)]);
	check((await text(typing, "#notice")).includes("approved"), "its Approve approves attempt 2");
	await shot(typing, "stale-approved");
}

(async () => {
	const browser = await puppeteer.launch({
		executablePath: env("CHROMIUM"),
		headless: true,
		userDataDir: env("DESK_PROFILE"),
		args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-dev-shm-usage"],
		defaultViewport: { width: 1200, height: 800 },
	});
	let failed = false;
	try {
		await scenario(browser);
	} catch (e) {
		console.log(`not ok - ${e.message}`);
		failed = true;
	} finally {
		await browser.close();
	}
	process.exit(failed ? 1 : 0);
})();
