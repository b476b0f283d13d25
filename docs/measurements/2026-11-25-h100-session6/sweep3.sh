#!/usr/bin/env bash
# session 6, call 3: one-tile kernel for five lanes; tiles x threads for the new defaults
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"; R=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$R/device.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >"$R/configure.log" 2>&1
cmake --build build-gpu -j16 --target fluxjac >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
F=build-gpu/fluxjac
$F list > "$R/list.txt"
T=$(mktemp -d)
$F mesh gen --kind mixed --n 100 --order rcm -q -o $T/m.h5 >/dev/null
med() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs']; print(' '.join(f\"{x['variant']}={x['assembly_ms']['median']:.3f}\" for x in r))" "$1"; }
i=0
sweep() {  # variants tile threads [mode]
  i=$((i+1))
  FLUXJAC_X_NODE_THREADS=$3 $F run --mesh $T/m.h5 --variant "$1" --edges-per-block "$2" --mode ${4:-full} --warmup 3 --reps 20 --no-validate -q --json "$R/s$i.json" >/dev/null 2>"$R/s$i.err" || { echo "$1 tile $2 thr $3: FAIL $(tail -1 $R/s$i.err)"; return; }
  echo "tile $2 thr $3 ${4:-full}: $(med $R/s$i.json)"
}
for cfg in "128 128" "256 128" "128 64" "64 64"; do sweep dn_5,xdn5_tile $cfg; done
for cfg in "128 64" "256 64" "256 128" "384 128" "64 32"; do sweep dn5_2,edn5_2 $cfg; done
for cfg in "256 128" "128 64" "192 96" "128 128"; do sweep hd $cfg; done
for cfg in "128 128" "128 64" "64 32"; do sweep dn_2 $cfg; done
$F run --mesh $T/m.h5 --variant hd,dn_10,dn_5,dn_2,dn5_2,edn_5,edn5_2 --warmup 3 --reps 20 --validate --json "$R/defaults.json" 2>&1 | tail -12
tar -C "$R" -czf "$FINAL/sweep.tar.gz" .
