#!/usr/bin/env bash
# `npm start` and `npm run cluster`: `bash scripts/launch.sh NAME [ARGS…]`. With --help or -h among the arguments it
# prints scripts/help/NAME.txt at once — before setup, which on a fresh clone takes minutes (npm install, go install
# of Temporal). Otherwise it runs scripts/setup.sh (--cluster for the cluster), then scripts/NAME.ts with the arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1
shift
for arg in "$@"; do
  case "$arg" in
    --help | -h)
      cat "scripts/help/$name.txt"
      exit 0
      ;;
  esac
done
case "$name" in
  start) bash scripts/setup.sh ;;
  cluster) bash scripts/setup.sh --cluster ;;
  *)
    echo "launch: unknown script '$name'" >&2
    exit 2
    ;;
esac
exec node --import tsx "scripts/$name.ts" "$@"
