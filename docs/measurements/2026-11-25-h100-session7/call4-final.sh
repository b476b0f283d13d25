#!/usr/bin/env bash
# session 7, final code: gpu-check (all tests incl. 2-rank MPI GPU tests, sanitizers, all variants, 3 modes, rcm+random); sizes N=40,160 if time
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
export METIS_ROOT=$PWD/.device/metis/usr LD_LIBRARY_PATH=$PWD/.device/metis/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SWEEP_EPB="" REPS=20 OUT=$FINAL/check bash scripts/gpu-check.sh 2>&1 | grep -vE "^\s*[0-9]+ - .*Skipped" > "$FINAL/check.log"
grep -E "tests passed|tests failed|clean|ERRORS" "$FINAL/check.log"
grep -E "^==|^(hd|dn|edn)" "$FINAL/check/summary.txt" | awk '{print $1,$2,$3,$4,$7,$NF}'
timeout 150 build-gpu/fluxjac bench --mesh mixed:40:rcm,mixed:160:rcm --variant hd,dn5_2 --no-validate --reps 20 --json "$FINAL/sizes.json" -q 2>&1 | grep -E "^(hd|dn5_2) " | awk '{print $1,$2,$5,$6,$7,$8}'
