#!/usr/bin/env bash
# The CPU a start of the CLI costs: `--version`, and a replay that fails at once (a missing
# folder), each run RUNS times (default 10) under /usr/bin/time; prints the median of user +
# system CPU-seconds of each, and the exit codes seen.
#
#   bash bench/cli-start.sh [<node> [<cli script> [<runs>]]]
#
# <node> defaults to the `node` first on PATH, <cli script> to dist/capture-replay.mjs (the
# built CLI: `npm run build`). The environment is the caller's: on a machine that sets
# NODE_EXTRA_CA_CERTS every start parses those certificates too (bench/RESULTS.md says how much).
set -euo pipefail
cd "$(dirname "$0")/.."
NODE_BIN="${1:-node}"
CLI="${2:-dist/capture-replay.mjs}"
RUNS="${3:-10}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

median_cpu() { # $1: label; the rest: the command
  local label="$1"
  shift
  local codes=()
  : >"$TMP/times"
  for _ in $(seq "$RUNS"); do
    local code=0
    /usr/bin/time -f '%U %S' -o "$TMP/one" "$@" >/dev/null 2>&1 || code=$?
    codes+=("$code")
    # A command that exits non-zero makes time write a line of its own before the figures.
    tail -n 1 "$TMP/one" | awk '{ printf "%.2f\n", $1 + $2 }' >>"$TMP/times"
  done
  local median
  median="$(sort -n "$TMP/times" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
  printf '%-44s median %s CPU-s over %s runs (min %s, max %s); exit codes: %s\n' "$label" "$median" "$RUNS" "$(sort -n "$TMP/times" | head -1)" "$(sort -n "$TMP/times" | tail -1)" "$(printf '%s\n' "${codes[@]}" | sort -u | tr '\n' ' ')"
}

echo "node $("$NODE_BIN" --version), $CLI"
median_cpu '--version' "$NODE_BIN" "$CLI" --version
median_cpu 'replay ./no-such-folder --url http://127.0.0.1:9' "$NODE_BIN" "$CLI" replay ./no-such-folder --url http://127.0.0.1:9
