// tests/bench/dashboard_load.mjs: how long a `history dashboard` site takes to load and draw in
// headless Chromium (Debian's chromium through playwright-core), and whether the change point
// injected into the generated history is on the step chart at its record with its commit, as
// `history trend --format json` says.
//
//   node dashboard_load.mjs MODULES CHROMIUM PROFILE BASE_URL SERIES_FILE TREND_JSON RUNS AT
//
// Prints "index <ms>", "series <ms> <points>" (the median of RUNS fresh pages each: from
// navigation to the page's charts drawn) and "change ok|differs <chart> <trend>": ok when the
// step chart's change points are the trend's and one of them is at record AT with its commit.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const [modules, chromiumPath, profile, base, seriesFile, trendFile, runsText, atText] =
	process.argv.slice(2);
const { chromium } = createRequire(modules + "/")("playwright-core");
const runs = Number(runsText || 3);
const browser = await chromium.launchPersistentContext(profile, {
	executablePath: chromiumPath,
	headless: true,
	viewport: { width: 1280, height: 900 },
	args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--disable-sync"],
});
const median = (v) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];
const errors = [];

async function time(url, ready) {
	const page = await browser.newPage();
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
	const t0 = Date.now();
	await page.goto(url, { waitUntil: "load" });
	await page.waitForFunction(ready, null, { timeout: 60000 });
	const ms = Date.now() - t0;
	return { page, ms };
}

const idx = [];
for (let i = 0; i < runs; i++) {
	const { page, ms } = await time(base + "index.html",
		() => document.querySelectorAll("#series tbody tr").length > 0);
	idx.push(ms);
	await page.close();
}
console.log(`index ${median(idx)}`);
const ser = [];
let state = null;
for (let i = 0; i < runs; i++) {
	const { page, ms } = await time(base + "s/" + seriesFile + ".html", () => {
		const d = window.profgateDashboard && window.profgateDashboard.state;
		return d && d.ready && Object.values(d.charts).every((c) => c.drawn > 0);
	});
	ser.push(ms);
	state = await page.evaluate(() => window.profgateDashboard.state.charts.step);
	await page.close();
}
console.log(`series ${median(ser)} ${state.points}`);
const trend = JSON.parse(readFileSync(trendFile, "utf8")).series[0];
const want = trend.metrics.find((m) => m.name === "step.median_us").change_points
	.map((c) => ({ index: c.index, sha: c.sha }));
const at = Number(atText);
const same = JSON.stringify(state.changes) === JSON.stringify(want) &&
	state.changes.some((c) => c.index === at && c.sha === trend.records[at].sha);
console.log(`change ${same ? "ok" : "differs"} ${JSON.stringify(state.changes)} ${JSON.stringify(want)}`);
if (errors.length)
	console.log(`errors ${errors.length}: ${errors[0]}`);
await browser.close();
