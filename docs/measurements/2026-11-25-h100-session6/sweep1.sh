#!/usr/bin/env bash
# session 6, call 1: node-kernel threads per block x tile sweep (temporary env hook), GPU tests, racecheck multi-tile
set -uo pipefail
R=${OUT:-/tmp/out}; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$R/device.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >"$R/configure.log" 2>&1
cmake --build build-gpu -j16 >"$R/build.log" 2>&1 || { tail -30 "$R/build.log"; exit 1; }
F=build-gpu/fluxjac
$F list > "$R/list.txt"
(ctest --test-dir build-gpu -L gpu -j4 --output-on-failure >"$R/ctest-gpu.log" 2>&1; tail -3 "$R/ctest-gpu.log") &
T=$(mktemp -d)
$F mesh gen --kind mixed --n 100 --order rcm -q -o $T/m.h5 >/dev/null
$F mesh gen --kind mixed --n 12 --order rcm -q -o $T/s.h5 >/dev/null
wait
med() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs']; print(' '.join(f\"{x['variant']}={x['assembly_ms']['median']:.3f}\" for x in r))" "$1"; }
i=0
sweep() {  # variants tile threads
  i=$((i+1))
  FLUXJAC_X_NODE_THREADS=$3 $F run --mesh $T/m.h5 --variant "$1" --edges-per-block "$2" --warmup 3 --reps 20 --no-validate -q --json "$R/s$i.json" >/dev/null 2>"$R/s$i.err" || { echo "tile $2 thr $3: FAIL $(tail -1 $R/s$i.err)"; return; }
  echo "tile $2 thr $3: $(med $R/s$i.json)"
}
FIVE=dn_5,edn_5,dn_10; TWO=dn5_2,edn5_2; ONE=hd,dn_2
for cfg in "512 512" "256 256" "128 128" "160 160" "256 512"; do sweep $FIVE $cfg; done
for cfg in "128 128" "64 64" "256 128" "128 64" "192 128"; do sweep $TWO $cfg; done
for cfg in "128 128" "64 64" "256 256" "256 128" "96 96"; do sweep $ONE $cfg; done
sweep $FIVE 512 512
for v in dn5_2:16 dn_5:16; do
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 $F run --mesh $T/s.h5 --variant ${v%:*} --edges-per-block ${v#*:} --warmup 0 --reps 1 -q >"$R/race-${v%:*}.log" 2>&1
  echo "racecheck ${v}: rc $? $(grep -m1 -E 'RACECHECK SUMMARY|hazard' $R/race-${v%:*}.log)"
done
