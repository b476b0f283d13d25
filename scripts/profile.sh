#!/usr/bin/env bash
# profile.sh — Nsight Compute profile of the assembly kernels on the GPU machine (one launch per variant).
#
#   bash scripts/profile.sh [VARIANTS] [N]     default: hd,dn5_2,dn_10 on the mixed N=100 rcm mesh
#   env: MODES ("full"; also compute-only, scatter-only), ORIENTATIONS ("A"; "A A^T" profiles both),
#        EXTRA_RUN_ARGS (added to every 'fluxjac run')
# Writes ncu-<variant>-<mode>-<A|T>.txt under $OUT (default profile-results/) and prints the key figures: the
# sections below and the memory metrics (DRAM bytes read and written, L2 hit rates of loads and stores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-profile-results}
mkdir -p "$OUT"
VARIANTS=${1:-hd,dn5_2,dn_10}
N=${2:-100}
BUILD=build-gpu
source scripts/device-libraries.sh  # the partitioners from .device/, as the build that gpu-check.sh made found them
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DFLUXJAC_TESTS=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target fluxjac >/dev/null
MESH=$(mktemp -d)/mesh.h5
"$BUILD/fluxjac" mesh gen --kind mixed --n "$N" --order rcm -q -o "$MESH"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct
for variant in ${VARIANTS//,/ }; do
  for mode in ${MODES:-full}; do
    for orientation in ${ORIENTATIONS:-A}; do
      tag=A transpose=()
      [[ $orientation == A ]] || { tag=T; transpose=(--transpose); }
      file="$OUT/ncu-$variant-$mode-$tag.txt"
      ncu --clock-control none --kernel-name "regex:assembly_kernel" --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SchedulerStats --metrics "$metrics" \
        "$BUILD/fluxjac" run --mesh "$MESH" --variant "$variant" --mode "$mode" --warmup 0 --reps 1 --no-validate -q \
        "${transpose[@]}" ${EXTRA_RUN_ARGS:-} >"$file" 2>&1 || true
      echo "== $variant $mode $orientation"
      grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issue Slots Busy|L2 Cache Throughput|L1/TEX Hit|L2 Hit|Executed Ipc A|dram__bytes|lts__t_sector" \
        "$file" | sed 's/^ */  /'
    done
  done
done
