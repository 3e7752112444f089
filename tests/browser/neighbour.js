// What a browser signed in to the desk hands a neighbouring server (tests/
// cli/t1141-serve-browser-neighbour.sh runs it), in Debian's chromium driven
// by puppeteer-core as desk.js is. A server of this script's on another port
// of 127.0.0.1 (a dev server started from a worktree, say) records the
// credentials of every request the browser makes to it: its page opened,
// an image, a fetch with credentials, a form posted to itself. The shell
// test then replays each with curl against the desk. The desk still answers
// the browser afterwards: it holds a credential, just not one it gives away.
//
// Environment: DESK_URL (the printed address), DESK_OUT (a folder: caught,
// one "Header: value" line a credential the neighbour received, and seen, the
// number of requests it received), DESK_PROFILE, CHROMIUM.
"use strict";
const puppeteer = require("puppeteer-core");
const http = require("http");
const fs = require("fs");
const path = require("path");

const env = (k) => {
	const v = process.env[k];
	if (!v) throw new Error(`${k} is not set`);
	return v;
};
const url = env("DESK_URL");
const origin = new URL(url).origin;
const out = env("DESK_OUT");
const caught = [];
let seen = 0;

function check(cond, what, detail) {
	if (!cond) throw new Error(`${what}${detail !== undefined ? `: ${detail}` : ""}`);
	console.log(`ok - ${what}`);
}

function neighbour() {
	const srv = http.createServer((req, res) => {
		seen++;
		for (const h of ["cookie", "authorization", "proxy-authorization"])
			if (req.headers[h]) caught.push(`${h}: ${req.headers[h]}`);
		req.resume();
		req.on("end", () => {
			if (req.url === "/img.png") {
				res.setHeader("Content-Type", "image/png");
				res.end();
				return;
			}
			res.setHeader("Content-Type", "text/html");
			res.end(`<!DOCTYPE html><title>a dev server</title><img src="/img.png">` +
				`<form method="post" action="/posted"><input name="a" value="b"></form>` +
				`<script>fetch("/api", {credentials: "include"}).then(() => { window.done = 1; });</script>`);
		});
	});
	return new Promise((resolve) => srv.listen(0, "127.0.0.1", () => resolve(srv)));
}

(async () => {
	const srv = await neighbour();
	const there = `http://127.0.0.1:${srv.address().port}`;
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
		let r = await page.goto(url, { waitUntil: "load" });
		check(r.ok(), "signed in to the desk with the printed address", r.status());
		await page.goto(there + "/", { waitUntil: "load" });
		await page.waitForFunction(() => window.done === 1, { timeout: 10000, polling: 100 });
		await Promise.all([page.waitForNavigation(), page.evaluate(() => document.forms[0].submit())]);
		check(seen >= 4, `the neighbour on ${there} received the browser's requests`, seen);
		r = await page.goto(`${origin}/runs`, { waitUntil: "load" });
		check(r.status() === 200, "the desk still answers the browser afterwards", r.status());
	} catch (e) {
		console.log(`not ok - ${e.message}`);
		failed = true;
	} finally {
		await browser.close();
		srv.close();
	}
	fs.writeFileSync(path.join(out, "caught"), caught.map((l) => l + "\n").join(""));
	fs.writeFileSync(path.join(out, "seen"), `${seen}\n`);
	process.exit(failed ? 1 : 0);
})();
