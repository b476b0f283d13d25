#!/usr/bin/env bash
# session 6, last call: dn5_2/edn5_2 tiles after the division change; sizes N=40,160 for hd and dn5_2
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"; export XDG_CACHE_HOME=$(mktemp -d)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
cmake --build build-gpu -j16 --target fluxjac >"$FINAL/build.log" 2>&1 || { tail -20 "$FINAL/build.log"; exit 1; }
F=build-gpu/fluxjac
med() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs']; print(' '.join(f\"{x['variant']}={x['assembly_ms']['median']:.3f}\" for x in r))" "$1"; }
for t in 384 256 512; do
  $F run --mesh mixed:100:rcm --variant dn5_2,edn5_2 --edges-per-block $t --warmup 3 --reps 20 --no-validate -q --json "$FINAL/tile-$t.json" >/dev/null 2>&1
  echo "tile $t: $(med $FINAL/tile-$t.json)"
done
$F bench --mesh mixed:40:rcm,mixed:160:rcm --variant hd,dn5_2 --no-validate --reps 20 --json "$FINAL/sizes.json" -q 2>&1 | grep -E "^(hd|dn5_2) " | awk '{print $1,$2,$5,$6,$7,$8}'
