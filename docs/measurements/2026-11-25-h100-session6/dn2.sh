#!/usr/bin/env bash
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"; export XDG_CACHE_HOME=$(mktemp -d)
nvidia-smi --query-gpu=name --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
cmake --build build-gpu -j16 --target fluxjac >"$FINAL/build.log" 2>&1 || { tail -20 "$FINAL/build.log"; exit 1; }
F=build-gpu/fluxjac
med() { python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs']; print(' '.join(f\"{x['variant']}={x['assembly_ms']['median']:.3f}\" for x in r))" "$1"; }
$F run --mesh mixed:100:rcm --variant dn_2,xdn2_hoist,xdn2_hoist168,xdn2_168 --warmup 3 --reps 20 --validate -q --json "$FINAL/dn2.json" 2>&1 | grep -E "^(dn_2|xdn2)" | awk '{print $1,$6,$NF}'
$F run --mesh mixed:100:rcm --variant dn_2,xdn2_hoist,xdn2_hoist168,xdn2_168 --mode compute-only --warmup 3 --reps 20 --no-validate -q --json "$FINAL/dn2-compute.json" >/dev/null 2>&1; echo "compute-only: $(med $FINAL/dn2-compute.json)"
