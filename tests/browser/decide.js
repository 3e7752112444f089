// The desk as the place to decide (issue 26), in Debian's chromium driven by
// puppeteer-core as desk.js is (tests/cli/t1181-serve-browser-decide.sh runs
// it). Two desks: MAN (a manual reviewer; MAN_RUN awaits review, its diff
// changes many single lines of one file) and DESK (a command reviewer;
// DESK_RUN was asked for changes once then merged, DESK_FAILED failed a
// gate). The script checks, as a person sees them: the diff on the run page
// above the actions, its lines single-spaced (the height of each line's box
// measured against the font: the old page drew each line on two), line
// numbers, the changed part marked, side by side; the three actions drawn
// differently; Abandon asking on a page of its own; the request-changes form
// posted (the run is sent back to be built again); a screenshot of
// each page into $DESK_ARTIFACTS. Each check prints "ok - ..." or throws.
//
// LIVE_RUN is being built: its builder printed a line and waits for the file
// LIVE_GO; the open run page must show the next line without a reload.
//
// Environment: MAN_URL, DESK_URL, LIVE_URL (the printed addresses), MAN_RUN,
// DESK_RUN, DESK_FAILED, LIVE_RUN, LIVE_GO, DESK_ARTIFACTS, DESK_PROFILE,
// CHROMIUM.
"use strict";
const puppeteer = require("puppeteer-core");
const fs = require("fs");
const path = require("path");

const env = (k) => {
	const v = process.env[k];
	if (!v) throw new Error(`${k} is not set`);
	return v;
};
const shots = env("DESK_ARTIFACTS");

function ok(what) {
	console.log(`ok - ${what}`);
}
function check(cond, what, detail) {
	if (!cond) throw new Error(`${what}${detail !== undefined ? `: ${detail}` : ""}`);
	ok(what);
}
async function shot(page, name, full) {
	await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: !!full });
	ok(`screenshot ${name}.png`);
}
const text = (page, sel) => page.$eval(sel, (e) => e.textContent);

async function signIn(page, url) {
	const resp = await page.goto(url, { waitUntil: "load" });
	check(resp.ok(), `the printed address opens the desk (${new URL(url).port})`, resp.status());
	return new URL(url).origin;
}

// Every line of every diff table: its box's height against its font size.
const lineBoxes = (page) => page.$$eval("table.diff tr:not(.h)", (rows) => rows.map((r) => {
	const code = r.querySelector("td.code");
	const cs = getComputedStyle(code);
	return { h: r.getBoundingClientRect().height, font: parseFloat(cs.fontSize),
		lh: parseFloat(cs.lineHeight), text: code.textContent };
}));

async function runPage(page, origin, run) {
	await page.goto(`${origin}/runs/${run}`, { waitUntil: "load" });
	const pos = await page.evaluate(() => {
		const d = document.querySelector("main table.diff"), a = document.getElementById("actions");
		return d && a ? { diff: d.getBoundingClientRect().top, actions: a.getBoundingClientRect().top } : null;
	});
	check(pos && pos.diff < pos.actions, "the diff is on the run page, above the actions", JSON.stringify(pos));
	const boxes = await lineBoxes(page);
	check(boxes.length >= 30, "the diff shows every changed line, open (a small diff)", boxes.length);
	const tall = boxes.filter((b) => b.text.length < 60 && b.h > b.lh + 1.5);
	check(tall.length === 0 && boxes[0].lh < 1.6 * boxes[0].font,
		`single-spaced: each line's box is one line high (${boxes[0].h}px, font ${boxes[0].font}px)`,
		JSON.stringify(tall.slice(0, 3)));
	const nums = await page.$$eval("table.diff.unified tr.a td.ln", (t) => t.map((e) => e.textContent));
	check(nums.some((n) => /^\d+$/.test(n)), "the added lines carry their line numbers");
	check(await page.$("table.diff mark") !== null, "the changed part of a changed line is marked");
	const looks = await page.$$eval("#actions button", (bs) => bs.map((b) => {
		const cs = getComputedStyle(b);
		return `${cs.backgroundColor}|${cs.color}|${cs.borderStyle}`;
	}));
	check(looks.length >= 4 && new Set(looks).size === looks.length,
		"approve, request changes, reject and abandon look different", JSON.stringify(looks));
	await shot(page, "run", true);
	await Promise.all([page.waitForNavigation(), page.click("#view-split")]);
	check(await page.$("table.diff.split") !== null, "side by side at a click");
	const split = await page.$$eval("table.diff.split tr", (rows) => rows.filter((r) =>
		r.querySelector("td.d") && r.querySelector("td.a")).length);
	check(split > 0, "a removed line and its replacement on one row", split);
	await shot(page, "run-split");
	await page.goto(`${origin}/runs/${run}/diff`, { waitUntil: "load" });
	await shot(page, "diff");
}

async function abandonAsks(page, origin, run) {
	await page.goto(`${origin}/runs/${run}`, { waitUntil: "load" });
	await page.setJavaScriptEnabled(false);
	await page.goto(`${origin}/runs/${run}`, { waitUntil: "load" });
	await Promise.all([page.waitForNavigation(), page.click(`#abandon-${run}`)]);
	check(new URL(page.url()).pathname === `/runs/${run}/abandon` && (await text(page, "h2")).includes("Abandon run"),
		"Abandon asks on a page of its own, without a script", page.url());
	check(await page.$(`form[method=post][action="/runs/${run}/abandon"]`) !== null,
		"the page that asks holds the button that abandons");
	await shot(page, "abandon");
	await page.setJavaScriptEnabled(true);
}

async function requestChanges(page, origin, run) {
	await page.goto(`${origin}/runs/${run}`, { waitUntil: "load" });
	const box = `form[action="/runs/${run}/request-changes"] textarea[name=comment]`;
	check(await page.$(box) !== null, "the run page has a comment box for Request changes");
	await page.type(box, "name the file m2.txt & <keep> it");
	const [resp] = await Promise.all([page.waitForNavigation(), page.click(`#request-changes-${run}`)]);
	const main = await text(page, "main");
	check(resp.status() === 200 && (await text(page, "#notice")).includes("changes requested"),
		"Request changes answers with the run page and says so", main);
	console.log("# request-changes: the run builds again");
}

async function deskPages(page, origin) {
	await page.goto(`${origin}/`, { waitUntil: "load" });
	check(await page.$("#queue.board .column") !== null, "the queue is a board of columns");
	const fits = await page.evaluate(() => {
		const s = document.querySelector("main svg");
		return !!s && !!s.getAttribute("viewBox") &&
			s.getBoundingClientRect().right <= document.documentElement.clientWidth + 1;
	});
	check(fits, "the dependency graph fits the page (scaled by its viewBox)");
	await shot(page, "queue", true);
	await page.goto(`${origin}/runs`, { waitUntil: "load" });
	await shot(page, "runs");
	const run = env("DESK_RUN");
	await page.goto(`${origin}/runs/${run}`, { waitUntil: "load" });
	check(await page.$("#verdict li.criterion") !== null, "the verdict per criterion is on the run page");
	await shot(page, "run-reviewed", true);
	await Promise.all([page.waitForNavigation(), page.click("a.against")]);
	check((await text(page, "h2")).includes("attempt 2 against attempt 1"), "attempt 2 against attempt 1 at a click");
	await shot(page, "attempts");
	await page.goto(`${origin}/runs/${env("DESK_FAILED")}`, { waitUntil: "load" });
	check((await text(page, "#gates pre.gate-log")).includes("<b>boom</b>"),
		"the failing gate's output is on the run page, as text");
	await shot(page, "run-failed", true);
	await page.goto(`${origin}/audit`, { waitUntil: "load" });
	await shot(page, "audit");
}

// The builder's log while it runs: the page fetches it again by itself.
async function liveLog(page) {
	const origin = await signIn(page, env("LIVE_URL"));
	const run = env("LIVE_RUN");
	await page.goto(`${origin}/runs/${run}`, { waitUntil: "load" });
	check(await page.$("#builder-log[data-poll]") !== null &&
		(await text(page, "#builder-log")).includes("step one of L"),
		"the run page of a run being built shows its builder's log, open");
	await shot(page, "run-building");
	await page.evaluate(() => { window.deskMark = "not reloaded"; });
	fs.writeFileSync(env("LIVE_GO"), "go\n");
	await page.waitForFunction(() => {
		const l = document.getElementById("builder-log");
		return l && l.textContent.includes("step two of L");
	}, { timeout: 300000, polling: 200 });
	check(await page.evaluate(() => window.deskMark === "not reloaded"),
		"the builder's log grew on the open page, without a reload");
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
		const man = await signIn(page, env("MAN_URL"));
		await runPage(page, man, env("MAN_RUN"));
		await abandonAsks(page, man, env("MAN_RUN"));
		await requestChanges(page, man, env("MAN_RUN"));
		const desk = await signIn(page, env("DESK_URL"));
		await deskPages(page, desk);
		await liveLog(page);
	} catch (e) {
		console.log(`not ok - ${e.message}`);
		failed = true;
	} finally {
		await browser.close();
	}
	process.exit(failed ? 1 : 0);
})();
