#!/usr/bin/env bash
# count_fp64.sh — FP64 work per edge of every GPU variant, counted by Nsight Compute on the device (thread-level
# SASS counters), to set beside the counts of the work model (`fluxjac list`, docs/performance.md "Work model").
#
#   bash scripts/count_fp64.sh [FLUXJAC] [N]     default: build-gpu/fluxjac, mixed N=40 rcm mesh, mode compute-only
# Prints one line per variant: DFMA, DADD, DMUL instructions per edge, FP64 instructions per edge and flops per
# edge (an FMA is one instruction but two flops). Division and square root run as sequences of these (plus MUFU
# reciprocal seeds, not counted here). Writes ncu-fp64.csv under $OUT (default profile-results/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FLUXJAC=${1:-build-gpu/fluxjac}
N=${2:-40}
OUT=${OUT:-profile-results}
mkdir -p "$OUT"
MESH=$(mktemp -d)/mesh.h5
"$FLUXJAC" mesh gen --kind mixed --n "$N" --order rcm -q -o "$MESH" >/dev/null
edges=$("$FLUXJAC" info "$MESH" | awk '$1 == "edges" {print $2; exit}')
metrics=smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum
echo "variant,assembly,edges,dfma,dadd,dmul" >"$OUT/ncu-fp64.csv"
printf '%-8s %-6s %10s %10s %10s %12s %12s\n' variant assembly "DFMA/edge" "DADD/edge" "DMUL/edge" "FP64 inst" "flops/edge"
for variant in hd dn_10 dn_5 dn_2 dn5_2 edn_5 edn5_2; do
  for assembly in ${ASSEMBLIES:-node edge}; do
    line=$(ncu --clock-control none --kernel-name "regex:assembly_kernel" --launch-count 1 --metrics "$metrics" --csv \
      "$FLUXJAC" run --mesh "$MESH" --variant "$variant" --assembly "$assembly" --mode compute-only --warmup 0 \
      --reps 1 --no-validate -q 2>/dev/null |
      awk -F'","' '/dfma_pred_on/ {gsub(/[",]/, "", $NF); f=$NF} /dadd_pred_on/ {gsub(/[",]/, "", $NF); a=$NF}
                   /dmul_pred_on/ {gsub(/[",]/, "", $NF); m=$NF} END {print f, a, m}')
    read -r dfma dadd dmul <<<"$line"
    echo "$variant,$assembly,$edges,$dfma,$dadd,$dmul" >>"$OUT/ncu-fp64.csv"
    awk -v v="$variant" -v s="$assembly" -v e="$edges" -v f="$dfma" -v a="$dadd" -v m="$dmul" 'BEGIN {
      printf "%-8s %-6s %10.1f %10.1f %10.1f %12.1f %12.1f\n", v, s, f/e, a/e, m/e, (f+a+m)/e, (2*f+a+m)/e }'
  done
done
