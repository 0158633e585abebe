// tests/e2e/browser/dashboard.mjs: open a `history dashboard` site in headless Chromium
// (Debian's chromium, driven by playwright-core) and check what it drew against the history.
//
//   node dashboard.mjs CHECKS.json
//
// CHECKS.json: {"chromium": path, "base": "file:///.../site/" or "http://127.0.0.1:N/",
//   "trend": the `history trend --format json` of the same history (every series),
//   "server": the links' server, "series": [names of the pages to open], "screenshot": file|null,
//   "timing": bool}
// Prints TAP lines ("ok N - ..." / "not ok N - ..."), no plan: the calling suite counts them.
// Load times are printed as "# timing ..." lines, never judged here.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const cfg = JSON.parse(readFileSync(process.argv[2], "utf8"));
const require = createRequire(cfg.modules + "/");
const { chromium } = require("playwright-core");
const trend = JSON.parse(readFileSync(cfg.trend, "utf8"));
let n = Number(process.env.TAP_START || 0);

function tap(good, title, why) {
	n++;
	console.log(`${good ? "ok" : "not ok"} ${n} - ${title}`);
	if (!good && why)
		for (const l of String(why).split("\n").slice(0, 8))
			console.log(`#   ${l}`);
}

function same(a, b) {
	return JSON.stringify(a) === JSON.stringify(b);
}

// a fresh profile folder each run (playwright passes it as --user-data-dir)
const browser = await chromium.launchPersistentContext(cfg.profile, {
	executablePath: cfg.chromium,
	headless: true,
	viewport: { width: 1280, height: 900 },
	args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--disable-sync"],
});

async function open(url) {
	const page = await browser.newPage();
	const errors = [];
	page.on("console", (m) => {
		if (m.type() === "error")
			errors.push(m.text());
	});
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("requestfailed", (r) => errors.push("failed: " + r.url()));
	const t0 = Date.now();
	await page.goto(url, { waitUntil: "load" });
	return { page, errors, t0 };
}

// ---- the index ----
{
	const { page, errors, t0 } = await open(cfg.base + "index.html");
	const ms = Date.now() - t0;
	if (cfg.timing)
		console.log(`# timing index ${ms} ms`);
	const rows = await page.$$eval("#series tbody tr", (trs) => trs.map((tr) => ({
		series: tr.getAttribute("data-series"),
		href: tr.querySelector("a").getAttribute("href"),
		text: tr.querySelector("a").textContent,
	})));
	const want = trend.series.map((s) => s.series);
	tap(same(rows.map((r) => r.series), want), "index: one row per series, in order",
		JSON.stringify(rows.map((r) => r.series)));
	// as text, the bidirectional controls shown as U+FFFD
	const shown = (t) => t.replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "\ufffd");
	tap(same(rows.map((r) => r.text), trend.series.map((s) => shown(s.label || s.series))),
		"index: the labels shown as text", JSON.stringify(rows.map((r) => r.text)));
	tap(rows.every((r) => /^s\/[A-Za-z0-9._-]+\.html$/.test(r.href)), "index: links to pages");
	const injected = await page.evaluate(() => ({
		pwned: window.__pwned || null,
		scripts: document.scripts.length,
		imgs: document.images.length,
		handlers: [...document.querySelectorAll("*")].filter((e) =>
			[...e.attributes].some((a) => /^on/i.test(a.name))).length,
	}));
	tap(same(injected, { pwned: null, scripts: 0, imgs: 0, handlers: 0 }),
		"index: no name became markup or script", JSON.stringify(injected));
	tap(errors.length === 0, "index: no console error", errors.join("\n"));
	await page.close();
}

// ---- each page asked for ----
for (const name of cfg.series) {
	const s = trend.series.find((x) => x.series === name);
	const file = name.replace(/[^A-Za-z0-9._-]/g, "_");
	const { page, errors, t0 } = await open(cfg.base + "s/" + cfg.files[name] + ".html");
	await page.waitForFunction(() => window.profgateDashboard && window.profgateDashboard.state.ready,
		null, { timeout: 10000 }).catch((e) => errors.push("never ready: " + e));
	const ms = Date.now() - t0;
	if (cfg.timing)
		console.log(`# timing series ${file} ${s.records.length} records ${ms} ms`);
	const st = await page.evaluate(() => {
		const d = window.profgateDashboard.state;
		return { charts: d.charts, pwned: window.__pwned || null };
	});
	const step = s.metrics.find((m) => m.name === "step.median_us");
	const c = st.charts.step || {};
	const withStep = step.values.filter((v) => v !== null).length;
	tap(c.records === s.records.length && c.points === withStep && c.drawn > 0,
		`${name}: the step chart drew a point per record (${withStep})`, JSON.stringify(c).slice(0, 300));
	tap(same(c.changes, step.change_points.map((p) => ({ index: p.index, sha: p.sha }))),
		`${name}: change points as history trend says`, JSON.stringify(c.changes));
	const fails = s.records.map((r, i) => [r.verdict, i]).filter((x) => x[0] === "fail" || x[0] === "warn")
		.map((x) => ({ index: x[1], verdict: x[0] }));
	tap(same(c.marks, fails), `${name}: warn and fail marks where the records say`,
		JSON.stringify(c.marks));
	// the marks and the change-point lines are on the canvas where the chart puts those records
	const pixels = await page.evaluate(() => {
		const d = window.profgateDashboard.state, u = d.plots.step, c = d.charts.step;
		const px = (x, y) => Array.from(u.ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data);
		const xs = u.data[0];
		return {
			marks: c.marks.map((m) => px(u.valToPos(xs[m.index], "x", true),
				u.valToPos(u.data[1][m.index], "y", true))),
			lines: c.changes.map((ch) => {
				const x = u.valToPos(xs[ch.index], "x", true);
				let red = 0;
				for (let y = u.bbox.top; y < u.bbox.top + u.bbox.height; y += 2) {
					const p = px(x, y);
					red += p[0] > 150 && p[1] < 90 && p[2] < 90;
				}
				return red;
			}),
		};
	});
	const want = { fail: [209, 36, 47], warn: [191, 135, 0] };
	tap(pixels.marks.every((p, k) => want[fails[k].verdict].every((v, j) => Math.abs(p[j] - v) < 40)),
		`${name}: the marks are drawn in their verdict's colour`, JSON.stringify(pixels.marks));
	// a first record (verdict recorded) judged nothing: no mark, and not in a warn or fail colour
	const recorded = s.records.map((r, i) => [r.verdict, i]).filter((x) => x[0] === "recorded").map((x) => x[1]);
	const neutral = await page.evaluate((rec) => {
		const d = window.profgateDashboard.state, u = d.plots.step;
		const trs = document.querySelectorAll("#table-step tbody tr");
		return rec.map((i) => ({
			index: i,
			px: Array.from(u.ctx.getImageData(Math.round(u.valToPos(u.data[0][i], "x", true)),
				Math.round(u.valToPos(u.data[1][i], "y", true)), 1, 1).data),
			cell: getComputedStyle(trs[i].cells[3]).color,
		}));
	}, recorded);
	const near = (p, c) => c.every((v, j) => Math.abs(p[j] - v) < 40);
	tap(recorded.length > 0 && neutral.every((x) => !c.marks.some((m) => m.index === x.index) &&
		!near(x.px, want.fail) && !near(x.px, want.warn) &&
		x.cell !== "rgb(209, 36, 47)" && x.cell !== "rgb(154, 103, 0)"),
		`${name}: a recorded record is drawn neutral: no mark, not red or amber`, JSON.stringify(neutral));
	tap(pixels.lines.every((r) => r > 10), `${name}: a dashed line at each change point`,
		JSON.stringify(pixels.lines));
	// a click on a point shows that record with its links
	const k = Math.floor(s.records.length / 2);
	const at = await page.evaluate((k) => {
		const u = window.profgateDashboard.state.plots.step, r = u.over.getBoundingClientRect();
		return { x: r.left + u.valToPos(u.data[0][k], "x"), y: r.top + u.valToPos(u.data[1][k], "y") };
	}, k);
	await page.mouse.move(at.x, at.y);
	await page.mouse.click(at.x, at.y);
	const sel = await page.$eval("#chart-step p.selected", (p) => ({
		index: p.getAttribute("data-index"),
		commit: p.querySelector("a.commit") ? p.querySelector("a.commit").href : null,
	}));
	tap(sel.index === String(k) && sel.commit === cfg.links[name].commit[k],
		`${name}: a click on a point shows its record and commit link`, JSON.stringify(sel));
	const rows = await page.$$eval("#table-step tbody tr", (trs) => trs.map((tr) => ({
		cells: [...tr.cells].map((td) => td.textContent),
		commit: tr.querySelector("a.commit") ? tr.querySelector("a.commit").href : null,
		pr: tr.querySelector("a.pr") ? tr.querySelector("a.pr").href : null,
		run: tr.querySelector("a.run") ? tr.querySelector("a.run").href : null,
	})));
	tap(rows.length === s.records.length && rows.every((r, i) => r.cells[1] === s.records[i].time &&
		r.cells[3] === s.records[i].verdict), `${name}: the table under the chart has every record`);
	const links = cfg.links[name];
	const bad = rows.map((r, i) => [r, i]).filter(([r, i]) =>
		r.commit !== links.commit[i] || r.pr !== links.pr[i] || r.run !== links.run[i]);
	tap(bad.length === 0, `${name}: commit, PR and run links of every record`,
		bad.slice(0, 2).map(([r, i]) => JSON.stringify([i, r, links.commit[i], links.pr[i], links.run[i]])).join("\n"));
	// the change points listed under the chart link to their commits
	const listed = await page.$$eval("#chart-step ol.changes li", (lis) => lis.map((li) => ({
		index: Number(li.getAttribute("data-index")),
		href: li.querySelector("a") ? li.querySelector("a").href : null,
	})));
	tap(same(listed, step.change_points.map((p) => ({ index: p.index, href: links.commit[p.index] }))),
		`${name}: the change points listed with their commits`, JSON.stringify(listed));
	// the picker: every metric, and a chart of the one picked with its change points
	const names = await page.$$eval("#metric-picker option", (os) => os.map((o) => o.value));
	tap(same(names, s.metrics.map((m) => m.name)), `${name}: the picker offers every metric`);
	const pick = s.metrics.find((m) => m.change_points.length && m.name !== "step.median_us") ||
		s.metrics[s.metrics.length - 1];
	await page.selectOption("#metric-picker", pick.name);
	const picked = await page.evaluate(() => window.profgateDashboard.state.charts.metric);
	tap(picked.metric === pick.name && picked.points === pick.values.filter((v) => v !== null).length &&
		same(picked.changes, pick.change_points.map((p) => ({ index: p.index, sha: p.sha }))),
		`${name}: the picked metric charted with its change points`, JSON.stringify(picked).slice(0, 300));
	const injected = await page.evaluate(() => ({
		pwned: window.__pwned || null,
		scripts: document.scripts.length,
		imgs: document.images.length,
		handlers: [...document.querySelectorAll("*")].filter((e) =>
			[...e.attributes].some((a) => /^on/i.test(a.name))).length,
		js: [...document.querySelectorAll("a")].filter((a) => !/^(https?|file):/.test(a.href)).length,
	}));
	tap(same(injected, { pwned: null, scripts: 3, imgs: 0, handlers: 0, js: 0 }),
		`${name}: no name became markup, script or a link elsewhere`, JSON.stringify(injected));
	for (const id of ["breakdown", "families"])
		if (st.charts[id])
			tap(st.charts[id].points === st.charts[id].records && st.charts[id].drawn > 0,
				`${name}: the ${id} chart drew a point per record`, JSON.stringify(st.charts[id]));
	tap(errors.length === 0, `${name}: no console error`, errors.join("\n"));
	if (cfg.screenshot && name === cfg.series[0])
		await page.screenshot({ path: cfg.screenshot, fullPage: false });
	await page.close();
}
await browser.close();
