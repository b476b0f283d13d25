#!/usr/bin/env bash
# profile.sh — Nsight Compute profile of the assembly kernels on the GPU machine (one launch per variant).
#
#   bash scripts/profile.sh [VARIANTS] [N]     default: hd,dn5_2,dn_10 on the mixed N=100 rcm mesh
# Writes ncu-<variant>.txt under $OUT (default profile-results/) and prints the key figures.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-profile-results}
mkdir -p "$OUT"
VARIANTS=${1:-hd,dn5_2,dn_10}
N=${2:-100}
BUILD=build-gpu
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DFLUXJAC_TESTS=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target fluxjac >/dev/null
MESH=$(mktemp -d)/mesh.h5
"$BUILD/fluxjac" mesh gen --kind mixed --n "$N" --order rcm -q -o "$MESH"
for variant in ${VARIANTS//,/ }; do
  for mode in ${MODES:-full}; do
    ncu --clock-control none --kernel-name "regex:assembly_kernel" --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SchedulerStats \
      "$BUILD/fluxjac" run --mesh "$MESH" --variant "$variant" --mode "$mode" --warmup 0 --reps 1 --no-validate -q \
      ${EXTRA_RUN_ARGS:-} >"$OUT/ncu-$variant-$mode.txt" 2>&1 || true
    echo "== $variant $mode"
    grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issue Slots Busy|L2 Cache Throughput|L1/TEX Hit|L2 Hit|Executed Ipc A" \
      "$OUT/ncu-$variant-$mode.txt" | sed 's/^ */  /'
  done
done
