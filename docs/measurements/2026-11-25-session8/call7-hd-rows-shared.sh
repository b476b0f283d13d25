#!/usr/bin/env bash
set -uo pipefail
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >$R/build.log 2>&1 && cmake --build build-gpu -j16 >>$R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
for o in rcm random; do build-gpu/fluxjac mesh gen --kind mixed --n 100 --order $o -q -o /tmp/m-$o.h5 >/dev/null; done
(timeout 150 ctest --test-dir build-gpu -L gpu -R "hd_rows|xhdr" -j4 --timeout 60 > $R/ctest-gpu.log 2>&1; tail -3 $R/ctest-gpu.log; grep -E "\(Failed\)|Timeout" $R/ctest-gpu.log | head) 
V=hd,hd_rows,xhdr168,xhdr200,xhdr255
timeout 150 build-gpu/fluxjac bench --mesh /tmp/m-rcm.h5 --variants $V --modes full,compute-only,scatter-only --reps 20 --json $R/rcm.json -q 2>&1 | grep -E "^(x|hd|dn)" | tee $R/bench.txt
timeout 100 build-gpu/fluxjac bench --mesh /tmp/m-random.h5 --variants $V --modes full --reps 20 --json $R/random.json -q 2>&1 | grep -E "^(x|hd|dn)" | tee -a $R/bench.txt
tar -C $OUT -czf $OUT/rows2.tar.gz r
