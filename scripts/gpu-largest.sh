#!/usr/bin/env bash
# gpu-largest.sh — the largest mixed box the GPUs of one node hold, generated in parts (no rank holds more than its
# part and halo: docs/design.md, "Many GPUs"), assembled by hd and dn5_2 (node assembly), with the generation,
# setup and assembly times, every rank's peak host memory (the bench JSON's partition.steps) and every GPU's peak
# memory (nvidia-smi, sampled twice a second). Its figures: docs/performance.md, "The largest mesh".
#
#   bash scripts/gpu-largest.sh
#   env: N1 (the per-GPU size, mixed:N1 on one GPU; 400 is about 357M edges, which an H200 holds), RANKS (the GPUs),
#        STEPS ("weak strong": weak scaling 1 -> 2 -> ... -> RANKS at N1 per GPU, whose last point is the largest
#        mesh; strong scaling of mixed:N1 over the same rank counts; "none": mixed:N1 as given on each count, to split
#        a scaling over calls of the device's time limit, e.g. N1=400 COUNTS=1, then N1=504 COUNTS=2),
#        REPS (10), VARIANTS (hd,dn5_2), COUNTS (the rank counts; bench runs them in ascending order: 1,2,4,...,RANKS),
#        SKIP_BUILD (0: configure and build build-gpu as gpu-mpi.sh does; 1: use FLUXJAC, by default the one
#        there), FLUXJAC (the binary to run with SKIP_BUILD=1, e.g. one built with MPI and NCCL by another call),
#        SMOKE (1: first a small validated run of the variants on 1 and RANKS ranks, mixed:40:rcm; 0: none)
# $OUT (default gpu-results/) receives weak.json, strong.json (and CSV), gpu-memory.csv, the logs and summary.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c GPU || true)
RANKS=${RANKS:-$GPUS}
((RANKS >= 1)) || { echo "gpu-largest.sh: no GPU found: set RANKS (e.g. RANKS=2 VARIANTS=reference on the CPU)" >&2; exit 2; }
N1=${N1:-360}
STEPS=${STEPS:-weak strong}
REPS=${REPS:-10}
VARIANTS=${VARIANTS:-hd,dn5_2}
BUILD=build-gpu
log() { printf '\n== %s\n' "$*"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
# shellcheck source=scripts/device-libraries.sh
source scripts/device-libraries.sh

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  log "configure and build (CUDA, MPI, PT-Scotch, NCCL)"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DFLUXJAC_MPI=ON \
    -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" >"$OUT/configure.log" 2>&1 ||
    { cat "$OUT/configure.log"; exit 1; }
  grep "fluxjac:" "$OUT/configure.log"
  cmake --build "$BUILD" -j"$(nproc)" --target fluxjac >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
fi
FLUXJAC=${FLUXJAC:-$BUILD/fluxjac}

counts=1
for ((p = 2; p <= RANKS; p *= 2)); do counts="$counts,$p"; done
[[ ",$counts," == *",$RANKS,"* ]] || counts="$counts,$RANKS"
counts=${COUNTS:-$counts}

if ((GPUS > 0)); then
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sort | uniq -c
  nvidia-smi --query-gpu=timestamp,index,memory.used --format=csv,noheader,nounits -lms 500 >"$OUT/gpu-memory.csv" &
  sampler=$!
  trap 'kill $sampler 2>/dev/null || true' EXIT
fi
if [[ "${SMOKE:-1}" == 1 ]]; then
  log "smoke: mixed:40:rcm on 1 and $RANKS ranks, validated"
  mpirun -np "$RANKS" --bind-to none "$FLUXJAC" bench --mesh mixed:40:rcm --variant "$VARIANTS" --assembly node \
    --ranks "1,$RANKS" --warmup 1 --reps 3 >"$OUT/smoke.txt" 2>&1 || { tail -30 "$OUT/smoke.txt"; exit 1; }
  tail -4 "$OUT/smoke.txt"
fi
summary="$OUT/summary.txt"
: >"$summary"
status=0
for kind in $STEPS; do
  log "$kind scaling of mixed:$N1:rcm over $counts ranks ($VARIANTS, node assembly, median of $REPS)"
  start=$(date +%s)
  mpirun -np "$RANKS" --bind-to none "$FLUXJAC" bench --mesh "mixed:$N1:rcm" --variant "$VARIANTS" --assembly node \
    --ranks "$counts" --scaling "$kind" --warmup 2 --reps "$REPS" --no-validate --json "$OUT/$kind.json" \
    --csv "$OUT/$kind.csv" >"$OUT/$kind-table.txt" 2>"$OUT/$kind.log" || status=1
  { echo "== $kind scaling, mixed:$N1:rcm (per GPU unless none) ($(( $(date +%s) - start )) s)"; cat "$OUT/$kind-table.txt";
    grep -E "generate: |setup|peak" "$OUT/$kind.log" | head -40; } | tee -a "$summary"
done
if ((GPUS > 0)); then
  kill $sampler 2>/dev/null || true
  log "peak GPU memory (MiB) per GPU over the run"
  awk -F', ' '{ if ($3 > peak[$2]) peak[$2] = $3 } END { for (g in peak) printf "GPU %s: %d MiB\n", g, peak[g] }' \
    "$OUT/gpu-memory.csv" | sort | tee -a "$summary"
fi
exit $status
