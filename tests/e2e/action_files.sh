#!/bin/sh
# The action's files agree with the code and with each other: action.yml (parsed with python3)
# declares exactly the inputs and defaults `profgate action --help` reads and the outputs it
# writes; the Dockerfile builds on bookworm, runs on bookworm-slim, installs only through
# scripts/image.sh and enters `profgate action`; scripts/packages.sh provides every pkg-config
# module the Makefile links and every library the binary needs at run time; docs/action.md's tables
# and every workflow in the README, docs/ and examples/ use the action's real inputs.
set -u
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "1..0 # skip python3-yaml is not installed (apt-get install python3-yaml)"
	exit 0
fi
pg action --help
cp "$T/out" "$T/help"
check "action --help: exit 0, inputs and outputs listed" \
	eval '[ "$rc" -eq 0 ] && grep -q "^inputs:" "$T/help" && grep -q "^outputs:" "$T/help"'

# ---- action.yml against the code ----
pycheck "action.yml: a Docker action on the Dockerfile (release commits pin the image), no entrypoint or args of its own" \
	'import yaml; a = yaml.safe_load(open(sys.argv[1]))' "$TOP/action.yml" \
	"a['runs'] == {'using': 'docker', 'image': 'Dockerfile'}" \
	"a['name'] == 'profgate' and a['description']"
pycheck "action.yml inputs: snake_case, described, required ones without a default" \
	'import yaml, re; a = yaml.safe_load(open(sys.argv[1])); i = a["inputs"]' "$TOP/action.yml" \
	"all(re.fullmatch('[a-z][a-z0-9_]*', k) for k in i)" \
	"all(v.get('description') for v in i.values())" \
	"sorted(k for k, v in i.items() if v.get('required')) == ['baseline', 'candidate']" \
	"all(('default' in v) != bool(v.get('required')) for v in i.values())" \
	"all(isinstance(v.get('default', ''), str) for v in i.values())"
HELP_SETUP='import yaml, re
a = yaml.safe_load(open(sys.argv[1]))
h = open("'"$T"'/help").read()
ins = dict(re.findall(r"^  ([a-z_]+) .*\(default: (.*)\)$", h.split("outputs:")[0], re.M))
outs = re.findall(r"^  ([a-z_]+) ", h.split("outputs:")[1], re.M)
def yml_default(v):
    return "required" if v.get("required") else (v["default"] if v["default"] != "" else "'"''"'")'
pycheck "action.yml inputs and defaults = what profgate action reads" "$HELP_SETUP" "$TOP/action.yml" \
	"len(ins) >= 10" \
	"sorted(ins) == sorted(a['inputs'])" \
	"all(ins[k] == yml_default(v) for k, v in a['inputs'].items())"
pycheck "action.yml outputs = what profgate action writes, each described, no value" "$HELP_SETUP" \
	"$TOP/action.yml" \
	"sorted(outs) == sorted(a['outputs'])" \
	"all(list(v) == ['description'] and v['description'] for v in a['outputs'].values())" \
	"{'verdict', 'exit_code', 'report_path', 'summary_path', 'regressions', 'comment_url'} <= set(outs)"

# ---- the Dockerfile ----
pycheck "Dockerfile: bookworm build stage, bookworm-slim run stage, entrypoint profgate action" \
	'import re; d = open(sys.argv[1]).read(); ins = [l.strip() for l in d.split("\n") if l.strip() and not l.startswith("#")]' \
	"$TOP/Dockerfile" \
	"[l for l in ins if l.startswith('FROM ')] == ['FROM debian:bookworm AS build', 'FROM debian:bookworm-slim']" \
	"[l for l in ins if l.startswith('ENTRYPOINT')] == ['ENTRYPOINT [\"/usr/local/bin/profgate\", \"action\"]']" \
	"not any(l.startswith(('USER', 'WORKDIR')) for l in ins[ins.index('FROM debian:bookworm-slim'):])"
pycheck "Dockerfile: packages only through scripts/image.sh (install-build, build, verify, install-runtime)" \
	'import re; d = open(sys.argv[1]).read(); runs = [l for l in d.split("\n") if l.startswith("RUN ")]' \
	"$TOP/Dockerfile" \
	"'apt-get' not in d and 'apt ' not in d" \
	"all('scripts/image.sh' in l for l in runs)" \
	"[w for l in runs for w in re.findall(r'image\.sh ([a-z-]+)', l)] == ['install-build', 'build', 'verify', 'install-runtime', 'verify']"
check "scripts/deps.sh takes its packages from scripts/packages.sh and names none itself" \
	eval 'grep -q "packages.sh" "$TOP/scripts/deps.sh" && ! grep -q -- "-dev" "$TOP/scripts/deps.sh"'

# ---- the package lists against the Makefile and the binary ----
. "$TOP/scripts/packages.sh"
check "the runtime packages include ca-certificates (libgit2's mbedTLS reads a fixed bundle)" \
	eval 'case " $PG_RUNTIME_PACKAGES " in *" ca-certificates "*) true ;; *) false ;; esac'
if command -v dpkg >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1; then
	mods=$(sed -n 's/^PKGS := //p' "$TOP/Makefile")
	missing=
	for m in $mods; do
		pc=$(pkg-config --variable=pcfiledir "$m" 2>/dev/null)/$m.pc
		p=$(dpkg -S "$pc" 2>/dev/null | sed 's/[:,].*//' | head -n 1)
		case " $PG_BUILD_PACKAGES " in *" $p "*) ;; *) missing="$missing $m(${p:-?})" ;; esac
	done
	check "every pkg-config module of the Makefile ($mods) comes from a build package" \
		eval '[ -n "$mods" ] && [ -z "$missing" ]'
	[ -n "$missing" ] && diag "not in PG_BUILD_PACKAGES:$missing"
else
	skip "no dpkg or pkg-config: the build packages are not checked against the Makefile"
fi
if command -v readelf >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 &&
	! readelf -d "$PROFGATE" | grep -q 'libasan\|libubsan'; then
	bad=
	for so in $(readelf -d "$PROFGATE" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		path=$(ldd "$PROFGATE" | sed -n "s|^[[:space:]]*$so => \([^ ]*\) .*|\1|p" | head -n 1)
		p=$({ dpkg -S "$path" || dpkg -S "/usr$path"; } 2>/dev/null | sed 's/[:,].*//' | head -n 1)
		case " $PG_RUNTIME_PACKAGES libc6 " in *" $p "*) ;; *) bad="$bad $so(${p:-?})" ;; esac
	done
	check "every library the binary links comes from a runtime package" [ -z "$bad" ]
	[ -n "$bad" ] && diag "not in PG_RUNTIME_PACKAGES:$bad"
else
	skip "a sanitizer build, or no readelf/dpkg: the runtime packages are not checked"
fi

# ---- the README, docs/ and the example workflows ----
pycheck "docs/action.md: the inputs and outputs tables list exactly action.yml's, with its defaults" \
	'import yaml, re
a = yaml.safe_load(open(sys.argv[1]))
sec = open(sys.argv[1].replace("action.yml", "docs/action.md")).read()
ins = sec[sec.index("## Inputs"):sec.index("## Outputs")]
outs = sec[sec.index("## Outputs"):sec.index("## What the step does")]
rows = dict(re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", ins, re.M))
orows = re.findall(r"^\| `([a-z_]+)` \|", outs, re.M)
def shown(v):
    return "required" if v.get("required") else "`%s`" % (v["default"] if v["default"] != "" else "'"''"'")' \
	"$TOP/action.yml" \
	"sorted(rows) == sorted(a['inputs'])" \
	"all(rows[k].strip() == shown(v) for k, v in a['inputs'].items())" \
	"orows == list(a['outputs'])"
# 14 workflows: the README's quick start (the pre-merge gate of examples/pr-gate.yml) and the 13
# of docs/ and examples/; 12 use the Docker action, 7 the setup action, 2 run `profgate action`.
pycheck "README, docs/ and examples/: every workflow parses, and the action's steps use real inputs" \
	'import yaml, re, glob, os
a = yaml.safe_load(open(sys.argv[1]))
top = os.path.dirname(sys.argv[1])
r = "".join(open(f).read() for f in [os.path.join(top, "README.md")] + sorted(glob.glob(os.path.join(top, "docs", "*.md"))))
flows = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", r, re.S)]
flows += [yaml.safe_load(open(f)) for f in sorted(glob.glob(os.path.join(top, "examples", "*.yml")))]
steps = [s for f in flows for j in f["jobs"].values() for s in j["steps"]]
ours = [s for s in steps if s.get("uses", "").endswith("/profgate@v1")]
setup = yaml.safe_load(open(os.path.join(top, "setup", "action.yml")))
setups = [s for s in steps if s.get("uses", "").endswith("/profgate/setup@v1")]
runs = [s for s in steps if s.get("run", "").strip() == "profgate action"]' \
	"$TOP/action.yml" \
	"len(flows) == 14 and all(f.get('name') and f.get(True) is not None for f in flows)" \
	"len(ours) == 12" \
	"all(set(s['with']) <= set(a['inputs']) for s in ours)" \
	"all({'baseline', 'candidate'} <= set(s['with']) for s in ours)" \
	"all(isinstance(v, str) for s in ours for v in s['with'].values())" \
	"len(setups) == 7 and all(set(s.get('with', {})) <= set(setup['inputs']) for s in setups)" \
	"len(runs) == 2 and all({'INPUT_BASELINE', 'INPUT_CANDIDATE', 'INPUT_GITHUB_TOKEN'} <= set(s['env']) for s in runs)" \
	"all({k[len('INPUT_'):].lower() for k in s['env'] if k.startswith('INPUT_')} <= set(a['inputs']) for s in runs)"
check "examples/: the pre-merge gate, the nightly job, the fork-safe pair, the self-hosted job, the matrix fan-out" \
	eval 'for f in pr-gate nightly fork-gate fork-report self-hosted fanout-matrix; do [ -f "$TOP/examples/$f.yml" ] || exit 1; done'
for f in "$TOP"/examples/*.yml; do
	python3 - "$f" "$TOP/docs/action.md" >"$T/why" 2>&1 <<'EOF' || :
import re, sys, yaml
ex = yaml.safe_load(open(sys.argv[1]))
readme = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", open(sys.argv[2]).read(), re.S)]
sys.exit(0 if ex in readme else "not in docs/action.md")
EOF
	if [ -s "$T/why" ]; then not_ok "examples/$(basename "$f") is docs/action.md's workflow"; diag_file "$T/why"; else
		ok "examples/$(basename "$f") is docs/action.md's workflow"; fi
done
pycheck "a self-hosted job never runs a fork's pull request; a GPU capture uploads its profiles, a job on ubuntu-latest gates" \
	'import yaml, glob, os
top = os.path.dirname(sys.argv[1])
flows = {os.path.basename(f): yaml.safe_load(open(f)) for f in sorted(glob.glob(os.path.join(top, "examples", "*.yml")))}
guard = "github.event.pull_request.head.repo.full_name == github.repository"
selfhosted = [(n, j) for n, f in flows.items() for j in f["jobs"].values() if "self-hosted" in j["runs-on"]]
prs = [(n, j) for n, j in selfhosted if "pull_request" in flows[n][True]]
up = lambda j: any(s.get("uses", "").startswith("actions/upload-artifact") for s in j["steps"])' \
	"$TOP/action.yml" \
	"len(prs) == 3 and all(j.get('if') == guard for n, j in prs)" \
	"all(up(flows[n]['jobs']['capture']) and flows[n]['jobs']['gate']['runs-on'] == 'ubuntu-latest' for n in ('pr-gate.yml', 'nightly.yml'))"

done_testing
