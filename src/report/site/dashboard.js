/*
 * profgate dashboard: draws one series' page from its data script, which calls
 * profgateDashboard.series(trend, links): trend is the series' profgate.trend/1
 * JSON (records, every metric's values, change points, nightly runs), links the
 * checked pieces of each record's links (server, repo, commit, pr, run).
 *
 * Charts (uPlot, embedded): the step time with the median..p90 band of each
 * run's steady steps, verdict marks and change points; the breakdown shares
 * stacked; the largest op families; any metric from a picker. Under each chart
 * a table of the same numbers. Every name is put into the page as text
 * (textContent, never innerHTML), and a link is only made from the checked
 * pieces, so nothing in the history becomes markup or script.
 *
 * For tests, profgateDashboard.state.charts[id] says what each chart drew:
 * records, points, marks and change points (record indices); state.plots[id]
 * is its uPlot instance.
 */
(function () {
	"use strict";

	var COLORS = ["#2f6feb", "#d4731f", "#1a7f37", "#8250df", "#cf222e", "#0a8a9a", "#9a6700",
		"#57606a"];
	var VERDICT_COLOR = { fail: "#d1242f", warn: "#bf8700" };
	var BREAKDOWN = [
		["breakdown.compute_share", "compute", "#2f6feb"],
		["breakdown.exposed_comm_share", "exposed communication", "#d4731f"],
		["breakdown.exposed_memcpy_share", "exposed memory copies", "#8250df"],
		["breakdown.idle_share", "idle", "#8c959f"]
	];
	var TOP_FAMILIES = 6;
	var state = { charts: {}, plots: {}, series: null };

	/* Bidirectional controls would make a name read in another order than it
	 * runs: shown as U+FFFD, as the HTML and the markdown show them. */
	var BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined && text !== null)
			e.textContent = String(text).replace(BIDI, "\ufffd");
		return e;
	}

	function add(parent, child) {
		parent.appendChild(child);
		return child;
	}

	/* ---- numbers and links ---- */

	function fmt(v, unit) {
		if (v === null || v === undefined || !isFinite(v))
			return "—";
		if (unit === "us") {
			var a = Math.abs(v);
			if (a >= 1e6)
				return (v / 1e6).toFixed(3) + " s";
			if (a >= 1e3)
				return (v / 1e3).toFixed(2) + " ms";
			return v.toFixed(1) + " us";
		}
		if (unit === "share")
			return (100 * v).toFixed(2) + "%";
		return v.toFixed(3) + (unit ? " " + unit : "");
	}

	function pct(c, unit) {
		if (unit === "share")
			return (c.delta >= 0 ? "+" : "") + (100 * c.delta).toFixed(2) + " points";
		if (c.delta_share === null)
			return fmt(c.delta, unit);
		return (c.delta_share >= 0 ? "+" : "") + (100 * c.delta_share).toFixed(1) + "%";
	}

	function Links(links) {
		this.l = links;
	}
	Links.prototype.base = function (i) {
		return this.l.repo[i] ? this.l.server + "/" + this.l.repo[i] : null;
	};
	Links.prototype.commit = function (i) {
		var b = this.base(i);
		return b && this.l.commit[i] ? b + "/commit/" + this.l.commit[i] : null;
	};
	Links.prototype.pr = function (i) {
		var b = this.base(i);
		return b && this.l.pr[i] ? b + "/pull/" + this.l.pr[i] : null;
	};
	Links.prototype.run = function (i) {
		var b = this.base(i);
		return b && this.l.run[i] ? b + "/actions/runs/" + this.l.run[i] : null;
	};

	function linkOrText(href, text, cls) {
		var e = href ? el("a", cls, text) : el("span", cls, text);
		if (href)
			e.href = href;
		return e;
	}

	/* ---- the series ---- */

	function Series(trend, links) {
		this.s = trend.series[0];
		this.records = this.s.records;
		this.links = new Links(links);
		this.x = this.records.map(function (r) {
			return Date.parse(r.time) / 1000;
		});
		this.byName = {};
		for (var i = 0; i < this.s.metrics.length; i++)
			this.byName[this.s.metrics[i].name] = this.s.metrics[i];
	}
	Series.prototype.metric = function (name) {
		return this.byName[name] || null;
	};

	/* The cells every table row starts with: the record and its links. */
	function recordCells(S, tr, i) {
		var r = S.records[i], td;
		add(tr, el("td", "num", i));
		add(tr, el("td", null, r.time));
		add(tr, el("td", null, r.kind));
		add(tr, el("td", "verdict v-" + r.verdict.replace(/[^a-z]/g, ""), r.verdict));
		td = add(tr, el("td"));
		add(td, linkOrText(S.links.commit(i), r.sha ? r.sha.slice(0, 7) : "—", "commit"));
		td = add(tr, el("td"));
		add(td, linkOrText(S.links.pr(i), S.links.l.pr[i] ? "#" + S.links.l.pr[i] : "—", "pr"));
		td = add(tr, el("td"));
		add(td, linkOrText(S.links.run(i), S.links.l.run[i] ? "run" : "—", "run"));
	}

	/* A table of columns (each {name, unit, values}) over the records. */
	function table(S, id, cols) {
		var wrap = el("div", "table-wrap"), t = add(wrap, el("table", "data")), head, body;
		t.id = "table-" + id;
		head = add(add(t, el("thead")), el("tr"));
		["#", "time", "kind", "verdict", "commit", "PR", "run"].forEach(function (h) {
			add(head, el("th", null, h));
		});
		cols.forEach(function (c) {
			add(head, el("th", null, c.name));
		});
		body = add(t, el("tbody"));
		for (var i = 0; i < S.records.length; i++) {
			var tr = add(body, el("tr"));
			recordCells(S, tr, i);
			cols.forEach(function (c) {
				add(tr, el("td", "num", fmt(c.values[i], c.unit)));
			});
		}
		return wrap;
	}

	/* ---- charts ---- */

	function width(box) {
		return Math.max(480, Math.min(1200, (box.clientWidth || 960) - 8));
	}

	function countPoints(v) {
		var n = 0;
		for (var i = 0; i < v.length; i++)
			n += v[i] !== null && v[i] !== undefined;
		return n;
	}

	/* The panel that shows a clicked record with its links. */
	function selectRecord(S, box, i) {
		var p = box.querySelector(".selected"), r = S.records[i];
		p.textContent = "";
		add(p, el("strong", null, r.time + " · " + r.kind + " · " + r.verdict));
		add(p, document.createTextNode(" "));
		add(p, linkOrText(S.links.commit(i), "commit " + (r.sha ? r.sha.slice(0, 7) : "—"),
			"commit"));
		add(p, document.createTextNode(" "));
		add(p, linkOrText(S.links.pr(i), S.links.l.pr[i] ? "PR #" + S.links.l.pr[i] : "no PR",
			"pr"));
		add(p, document.createTextNode(" "));
		add(p, linkOrText(S.links.run(i), "run", "run"));
		p.setAttribute("data-index", String(i));
	}

	function onClick(S, u, box) {
		u.over.addEventListener("click", function () {
			if (u.cursor.idx !== null && u.cursor.idx !== undefined)
				selectRecord(S, box, u.cursor.idx);
		});
	}

	/* Vertical lines at the change points, with their commit and size. */
	function drawChanges(u, S, m) {
		var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
		ctx.save();
		ctx.strokeStyle = "#cf222e";
		ctx.fillStyle = "#cf222e";
		ctx.lineWidth = 1.5 * devicePixelRatio;
		ctx.setLineDash([5 * devicePixelRatio, 4 * devicePixelRatio]);
		ctx.font = 11 * devicePixelRatio + "px sans-serif";
		m.change_points.forEach(function (c) {
			var x = Math.round(u.valToPos(S.x[c.index], "x", true));
			ctx.beginPath();
			ctx.moveTo(x, top);
			ctx.lineTo(x, top + h);
			ctx.stroke();
			ctx.fillText((c.sha ? c.sha.slice(0, 7) + " " : "") + pct(c, m.unit),
				x + 4 * devicePixelRatio, top + 12 * devicePixelRatio);
		});
		ctx.restore();
	}

	/* Warn and fail records as filled dots on the line. */
	function drawMarks(u, S, m, marks) {
		var ctx = u.ctx;
		ctx.save();
		marks.forEach(function (k) {
			var v = m.values[k.index];
			if (v === null)
				return;
			ctx.fillStyle = VERDICT_COLOR[k.verdict];
			ctx.beginPath();
			ctx.arc(u.valToPos(S.x[k.index], "x", true), u.valToPos(v, "y", true),
				5 * devicePixelRatio, 0, 2 * Math.PI);
			ctx.fill();
		});
		ctx.restore();
	}

	function yAxis(unit) {
		return {
			size: 86,
			values: function (u, vals) {
				return vals.map(function (v) {
					return fmt(v, unit);
				});
			}
		};
	}

	function section(app, id, title, note) {
		var box = add(app, el("section", "chart"));
		box.id = "chart-" + id;
		add(box, el("h2", null, title));
		if (note)
			add(box, el("p", "note", note));
		return box;
	}

	function record(id, S, data, extra) {
		var c = { records: S.records.length, points: countPoints(data[1]), drawn: 0 };
		for (var k in extra)
			c[k] = extra[k];
		state.charts[id] = c;
		return c;
	}

	function plot(id, box, opts, data, S, drawn) {
		var holder = add(box, el("div", "plot"));
		opts.width = width(box);
		opts.height = 300;
		opts.hooks = opts.hooks || {};
		opts.hooks.draw = (opts.hooks.draw || []).concat([function () {
			drawn.drawn++;
		}]);
		var u = new uPlot(opts, data, holder);
		state.plots[id] = u;
		onClick(S, u, box);
		add(box, el("p", "selected", "Click a point to see its record and links."));
		return u;
	}

	/* A metric's chart: its values, its change points, marks where given. */
	function metricChart(S, box, id, m, withMarks) {
		var marks = [], data = [S.x, m.values], drawn;
		if (withMarks)
			S.records.forEach(function (r, i) {
				if (VERDICT_COLOR[r.verdict] && m.values[i] !== null)
					marks.push({ index: i, verdict: r.verdict });
			});
		drawn = record(id, S, data, {
			metric: m.name,
			marks: marks,
			changes: m.change_points.map(function (c) {
				return { index: c.index, sha: c.sha };
			})
		});
		return plot(id, box, {
			scales: { x: { time: true } },
			series: [{}, { label: m.name, stroke: COLORS[0], width: 1.5, points: { size: 4 } }],
			axes: [{}, yAxis(m.unit)],
			hooks: { draw: [function (u) {
				drawChanges(u, S, m);
				drawMarks(u, S, m, marks);
			}] }
		}, data, S, drawn);
	}

	function changeList(S, box, m) {
		var ol;
		if (!m.change_points.length) {
			add(box, el("p", "changes-none", m.tested ? "No change points." :
				"Too few records to test for change points."));
			return;
		}
		ol = add(box, el("ol", "changes"));
		m.change_points.forEach(function (c) {
			var li = add(ol, el("li"));
			li.setAttribute("data-index", String(c.index));
			add(li, document.createTextNode(c.time.slice(0, 10) + " "));
			add(li, linkOrText(S.links.commit(c.index),
				"commit " + (c.sha ? c.sha.slice(0, 7) : "—"), "commit"));
			add(li, document.createTextNode(": " + fmt(c.before, m.unit) + " → " +
				fmt(c.after, m.unit) + " (" + pct(c, m.unit) + ", " + c.direction +
				", confidence " + c.confidence.toFixed(3) + ")"));
		});
	}

	function stepChart(S, app) {
		var med = S.metric("step.median_us"), p90 = S.metric("step.p90_us"), box, data, drawn,
			marks = [];
		box = section(app, "step", "Step time",
			"Median steady step of each run; the band reaches its p90. Dots: warn " +
			"(amber) and fail (red) verdicts. Dashed lines: change points (history trend).");
		if (!med) {
			add(box, el("p", "empty", "No step time in these records."));
			return;
		}
		S.records.forEach(function (r, i) {
			if (VERDICT_COLOR[r.verdict] && med.values[i] !== null)
				marks.push({ index: i, verdict: r.verdict });
		});
		data = [S.x, med.values, p90 ? p90.values : med.values];
		drawn = record("step", S, data, {
			metric: med.name,
			marks: marks,
			changes: med.change_points.map(function (c) {
				return { index: c.index, sha: c.sha };
			})
		});
		plot("step", box, {
			scales: { x: { time: true } },
			series: [{}, { label: "median", stroke: COLORS[0], width: 1.5, points: { size: 4 } },
				{ label: "p90", stroke: "rgba(47,111,235,0.35)", width: 1, points: { show: false } }],
			bands: [{ series: [2, 1], fill: "rgba(47,111,235,0.12)" }],
			axes: [{}, yAxis("us")],
			hooks: { draw: [function (u) {
				drawChanges(u, S, med);
				drawMarks(u, S, med, marks);
			}] }
		}, data, S, drawn);
		changeList(S, box, med);
		add(box, table(S, "step", [{ name: "median", unit: "us", values: med.values },
			{ name: "p90", unit: "us", values: p90 ? p90.values : [] }]));
	}

	function breakdownChart(S, app) {
		var parts = BREAKDOWN.filter(function (b) {
			return S.metric(b[0]);
		}), box, data = [S.x], sums = S.x.map(function () {
			return 0;
		}), series = [{}], bands = [], drawn;
		box = section(app, "breakdown", "Where the step goes",
			"Shares of the step, stacked: compute, exposed communication, exposed memory " +
			"copies, idle.");
		if (!parts.length) {
			add(box, el("p", "empty", "No breakdown in these records."));
			return;
		}
		parts.forEach(function (b, k) {
			var v = S.metric(b[0]).values;
			sums = sums.map(function (s, i) {
				return v[i] === null || s === null ? null : s + v[i];
			});
			data.push(sums.slice());
			series.push({
				label: b[1], stroke: b[2], width: 1, points: { show: false },
				fill: k === 0 ? b[2] + "55" : undefined,
				value: (function (vals) {
					return function (u, x, si, i) {
						return i === null ? "—" : fmt(vals[i], "share");
					};
				})(v)
			});
			if (k > 0)
				bands.push({ series: [k + 1, k], fill: b[2] + "55" });
		});
		drawn = record("breakdown", S, data, { parts: parts.length });
		plot("breakdown", box, {
			scales: { x: { time: true }, y: { range: [0, 1] } },
			series: series, bands: bands, axes: [{}, yAxis("share")]
		}, data, S, drawn);
		add(box, table(S, "breakdown", parts.map(function (b) {
			return { name: b[1], unit: "share", values: S.metric(b[0]).values };
		})));
	}

	function latest(v) {
		for (var i = v.length - 1; i >= 0; i--)
			if (v[i] !== null)
				return v[i];
		return -Infinity;
	}

	function familyChart(S, app) {
		var fams = S.s.metrics.filter(function (m) {
			return /^family\..*\.us_per_step$/.test(m.name);
		}), box, data = [S.x], series = [{}], drawn;
		fams.sort(function (a, b) {
			return latest(b.values) - latest(a.values) || (a.name < b.name ? -1 : 1);
		});
		fams = fams.slice(0, TOP_FAMILIES);
		box = section(app, "families", "Top op families",
			"Time per step of the " + TOP_FAMILIES + " largest op families of the newest record.");
		if (!fams.length) {
			add(box, el("p", "empty", "No op families in these records."));
			return;
		}
		fams.forEach(function (m, k) {
			data.push(m.values);
			series.push({ label: m.name.replace(/^family\.|\.us_per_step$/g, ""),
				stroke: COLORS[k % COLORS.length], width: 1.5, points: { size: 3 } });
		});
		drawn = record("families", S, data, { lines: fams.length });
		plot("families", box, { scales: { x: { time: true } }, series: series,
			axes: [{}, yAxis("us")] }, data, S, drawn);
		add(box, table(S, "families", fams.map(function (m) {
			return { name: m.name, unit: "us", values: m.values };
		})));
	}

	function pickerChart(S, app) {
		var box = section(app, "metric", "Any metric",
			"Every metric the records track, with its change points."), label, select, inner;
		label = add(box, el("label", null, "Metric "));
		select = add(label, el("select"));
		select.id = "metric-picker";
		S.s.metrics.forEach(function (m) {
			var o = add(select, el("option", null, m.name + (m.change_points.length ?
				" (" + m.change_points.length + " change" +
				(m.change_points.length > 1 ? "s" : "") + ")" : "")));
			o.value = m.name;
		});
		inner = add(box, el("div"));
		function show(name) {
			var m = S.metric(name), u = state.plots.metric;
			if (u)
				u.destroy();
			inner.textContent = "";
			metricChart(S, inner, "metric", m, false);
			changeList(S, inner, m);
			add(inner, table(S, "metric", [{ name: m.name, unit: m.unit, values: m.values }]));
		}
		select.addEventListener("change", function () {
			show(select.value);
		});
		select.value = S.metric("step.median_us") ? "step.median_us" : S.s.metrics[0].name;
		if (S.s.metrics.length)
			show(select.value);
	}

	function flagged(S, app) {
		if (!S.s.flagged.length)
			return;
		var p = add(app, el("p", "flagged", "Flagged by the nightly rule: "));
		S.s.flagged.forEach(function (name, k) {
			add(p, el("code", null, name));
			if (k + 1 < S.s.flagged.length)
				add(p, document.createTextNode(", "));
		});
	}

	function render(trend, links) {
		var app = document.getElementById("app"), S = new Series(trend, links);
		state.series = S.s.series;
		app.textContent = "";
		add(app, el("p", "summary", S.records.length + " records · " + S.s.metrics_tested +
			" metrics tested for change points, " + S.s.metrics_changed + " changed"));
		flagged(S, app);
		stepChart(S, app);
		breakdownChart(S, app);
		familyChart(S, app);
		pickerChart(S, app);
		state.ready = true;
	}

	window.profgateDashboard = {
		state: state,
		series: function (trend, links) {
			render(trend, links);
		}
	};
})();
