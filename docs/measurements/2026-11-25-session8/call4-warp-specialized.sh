#!/usr/bin/env bash
set -uo pipefail
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a >$R/build.log 2>&1 && cmake --build build-gpu -j16 >>$R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
grep spill $R/build.log | grep specialized | sed 's/.*Lanes\(.\{0,80\}\).*, \([0-9]* bytes spill stores\).*/\1 \2/' | sort -u | tee $R/spills.txt
build-gpu/fluxjac mesh gen --kind mixed --n 100 --order rcm -q -o /tmp/m-rcm.h5 >/dev/null
timeout 60 build-gpu/fluxjac bench --mesh /tmp/m-rcm.h5 --variants xdn52_ws256 --modes full --reps 3 -q 2>&1 | grep -E "^x|rror" | tee $R/smoke.txt
timeout 200 ctest --test-dir build-gpu -L gpu -R "x(dn52|hd|dn2)_ws" -j4 --timeout 60 > $R/ctest-gpu.log 2>&1; tail -3 $R/ctest-gpu.log; grep -E "\(Failed\)|Timeout" $R/ctest-gpu.log | head
for m in full compute-only scatter-only; do
  timeout 150 build-gpu/fluxjac bench --mesh /tmp/m-rcm.h5 --variants ${V:-dn5_2,xdn52_ws256,xdn52_ws512,hd,xhd_ws256,xhd_ws512,dn_2,xdn2_ws256} --modes $m --reps 20 --json $R/rcm-$m.json $([[ $m == full ]] || echo --no-validate) -q 2>&1 | grep -E "^(x|hd|dn)" 
done | tee $R/bench.txt
tar -C $OUT -czf $OUT/ws.tar.gz r
