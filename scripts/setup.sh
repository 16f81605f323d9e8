#!/usr/bin/env bash
# Installs what `npm start` and `npm test` need, once: npm packages, and the Temporal CLI (built from source with
# `go install`, into .tools/bin) when none is on PATH and no external Temporal is configured; with --test or --cluster
# also the Temporal server, its UI and the Caddy balancer for the production shape; with --bench the retrieval benchmark's
# reference (bm25s). Never downloads a prebuilt binary.
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

# The production shape (`npm run cluster`, and the cluster tests `npm test` runs) uses a real Temporal server: its four
# services and its SQL schema tool, built from the Go module proxy, with the schemas of the same version copied beside
# them so nothing needs Go at run time.
TEMPORAL_SERVER_VERSION=v1.31.2  # stack/temporal-server.ts names the same
SERVER_DIR=".tools/temporal-server/${TEMPORAL_SERVER_VERSION}"
if { [ "${1:-}" = "--test" ] || [ "${1:-}" = "--cluster" ]; } && { [ ! -x "$SERVER_DIR/server" ] || [ ! -x "$SERVER_DIR/sql" ] || [ ! -d "$SERVER_DIR/schema/visibility" ]; }; then
  if ! command -v go >/dev/null 2>&1; then
    echo "setup: building the Temporal server needs a Go toolchain; install Go" >&2
    exit 1
  fi
  echo "setup: building the Temporal server ${TEMPORAL_SERVER_VERSION} with go install (a few minutes, once)" >&2
  mkdir -p "$SERVER_DIR"
  GOBIN="$PWD/$SERVER_DIR" GOFLAGS=-mod=mod go install \
    "go.temporal.io/server/cmd/server@${TEMPORAL_SERVER_VERSION}" \
    "go.temporal.io/server/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}" >&2
  module="$(go env GOMODCACHE)/go.temporal.io/server@${TEMPORAL_SERVER_VERSION}"
  rm -rf "$SERVER_DIR/schema.new" && mkdir -p "$SERVER_DIR/schema.new"
  cp -r "$module/schema/postgresql/v12/temporal" "$module/schema/postgresql/v12/visibility" "$SERVER_DIR/schema.new/"
  chmod -R u+w "$SERVER_DIR/schema.new"
  rm -rf "$SERVER_DIR/schema" && mv "$SERVER_DIR/schema.new" "$SERVER_DIR/schema"
fi

# The production shape's Temporal Web UI: Temporal's ui-server (the web app is embedded in the binary), the version
# the Temporal CLI above serves with its dev server, so its module is usually in Go's cache already.
TEMPORAL_UI_VERSION=v2.42.1  # stack/temporal-ui.ts names the same
UI_DIR=".tools/temporal-ui/${TEMPORAL_UI_VERSION}"
if { [ "${1:-}" = "--test" ] || [ "${1:-}" = "--cluster" ]; } && [ ! -x "$UI_DIR/server" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "setup: building the Temporal UI needs a Go toolchain; install Go" >&2
    exit 1
  fi
  echo "setup: building the Temporal UI ${TEMPORAL_UI_VERSION} with go install (a minute, once)" >&2
  mkdir -p "$UI_DIR"
  GOBIN="$PWD/$UI_DIR" GOFLAGS=-mod=mod go install "github.com/temporalio/ui-server/v2/cmd/server@${TEMPORAL_UI_VERSION}" >&2
fi

# The production shape's balancer in front of the API replicas: Caddy, configured by deploy/Caddyfile (the file
# operators copy; stack/balancer.ts starts it with that same file).
CADDY_VERSION=v2.11.9  # stack/balancer.ts names the same
CADDY_DIR=".tools/caddy/${CADDY_VERSION}"
if { [ "${1:-}" = "--test" ] || [ "${1:-}" = "--cluster" ]; } && [ ! -x "$CADDY_DIR/caddy" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "setup: building Caddy needs a Go toolchain; install Go" >&2
    exit 1
  fi
  echo "setup: building Caddy ${CADDY_VERSION} with go install (a few minutes, once)" >&2
  mkdir -p "$CADDY_DIR"
  GOBIN="$PWD/$CADDY_DIR" GOFLAGS=-mod=mod go install "github.com/caddyserver/caddy/v2/cmd/caddy@${CADDY_VERSION}" >&2
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

# `npm run bench -- retrieval` compares the platform's ranking with BM25 as the bm25s package computes it, from the same
# virtualenv (pinned, so every run compares against the same reference).
BM25S_VERSION=0.3.16 PYSTEMMER_VERSION=3.1.0 NUMPY_VERSION=2.4.6
if [ "${1:-}" = "--bench" ] && ! .tools/venv/bin/python -c 'import bm25s, Stemmer' >/dev/null 2>&1; then
  if ! command -v python3 >/dev/null 2>&1; then
    echo "setup: the retrieval benchmark needs Python 3 (for bm25s); install python3 and python3-venv" >&2
    exit 1
  fi
  echo "setup: installing bm25s ${BM25S_VERSION} and PyStemmer ${PYSTEMMER_VERSION} into .tools/venv (once)" >&2
  mkdir -p .tools
  [ -x .tools/venv/bin/pip ] || python3 -m venv .tools/venv >&2
  .tools/venv/bin/pip install --quiet --disable-pip-version-check \
    "bm25s==${BM25S_VERSION}" "PyStemmer==${PYSTEMMER_VERSION}" "numpy==${NUMPY_VERSION}" >&2
fi

# The front ends the API serves, built with Vite from their sources: when the build is missing or older than any of its
# sources, of the pieces they share (web/shared) or the installed packages. Built beside the old one and swapped in, so an API serving the old build never
# sees a half-written one. `build_front_end DIR MARKER WHAT`: MARKER is the build's file the API reads.
build_front_end() {
  local dir=$1 marker=$2 what=$3
  if [ ! -f "$dir/dist/$marker" ] \
    || [ -n "$(find "$dir" -path "$dir/dist" -prune -o -path "$dir/dist.*" -prune -o -type f -newer "$dir/dist/$marker" -print -quit)" ] \
    || [ -n "$(find web/shared -type f -newer "$dir/dist/$marker" -print -quit)" ] \
    || [ node_modules/.package-lock.json -nt "$dir/dist/$marker" ]; then
    echo "setup: building $what ($dir)" >&2
    rm -rf "$dir/dist.new"
    node_modules/.bin/vite build --config "$dir/vite.config.ts" --outDir dist.new --emptyOutDir --logLevel warn >&2
    rm -rf "$dir/dist.old"
    if [ -d "$dir/dist" ]; then mv "$dir/dist" "$dir/dist.old"; fi
    mv "$dir/dist.new" "$dir/dist"
    rm -rf "$dir/dist.old"
  fi
}
# The dashboard's pages (Vite + Preact), served from web/dashboard/dist; the visitor's widget (one self-contained
# IIFE), served at /widget.js from web/widget/dist/widget.js.
build_front_end web/dashboard index.html 'the dashboard pages'
build_front_end web/widget widget.js 'the widget'

# The browser tests (test/browser) drive Debian's Chromium with playwright-core; nothing is downloaded by playwright.
# The TLS connection test (test/unit/temporal-connection.test.ts) makes its CA and certificate with openssl.
if [ "${1:-}" = "--test" ]; then
  missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
      echo "setup: installing Debian's ${missing[*]} for the tests (once)" >&2
      apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2
    else
      echo "setup: the tests need Debian's ${missing[*]}: apt-get install -y ${missing[*]} (as root)" >&2
      exit 1
    fi
  fi
fi
