#!/usr/bin/env bash
# session 6, final code: gpu-check (all tests incl. 2-rank MPI GPU tests, sanitizers, all variants, 3 modes, rcm+random)
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
export METIS_ROOT=$PWD/.device/metis/usr LD_LIBRARY_PATH=$PWD/.device/metis/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SWEEP_EPB="" REPS=20 OUT=$FINAL/check bash scripts/gpu-check.sh 2>&1 | grep -vE "^\s*[0-9]+ - .*Skipped" > "$FINAL/check.log"
grep -E "tests passed|tests failed|clean|ERRORS" "$FINAL/check.log"
grep -E "^==|^(hd|dn|edn)" "$FINAL/check/summary.txt" | awk '{print $1,$2,$3,$4,$7,$NF}'
