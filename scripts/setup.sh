#!/usr/bin/env bash
# Installs what `npm start` and `npm test` need, once: npm packages, and the Temporal CLI (built from source with
# `go install`, into .tools/bin) when none is on PATH and no external Temporal is configured. Never downloads a
# prebuilt binary.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_CLI_VERSION=v1.5.1  # later tags carry a `replace` directive and cannot be `go install`ed
SCHEMATHESIS_VERSION=4.32.5  # the contract fuzzer the tests run (test/http/fuzz.test.ts)

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages" >&2
  # `npm install` rather than `npm ci`: it tolerates a lock file written on another platform (optional binaries).
  npm install --no-audit --no-fund >&2
fi

if [ -z "${TEMPORAL_ADDRESS:-}" ] && [ ! -x .tools/bin/temporal ] && ! command -v temporal >/dev/null 2>&1; then
  if ! command -v go >/dev/null 2>&1; then
    echo "setup: no 'temporal' CLI and no Go toolchain to build it. Install Go, or the Temporal CLI, or set TEMPORAL_ADDRESS." >&2
    exit 1
  fi
  echo "setup: building the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install (a few minutes, once)" >&2
  mkdir -p .tools/bin
  GOBIN="$PWD/.tools/bin" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}" >&2
fi

# `npm test` also fuzzes the public contract with schemathesis, from a virtualenv of the project's own.
if [ "${1:-}" = "--test" ] && [ ! -x .tools/venv/bin/st ]; then
  if ! command -v python3 >/dev/null 2>&1; then
    echo "setup: the tests need Python 3 (for schemathesis); install python3 and python3-venv" >&2
    exit 1
  fi
  echo "setup: installing schemathesis ${SCHEMATHESIS_VERSION} into .tools/venv (once)" >&2
  mkdir -p .tools
  python3 -m venv .tools/venv >&2
  .tools/venv/bin/pip install --quiet --disable-pip-version-check "schemathesis==${SCHEMATHESIS_VERSION}" >&2
fi

# The dashboard's pages (web/dashboard, Vite + Preact), which the API serves from web/dashboard/dist: built when the
# build is missing or older than any of its sources (or the installed packages). Built beside the old one and swapped
# in, so an API serving the old build never sees a half-written one.
DASHBOARD=web/dashboard
if [ ! -f "$DASHBOARD/dist/index.html" ] \
  || [ -n "$(find "$DASHBOARD" -path "$DASHBOARD/dist" -prune -o -path "$DASHBOARD/dist.*" -prune -o -type f -newer "$DASHBOARD/dist/index.html" -print -quit)" ] \
  || [ node_modules/.package-lock.json -nt "$DASHBOARD/dist/index.html" ]; then
  echo "setup: building the dashboard pages (web/dashboard)" >&2
  rm -rf "$DASHBOARD/dist.new"
  node_modules/.bin/vite build --config "$DASHBOARD/vite.config.ts" --outDir dist.new --emptyOutDir --logLevel warn >&2
  rm -rf "$DASHBOARD/dist.old"
  if [ -d "$DASHBOARD/dist" ]; then mv "$DASHBOARD/dist" "$DASHBOARD/dist.old"; fi
  mv "$DASHBOARD/dist.new" "$DASHBOARD/dist"
  rm -rf "$DASHBOARD/dist.old"
fi

# The visitor's widget (web/widget, Vite + Preact, one self-contained IIFE) that the API serves at /widget.js from
# web/widget/dist/widget.js: built like the pages above, when missing or older than its sources or the packages.
WIDGET=web/widget
if [ ! -f "$WIDGET/dist/widget.js" ] \
  || [ -n "$(find "$WIDGET" -path "$WIDGET/dist" -prune -o -path "$WIDGET/dist.*" -prune -o -type f -newer "$WIDGET/dist/widget.js" -print -quit)" ] \
  || [ node_modules/.package-lock.json -nt "$WIDGET/dist/widget.js" ]; then
  echo "setup: building the widget (web/widget)" >&2
  rm -rf "$WIDGET/dist.new"
  node_modules/.bin/vite build --config "$WIDGET/vite.config.ts" --outDir dist.new --emptyOutDir --logLevel warn >&2
  rm -rf "$WIDGET/dist.old"
  if [ -d "$WIDGET/dist" ]; then mv "$WIDGET/dist" "$WIDGET/dist.old"; fi
  mv "$WIDGET/dist.new" "$WIDGET/dist"
  rm -rf "$WIDGET/dist.old"
fi

# The browser tests (test/browser) drive Debian's Chromium with playwright-core; nothing is downloaded by playwright.
if [ "${1:-}" = "--test" ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium for the browser tests (once)" >&2
    apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >&2
  else
    echo "setup: the browser tests need /usr/bin/chromium: install Debian's 'chromium' package (apt-get install -y chromium, as root)" >&2
    exit 1
  fi
fi
