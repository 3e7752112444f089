// What the open pages of the desk show after a tick, without a reload
// (tests/cli/t1078-serve-browser-live.sh runs it), in Debian's chromium
// driven by puppeteer-core as desk.js is. Three pages are open: the runs
// (unfiltered), the runs filtered by the work order, and the run's page,
// where the person clicks Approve; then `sluice tick` merges the run. What
// each page shows then is written, as JSON, to $DESK_OUT/live.json for the
// shell test's checks; then the server is sent SIGTERM while the pages (and
// their event streams) are still open, and this script waits (at most 20 s)
// for it to end. Hard failures print "not ok - ..." (exit 1).
//
// Environment: DESK_URL, DESK_REPO, SLUICE, DESK_RUN (a run awaiting
// review), DESK_WO (its work order), DESK_PID (the server's pid),
// DESK_PROFILE, DESK_OUT, CHROMIUM.
"use strict";
const puppeteer = require("puppeteer-core");
const fs = require("fs");
const path = require("path");
const { execFile } = require("child_process");

const env = (k) => {
	const v = process.env[k];
	if (!v) throw new Error(`${k} is not set`);
	return v;
};
const url = env("DESK_URL");
const origin = new URL(url).origin;
const run = env("DESK_RUN");
const wo = env("DESK_WO");

function ok(what) {
	console.log(`ok - ${what}`);
}
function sluice(args) {
	return new Promise((resolve, reject) => {
		execFile(env("SLUICE"), ["-C", env("DESK_REPO"), ...args], { timeout: 120000 },
			(err, stdout, stderr) => err ? reject(new Error(`sluice ${args.join(" ")}: ${stderr}`)) : resolve(stdout));
	});
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const live = (page) => page.waitForFunction(() => document.getElementById("live-state").textContent === "live",
	{ timeout: 120000, polling: 100 });
// The state shown in the runs table's row of the run.
const rowState = (page) => page.evaluate((id) => {
	const a = document.querySelector(`#runs a[href="/runs/${id}"]`);
	return a ? a.closest("tr").querySelector(".st").textContent : null;
}, run);

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
	const facts = {};
	let failed = false;
	try {
		const all = await browser.newPage();
		await all.goto(url, { waitUntil: "load" });
		await all.goto(`${origin}/runs`, { waitUntil: "load" });
		const filtered = await browser.newPage();
		await filtered.goto(`${origin}/runs?wo=${encodeURIComponent(wo)}`, { waitUntil: "load" });
		const page = await browser.newPage();
		await page.goto(`${origin}/runs/${run}`, { waitUntil: "load" });
		await Promise.all([page.waitForNavigation(), page.click(`#approve-${run}`)]);
		for (const p of [all, filtered, page]) await live(p);
		facts.before = { all: await rowState(all), filtered: await rowState(filtered) };
		ok("three pages open and live, the run approved from its page");
		await sluice(["tick"]);
		ok("sluice tick ran");
		// the unfiltered list and the run's page show it merged: the refresh came
		await all.waitForFunction((id) => {
			const a = document.querySelector(`#runs a[href="/runs/${id}"]`);
			return a && a.closest("tr").textContent.includes("merged");
		}, { timeout: 120000, polling: 100 }, run);
		await page.waitForFunction(() => document.querySelector("main h2").textContent.includes("merged"),
			{ timeout: 120000, polling: 100 });
		await sleep(1500); // the filtered page had the same events, and 300 ms to follow them
		facts.after = {
			all: await rowState(all),
			filtered: await rowState(filtered),
			filtered_refreshed: await filtered.evaluate(() => document.body.hasAttribute("data-refreshed")),
			run_state: await page.$eval("main h2 .st", (e) => e.textContent),
			run_notice: await page.$eval("#notice", (e) => e.textContent).catch(() => null),
		};
		ok("after the tick: " + JSON.stringify(facts.after));
		process.kill(Number(env("DESK_PID")), "SIGTERM");
		let gone = false;
		for (let i = 0; i < 1200 && !gone; i++) {
			try { process.kill(Number(env("DESK_PID")), 0); await sleep(100); } catch (e) { gone = true; }
		}
		facts.server_ended_with_pages_open = gone;
		ok(`SIGTERM with three event streams open: the server ${gone ? "ended" : "still runs after 120 s"}`);
	} catch (e) {
		console.log(`not ok - ${e.message}`);
		failed = true;
	} finally {
		fs.writeFileSync(path.join(env("DESK_OUT"), "live.json"), JSON.stringify(facts, null, 1) + "\n");
		await browser.close();
	}
	process.exit(failed ? 1 : 0);
})();
