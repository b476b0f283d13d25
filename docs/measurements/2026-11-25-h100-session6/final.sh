#!/usr/bin/env bash
# session 6: gpu-check (tests incl. 2-rank MPI, sanitizers, all variants, 3 modes, rcm+random), then sizes and tiles
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
export METIS_ROOT=$PWD/.device/metis/usr LD_LIBRARY_PATH=$PWD/.device/metis/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SWEEP_EPB="" REPS=20 OUT=$FINAL/check bash scripts/gpu-check.sh 2>&1 | grep -vE "^\s*[0-9]+ - .*Skipped" > "$FINAL/check.log"
grep -E "tests passed|tests failed|clean|ERRORS" "$FINAL/check.log"
tail -40 "$FINAL/check/summary.txt" | grep -E "^==|^(hd|dn|edn) " | awk '{print $1,$2,$3,$4,$7,$NF}'
F=build-gpu/fluxjac; R=$(mktemp -d); export XDG_CACHE_HOME=$R
for cfg in "dn5_2,edn5_2 512" "dn5_2,edn5_2 256" "hd 128" "dn_5,dn_10 512" "dn_5 128"; do
  set -- $cfg
  $F run --mesh mixed:100:rcm --variant $1 --edges-per-block $2 --warmup 3 --reps 20 --no-validate -q --json $R/t-$2-${1%%,*}.json >/dev/null 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs']; print('tile', sys.argv[2], ' '.join(f\"{x['variant']}={x['assembly_ms']['median']:.3f}\" for x in r))" $R/t-$2-${1%%,*}.json $2
done
timeout 240 $F bench --mesh mixed:40:rcm,mixed:100:rcm,mixed:160:rcm,mixed:250:rcm --variant hd,dn5_2 --no-validate --reps 20 --json $R/sizes.json -q 2>&1 | grep -E "^(hd|dn5_2) " | awk '{print $1,$2,$5,$6,$7,$8}'
cp $R/*.json "$FINAL/check/" 2>/dev/null; tar -C "$FINAL/check" -czf "$FINAL/extra.tar.gz" . ; rm -rf "$FINAL/check"/*.json
