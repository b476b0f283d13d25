#!/usr/bin/env bash
set -uo pipefail
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >$R/build.log 2>&1 && cmake --build build-gpu -j16 --target fluxjac >>$R/build.log 2>&1 || { tail -30 $R/build.log; exit 1; }
build-gpu/fluxjac mesh gen --kind mixed --n 100 --order rcm -q -o /tmp/m-rcm.h5 >/dev/null
for f in 0 4 8 12; do
  for m in scatter-only full; do
    echo "== flags $f mode $m"
    FLUXJAC_EXPERIMENT_FLAGS=$f build-gpu/fluxjac bench --mesh /tmp/m-rcm.h5 --variants ${V:-hd,hd_rows,dn5_2} --modes $m --reps 20 --no-validate --json $R/f$f-$m.json -q 2>&1 | grep -E "^(hd|dn)"
  done
done | tee $R/ablate.txt
tar -C $OUT -czf $OUT/ablate.tar.gz r
