#!/usr/bin/env bash
# gpu-ab.sh — the working tree against a base version, built and timed on the same GPU in one run, so that a
# kernel change is judged on one machine (timings from two GPUs, even of one model, do not compare).
#
#   git archive REF -- CMakeLists.txt CMakePresets.json kernels src tests scripts configs meshes |
#     gzip > .device/base.tar.gz                      # here; .device/ is git-ignored: copy it to the node
#   bash scripts/gpu-ab.sh .device/base.tar.gz        # on the GPU machine
#
# env: N (100): mixed mesh size; ORDERS ("rcm random"); ORIENTATIONS ("A": also "A^T", --transpose); VARIANTS
#      (all seven); MODES ("full compute-only scatter-only"); REPS (20); TESTS (1: run the working tree's GPU tests
#      first); EXTRA_RUN_ARGS.
#      NCU ("" or a variant list, e.g. hd,dn5_2): also profile those variants' kernels on the rcm mesh with Nsight
#      Compute, base and new (occupancy, warp states, memory; ncu-*.txt).
# $OUT (default ab-results/) receives compare.txt and ab-results.tar.gz (every JSON, log and profile); the
# comparison comes last.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ $# -eq 1 && -f "$1" ]] || { echo "usage: $0 BASE.tar.gz (git archive of the base version)" >&2; exit 2; }
FINAL_OUT=${OUT:-ab-results}
mkdir -p "$FINAL_OUT"
OUT=$(mktemp -d)  # everything lands here first, then is packed into FINAL_OUT (one archive to bring back)
N=${N:-100}
ORDERS=${ORDERS:-rcm random}
ORIENTATIONS=${ORIENTATIONS:-A}
VARIANTS=${VARIANTS:-hd,dn_10,dn_5,dn_2,dn5_2,edn_5,edn5_2}
MODES=${MODES:-full compute-only scatter-only}
REPS=${REPS:-20}
BASE=$(mktemp -d)
WORK=$(mktemp -d)
pack() { tar -C "$OUT" -czf "$FINAL_OUT/ab-results.tar.gz" . && cp -f "$OUT/compare.txt" "$FINAL_OUT/" 2>/dev/null; rm -rf "$BASE" "$WORK" "$OUT"; }
trap pack EXIT
tar -xzf "$1" -C "$BASE"

configure=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}")
echo "== build the working tree and the base side by side"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
{ cmake -S . -B build-gpu "${configure[@]}" && cmake --build build-gpu -j"$(nproc)"; } >"$OUT/build-new.log" 2>&1 &
new_build=$!
{ cmake -S "$BASE" -B "$BASE/build" "${configure[@]}" && cmake --build "$BASE/build" -j"$(nproc)" --target fluxjac; } \
  >"$OUT/build-base.log" 2>&1 &
base_build=$!
wait $new_build || { tail -40 "$OUT/build-new.log"; exit 1; }
wait $base_build || { tail -40 "$OUT/build-base.log"; exit 1; }
grep -h "spill" "$OUT/build-new.log" | sort -u >"$OUT/spills-new.txt" || true
build-gpu/fluxjac list | tee "$OUT/list-new.txt"

if [[ "${TESTS:-1}" == 1 ]]; then
  echo "== GPU tests of the working tree"
  ctest --test-dir build-gpu -L gpu -j4 --output-on-failure >"$OUT/ctest-gpu.log" 2>&1 && tail -3 "$OUT/ctest-gpu.log" ||
    { grep -E "Failed|FAILED" "$OUT/ctest-gpu.log" | head -30; tail -3 "$OUT/ctest-gpu.log"; }
fi

status=0
for order in $ORDERS; do
  mesh="$WORK/mixed-$N-$order.h5"
  build-gpu/fluxjac mesh gen --kind mixed --n "$N" --order "$order" -q -o "$mesh" >/dev/null
  for orientation in $ORIENTATIONS; do
    if [[ $orientation == A ]]; then flag=(); key=$order; else flag=(--transpose); key=$order-T; fi
    for side in base new; do
      binary=build-gpu/fluxjac
      [[ $side == base ]] && binary="$BASE/build/fluxjac"
      for mode in $MODES; do
        validate=--no-validate
        [[ $side == new && $mode == full ]] && validate=--validate
        "$binary" run --mesh "$mesh" --variant "$VARIANTS" --mode "$mode" "${flag[@]}" --warmup 3 --reps "$REPS" \
          $validate -q --json "$OUT/$side-$key-$mode.json" ${EXTRA_RUN_ARGS:-} >"$WORK/table.txt" 2>&1 || status=1
        [[ $side == new && $mode == full ]] && cat "$WORK/table.txt"
      done
    done
  done
done
keys=()
for order in $ORDERS; do
  for orientation in $ORIENTATIONS; do [[ $orientation == A ]] && keys+=("$order") || keys+=("$order-T"); done
done

if [[ -n "${NCU:-}" ]] && command -v ncu >/dev/null; then
  echo "== Nsight Compute: $NCU (rcm mesh, one assembly each, mode full)"
  for side in base new; do
    binary=build-gpu/fluxjac
    [[ $side == base ]] && binary="$BASE/build/fluxjac"
    for variant in ${NCU//,/ }; do
      for orientation in $ORIENTATIONS; do
        if [[ $orientation == A ]]; then flag=(); tag=$variant; else flag=(--transpose); tag=$variant-T; fi
        ncu --clock-control none --kernel-name "regex:assembly_kernel" --launch-skip 2 --launch-count 1 \
          --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
          --section MemoryWorkloadAnalysis "$binary" run --mesh "$WORK/mixed-$N-rcm.h5" --variant "$variant" \
          "${flag[@]}" --warmup 2 --reps 1 --no-validate -q >"$OUT/ncu-$side-$tag.txt" 2>&1 || true
        grep -E "Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Dynamic Shared|Block Limit|Waves|Grid Size|Block Size|Memory Throughput|DRAM Throughput|Compute \(SM\)|Warp Cycles Per Issued|Stall" \
          "$OUT/ncu-$side-$tag.txt" | sed "s/^/$side $tag /" | head -40
      done
    done
  done
fi

echo "== base -> new (median ms, same GPU)"
/usr/bin/python3 - "$OUT" "${keys[@]}" <<'EOF' | tee "$OUT/compare.txt"
import json, sys, os
out, orders = sys.argv[1], sys.argv[2:]
def load(path):
    if not os.path.exists(path): return {}
    runs = json.load(open(path))["runs"]
    return {r["variant"]: r for r in runs}
print(f"{'order':9} {'mode':13} {'variant':8} {'base ms':>9} {'new ms':>9} {'new/base':>8} {'valid':>6}")
for order in orders:
    for mode in ("full", "compute-only", "scatter-only"):
        base, new = load(f"{out}/base-{order}-{mode}.json"), load(f"{out}/new-{order}-{mode}.json")
        for v, r in new.items():
            def ms(x): return x.get("assembly_ms", {}).get("median") if x else None
            b, n = ms(base.get(v)), ms(r)
            ratio = f"{n / b:8.3f}" if b and n else "       -"
            valid = r.get("validation")
            valid = "-" if not valid else ("PASS" if valid.get("passed") else "FAIL")
            print(f"{order:9} {mode:13} {v:8} {b or float('nan'):9.4f} {n or float('nan'):9.4f} {ratio} {valid:>6}")
EOF
exit $status
