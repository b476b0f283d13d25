#!/usr/bin/env bash
# session 7 call 8: dn5_2 occupancy: 64-thread blocks at 255 / 200 / 168 registers (temporary x variants)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
cmake --build build-gpu -j16 --target fluxjac >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
echo "built $SECONDS s"
build-gpu/fluxjac mesh gen --kind mixed --n 100 --order rcm -q -o /tmp/m.h5 >/dev/null
for mode in full compute-only scatter-only; do
  build-gpu/fluxjac run --mesh /tmp/m.h5 --variant dn5_2,xdn52_t64,xdn52_r200,xdn52_r168 --mode $mode --warmup 3 --reps 20 --no-validate -q --json "$OUT/occ-$mode.json" 2>&1 | grep -E "^(x|dn)" | awk -v m=$mode '{print m, $1, $6}'
done
