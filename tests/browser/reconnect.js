// An open page of the desk across a restart of `sluice serve` (tests/cli/
// t1079-serve-browser-reconnect.sh runs it), in Debian's chromium driven by
// puppeteer-core as desk.js is: the page follows a tick; the server is
// stopped (SIGTERM); a person approves with the CLI meanwhile; the server is
// started again on the same address and token; the page's event stream
// reconnects by itself. What the page's live list holds then is written to
// $DESK_OUT/reconnect.json for the shell test's checks. Hard failures print
// "not ok - ..." (exit 1).
//
// Environment: DESK_URL, DESK_REPO, SLUICE, DESK_PID (the server's pid),
// DESK_PORT, DESK_TOKEN, DESK_PROFILE, DESK_OUT, CHROMIUM. The second
// server's pid is written to $DESK_OUT/serve2.pid.
"use strict";
const puppeteer = require("puppeteer-core");
const fs = require("fs");
const path = require("path");
const { execFile, spawn } = require("child_process");

const env = (k) => {
	const v = process.env[k];
	if (!v) throw new Error(`${k} is not set`);
	return v;
};
const origin = new URL(env("DESK_URL")).origin;
const out = env("DESK_OUT");

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
const liveState = (page, want) => page.waitForFunction((w) => document.getElementById("live-state").textContent === w,
	{ timeout: 120000, polling: 100 }, want);
const liveItems = (page) => page.$$eval("#live li", (l) => l.map((e) => e.textContent));

async function gone(pid) {
	for (let i = 0; i < 1200; i++) {
		try { process.kill(pid, 0); } catch (e) { return; }
		await sleep(100);
	}
	throw new Error(`the server ${pid} did not end after SIGTERM`);
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
	const facts = {};
	let failed = false;
	try {
		const page = await browser.newPage();
		await page.goto(env("DESK_URL"), { waitUntil: "load" });
		await page.goto(`${origin}/runs`, { waitUntil: "load" });
		await liveState(page, "live");
		await sluice(["tick"]);
		await page.waitForFunction(() => document.getElementById("live").textContent.includes("awaiting_review"),
			{ timeout: 120000, polling: 100 });
		await sleep(1000); // the rest of the tick's events
		facts.before = await liveItems(page);
		ok(`the page followed the tick: ${facts.before.length} events in its live list`);
		process.kill(Number(env("DESK_PID")), "SIGTERM");
		await gone(Number(env("DESK_PID")));
		await liveState(page, "reconnecting");
		ok("the server stopped; the page says it is reconnecting");
		const run = (await sluice(["runs", "--wo", "R"])).split(" ")[0];
		await sluice(["approve", run]);
		ok(`run ${run} approved with the CLI while the server was down`);
		const srv = spawn(env("SLUICE"), ["-C", env("DESK_REPO"), "serve", "--listen",
			`127.0.0.1:${env("DESK_PORT")}`],
			{ env: { ...process.env, SLUICE_SERVE_TOKEN: env("DESK_TOKEN") }, stdio: ["ignore", fs.openSync(path.join(out, "serve2.out"), "w"), "inherit"], detached: true });
		fs.writeFileSync(path.join(out, "serve2.pid"), `${srv.pid}\n`);
		srv.unref();
		await liveState(page, "live");
		ok("the server started again on the same address; the page's stream reconnected by itself");
		await page.waitForFunction(() => document.getElementById("live").textContent.includes("approved"),
			{ timeout: 120000, polling: 100 });
		await sleep(1000);
		facts.after = await liveItems(page);
		facts.approved_shown = facts.after.some((t) => t.includes("approved"));
		const seen = new Map();
		for (const t of facts.after) seen.set(t, (seen.get(t) || 0) + 1);
		facts.shown_twice = [...seen.values()].filter((n) => n > 1).length;
		facts.row_state = await page.evaluate((id) => {
			const a = document.querySelector(`#runs a[href="/runs/${id}"]`);
			return a ? a.closest("tr").querySelector(".st").textContent : null;
		}, run);
		ok(`after the reconnect: ${facts.after.length} events in the live list, ${facts.shown_twice} shown twice`);
	} catch (e) {
		console.log(`not ok - ${e.message}`);
		failed = true;
	} finally {
		fs.writeFileSync(path.join(out, "reconnect.json"), JSON.stringify(facts, null, 1) + "\n");
		await browser.close();
	}
	process.exit(failed ? 1 : 0);
})();
