// The browser's side of the desk's defences (tests/cli/t1077-serve-browser-
// security.sh runs it), in Debian's chromium driven by puppeteer-core as
// desk.js is. A page of another origin (a server of this script's on another
// port of 127.0.0.1: same site, other origin) posts Approve to the desk, once
// with a guessed CSRF token and once with the desk's real one (read by the
// test, as an attacker cannot), and tries to read a desk page with fetch();
// a DNS name of the attacker's pointed at 127.0.0.1 (--host-resolver-rules)
// opens the desk; a person typing a comment keeps it while events arrive;
// Reject without a comment is refused, with one it is done. Each check
// prints "ok - ..." or throws (exit 1); the shell test checks the runs' states.
//
// Environment: DESK_URL, DESK_REPO, SLUICE, DESK_X (a run awaiting review
// that no one may approve here), DESK_Y (one awaiting review, rejected by
// the person), DESK_Z (one awaiting review, approved with the CLI meanwhile),
// DESK_PROFILE, CHROMIUM.
"use strict";
const puppeteer = require("puppeteer-core");
const http = require("http");
const { execFile } = require("child_process");

const env = (k) => {
	const v = process.env[k];
	if (!v) throw new Error(`${k} is not set`);
	return v;
};
const url = env("DESK_URL");
const desk = new URL(url);
const origin = desk.origin;
const X = env("DESK_X"), Y = env("DESK_Y"), Z = env("DESK_Z");

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
			(err, stdout, stderr) => err ? reject(new Error(`sluice ${args.join(" ")}: ${stderr}`)) : resolve(stdout));
	});
}
const text = (page, sel) => page.$eval(sel, (e) => e.textContent);

// page.waitForFunction, and when it times out, what the page showed: the
// stream's state, the live list, the page's event sequence, whether the tab
// was visible (CI once timed out here with the cause unknown).
async function waitPage(page, what, fn, arg) {
	try {
		await page.waitForFunction(fn, { timeout: 120000, polling: 100 }, arg);
	} catch (e) {
		const seen = await page.evaluate(() => JSON.stringify({
			state: (document.getElementById("live-state") || {}).textContent,
			live: (document.getElementById("live") || {}).textContent,
			seq: (document.getElementById("main") || { getAttribute: () => null }).getAttribute("data-seq"),
			visibility: document.visibilityState,
		})).catch((x) => `(the page cannot be read: ${x.message})`);
		throw new Error(`${what}: ${e.message}; the page showed ${seen}`);
	}
}

// The attacker's site: /form?csrf=... posts Approve of X to the desk at once;
// /read tries to read the desk's queue page.
function attacker() {
	const esc = (s) => String(s).replace(/[^0-9a-zA-Z-]/g, "");
	const srv = http.createServer((req, res) => {
		const u = new URL(req.url, "http://attacker");
		res.setHeader("Content-Type", "text/html");
		if (u.pathname === "/form") {
			res.end(`<!DOCTYPE html><form method="post" action="${origin}/runs/${esc(X)}/approve">` +
				`<input name="csrf" value="${esc(u.searchParams.get("csrf"))}">` +
				`<input name="comment" value="by the attacker"><button name="do" value="approve">go</button></form>` +
				`<script>document.forms[0].submit()</script>`);
		} else if (u.pathname === "/read") {
			res.end(`<!DOCTYPE html><script>fetch(${JSON.stringify(origin + "/")}, {credentials: "include"})` +
				`.then(r => r.text()).then(t => { window.got = t; }, e => { window.got = "refused: " + e.message; });` +
				`</script>`);
		} else {
			res.statusCode = 404;
			res.end("no");
		}
	});
	return new Promise((resolve) => srv.listen(0, "127.0.0.1", () => resolve(srv)));
}

async function crossOrigin(page, evil) {
	await page.goto(`${origin}/runs/${X}`, { waitUntil: "load" });
	const csrf = await page.$eval("input[name=csrf]", (e) => e.value);
	for (const [what, token] of [["a guessed CSRF token", "00112233"], ["the desk's real CSRF token", csrf]]) {
		const answer = page.waitForResponse((r) => r.url() === `${origin}/runs/${X}/approve`, { timeout: 120000, polling: 100 });
		await page.goto(`${evil}/form?csrf=${token}`);
		const r = await answer;
		check(r.status() === 403, `a form of another origin posting Approve with ${what} is refused (403)`, r.status());
		await page.waitForNetworkIdle({ idleTime: 200, timeout: 10000 }).catch(() => {});
	}
	await page.goto(`${evil}/read`, { waitUntil: "load" });
	await page.waitForFunction(() => window.got !== undefined, { timeout: 120000, polling: 100 });
	const got = await page.evaluate(() => window.got);
	check(got.startsWith("refused:"), "a page of another origin cannot read the desk", got.slice(0, 200));
}

async function rebinding(browser, port) {
	const page = await browser.newPage();
	const r = await page.goto(`http://rebind.test:${port}/?token=${desk.searchParams.get("token")}`);
	check(r.status() === 403 && (await text(page, "main")).includes("DNS rebinding"),
		"the desk opened under another DNS name (rebinding) answers 403", r.status());
	await page.close();
}

async function typingKept(page) {
	await page.bringToFront(); // the rebinding's page was in front
	await page.goto(`${origin}/runs/${Y}`, { waitUntil: "load" });
	await waitPage(page, "the run page's event stream opens",
		() => document.getElementById("live-state").textContent === "live");
	const field = `form[action="/runs/${Y}/reject"] input[name=comment]`;
	await page.type(field, "half a senten");
	await sluice(["approve", Z]);
	await waitPage(page, "the approval of Z reaches the live list",
		() => document.getElementById("live").textContent.includes("approved"));
	await new Promise((r) => setTimeout(r, 1500)); // the refresh would have come (300 ms)
	check(await page.$eval(field, (e) => e.value) === "half a senten" &&
		!(await page.evaluate(() => document.body.hasAttribute("data-refreshed"))),
		"an event while the person types leaves the page and the comment as they are");
	await page.type(field, "ce: the tests are missing");
	return field;
}

async function reject(page, field) {
	// first without a comment: refused, the reason on the page
	await page.$eval(field, (e) => { e.value = ""; });
	let [r] = await Promise.all([page.waitForNavigation(), page.click(`#reject-${Y}`)]);
	check(r.status() === 400 && (await text(page, "#notice")).includes("needs a comment"),
		"Reject without a comment is refused with the reason", r.status());
	await page.type(`form[action="/runs/${Y}/reject"] input[name=comment]`, "the tests are missing");
	[r] = await Promise.all([page.waitForNavigation(), page.click(`#reject-${Y}`)]);
	check(r.ok() && (await text(page, "h2")).includes("rejected"), "Reject with a comment rejects the run",
		await text(page, "main"));
}

(async () => {
	const evil = await attacker();
	const browser = await puppeteer.launch({
		executablePath: env("CHROMIUM"),
		headless: true,
		userDataDir: env("DESK_PROFILE"),
		args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-dev-shm-usage", "--host-resolver-rules=MAP rebind.test 127.0.0.1"],
		defaultViewport: { width: 1200, height: 800 },
	});
	let failed = false;
	try {
		const page = await browser.newPage();
		page.on("pageerror", (e) => console.log(`# page error: ${e.message}`));
		page.on("console", (m) => console.log(`# console ${m.type()}: ${m.text()}`));
		page.on("response", (r) => {
			if (r.status() >= 400) console.log(`# ${r.status()} ${r.request().method()} ${r.url()}`);
		});
		const r = await page.goto(url, { waitUntil: "load" });
		check(r.ok(), "signed in with the printed address");
		await crossOrigin(page, `http://127.0.0.1:${evil.address().port}`);
		await rebinding(browser, desk.port);
		await reject(page, await typingKept(page));
	} catch (e) {
		console.log(`not ok - ${e.message}`);
		failed = true;
	} finally {
		await browser.close();
		evil.close();
	}
	process.exit(failed ? 1 : 0);
})();
