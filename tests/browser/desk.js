// The browser test of `sluice serve` (tests/cli/t1075-serve-browser.sh runs
// it): Debian's chromium, headless, driven through the DevTools protocol by
// puppeteer-core (scripts/browser.sh installs it into build/browser). The
// shell test builds the repository and starts the server; this script is
// the person at the desk: it opens the printed address, reads the queue and
// the runs, approves a run, runs `sluice tick` and watches the open page
// follow the event stream until the run is merged (no reload by the test),
// opens the conflict page, and keeps a screenshot of each page in
// $DESK_ARTIFACTS. Each check prints "ok - ..." or throws (exit 1).
//
// Environment: DESK_URL (the printed address, with ?token=), DESK_REPO,
// SLUICE (the binary), DESK_AWAIT (a run awaiting review, its work order
// titled <script>window.pwned=1</script>), DESK_CONFLICT (a run in
// merge_conflict), DESK_RIVAL (the run it conflicts with), DESK_ARTIFACTS,
// DESK_PROFILE (an empty folder for Chromium's profile), DESK_OUT (a folder
// for texts of the pages the shell test checks), CHROMIUM.
"use strict";
const puppeteer = require("puppeteer-core");
const { execFile } = require("child_process");
const fs = require("fs");
const path = require("path");

const env = (k) => {
	const v = process.env[k];
	if (!v) throw new Error(`${k} is not set`);
	return v;
};
const url = env("DESK_URL");
const origin = new URL(url).origin;
const shots = env("DESK_ARTIFACTS");
const awaitRun = env("DESK_AWAIT");
const conflictRun = env("DESK_CONFLICT");
const rivalRun = env("DESK_RIVAL");
const xss = "<script>window.pwned=1</script>";

function ok(what) {
	console.log(`ok - ${what}`);
}
function check(cond, what, detail) {
	if (!cond) throw new Error(`${what}${detail !== undefined ? `: ${detail}` : ""}`);
	ok(what);
}

function sluice(args) {
	return new Promise((resolve, reject) => {
		execFile(env("SLUICE"), ["-C", env("DESK_REPO"), ...args], { timeout: 120000 },
			(err, stdout, stderr) => {
				if (err) reject(new Error(`sluice ${args.join(" ")}: ${err.message}\n${stderr}`));
				else resolve(stdout);
			});
	});
}

async function shot(page, name) {
	await page.screenshot({ path: path.join(shots, `${name}.png`) });
	ok(`screenshot ${name}.png`);
}

const text = (page, sel) => page.$eval(sel, (e) => e.textContent);
const rows = (page, sel) => page.$$eval(`${sel} tr`, (r) => r.length - 1); // less the header

async function signIn(page) {
	const resp = await page.goto(url, { waitUntil: "load" });
	check(resp.ok(), "the printed address opens the desk", resp.status());
	check(!page.url().includes("token="), "the token is taken out of the address", page.url());
	check(!page.url().includes("@"), "the address shows no password either", page.url());
	const cookies = await page.cookies();
	check(cookies.length === 0, "no cookie: the token is kept as the address's password (port-bound)",
		JSON.stringify(cookies));
	// the script of the page (not an inline one) opened the event stream
	await page.waitForFunction(() => document.getElementById("live-state").textContent === "live",
		{ timeout: 120000, polling: 100 });
	ok("the page follows the event stream");
}

async function queuePage(page) {
	const waiting = await text(page, "#waiting");
	check(waiting.includes(awaitRun) && waiting.includes(conflictRun),
		"the queue page lists both runs under Waiting for you", waiting);
	const queue = await text(page, "#queue");
	check(queue.includes(xss), "the work order titled <script> shows as text", queue);
	check(await page.evaluate(() => window.pwned === undefined &&
		document.querySelectorAll("main script").length === 0),
		"no script of a work order ran or is in the page");
	await shot(page, "queue");
}

async function runsPage(page) {
	await page.goto(`${origin}/runs`, { waitUntil: "load" });
	check(await rows(page, "#runs") === 3, "the runs page lists the three runs");
	await page.select("select[name=state]", "merge_conflict");
	await Promise.all([page.waitForNavigation(), page.click("form.filter button")]);
	const t = await text(page, "#runs");
	check(await rows(page, "#runs") === 1 && t.includes(conflictRun),
		"filtered by state, the runs page shows the run in merge_conflict only", t);
	await page.goto(`${origin}/runs`, { waitUntil: "load" });
	await shot(page, "runs");
}

async function approveAndWatch(page) {
	await page.goto(`${origin}/runs/${awaitRun}`, { waitUntil: "load" });
	check((await text(page, "h2")).includes("awaiting_review"), "the run page shows the run awaiting review");
	check((await text(page, ".facts")).includes(xss) &&
		await page.evaluate(() => window.pwned === undefined),
		"the run page shows the <script> title as text, and it did not run");
	await shot(page, "run");
	await page.type(`form[action="/runs/${awaitRun}/approve"] input[name=comment]`, "looks right");
	await Promise.all([page.waitForNavigation(), page.click(`#approve-${awaitRun}`)]);
	check((await text(page, "#notice")).includes("approved"), "Approve answers with the run page and a notice",
		await text(page, "main"));
	check((await text(page, "h2")).includes("approved"), "the run is approved");
	await page.waitForFunction(() => document.getElementById("live-state").textContent === "live",
		{ timeout: 120000, polling: 100 });
	// a mark that a reload would wipe out: the page must follow the tick by itself
	await page.evaluate(() => { window.deskMark = "not reloaded"; });
	await sluice(["tick"]);
	ok("sluice tick ran (from node)");
	await page.waitForFunction(() => document.body.hasAttribute("data-refreshed") &&
		document.querySelector("main h2").textContent.includes("merged"), { timeout: 120000, polling: 100 });
	check(await page.evaluate(() => window.deskMark === "not reloaded"),
		"the open page shows the run merged, refreshed from the event stream without a reload");
	const live = await text(page, "#live");
	check(live.includes("merged"), "the live list has the tick's events", live);
	await shot(page, "run-merged");
	await page.goto(`${origin}/runs/${awaitRun}/diff`, { waitUntil: "load" });
	check((await text(page, "main")).includes("c.txt"), "the diff page lists the run's file");
	if (!await page.$("details.file[open]")) await page.click("details.file summary"); // small diffs are open
	await shot(page, "diff");
}

async function conflictPage(page) {
	await page.goto(`${origin}/runs/${conflictRun}`, { waitUntil: "load" });
	await Promise.all([page.waitForNavigation(), page.click("#conflict-link")]);
	check(page.url().endsWith(`/runs/${conflictRun}/conflict`), "the run page links to its conflict", page.url());
	const sides = await page.$$eval(".sides .side", (s) => s.map((e) => {
		const b = e.getBoundingClientRect();
		return { text: e.textContent, top: b.top, left: b.left, right: b.right };
	}));
	check(sides.length === 2, "the conflict page has two sides", sides.length);
	// what the person reads, as shown (innerText), for the shell test's checks
	fs.writeFileSync(path.join(env("DESK_OUT"), "conflict-side.txt"),
		await page.$eval(".sides .side pre.wo", (e) => e.innerText));
	check(sides[0].text.includes(conflictRun) || sides[0].text.includes("this run"), "the first side is this run");
	check(sides[0].text.includes("B rewrote line five") && sides[0].text.includes("Do the work of B"),
		"this run's side has its work order and summary", sides[0].text);
	check(sides[1].text.includes("A rewrote line five") && sides[1].text.includes("Do the work of A"),
		"the rival's side has its work order and summary", sides[1].text);
	check(Math.abs(sides[0].top - sides[1].top) < 2 && sides[1].left >= sides[0].right,
		"the two work orders are side by side", JSON.stringify(sides.map((s) => [s.top, s.left, s.right])));
	check((await text(page, "#conflicted")).includes("lines.txt"), "the conflicted file is listed");
	check((await text(page, "pre.markers")).includes("<<<<<<<"), "the conflicted hunks are shown");
	check(await page.$(`#retry-${conflictRun}`) !== null && await page.$(`#abandon-${conflictRun}`) !== null,
		"the conflict page offers retry and abandon");
	await shot(page, "conflict");
	await page.goto(`${origin}/audit`, { waitUntil: "load" });
	check((await text(page, "#audit-verdict")).startsWith("OK"), "the audit page says OK",
		await text(page, "#audit-verdict"));
	await shot(page, "audit");
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
		const page = await browser.newPage();
		page.on("pageerror", (e) => console.log(`# page error: ${e.message}`));
		page.on("console", (m) => console.log(`# console ${m.type()}: ${m.text()}`));
		page.on("response", (r) => {
			if (r.status() >= 400) console.log(`# ${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
		});
		await signIn(page);
		await queuePage(page);
		await runsPage(page);
		await approveAndWatch(page);
		await conflictPage(page);
		check(await page.evaluate(() => window.pwned === undefined), "window.pwned is still undefined");
	} catch (e) {
		console.log(`not ok - ${e.message}`);
		failed = true;
	} finally {
		await browser.close();
	}
	process.exit(failed ? 1 : 0);
})();
