#!/usr/bin/env bash
# Installs what `npm start` and `npm test` need, once: npm packages, and the Temporal CLI (built from source with
# `go install`, into .tools/bin) when none is on PATH and no external Temporal is configured. Never downloads a
# prebuilt binary.
set -euo pipefail
cd "$(dirname "$0")/.."

TEMPORAL_CLI_VERSION=v1.5.1  # later tags carry a `replace` directive and cannot be `go install`ed

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
