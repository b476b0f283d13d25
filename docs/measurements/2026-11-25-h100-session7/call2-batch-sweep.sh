#!/usr/bin/env bash
# session 7 call 2: store batch per variant (temporary x* variants), Adiag batched too; ncu of the scatter
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=$(mktemp -d)
nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >"$R/cfg.log" 2>&1
cmake --build build-gpu -j16 >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
build-gpu/fluxjac mesh gen --kind mixed --n 100 --order rcm -q -o /tmp/m-rcm.h5 >/dev/null
build-gpu/fluxjac mesh gen --kind mixed --n 100 --order random -q -o /tmp/m-random.h5 >/dev/null
V=hd,xhd_b1,xhd_b2,xhd_b8,dn5_2,xdn52_b1,xdn52_b8,edn5_2,dn_2,xdn2_b1,xdn2_b8,dn_5,xdn5_b1,xdn5_b2,dn_10,edn_5
for mode in full scatter-only compute-only; do
  val=--no-validate; [[ $mode == full ]] && val=--validate
  build-gpu/fluxjac run --mesh /tmp/m-rcm.h5 --variant $V --mode $mode --warmup 3 --reps 20 $val -q --json "$R/rcm-$mode.json" > "$R/rcm-$mode.txt" 2>&1
  grep -E "^(x|hd|dn|edn)" "$R/rcm-$mode.txt" | awk -v m=$mode '{print m, $1, $6, $NF}'
done
build-gpu/fluxjac run --mesh /tmp/m-random.h5 --variant hd,xhd_b1,dn5_2,xdn52_b8,dn_5,xdn5_b1 --mode full --warmup 3 --reps 20 --validate -q --json "$R/random-full.json" > "$R/random-full.txt" 2>&1
grep -E "^(x|hd|dn|edn)" "$R/random-full.txt" | awk '{print "random", $1, $6, $NF}'
for v in xhd_b1 hd dn5_2; do
  timeout 120 ncu --clock-control none --kernel-name "regex:node_assembly_kernel" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,smsp__inst_executed_op_global_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum \
    build-gpu/fluxjac run --mesh /tmp/m-rcm.h5 --variant $v --mode scatter-only --warmup 2 --reps 1 --no-validate -q > "$R/ncu-scatter-$v.txt" 2>&1
  grep -E "Duration|dram__bytes|lts__t_sectors_op_write|lts__t_requests_op_write|inst_executed_op_global_st|sectors_pipe_lsu_mem_global_op_st|Stall|Warp Cycles Per Issued|Achieved Occupancy" "$R/ncu-scatter-$v.txt" | sed "s/^/$v /" | head -24
done
timeout 150 ctest --test-dir build-gpu -L gpu -j4 > "$R/ctest-gpu.log" 2>&1; tail -3 "$R/ctest-gpu.log"
tar -C "$R" -czf "$OUT/call2.tar.gz" .
