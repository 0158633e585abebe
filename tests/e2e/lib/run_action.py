#!/usr/bin/env python3
"""Run `profgate action` as the Actions runner runs a Docker action's entrypoint: every input of
action.yml becomes INPUT_<NAME> (name.replace(' ', '_').upper(): hyphens kept), holding the
workflow's `with:` value, else the default (${{ github.token }} evaluated to the token), and an
input with neither is absent; the step's environment comes on top, the working directory is
GITHUB_WORKSPACE. Extra raw variables (a misspelt INPUT_FAIL-ON) may be given too.

usage: run_action.py PROFGATE ACTION_YML OUT ERR WITH_JSON ENV_JSON...
  WITH_JSON: {"input": "value", ...}; ENV_JSON: the step's variables (several are merged, a null
  value removes one), plus "__github_token" (what ${{ github.token }} is) and "__raw"
  (variables set as they are).
Exits with profgate's exit code.
"""
import json
import os
import subprocess
import sys

import yaml

profgate, action_yml, out, err, with_json = sys.argv[1:6]
profgate = os.path.abspath(profgate)
spec = yaml.safe_load(open(action_yml))
with_ = json.loads(with_json)
env = {}
for e in sys.argv[6:]:
    env.update(json.loads(e))
env = {k: v for k, v in env.items() if v is not None}
token = env.pop("__github_token", "")
raw = env.pop("__raw", {})
unknown = set(with_) - set(spec["inputs"])
if unknown:
    sys.exit("run_action.py: inputs not in action.yml: %s" % sorted(unknown))
child = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
child.update(env)
for name, d in spec["inputs"].items():
    v = with_.get(name, d.get("default"))
    if v is None:
        continue
    v = str(v).replace("${{ github.token }}", token)
    child["INPUT_" + name.replace(" ", "_").upper()] = v
child.update(raw)
with open(out, "wb") as o, open(err, "wb") as e:
    rc = subprocess.call([profgate, "action"], env=child, stdout=o, stderr=e,
                         stdin=subprocess.DEVNULL, cwd=env.get("GITHUB_WORKSPACE"), timeout=60)
sys.exit(rc)
