#!/usr/bin/env bash
# gpu-mpi.sh — the many-GPU checks of a GPU node, in one run (its figures: docs/performance.md): build with MPI,
# METIS, PT-Scotch and NCCL, run the test suite (the MPI and the many-rank GPU tests included), check on the paper mesh
# that `mpirun -np P fluxjac run --variant all -o J.h5` validates every variant and writes, per variant, the Jacobian
# of one GPU (node assembly: Adiag and Aoff bit for bit, checked by re-running on one GPU against it with zero
# tolerance), then run the weak- and strong-scaling configs over 1..P GPUs. Results and logs go to $OUT.
#
#   bash scripts/gpu-mpi.sh
#   env: RANKS (the GPUs, at least 2: ranks share a GPU where there are fewer, their ghosts then travel through host
#        memory), N (100: the paper mesh), SCALING (1: run the scaling configs), WEAK_N (160), STRONG_N (249),
#        METIS_ROOT, PTSCOTCH_ROOT (partitioners outside the system: scripts/fetch-partitioners.sh unpacks them into
#        .device/, used when there: scripts/device-libraries.sh),
#        SKIP_TESTS (0), REPS (20), EDGE (1: also the edge strategy on P ranks)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c GPU || true)
RANKS=${RANKS:-$(( GPUS > 2 ? GPUS : 2 ))}
N=${N:-100}
SCALING=${SCALING:-1}
REPS=${REPS:-20}
EDGE=${EDGE:-1}
BUILD=build-gpu
VARIANTS=(hd dn_10 dn_5 dn_2 dn5_2 edn_5 edn5_2)
log() { printf '\n== %s\n' "$*"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
MPIRUN=(mpirun -np "$RANKS" --oversubscribe --bind-to none)

source scripts/device-libraries.sh  # METIS_ROOT, PTSCOTCH_ROOT and LD_LIBRARY_PATH from .device/

log "configure and build (CUDA sm_${CMAKE_CUDA_ARCHITECTURES:-90}, MPI, METIS, PT-Scotch, NCCL); $GPUS GPUs, $RANKS ranks"
nvidia-smi --query-gpu=name,memory.total --format=csv || true
nvidia-smi topo -m 2>/dev/null | head -8 || true
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_CUDA=ON -DFLUXJAC_MPI=ON -DFLUXJAC_METIS=ON \
  -DFLUXJAC_PTSCOTCH=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${CMAKE_CUDA_ARCHITECTURES:-90}" >"$OUT/configure.log" 2>&1 ||
  { cat "$OUT/configure.log"; exit 1; }
grep "fluxjac:" "$OUT/configure.log"
cmake --build "$BUILD" -j"$(nproc)" >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
FLUXJAC="$BUILD/fluxjac"

if [[ "${SKIP_TESTS:-0}" != 1 ]]; then
  log "test suite (MPI and many-rank GPU tests included)"
  ctest --test-dir "$BUILD" -j"$(nproc)" --output-on-failure >"$OUT/ctest.log" 2>&1 && tail -3 "$OUT/ctest.log" ||
    { grep -E "Failed|FAILED|Error" "$OUT/ctest.log" | head -40; tail -5 "$OUT/ctest.log"; }
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
summary="$OUT/summary.txt"
: >"$summary"
status=0
log "paper mesh mixed:$N:rcm on $RANKS ranks: every variant validated, each file against one GPU"
"$FLUXJAC" mesh gen --kind mixed --n "$N" --order rcm -q -o "$WORK/paper.h5" >/dev/null
"$FLUXJAC" run --mesh "$WORK/paper.h5" --variant all --assembly node --warmup 3 --reps "$REPS" --no-validate -q \
  --json "$OUT/one-gpu-node.json" >"$WORK/table.txt" || status=1
{ echo "== one GPU, node assembly"; cat "$WORK/table.txt"; } | tee -a "$summary"
"${MPIRUN[@]}" "$FLUXJAC" run --mesh "$WORK/paper.h5" --variant all --assembly node --warmup 3 --reps "$REPS" \
  -o "$WORK/many.h5" --json "$OUT/many-ranks-node.json" --csv "$OUT/many-ranks-node.csv" >"$WORK/table.txt" 2>"$OUT/many-ranks.log" || status=1
cat "$WORK/table.txt" | tee -a "$summary"
for variant in "${VARIANTS[@]}"; do
  "$FLUXJAC" run --mesh "$WORK/paper.h5" --variant "$variant" --assembly node --reps 1 --warmup 0 \
    --reference "$WORK/many-$variant.h5" --adiag-tolerance 0 --aoff-tolerance 0 -q >"$WORK/one.txt" 2>&1 &&
    echo "$variant: the $RANKS-rank file equals one GPU's bit for bit" | tee -a "$summary" ||
    { echo "$variant: the $RANKS-rank file DIFFERS from one GPU's" | tee -a "$summary"; status=1; cat "$WORK/one.txt"; }
done
if [[ "$EDGE" == 1 ]]; then
  "${MPIRUN[@]}" "$FLUXJAC" run --mesh "$WORK/paper.h5" --variant all --assembly edge --warmup 3 --reps "$REPS" \
    --json "$OUT/many-ranks-edge.json" >"$WORK/table.txt" 2>>"$OUT/many-ranks.log" || status=1
  { echo "== edge assembly, $RANKS ranks"; cat "$WORK/table.txt"; } | tee -a "$summary"
fi

if [[ "$SCALING" == 1 ]]; then
  counts=1
  for ((p = 2; p <= RANKS; p *= 2)); do counts="$counts,$p"; done
  [[ ",$counts," == *",$RANKS,"* ]] || counts="$counts,$RANKS"
  for kind in weak strong; do
    log "$kind scaling over $counts ranks"
    meshes=()
    [[ $kind == weak && -n "${WEAK_N:-}" ]] && meshes=(--mesh "mixed:$WEAK_N:rcm")
    [[ $kind == strong && -n "${STRONG_N:-}" ]] && meshes=(--mesh "mixed:$STRONG_N:rcm")
    "${MPIRUN[@]}" "$FLUXJAC" bench --config "configs/$kind-scaling.toml" "${meshes[@]}" --ranks "$counts" \
      --cache "$WORK/cache" --json "$OUT/$kind-scaling.json" --csv "$OUT/$kind-scaling.csv" >"$WORK/table.txt" \
      2>"$OUT/$kind-scaling.log" || status=1
    { echo "== $kind scaling"; grep -vE "^(tolerances|$)" "$WORK/table.txt"; } | tee -a "$summary"
    rm -rf "$WORK/cache"
  done
fi

log "summary (results and logs in $OUT)"
cat "$summary"
exit $status
