#!/usr/bin/env bash
# hd_rows experiment: build, GPU tests, bench hd vs hd_rows* (rcm, random; full/compute/scatter)
set -uo pipefail
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >$R/build.log 2>&1 && cmake --build build-gpu -j16 >>$R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
grep spill $R/build.log | grep node_ | sed 's/.*function .\(.\{0,60\}\).*, \([0-9]* bytes spill stores\).*/\1 \2/' > $R/spills.txt
(ctest --test-dir build-gpu -L gpu -j4 --output-on-failure > $R/ctest-gpu.log 2>&1; tail -3 $R/ctest-gpu.log) &
T=$!
V=${VARIANTS:-hd,hd_rows,hd_rows168,hd_rows256}
for o in rcm random; do
  build-gpu/fluxjac mesh gen --kind mixed --n 100 --order $o -q -o /tmp/m-$o.h5 >/dev/null
done
wait $T
for o in rcm random; do
  build-gpu/fluxjac bench --mesh /tmp/m-$o.h5 --variants $V --modes full,compute-only,scatter-only --reps 20 --json $R/bench-$o.json --csv $R/bench-$o.csv -q 2>&1 | tail -40 | tee $R/bench-$o.txt
done
tar -C $OUT -czf $OUT/rows.tar.gz r
