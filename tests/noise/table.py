#!/usr/bin/env python3
"""Gate pairs of real runs and print the gate's confusion table (tests/noise/run.sh calls this).

The runs are summaries in --runs (base-NN.json, VARIANT-NN.json, from run.sh). Every pair is one
`profgate gate --json` call and is classified by the verdict JSON alone, so the table measures
whatever the gate does when it runs:

  single-run  the baseline is one base run. A/A: ordered pairs of base runs (at most AA_PAIRS,
              picked at a fixed stride); A/B: each variant run against VS_BASE fixed base runs.
  history     the baseline is `history:*:WINDOW`: per trial a fresh bare git repository holds
              WINDOW base runs appended by `gate --history R --kind nightly`; the candidate is
              gated with `--kind pr`, so its own record never enters a window. The windows
              rotate over the base runs (HIST_TRIALS trials); A/A candidates are the base runs
              outside the window. With one candidate run (history:5) and with CAND_RUNS
              candidate runs at once (history:5x3: what the Action's quick start does).
  multi-run   the same windows given as WINDOW `--baseline` runs, when this build combines
              several --baseline (detected by behaviour: a usage error, or a verdict whose
              baseline is one of the runs given alone, means not supported); with one
              candidate run (multi-run:5) and with CAND_RUNS candidate runs (multi-run:5x3);
              and one base run (each of HIST_TRIALS) against CAND_RUNS candidate runs
              (multi-run:1x3: a PR job that reruns only its own side).
              Candidate groups are consecutive undisturbed runs of one variant (A/A: base runs
              outside the window), as a job makes its runs one after another; the runs left
              over, with the disturbed ones, make the groups of the disturbed rows.

Disturbed runs. train_cpu.py times a fixed matmul just before and just after its profiled
steps (the witness), and a second process on the other core times one fixed unit of work after
another while they run (the sampler): clocks outside the trace. A run whose slower witness is
more than DISTURBED_WITNESS (1.10) times the median of all runs', or whose sampler's 90th
percentile unit is more than DISTURBED_SAMPLER (1.15) times the median unit of all runs, ran on a
busy machine: a co-tenant burst, which slows every part alike and which no gate can tell from a
regression of the code by the step alone. The table's rows count pairs whose candidate runs (and, single-run,
whose baseline run) are undisturbed; the others get rows of their own. A baseline window may hold
disturbed runs, as a real history does: its median and spread are robust to them.

The table opens with the busy-runner targets over every candidate, disturbed or not (what a
shared runner gives a gate, which does not know which runs a burst hit: A/A fails, A/A warn plus
inconclusive, +-1 % fails, +10 % warn-or-fail and silent passes, +25 % fails), then the targets
over undisturbed candidates.

A/B pairs also record whether attribution[0] names the family the variant changes (the family
itself, or an op of it); A/A pairs whether the verdict attributes nothing. Any gate that does not
give a verdict JSON with a verdict (a crash, a usage error, a failed history push) stops the
harness with exit 1.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

VERDICTS = ("fail", "warn", "inconclusive", "improved", "pass", "incomparable")
EXPECTED = {"one": "matmul", "matmul10": "matmul", "matmul25": "matmul", "step10": "matmul",
            "step25": "matmul", "softmax": "reduce", "copy": "copy"}
LABEL = "noise-calibration"


class HarnessError(Exception):
    pass


def env_int(name, default):
    return int(os.environ.get(name, default))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--profgate", required=True)
    p.add_argument("--runs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--thresholds-dir", required=True)
    p.add_argument("--variants", required=True)
    p.add_argument("--settings", default="")
    p.add_argument("--stamp", default="")
    p.add_argument("--load-start", default="")
    p.add_argument("--new-runs", type=int, default=0)
    p.add_argument("--gen-seconds", type=int, default=0)
    return p.parse_args(argv)


class Gate:
    """Runs `profgate gate` and returns the verdict JSON; counts the calls."""

    def __init__(self, profgate, work):
        self.profgate = profgate
        self.work = work
        self.calls = 0

    def run(self, baselines, candidate, thresholds, extra=(), env=None):
        self.calls += 1
        out = os.path.join(self.work, "verdict.json")
        if os.path.exists(out):
            os.unlink(out)
        cmd = [self.profgate, "gate", "--json", out, "--label", LABEL, "--threads", "1"]
        for c in candidate if isinstance(candidate, list) else [candidate]:
            cmd += ["--candidate", c]
        for b in baselines:
            cmd += ["--baseline", b]
        if thresholds:
            cmd += ["--thresholds", thresholds]
        cmd += list(extra)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, **(env or {})))
        return p, out

    def verdict(self, baselines, candidate, thresholds, extra=(), env=None):
        p, out = self.run(baselines, candidate, thresholds, extra, env)
        what = "gate %s against %s" % (candidate, " ".join(baselines))
        if p.returncode not in (0, 1, 4):
            raise HarnessError("%s: exit %d: %s" % (what, p.returncode, p.stderr.strip()[-400:]))
        try:
            with open(out) as f:
                v = json.load(f)
        except (OSError, ValueError) as e:
            raise HarnessError("%s: no verdict JSON (%s)" % (what, e))
        if v.get("verdict") not in VERDICTS:
            raise HarnessError("%s: verdict %r" % (what, v.get("verdict")))
        return v


def load_runs(runs_dir, variants):
    runs = {}
    for name in sorted(os.listdir(runs_dir)):
        if not name.endswith(".json") or ".tmp." in name:
            continue
        variant = name.rsplit("-", 1)[0]
        runs.setdefault(variant, []).append(os.path.join(runs_dir, name))
    for v in ["base"] + variants:
        if not runs.get(v):
            raise HarnessError("no %s runs in %s" % (v, runs_dir))
    return runs


def step_median(path):
    """A run's steady median step and its families' time per step (a host profile keeps its
    families under host)."""
    with open(path) as f:
        s = json.load(f)
    fams = s.get("families") or (s.get("host") or {}).get("families") or []
    return s["steps"]["steady"]["median_us"], {x["family"]: x["us_per_step"] for x in fams}


def run_list(runs_dir):
    """runs.txt from run.sh: name, variant, seed, start time, seconds, load average at start,
    witness before and after, the sampler's median and 90th percentile unit time; each run
    marked disturbed or not."""
    out = []
    with open(os.path.join(runs_dir, "runs.txt")) as f:
        for line in f:
            f = line.split()
            # runs made before the sampler have no sampler columns
            name, variant, seed, start, secs, load, w0, w1 = f[:8]
            s50, s90 = f[8:10] if len(f) >= 10 else ("nan", "nan")
            med, _ = step_median(os.path.join(runs_dir, name + ".json"))
            out.append({"name": name, "variant": variant, "seed": int(seed),
                        "start": float(start), "seconds": float(secs), "load": float(load),
                        "median_step_us": med, "witness_us": max(float(w0), float(w1)),
                        "sampler_p50_us": float(s50), "sampler_p90_us": float(s90)})
    ref = statistics.median(r["witness_us"] for r in out)
    units = [r["sampler_p50_us"] for r in out if r["sampler_p50_us"] == r["sampler_p50_us"]]
    unit = statistics.median(units) if units else float("nan")
    limit = float(os.environ.get("DISTURBED_WITNESS", "1.10"))
    slow = float(os.environ.get("DISTURBED_SAMPLER", "1.15"))
    for r in out:
        r["disturbed"] = r["witness_us"] > limit * ref or r["sampler_p90_us"] > slow * unit
    return out


def undisturbed(runs, listed):
    """runs without the disturbed ones (listed: run_list's); a variant whose runs were all
    disturbed keeps them all, so its effect is still shown (the table's header counts them)."""
    bad = {r["name"] for r in listed if r["disturbed"]}
    out = {}
    for v, paths in runs.items():
        quiet = [p for p in paths if os.path.basename(p)[:-5] not in bad]
        out[v] = quiet or paths
    return out


def measured_noise(paths):
    """The spread between runs of the base variant, per judged metric: the robust sd (1.4826 MAD)
    of each run's value, as a share of the metric and of the step. The priors of the thresholds
    files come from this table."""
    vals = {}
    steps = []
    for p in paths:
        with open(p) as f:
            s = json.load(f)
        st = s["steps"]["steady"]
        steps.append(st["median_us"])
        vals.setdefault("step.median_us", []).append(st["median_us"])
        vals.setdefault("step.p90_us", []).append(st["p90_us"])
        fams = s.get("families") or (s.get("host") or {}).get("families") or []
        for x in fams:
            vals.setdefault("family.%s.us_per_step" % x["family"], []).append(x["us_per_step"])
    step = statistics.median(steps)
    out = []
    for name, v in sorted(vals.items()):
        if len(v) < len(paths) or statistics.median(v) < 0.01 * step:
            continue
        med = statistics.median(v)
        sd = 1.4826 * statistics.median(abs(x - med) for x in v)
        out.append({"metric": name, "median": med, "robust_sd": sd, "relative": sd / med,
                    "step_share": sd / step})
    return out


def effects(runs, variants):
    """The measured change of each variant: median over its runs of the run's steady median step,
    against the same over the base runs; likewise the family the variant changes."""
    per = {v: [step_median(p) for p in runs[v]] for v in ["base"] + variants}
    base = statistics.median(m for m, _ in per["base"])
    base_meds = sorted(m for m, _ in per["base"])
    mad = statistics.median(abs(m - base) for m in base_meds)
    out = {"base": {"runs": len(base_meds), "median_step_us": base, "min_us": base_meds[0],
                    "max_us": base_meds[-1], "mad_share": mad / base}}
    for v in variants:
        meds = sorted(m for m, _ in per[v])
        med = statistics.median(meds)
        row = {"runs": len(meds), "median_step_us": med, "min_us": meds[0], "max_us": meds[-1],
               "step_change": med / base - 1}
        fam = EXPECTED.get(v)
        if fam:
            b = statistics.median(f.get(fam, 0.0) for _, f in per["base"])
            c = statistics.median(f.get(fam, 0.0) for _, f in per[v])
            row["family"] = fam
            row["family_change_us"] = c - b
            row["family_change"] = c / b - 1 if b else None
        out[v] = row
    return out


def names_family(v, family):
    a = v.get("attribution") or []
    if not a or not family:
        return False
    first = a[0]
    if first.get("kind") == "family":
        return first.get("name") == family
    return first.get("family") == family


def record(v, mode, thresholds, variant, baseline, candidate, disturbed):
    a = v.get("attribution") or []
    step = v.get("step") or {}
    ok = not a if variant == "A/A" else names_family(v, EXPECTED.get(variant))
    cands = candidate if isinstance(candidate, list) else [candidate]
    return {"mode": mode, "thresholds": thresholds, "variant": variant,
            "baseline": baseline, "candidate": " ".join(os.path.basename(c) for c in cands),
            "disturbed": disturbed,
            "verdict": v["verdict"], "attribution_ok": ok,
            "attribution0": ({k: a[0].get(k) for k in ("kind", "name", "family")} if a else None),
            "step_change": step.get("delta_share"), "p_value": step.get("p_value"),
            "not_pass": {m["name"]: m["verdict"] for m in v.get("metrics") or []
                         if m.get("verdict") in ("fail", "warn")}}


def pick_pairs(items, cap):
    pairs = [(a, b) for a in items for b in items if a != b]
    if len(pairs) <= cap:
        return pairs
    return [pairs[k * len(pairs) // cap] for k in range(cap)]


def single_run(gate, runs, variants, th_name, th_path, aa_cap, vs_base, bad):
    base = runs["base"]
    out = []
    for b, c in pick_pairs(base, aa_cap):
        v = gate.verdict([b], c, th_path)
        out.append(record(v, "single-run", th_name, "A/A", os.path.basename(b), c,
                          b in bad or c in bad))
    fixed = [base[k * len(base) // vs_base] for k in range(min(vs_base, len(base)))]
    for var in variants:
        for c in runs[var]:
            for b in fixed:
                v = gate.verdict([b], c, th_path)
                out.append(record(v, "single-run", th_name, var, os.path.basename(b), c,
                                  b in bad or c in bad))
    return out


def groups(items, k):
    """Consecutive groups of k (the last partial group dropped)."""
    return [items[i:i + k] for i in range(0, len(items) - k + 1, k)]


def cand_groups(items, k, bad):
    """Groups of k candidate runs: consecutive undisturbed runs first, then the runs left over
    with the disturbed ones, so a disturbed run spoils one group, not every group it falls in."""
    if k == 1:
        return [[x] for x in items]
    quiet = [x for x in items if x not in bad]
    out = groups(quiet, k)
    used = {x for g in out for x in g}
    return out + groups([x for x in items if x not in used], k)


def windows(base, window, trials):
    """Trial t takes WINDOW consecutive base runs starting at t * stride (cyclically)."""
    stride = max(1, len(base) // trials)
    return [[base[(t * stride + k) % len(base)] for k in range(window)] for t in range(trials)]


def history_repo(gate, repo, window):
    """A fresh bare repository whose history holds the window's runs as nightly records, oldest
    first (each appended by a gate against the next run of the window, any baseline will do)."""
    subprocess.run(["git", "init", "--bare", "-q", repo], check=True)
    for k, c in enumerate(window):
        env = {"PROFGATE_TIME": "2024-01-01T00:%02d:00Z" % k}
        gate.verdict([window[(k + 1) % len(window)]], c, None,
                     ["--history", repo, "--kind", "nightly", "--history-required"], env)


def windowed(gate, runs, variants, th_list, wins, mode, work, bad, n_cands=(1,)):
    """Every window against the candidates, one run at a time and in groups of each count in
    n_cands (a history repository is made once per window for all of them)."""
    out = []
    for t, win in enumerate(wins):
        spec = "%s:%s" % (mode, ",".join(os.path.basename(w)[:-5] for w in win))
        if mode == "history":
            repo = os.path.join(work, "history-%02d.git" % t)
            subprocess.run(["rm", "-rf", repo], check=True)
            history_repo(gate, repo, win)
            baselines = ["history:*:%d" % len(win)]
            extra = ["--history", repo, "--kind", "pr", "--history-required"]
            env = {"PROFGATE_TIME": "2024-01-02T00:00:00Z"}
        else:
            baselines, extra, env = win, [], None
        for n_cand in n_cands:
            out += windowed_cands(gate, runs, variants, th_list, win, spec, baselines, extra, env,
                                  mode, bad, n_cand)
        if mode == "history":
            subprocess.run(["rm", "-rf", repo], check=True)
    return out


def windowed_cands(gate, runs, variants, th_list, win, spec, baselines, extra, env, mode, bad,
                   n_cand):
    """One window against the candidates in groups of n_cand runs."""
    base = runs["base"]
    out = []
    label = "%s:%d" % (mode, len(win)) + ("x%d" % n_cand if n_cand > 1 else "")
    cands = [("A/A", c) for c in cand_groups([c for c in base if c not in win], n_cand, bad)]
    cands += [(var, c) for var in variants for c in cand_groups(runs[var], n_cand, bad)]
    for th_name, th_path in th_list:
        for var, c in cands:
            v = gate.verdict(baselines, c if n_cand > 1 else c[0], th_path, extra, env)
            if mode == "history":
                got = len(((v.get("baseline") or {}).get("history") or {}).get("records") or [])
                if got != len(win):
                    raise HarnessError("%s: the window holds %d records, not %d"
                                       % (spec, got, len(win)))
            # a window may hold disturbed runs, as a real history does: its median and
            # spread are robust to them; the pair is disturbed when a candidate run is
            out.append(record(v, label, th_name, var, spec, c, any(x in bad for x in c)))
    return out


def multi_supported(gate, base):
    """Whether --baseline may be given several times: a usage error, or a baseline that is just
    one of the runs given alone, says no."""
    a, b, c = base[0], base[1], base[2]
    p, out = gate.run([a, b], c, None)
    if p.returncode not in (0, 1, 4) or not os.path.exists(out):
        return False, "gate --baseline A --baseline B: exit %d" % p.returncode
    with open(out) as f:
        both = json.load(f).get("baseline")
    for one in (a, b):
        if gate.verdict([one], c, None).get("baseline") == both:
            return False, "gate --baseline A --baseline B keeps one baseline run"
    return True, "gate --baseline A --baseline B combines the runs"


def pct(n, d):
    return 100.0 * n / d if d else 0.0


def summarize_rows(pairs, th_names, modes, variants):
    rows = []
    for th in th_names:
        for mode in modes:
            for var in ["A/A"] + variants + ["A/A disturbed", "A/B disturbed"]:
                if var == "A/A disturbed":
                    keep = lambda p: p["variant"] == "A/A" and p["disturbed"]
                elif var == "A/B disturbed":
                    keep = lambda p: p["variant"] != "A/A" and p["disturbed"]
                else:
                    keep = lambda p, var=var: p["variant"] == var and not p["disturbed"]
                sel = [p for p in pairs if p["thresholds"] == th and p["mode"] == mode
                       and keep(p)]
                if not sel:
                    continue
                counts = {k: sum(p["verdict"] == k for p in sel) for k in VERDICTS}
                fails = [p for p in sel if p["verdict"] == "fail"]
                rows.append({"thresholds": th, "mode": mode, "variant": var, "pairs": len(sel),
                             "counts": counts,
                             "share": {k: pct(n, len(sel)) for k, n in counts.items()},
                             "attribution_ok": pct(sum(p["attribution_ok"] for p in sel),
                                                   len(sel)),
                             "attribution_ok_of_fails": (pct(sum(p["attribution_ok"] for p in fails),
                                                             len(fails)) if fails else None)})
    return rows


def mode_words(mode):
    """single-run, history:5, multi-run:5x3 as "baseline (candidate)" in words."""
    if mode == "single-run":
        return "1 run (1 run)"
    kind, size = mode.split(":")
    n, _, k = size.partition("x")
    runs = lambda x: "1 run" if x == "1" else "%s runs" % x
    return "%s (%s)" % ("history:%s" % n if kind == "history" else runs(n),
                        runs(k) if k else "1 run")


def targets(pairs, th, modes):
    """The issue's targets per baseline: A/A fail and warn, A/A attributing nothing, the +-1 %,
    +10 % and +25 % variants' fails and the fails naming the changed family, over undisturbed
    candidates; each "share (pairs)"."""
    L = ["| baseline (candidate) | A/A fail % | A/A warn % | A/A attributes nothing % | "
         "±1 % fail % | +10 % fail % | +25 % fail % | fails naming the changed family % |",
         "|---|---|---|---|---|---|---|---|"]

    def cell(sel, ok):
        return "%.1f (%d)" % (pct(sum(ok(p) for p in sel), len(sel)), len(sel)) if sel else "—"
    for mode in modes:
        sel = [p for p in pairs if p["thresholds"] == th and p["mode"] == mode
               and not p["disturbed"]]
        aa = [p for p in sel if p["variant"] == "A/A"]
        of = lambda v: [p for p in sel if p["variant"] == v]
        fails = [p for p in sel if p["variant"] not in ("A/A", "one") and p["verdict"] == "fail"]
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            mode_words(mode), cell(aa, lambda p: p["verdict"] == "fail"),
            cell(aa, lambda p: p["verdict"] == "warn"), cell(aa, lambda p: p["attribution_ok"]),
            cell(of("one"), lambda p: p["verdict"] == "fail"),
            cell(of("step10"), lambda p: p["verdict"] == "fail"),
            cell(of("step25"), lambda p: p["verdict"] == "fail"),
            cell(fails, lambda p: p["attribution_ok"])))
    return L


def busy_targets(pairs, th, modes):
    """The busy runner's targets (docs/noise.md), over every candidate, disturbed or not (on a
    busy runner a gate does not know which runs a burst hit): per baseline, A/A fails of all,
    A/A warn plus inconclusive, A/A inconclusive, +-1 % fails, +10 % (step10) warn or fail and
    passes, +25 % fails."""
    L = ["| baseline (candidate) | A/A fail | A/A warn + inconclusive % | A/A inconclusive % | "
         "±1 % fail | +10 % warn or fail % | +10 % pass % | +25 % fail |",
         "|---|---|---|---|---|---|---|---|"]

    def frac(sel, ok):
        return "%d of %d" % (sum(ok(p) for p in sel), len(sel)) if sel else "—"

    def share(sel, ok):
        return "%.1f (%d)" % (pct(sum(ok(p) for p in sel), len(sel)), len(sel)) if sel else "—"
    for mode in modes:
        sel = [p for p in pairs if p["thresholds"] == th and p["mode"] == mode]
        of = lambda v: [p for p in sel if p["variant"] == v]
        aa = of("A/A")
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            mode_words(mode), frac(aa, lambda p: p["verdict"] == "fail"),
            share(aa, lambda p: p["verdict"] in ("warn", "inconclusive")),
            share(aa, lambda p: p["verdict"] == "inconclusive"),
            frac(of("one"), lambda p: p["verdict"] == "fail"),
            share(of("step10"), lambda p: p["verdict"] in ("warn", "fail")),
            share(of("step10"), lambda p: p["verdict"] in ("pass", "improved")),
            frac(of("step25"), lambda p: p["verdict"] == "fail")))
    return L


def markdown(meta, eff, rows, variants, th_names, modes, multi, noise, pairs):
    L = []
    m = meta["machine"]
    runs = meta["runs"]
    t0 = min(r["start"] for r in runs)
    t1 = max(r["start"] + r["seconds"] for r in runs)
    when = "%s .. %s UTC" % (utc(t0, "%Y-%m-%d %H:%M"), utc(t1, "%H:%M"))
    L.append("Noise calibration: %d runs made %s on %s (%d cores), load average %.1f .. %.1f "
             "during the runs, %d of them disturbed (witness over %s or sampler over %s times the "
             "median); %s. "
             "Gated %s by %s: %d gate calls in %d s."
             % (len(runs), when, m["cpu"], m["nproc"], min(r["load"] for r in runs),
                max(r["load"] for r in runs), sum(r["disturbed"] for r in runs),
                os.environ.get("DISTURBED_WITNESS", "1.10"),
                os.environ.get("DISTURBED_SAMPLER", "1.15"), meta["settings"], meta["date"],
                meta["profgate_version"], meta["gate_calls"], meta["seconds_gate"]))
    L.append("")
    b = eff["base"]
    L.append("| variant | runs | median step | change vs base | expected family change |")
    L.append("|---|---|---|---|---|")
    L.append("| base | %d | %.2f ms (runs %.2f .. %.2f, MAD %.1f%%) | | |"
             % (b["runs"], b["median_step_us"] / 1e3, b["min_us"] / 1e3, b["max_us"] / 1e3,
                100 * b["mad_share"]))
    for v in variants:
        e = eff[v]
        fam = ""
        if e.get("family"):
            fam = "%s %+.0f us/step" % (e["family"], e["family_change_us"])
            if e.get("family_change") is not None:
                fam += " (%+.1f%%)" % (100 * e["family_change"])
        L.append("| %s | %d | %.2f ms (runs %.2f .. %.2f) | %+.1f%% | %s |"
                 % (v, e["runs"], e["median_step_us"] / 1e3, e["min_us"] / 1e3, e["max_us"] / 1e3,
                    100 * e["step_change"], fam))
    L.append("")
    L.append("Between-run noise of the undisturbed base runs (robust sd of a run's value):")
    L.append("")
    L.append("| metric | median | robust sd | of the value | of the step |")
    L.append("|---|---|---|---|---|")
    for x in noise:
        L.append("| %s | %.0f us | %.0f us | %.1f%% | %.2f%% |"
                 % (x["metric"], x["median"], x["robust_sd"], 100 * x["relative"],
                    100 * x["step_share"]))
    for th in th_names:
        L.append("")
        L.append("Busy-runner targets, thresholds `%s` (every candidate, disturbed or not):" % th)
        L.append("")
        L += busy_targets(pairs, th, modes)
    for th in th_names:
        L.append("")
        L.append("Targets, thresholds `%s` (undisturbed candidates; pairs in brackets):" % th)
        L.append("")
        L += targets(pairs, th, modes)
    for th in th_names:
        L.append("")
        L.append("Thresholds `%s`:" % th)
        L.append("")
        L.append("| baseline | pair | pairs | fail % | warn % | inconclusive % | improved % | "
                 "pass % | incomparable % | attribution ok % | of fails % |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for mode in modes:
            sel = [r for r in rows if r["thresholds"] == th and r["mode"] == mode]
            for r in sel:
                s = r["share"]
                of = r["attribution_ok_of_fails"]
                L.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %.0f | %s |"
                         % (mode, r["variant"], r["pairs"],
                            *("%.1f" % s[k] for k in VERDICTS), r["attribution_ok"],
                            "—" if of is None or r["variant"].startswith("A/A") else "%.0f" % of))
        if not multi["supported"]:
            L.append("| multi-run | — | multi-run: not supported by this build | | | | | | | | |")
    L.append("")
    L.append("Rows name the pairs whose candidate runs (and, single-run, baseline run) were "
             "undisturbed; \"A/A disturbed\" and \"A/B disturbed\" are the others. A baseline "
             "window may hold disturbed runs, as a real history does.")
    L.append("")
    L.append("attribution ok: for A/A, the verdict attributes nothing; for a variant, "
             "attribution[0] names the family it changes (%s; the family or one of its ops); "
             "\"of fails\": the same among the failed gates."
             % ", ".join("%s: %s" % (v, EXPECTED[v]) for v in variants if v in EXPECTED))
    return "\n".join(L) + "\n"


def utc(t, fmt):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(fmt)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main(argv):
    a = parse_args(argv)
    t0 = time.time()
    variants = a.variants.split()
    aa_cap = env_int("AA_PAIRS", 240)
    n_cand = env_int("CAND_RUNS", 3)
    vs_base = env_int("VS_BASE", 4)
    window = env_int("WINDOW", 5)
    th_names = os.environ.get("THRESHOLDS", "default nightly").split()
    work = os.path.join(a.out, "work")
    os.makedirs(work, exist_ok=True)
    gate = Gate(a.profgate, work)
    runs = load_runs(a.runs, variants)
    listed = run_list(a.runs)
    bad = {os.path.join(a.runs, r["name"] + ".json") for r in listed if r["disturbed"]}
    base = runs["base"]
    trials = env_int("HIST_TRIALS", len(base))
    if len(base) < window + 2:
        raise HarnessError("%d base runs: a window of %d needs %d" % (len(base), window, window + 2))
    th_list = []
    for th in th_names:
        path = None if th == "default" else os.path.join(a.thresholds_dir, th + ".json")
        if path and not os.path.exists(path):
            raise HarnessError("no thresholds file %s" % path)
        th_list.append((th, path))

    supported, why = multi_supported(gate, base)
    multi = {"supported": supported, "detection": why}
    wins = windows(base, window, trials)
    pairs = []
    for th_name, th_path in th_list:
        pairs += single_run(gate, runs, variants, th_name, th_path, aa_cap, vs_base, bad)
    n_cands = (1, n_cand) if n_cand > 1 else (1,)
    pairs += windowed(gate, runs, variants, th_list, wins, "history", work, bad, n_cands)
    modes = ["single-run"]
    for mode in ("history", "multi-run") if supported else ("history",):
        modes += ["%s:%d" % (mode, window)] + (["%s:%dx%d" % (mode, window, n_cand)]
                                               if n_cand > 1 else [])
    if supported:
        pairs += windowed(gate, runs, variants, th_list, wins, "multi-run", work, bad, n_cands)
    if supported and n_cand > 1:
        # one baseline run against n_cand candidate runs: a PR job that reruns only its own side
        modes.insert(1, "multi-run:1x%d" % n_cand)
        pairs += windowed(gate, runs, variants, th_list, windows(base, 1, trials), "multi-run",
                          work, bad, (n_cand,))

    quiet = undisturbed(runs, listed)
    eff = effects(quiet, variants)
    noise = measured_noise(quiet["base"])
    rows = summarize_rows(pairs, th_names, modes, variants)
    meta = {
        "schema": "profgate.noise/1",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"nproc": os.cpu_count(), "cpu": cpu_model()},
        "load_start": a.load_start,
        "load_end": " ".join(open("/proc/loadavg").read().split()[:3]),
        "settings": a.settings,
        "gating": {"aa_pairs_cap": aa_cap, "vs_base": vs_base, "window": window,
                   "history_trials": trials, "thresholds": th_names, "label": LABEL},
        "stamp": a.stamp,
        "profgate_version": subprocess.run([a.profgate, "--version"], stdout=subprocess.PIPE,
                                           text=True).stdout.strip(),
        "new_runs": a.new_runs,
        "gate_calls": gate.calls,
        "seconds_generate": a.gen_seconds,
        "seconds_gate": round(time.time() - t0),
    }
    meta["runs"] = listed
    table = dict(meta, multi_run=multi, effects=eff, rows=rows, noise=noise)
    md = markdown(meta, eff, rows, variants, th_names, modes, multi, noise, pairs)
    with open(os.path.join(a.out, "table.json"), "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    with open(os.path.join(a.out, "pairs.jsonl"), "w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (HarnessError, subprocess.CalledProcessError, OSError, KeyError, ValueError) as e:
        print("noise: %s" % e, file=sys.stderr)
        sys.exit(1)
