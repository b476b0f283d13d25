#!/usr/bin/env bash
# fluxjac — one benchmark configuration on one GPU node, end to end: build (incrementally, into build/: the build
# scripts/test.sh and scripts/run.sh make, so after them nothing is rebuilt; ninja's [done/total] lines show the
# progress), record the machine, run 'fluxjac bench', draw the charts, optionally compare with a baseline, and pack
# everything in a dated folder. Works from any folder; the node needs no network.
#
#   bash scripts/bench-node.sh configs/paper.toml                     # results/<date>-paper-<host>/ + .tar.gz
#   bash scripts/bench-node.sh configs/scaling.toml --no-validate     # extra arguments go to 'fluxjac bench'
#   BASELINE=results/old/results.json bash scripts/bench-node.sh configs/paper.toml
#
# Environment: RESULTS (default results/: where the dated folders go), BUILD (default build),
# FLUXJAC_CUDA (default AUTO), CMAKE_CUDA_ARCHITECTURES (default 90), FLUXJAC_CACHE (mesh cache; default
# $XDG_CACHE_HOME/fluxjac or ~/.cache/fluxjac), BASELINE (a results.json to compare against), TIME_TOLERANCE (0.1).
# The folder receives: build.log, results.csv, results.json, bench.log, plots/*.png, machine.txt (nvidia-smi,
# fluxjac device and list, git state), the config, compare.txt (with BASELINE). Exit code: 4 when the build fails,
# else that of 'fluxjac bench' (1: a validation failed, 4: a case failed), else that of 'fluxjac compare' (1: a
# regression).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ $# -lt 1 || ! -f "$1" ]]; then
  echo "usage: bash scripts/bench-node.sh CONFIG.toml [fluxjac bench options]   (configs/paper.toml, scaling.toml, ...)" >&2
  exit 3
fi
config="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
cd "$FLUXJAC_ROOT"
build="${BUILD:-build}"
results="${RESULTS:-results}"
name="$(basename "$config" .toml)"
folder="$results/$(date +%Y-%m-%d_%H%M%S)-$name-$(hostname -s 2>/dev/null || hostname)"
mkdir -p "$folder/plots"

build_status=0
fluxjac_configure_build "$build" 2>&1 | tee "$folder/build.log" || build_status=${PIPESTATUS[0]}
if [[ $build_status -ne 0 ]]; then
  fluxjac_step "build: FAILED (exit $build_status; $folder/build.log)"
  exit 4
fi
fluxjac="$build/fluxjac"

fluxjac_step "machine: $folder/machine.txt"
{
  echo "== date";        date -u +%Y-%m-%dT%H:%M:%SZ
  echo "== host";        hostname
  echo "== git";         git rev-parse --verify -q HEAD || echo "not a git checkout"; git status --short 2>/dev/null | head -20
  echo "== nvidia-smi";  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
                           --format=csv 2>&1 || true
  echo "== fluxjac device"; "$fluxjac" device
  echo "== fluxjac list";   "$fluxjac" list
} >"$folder/machine.txt" 2>&1
cp "$config" "$folder/"

cache_args=()
[[ -n "${FLUXJAC_CACHE:-}" ]] && cache_args=(--cache "$FLUXJAC_CACHE")
fluxjac_step "bench: $fluxjac bench --config $config ${cache_args[*]} $*"
status=0
"$fluxjac" bench --config "$config" "${cache_args[@]}" --csv "$folder/results.csv" --json "$folder/results.json" "$@" \
  2>&1 | tee "$folder/bench.log" || status=${PIPESTATUS[0]}

if [[ -f "$folder/results.json" ]]; then
  if /usr/bin/python3 -c 'import matplotlib, numpy' 2>/dev/null; then
    fluxjac_step "plots: $folder/plots"
    /usr/bin/python3 scripts/plot_bench.py "$folder/results.json" --out "$folder/plots" || true
  else
    fluxjac_step "plots: SKIPPED (/usr/bin/python3 lacks matplotlib/numpy; run scripts/plot_bench.py elsewhere)"
  fi
  if [[ -n "${BASELINE:-}" ]]; then
    fluxjac_step "compare: $BASELINE -> $folder/results.json"
    compare_status=0
    "$fluxjac" compare "$BASELINE" "$folder/results.json" --time-tolerance "${TIME_TOLERANCE:-0.1}" \
      >"$folder/compare.txt" 2>&1 || compare_status=$?
    tail -3 "$folder/compare.txt"
    [[ $status -eq 0 ]] && status=$compare_status
  fi
fi

tar -C "$(dirname "$folder")" -czf "$folder.tar.gz" "$(basename "$folder")"
fluxjac_step "results: $folder/ and $folder.tar.gz (exit $status)"
exit "$status"
