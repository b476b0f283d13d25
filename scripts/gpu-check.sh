#!/usr/bin/env bash
# gpu-check.sh — everything a GPU machine should check, in one run (its figures: docs/performance.md):
# configure with CUDA for sm_90, build, run the whole test suite (GPU tests included), run compute-sanitizer
# on a small mesh, generate the paper-size mesh (mixed, N=100: about 1M nodes, 5.6M edges) in rcm and random
# order unless one is given, run every GPU variant with validation in the three Table IV modes, then the peers
# (scripts/peers: JAX and PyTorch differentiating the same flux) on the first mesh, checked against the Jacobian hd
# writes there, and write CSV/JSON and logs under $OUT (default: gpu-results/). The short table comes last.
#
#   bash scripts/gpu-check.sh [MESH.h5]
#   env: REPS (20), SANITIZE (1: compute-sanitizer, each orientation), N (100), SWEEP_EPB ("8 16 32 64 128": edges
#        per block (node assembly: tile entries) to sweep in each orientation, "" for none),
#        EXTRA_RUN_ARGS (added to every 'fluxjac run'), PEERS ("jax torch": peer scripts to run, "" for none),
#        PEER_PYTHON (python3: the Python that has JAX and PyTorch; it also runs tests/test_peer_*.py),
#        PEER_REPS (REPS), ORIENTATIONS ("A A^T": the default orientation and the adjoint one, --transpose;
#        "" for none), MODES ("full compute-only scatter-only": the Table IV modes of the per-variant tables, ""
#        for none; the peers need full), TESTS (1: the test suite; 0: skip it, e.g. when a call of the same build ran
#        it)
#
# $OUT receives: gpu-check-results.tar.gz (every CSV, JSON and log), summary.txt, device.txt, list.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FINAL_OUT=${OUT:-gpu-results}
mkdir -p "$FINAL_OUT"
OUT=$(mktemp -d)  # everything lands here first, then is packed into FINAL_OUT
REPS=${REPS:-20}
N=${N:-100}
SANITIZE=${SANITIZE:-1}
SWEEP_EPB=${SWEEP_EPB-8 16 32 64 128}
ORIENTATIONS=${ORIENTATIONS-A A^T}
MODES=${MODES-full compute-only scatter-only}
PEERS=${PEERS-jax torch}
PEER_PYTHON=$(command -v "${PEER_PYTHON:-python3}" || echo /usr/bin/python3)
PEER_REPS=${PEER_REPS:-$REPS}
BUILD=build-gpu
VARIANTS=hd,dn_10,dn_5,dn_2,dn5_2,edn_5,edn5_2
log() { printf '\n== %s\n' "$*"; }
# The run flags and file-name suffix of an orientation: A (none), or the adjoint A^T (--transpose, files *-T-*).
orientation_args() {
  if [[ $1 == A ]]; then flag=(); suffix=""; else flag=(--transpose); suffix="-T"; fi
}

source scripts/device-libraries.sh  # METIS and PT-Scotch from .device/ where scripts/fetch-partitioners.sh put them
log "configure and build (CUDA, sm_${CMAKE_CUDA_ARCHITECTURES:-90}, Release)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" -DFLUXJAC_PEER_PYTHON="$PEER_PYTHON" \
  >"$OUT/configure.log" 2>&1 ||
  { cat "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
FLUXJAC="$BUILD/fluxjac"
"$FLUXJAC" device | tee "$OUT/device.txt"
"$FLUXJAC" list | tee "$OUT/list.txt"

if [[ "${TESTS:-1}" == 1 ]]; then
  log "test suite (GPU tests included)"
  ctest --test-dir "$BUILD" -j"$(nproc)" --output-on-failure >"$OUT/ctest.log" 2>&1 && tail -3 "$OUT/ctest.log" ||
    { grep -E "Failed|FAILED|Error" "$OUT/ctest.log" | head -40; tail -5 "$OUT/ctest.log"; }
fi

WORK=$(mktemp -d)
# Packed on any exit, so that a run stopped at the device's time limit still returns what it measured.
pack() {
  cp "$OUT"/device.txt "$OUT"/list.txt "$OUT"/summary.txt "$FINAL_OUT/" 2>/dev/null || true
  tar -C "$OUT" -czf "$FINAL_OUT/gpu-check-results.tar.gz" . || true
  rm -rf "$WORK"
}
trap pack EXIT
if [[ "$SANITIZE" == 1 ]] && command -v compute-sanitizer >/dev/null; then
  log "compute-sanitizer memcheck and racecheck, every GPU variant, small mesh, orientations: ${ORIENTATIONS:-A}"
  "$FLUXJAC" mesh gen --kind mixed --n 6 --order random -q -o "$WORK/small.h5" >/dev/null
  for tool in memcheck racecheck; do
    for orientation in ${ORIENTATIONS:-A}; do
      orientation_args "$orientation"
      compute-sanitizer --tool "$tool" --error-exitcode 9 "$FLUXJAC" run --mesh "$WORK/small.h5" \
        --variant "$VARIANTS" "${flag[@]}" --warmup 0 --reps 1 -q >"$OUT/sanitizer-$tool$suffix.log" 2>&1 &&
        echo "$tool, $orientation: clean" ||
        { echo "$tool, $orientation: FOUND ERRORS (rc $?)"; grep -m5 -E "=========" "$OUT/sanitizer-$tool$suffix.log"; }
    done
  done
fi

if [[ $# -ge 1 ]]; then
  meshes=("$1")
else
  log "paper-size meshes: mixed N=$N, rcm and random orderings"
  "$FLUXJAC" mesh gen --kind mixed --n "$N" --order rcm -o "$WORK/mixed-$N-rcm.h5" 2>/dev/null
  "$FLUXJAC" mesh gen --kind mixed --n "$N" --order random -o "$WORK/mixed-$N-random.h5" 2>/dev/null
  meshes=("$WORK/mixed-$N-rcm.h5" "$WORK/mixed-$N-random.h5")
fi

summary="$OUT/summary.txt"
: >"$summary"
status=0
for mesh in "${meshes[@]}"; do
  name=$(basename "$mesh" .h5)
  for orientation in $ORIENTATIONS; do
    orientation_args "$orientation"
    for mode in $MODES; do
      log "$name, $orientation, mode $mode"
      "$FLUXJAC" run --mesh "$mesh" --variant "$VARIANTS" --mode "$mode" "${flag[@]}" --warmup 3 --reps "$REPS" \
        --csv "$OUT/$name$suffix-$mode.csv" --json "$OUT/$name$suffix-$mode.json" ${EXTRA_RUN_ARGS:-} \
        >"$WORK/table.txt" || status=1
      cat "$WORK/table.txt"
      { echo "== $name, $orientation, $mode"; grep -vE "^(tolerances|$)" "$WORK/table.txt"; } >>"$summary"
    done
  done
done
if [[ -n "$SWEEP_EPB" ]]; then
  log "edges per block sweep (mode full, ${meshes[0]##*/}, orientations: ${ORIENTATIONS:-A})"
  for orientation in ${ORIENTATIONS:-A}; do
    orientation_args "$orientation"
    for epb in $SWEEP_EPB; do
      "$FLUXJAC" run --mesh "${meshes[0]}" --variant "$VARIANTS" --edges-per-block "$epb" "${flag[@]}" --warmup 3 \
        --reps "$REPS" --no-validate -q --json "$OUT/sweep-epb-$epb$suffix.json" 2>&1 |
        grep -E "^(hd|dn|edn|fluxjac)" | sed "s/^/epb $epb $orientation  /" | tee -a "$summary" || true
    done
  done
fi

if [[ -n "$PEERS" ]]; then
  # The peers run after fluxjac, in the same process conditions, on the first mesh; each is checked against the
  # Jacobian hd writes there and timed against hd's median in mode full above (its JSON).
  name=$(basename "${meshes[0]}" .h5)
  log "peers ($PEERS, $PEER_PYTHON) on $name, checked against the Jacobian hd writes"
  "$FLUXJAC" run --mesh "${meshes[0]}" --variant hd --warmup 0 --reps 1 --no-validate -q \
    -o "$WORK/jacobian-hd.h5" >"$OUT/peer-hd-output.log" 2>&1 || { cat "$OUT/peer-hd-output.log"; status=1; }
  echo "== $name, peers (median of $PEER_REPS; x hd: against hd's full-mode median above)" >>"$summary"
  for peer in $PEERS; do
    peer_status=0
    "$PEER_PYTHON" "scripts/peers/roe_$peer.py" --mesh "${meshes[0]}" --check "$WORK/jacobian-hd.h5" --device gpu \
      --warmup 3 --reps "$PEER_REPS" --baseline "$OUT/$name-full.json" --json "$OUT/peer-$peer.json" \
      >"$OUT/peer-$peer.log" 2>&1 || peer_status=$?
    cat "$OUT/peer-$peer.log"
    case $peer_status in
      0) grep "^peer " "$OUT/peer-$peer.log" >>"$summary" ;;
      77) echo "peer $peer  SKIPPED: $(grep -m1 SKIPPED "$OUT/peer-$peer.log")" >>"$summary" ;;
      *) status=1
         { grep "^peer " "$OUT/peer-$peer.log" || echo "peer $peer  FAILED (exit code $peer_status)"; } >>"$summary" ;;
    esac
  done
fi

log "summary (device: $(head -1 "$OUT/device.txt" | sed 's/device *//'))"
cat "$summary"
exit $status
