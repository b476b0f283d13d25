#!/usr/bin/env bash
# gpu.sh — the runs of the GPU machines, in one entry: the checks of one GPU and of many GPUs, a kernel change
# against a base version, the largest mesh, Nsight Compute profiles and FP64 counts, one benchmark config end to end,
# and the host side of many ranks. Builds go through scripts/common.sh (the CMake presets of CMakePresets.json, each
# into build/<preset>); the standard meshes are made once, under MESH_DIR. Their figures: docs/performance.md.
#
#   bash scripts/gpu.sh SUBCOMMAND [ARGUMENTS]     SUBCOMMAND: check mpi ab largest profile fp64 node scaling solve
#   bash scripts/gpu.sh help                       this text
#
# Every subcommand: OUT (its results folder, default below), SKIP_BUILD (0; 1: configure and build nothing and run
#   FLUXJAC), FLUXJAC (the binary to run, e.g. one that another call built; when set, nothing is built; default the
#   subcommand's build, build/<preset>/fluxjac), MESH_DIR (build/meshes: the standard meshes, mixed-N-ORDER.h5, made
#   once and kept), CMAKE_CUDA_ARCHITECTURES (90), METIS_ROOT and PTSCOTCH_ROOT (partitioners outside the system:
#   scripts/fetch-partitioners.sh unpacks them into .device/, used when there). Relative paths in the environment
#   start at the repository root, those in arguments at the calling folder. A subcommand that needs a GPU (check,
#   mpi, ab, profile, fp64, solve) stops first, exit code 2, where nvidia-smi lists none, or where its binary has no
#   CUDA. A subcommand that runs the test suite runs ctest -j$(nproc) with GPU_TEST_SLOTS (4) GPU tests per GPU at
#   once; a cli test counts 4 processors (tests/CMakeLists.txt).
#
# check [MESH.h5] — everything a GPU machine should check, in one run: build (preset cuda: CUDA for sm_90), run the
#   whole test suite (GPU tests included), run compute-sanitizer on a small mesh, take the paper-size mesh (mixed,
#   N=100: about 1M nodes, 5.6M edges) in rcm and random order unless MESH.h5 is given, run every GPU variant with
#   validation in the three Table IV modes, then the peers (scripts/peers: JAX and PyTorch differentiating the same
#   flux) on the first mesh, checked against the Jacobian hd writes there. The short table comes last.
#   env: REPS (20), SANITIZE (1: compute-sanitizer, each orientation), N (100), SWEEP_EPB ("8 16 32 64 128": edges
#        per block (node assembly: tile entries) to sweep in each orientation, "" for none),
#        EXTRA_RUN_ARGS (added to every 'fluxjac run'), PEERS ("jax torch": peer scripts to run, "" for none),
#        PEER_PYTHON (python3: the Python that has JAX and PyTorch; it also runs tests/test_peer_*.py),
#        PEER_REPS (REPS), ORIENTATIONS ("A A^T": the default orientation and the adjoint one, --transpose;
#        "" for none), MODES ("full compute-only scatter-only": the Table IV modes of the per-variant tables, ""
#        for none; the peers need full), TESTS (1: the test suite; 0: skip it, e.g. when a call of the same build
#        ran it)
#   OUT (gpu-results/) receives gpu-check-results.tar.gz (every CSV, JSON and log), summary.txt, device.txt, list.txt.
#
# mpi — the many-GPU checks of a GPU node, in one run: build with MPI, METIS, PT-Scotch and NCCL (preset cuda-mpi),
#   run the test suite (the MPI and the many-rank GPU tests included), check on the paper mesh that
#   `mpirun -np P fluxjac run --variant all -o J.h5` validates every variant and writes, per variant, the Jacobian of
#   one GPU (node assembly: Adiag and Aoff bit for bit, checked by re-running on one GPU against it with zero
#   tolerance), then run the weak- and strong-scaling configs over 1..P GPUs.
#   env: RANKS (the GPUs, at least 2: ranks share a GPU where there are fewer, their ghosts then travel through host
#        memory), N (100: the paper mesh), SCALING (1: run the scaling configs), WEAK_N (160), STRONG_N (249),
#        SKIP_TESTS (0), REPS (20), EDGE (1: also the edge strategy on P ranks)
#   OUT (gpu-results/) receives the JSON and CSV files, the logs and summary.txt.
#
# ab BASE.tar.gz — the working tree against a base version, built side by side (preset cuda of each) and timed on
#   the same GPU in one run, so that a kernel change is judged on one machine (timings from two GPUs, even of one
#   model, do not compare). Make the archive here, copy it to the node (.device/ is git-ignored):
#     git archive REF -- CMakeLists.txt CMakePresets.json kernels src tests scripts configs meshes |
#       gzip > .device/base.tar.gz
#   The base must have the cuda preset. SKIP_BUILD and FLUXJAC apply to the working tree's side; the base is built.
#   env: N (100): mixed mesh size; ORDERS ("rcm random"); ORIENTATIONS ("A": also "A^T", --transpose); VARIANTS
#        (all seven); MODES ("full compute-only scatter-only"); REPS (20); TESTS (1: run the working tree's GPU tests
#        first); EXTRA_RUN_ARGS.
#        NCU ("" or a variant list, e.g. hd,dn5_2): also profile those variants' kernels on the rcm mesh with Nsight
#        Compute, base and new (occupancy, warp states, memory; ncu-*.txt).
#   OUT (ab-results/) receives compare.txt and ab-results.tar.gz (every JSON, log and profile); the comparison comes
#   last.
#
# largest — the largest mixed box the GPUs of one node hold, generated in parts (no rank holds more than its part and
#   halo: docs/design.md, "Many GPUs"), assembled by hd and dn5_2 (node assembly), with the generation, setup and
#   assembly times, every rank's peak host memory (the bench JSON's partition.steps) and every GPU's peak memory
#   (nvidia-smi, sampled twice a second). Builds preset cuda-mpi, as mpi does. Runs on the CPU too, e.g. RANKS=2
#   VARIANTS=reference.
#   env: N1 (360: the per-GPU size, mixed:N1 on one GPU; 400 is about 357M edges, which an H200 holds), RANKS (the
#        GPUs), STEPS ("weak strong": weak scaling 1 -> 2 -> ... -> RANKS at N1 per GPU, whose last point is the
#        largest mesh; strong scaling of mixed:N1 over the same rank counts; "none": mixed:N1 as given on each
#        count, to split a scaling over calls of the device's time limit, e.g. N1=400 COUNTS=1, then N1=504
#        COUNTS=2), REPS (10), VARIANTS (hd,dn5_2), COUNTS (the rank counts; bench runs them in ascending order:
#        1,2,4,...,RANKS), SMOKE (1: first a small validated run of the variants on 1 and RANKS ranks, mixed:40:rcm;
#        0: none)
#   OUT (gpu-results/) receives weak.json, strong.json (and CSV), gpu-memory.csv, the logs and summary.txt.
#
# profile [VARIANTS] [N] — Nsight Compute profile of the assembly kernels (one launch per variant), default
#   hd,dn5_2,dn_10 on the mixed N=100 rcm mesh; builds the fluxjac program of preset cuda. Prints the key figures:
#   the sections below and the memory metrics (DRAM bytes read and written, L2 hit rates of loads and stores).
#   env: MODES ("full"; also compute-only, scatter-only), ORIENTATIONS ("A"; "A A^T" profiles both),
#        EXTRA_RUN_ARGS (added to every 'fluxjac run')
#   OUT (profile-results/) receives ncu-<variant>-<mode>-<A|T>.txt.
#
# fp64 [FLUXJAC] [N] — FP64 work per edge of every GPU variant, counted by Nsight Compute on the device (thread-level
#   SASS counters), to set beside the counts of the work model (`fluxjac list`, docs/performance.md "Work model").
#   Default: build/cuda/fluxjac (its fluxjac program built when missing), the mixed N=40 rcm mesh, mode compute-only.
#   Prints one line per variant and assembly: DFMA, DADD, DMUL instructions per edge, FP64 instructions per edge and
#   flops per edge (an FMA is one instruction but two flops). Division and square root run as sequences of these
#   (plus MUFU reciprocal seeds, not counted here).
#   env: ASSEMBLIES ("node edge")
#   OUT (profile-results/) receives ncu-fp64.csv.
#
# node CONFIG.toml [fluxjac bench options] — one benchmark configuration on one node, end to end: build
#   (incrementally, preset release into build/: the build scripts/test.sh and scripts/run.sh make, so after them
#   nothing is rebuilt; ninja's [done/total] lines show the progress), record the machine, run 'fluxjac bench', draw
#   the charts, optionally compare with a baseline, and pack everything in a dated folder. The node needs no network.
#     bash scripts/gpu.sh node configs/paper.toml                   # results/<date>-paper-<host>/ + .tar.gz
#     bash scripts/gpu.sh node configs/scaling.toml --no-validate   # extra arguments go to 'fluxjac bench'
#     BASELINE=results/old/results.json bash scripts/gpu.sh node configs/paper.toml
#   env: RESULTS (results/: where the dated folders go; OUT is not used), BUILD (build), FLUXJAC_CUDA (AUTO),
#        FLUXJAC_CACHE (mesh cache; default $XDG_CACHE_HOME/fluxjac or ~/.cache/fluxjac), BASELINE (a results.json to
#        compare against), TIME_TOLERANCE (0.1)
#   The folder receives: build.log, results.csv, results.json, bench.log, plots/*.png, machine.txt (nvidia-smi,
#   fluxjac device and list, git state), the config, compare.txt (with BASELINE). Exit code: 3 without a config, 4
#   when the build fails, else that of 'fluxjac bench' (1: a validation failed, 4: a case failed), else that of
#   'fluxjac compare' (1: a regression). scripts/slurm/gpu-node.sbatch submits it as a SLURM job.
#
# solve [MESH.h5] — the implicit step's solve on the GPU (docs/performance.md, "The solve"): build (preset cuda-mpi),
#   take the paper mesh (mixed, N=100, rcm) unless MESH.h5 is given, and solve with hd at each CFL, preconditioner
#   and Aoff precision (FGMRES(30) to TOLERANCE), the first case with cuSPARSE's product of the same M timed beside
#   fluxjac's (--cusparse); then, where the node has 2 GPUs or more, the block-Jacobi step on RANKS ranks (the same
#   mesh: iterations and time against one GPU's) and weak scaling: mixed:WEAK_N:rcm (about RANKS times the paper
#   mesh's nodes) generated in parts on RANKS ranks, beside the paper mesh on one. The table of the figures comes last.
#   env: CFLS ("10 100 1000"), PRECONDITIONERS ("pbjacobi mcgs"), PRECISIONS ("f32 bf16"), TOLERANCE (1e-8),
#        RANKS (the GPUs), N (100), WEAK_N (126 for 2 ranks, 159 for 4: the cube root of RANKS times N^3), SCALING
#        (1: the runs on RANKS ranks where there are 2 GPUs or more)
#   OUT (solve-results/) receives solve-*.json (fluxjac solve's documents, docs/bench-json.md) and summary.txt.
#
# scaling — the host side of many ranks at a fixed number of edges per rank (weak scaling): generation in parts (a
#   generator spec under mpirun, one part per rank) and the PT-Scotch partition of a file, each step's time on the
#   slowest rank and every rank's peak host memory. No GPU needed; run it on a host with a core per rank. Its
#   figures: docs/performance.md, "Generation and partition per rank".
#   env: RANKS ("1 2 4"), GEN_N1 (150: mixed:GEN_N1:rcm per rank for generation), PART_N1 (100: the same for
#        partition; one rank has nothing to partition, so it starts at 2), BUILD (build/mpi: preset mpi, configured
#        and built here without the tests unless it holds a fluxjac already; FLUXJAC names another binary)
#   OUT (setup-results/) receives generation.json (bench's weak-scaling records with the steps), the logs and
#   summary.txt, which is printed last.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CALLER_DIR=$PWD
cd "$FLUXJAC_ROOT"
SUBCOMMAND=${1:-help}
if [[ $# -gt 0 ]]; then shift; fi
FLUXJAC_GIVEN=${FLUXJAC:+1}
MESH_DIR=${MESH_DIR:-build/meshes}
VARIANTS_ALL=hd,dn_10,dn_5,dn_2,dn5_2,edn_5,edn5_2

# Prints this script's header comment (the usage of every subcommand) without the comment marks.
usage() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "${BASH_SOURCE[0]}"
}

# Prints a visible section line on stdout.
log() {
  printf '\n== %s\n' "$*"
}

# Prints "gpu.sh SUBCOMMAND: MESSAGE" on stderr and exits with CODE (default 2: cannot run here).
die() {
  printf 'gpu.sh %s: %s\n' "$SUBCOMMAND" "$1" >&2
  exit "${2:-2}"
}

# Prints PATH as an absolute path, relative paths taken from the folder gpu.sh was called from.
from_caller() {
  if [[ "$1" = /* ]]; then printf '%s\n' "$1"; else printf '%s\n' "$CALLER_DIR/$1"; fi
}

# Prints the number of GPUs nvidia-smi lists (0 without nvidia-smi).
gpu_count() {
  local listing
  listing=$(nvidia-smi -L 2>/dev/null) || listing=""
  grep -c "^GPU" <<<"$listing" || true
}

# Stops (exit 2) where no NVIDIA GPU is visible: the subcommand runs the GPU variants.
require_gpu() {
  fluxjac_gpu_present || die "no NVIDIA GPU here (nvidia-smi lists none): '$SUBCOMMAND' runs the GPU variants"
}

# Stops (exit 2) where Nsight Compute's ncu is not on PATH.
require_ncu() {
  command -v ncu >/dev/null 2>&1 || die "ncu (Nsight Compute) is not on PATH: '$SUBCOMMAND' profiles with it"
}

# Stops (exit 2) where $FLUXJAC was built without the CUDA variants.
require_cuda_build() {
  local listing
  listing=$("$FLUXJAC" list) || die "$FLUXJAC list failed"
  [[ "$listing" != *'cuda*'* ]] || die "$FLUXJAC was built without CUDA: the GPU variants cannot run"
}

# Sets FLUXJAC to the binary to run. WHEN is "always" (build incrementally every call) or "missing" (only when the
# binary is not there yet). Unless SKIP_BUILD=1 or FLUXJAC was given, configures and builds PRESET (the further
# arguments as fluxjac_configure_build takes them: [BUILD_DIR] [-D...] [--target NAME]) with its output in LOG (the
# tail printed on failure, exit 1; the configure lines "fluxjac: ..." otherwise).
gpu_build() {
  local when=$1 preset=$2 log_file=$3
  shift 3
  local build_dir
  build_dir=$(fluxjac_build_dir "$preset")
  if [[ $# -gt 0 && "$1" != -* ]]; then
    build_dir=$1
  fi
  if [[ -n "$FLUXJAC_GIVEN" || "${SKIP_BUILD:-0}" == 1 ]]; then
    FLUXJAC=${FLUXJAC:-$build_dir/fluxjac}
    log "build: none (SKIP_BUILD=1 or FLUXJAC given): $FLUXJAC"
  else
    FLUXJAC=$build_dir/fluxjac
    if [[ "$when" == always || ! -x "$FLUXJAC" ]]; then
      log "configure and build: preset $preset${*:+ $*}, CUDA for sm_${CMAKE_CUDA_ARCHITECTURES:-90} where it has CUDA"
      fluxjac_configure_build "$preset" "$@" >"$log_file" 2>&1 || { tail -50 "$log_file"; exit 1; }
      grep "fluxjac:" "$log_file" || true
    fi
  fi
  [[ -x "$FLUXJAC" ]] || die "no fluxjac program at $FLUXJAC"
}

# check [MESH.h5]: everything one GPU machine should check (see the header).
cmd_check() {
  [[ $# -le 1 ]] || die "usage: scripts/gpu.sh check [MESH.h5]"
  require_gpu
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
  read -ra extra_run_args <<<"${EXTRA_RUN_ARGS:-}"
  WORK=$(mktemp -d)
  # Packed on any exit, so that a run stopped at the device's time limit still returns what it measured.
  trap check_pack EXIT
  fluxjac_device_libraries
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true
  gpu_build always cuda "$OUT/build.log" "-DFLUXJAC_PEER_PYTHON=$PEER_PYTHON"
  require_cuda_build
  "$FLUXJAC" device | tee "$OUT/device.txt"
  "$FLUXJAC" list | tee "$OUT/list.txt"

  if [[ "${TESTS:-1}" == 1 ]]; then
    log "test suite (GPU tests included)"
    run_ctest "$OUT/ctest.log" -j"$(nproc)"
  fi

  if [[ "$SANITIZE" == 1 ]] && command -v compute-sanitizer >/dev/null; then
    log "compute-sanitizer memcheck and racecheck, every GPU variant, small mesh, orientations: ${ORIENTATIONS:-A}"
    small=$(fluxjac_standard_mesh mixed 6 random "$MESH_DIR")
    for tool in memcheck racecheck; do
      for orientation in ${ORIENTATIONS:-A}; do
        orientation_args "$orientation"
        if compute-sanitizer --tool "$tool" --error-exitcode 9 "$FLUXJAC" run --mesh "$small" \
             --variant "$VARIANTS_ALL" "${flag[@]}" --warmup 0 --reps 1 -q >"$OUT/sanitizer-$tool$suffix.log" 2>&1; then
          echo "$tool, $orientation: clean"
        else
          echo "$tool, $orientation: FOUND ERRORS (rc $?)"
          grep -m5 -E "=========" "$OUT/sanitizer-$tool$suffix.log" || true
        fi
      done
    done
  fi

  if [[ $# -ge 1 ]]; then
    meshes=("$(from_caller "$1")")
  else
    log "paper-size meshes: mixed N=$N, rcm and random orderings"
    rcm=$(fluxjac_standard_mesh mixed "$N" rcm "$MESH_DIR")
    random=$(fluxjac_standard_mesh mixed "$N" random "$MESH_DIR")
    meshes=("$rcm" "$random")
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
        "$FLUXJAC" run --mesh "$mesh" --variant "$VARIANTS_ALL" --mode "$mode" "${flag[@]}" --warmup 3 \
          --reps "$REPS" --force --csv "$OUT/$name$suffix-$mode.csv" --json "$OUT/$name$suffix-$mode.json" \
          "${extra_run_args[@]}" >"$WORK/table.txt" || status=1
        cat "$WORK/table.txt"
        { echo "== $name, $orientation, $mode"; grep -vE "^(tolerances|$)" "$WORK/table.txt" || true; } >>"$summary"
      done
    done
  done
  if [[ -n "$SWEEP_EPB" ]]; then
    log "edges per block sweep (mode full, ${meshes[0]##*/}, orientations: ${ORIENTATIONS:-A})"
    for orientation in ${ORIENTATIONS:-A}; do
      orientation_args "$orientation"
      for epb in $SWEEP_EPB; do
        "$FLUXJAC" run --mesh "${meshes[0]}" --variant "$VARIANTS_ALL" --edges-per-block "$epb" "${flag[@]}" \
          --warmup 3 --reps "$REPS" --no-validate -q --force --json "$OUT/sweep-epb-$epb$suffix.json" 2>&1 |
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
      --force -o "$WORK/jacobian-hd.h5" >"$OUT/peer-hd-output.log" 2>&1 || { cat "$OUT/peer-hd-output.log"; status=1; }
    echo "== $name, peers (median of $PEER_REPS; x hd: against hd's full-mode median above)" >>"$summary"
    for peer in $PEERS; do
      peer_status=0
      "$PEER_PYTHON" "scripts/peers/roe_$peer.py" --mesh "${meshes[0]}" --check "$WORK/jacobian-hd.h5" \
        --device gpu --warmup 3 --reps "$PEER_REPS" --baseline "$OUT/$name-full.json" \
        --json "$OUT/peer-$peer.json" >"$OUT/peer-$peer.log" 2>&1 || peer_status=$?
      cat "$OUT/peer-$peer.log"
      case $peer_status in
        0) grep "^peer " "$OUT/peer-$peer.log" >>"$summary" || true ;;
        77) echo "peer $peer  SKIPPED: $(grep -m1 SKIPPED "$OUT/peer-$peer.log")" >>"$summary" ;;
        *) status=1
           { grep "^peer " "$OUT/peer-$peer.log" || echo "peer $peer  FAILED (exit code $peer_status)"; } \
             >>"$summary" ;;
      esac
    done
  fi

  log "summary (device: $(head -1 "$OUT/device.txt" | sed 's/device *//'))"
  cat "$summary"
  exit $status
}

# Packs check's results into FINAL_OUT (on any exit) and removes its temporary folders.
check_pack() {
  cp "$OUT"/device.txt "$OUT"/list.txt "$OUT"/summary.txt "$FINAL_OUT/" 2>/dev/null || true
  tar -C "$OUT" -czf "$FINAL_OUT/gpu-check-results.tar.gz" . || true
  rm -rf "$WORK" "$OUT"
}

# Sets flag (the run flags) and suffix (the file-name suffix) of an orientation: A (none), or the adjoint A^T
# (--transpose, files *-T-*).
orientation_args() {
  if [[ $1 == A ]]; then flag=(); suffix=""; else flag=(--transpose); suffix="-T"; fi
}

# Runs the test suite of FLUXJAC's build folder with ctest (further arguments: ctest's), its output in LOG; prints
# the last lines, or the failures.
run_ctest() {
  local log_file=$1 spec
  shift
  # The GPU tests' resource (tests/CMakeLists.txt): GPU_TEST_SLOTS (4) of them per GPU at once.
  spec=$(mktemp)
  printf '{"version": {"major": 1, "minor": 0}, "local": [{"gpus": [{"id": "0", "slots": %d}]}]}\n' \
    "$(( ${GPU_TEST_SLOTS:-4} * $(gpu_count) ))" >"$spec"
  if ctest --test-dir "$(dirname "$FLUXJAC")" --resource-spec-file "$spec" "$@" --output-on-failure >"$log_file" 2>&1; then
    tail -3 "$log_file"
  else
    grep -E "Failed|FAILED|Error" "$log_file" | head -40 || true
    tail -5 "$log_file"
  fi
}

# Prints the rank counts 1,2,4,... up to RANKS, RANKS included.
rank_counts() {
  local counts=1 p
  for ((p = 2; p <= RANKS; p *= 2)); do counts="$counts,$p"; done
  [[ ",$counts," == *",$RANKS,"* ]] || counts="$counts,$RANKS"
  printf '%s\n' "$counts"
}

# mpi: the many-GPU checks of a GPU node (see the header).
cmd_mpi() {
  [[ $# -eq 0 ]] || die "usage: scripts/gpu.sh mpi (no arguments; settings in the environment)"
  require_gpu
  OUT=${OUT:-gpu-results}
  mkdir -p "$OUT"
  GPUS=$(gpu_count)
  RANKS=${RANKS:-$(( GPUS > 2 ? GPUS : 2 ))}
  N=${N:-100}
  SCALING=${SCALING:-1}
  REPS=${REPS:-20}
  EDGE=${EDGE:-1}
  variants=(hd dn_10 dn_5 dn_2 dn5_2 edn_5 edn5_2)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  mpirun=(mpirun -np "$RANKS" --oversubscribe --bind-to none)
  fluxjac_device_libraries

  log "build (CUDA sm_${CMAKE_CUDA_ARCHITECTURES:-90}, MPI, METIS, PT-Scotch, NCCL); $GPUS GPUs, $RANKS ranks"
  nvidia-smi --query-gpu=name,memory.total --format=csv || true
  { nvidia-smi topo -m 2>/dev/null || true; } | head -8
  gpu_build always cuda-mpi "$OUT/build.log"
  require_cuda_build

  if [[ "${SKIP_TESTS:-0}" != 1 ]]; then
    log "test suite (MPI and many-rank GPU tests included)"
    run_ctest "$OUT/ctest.log" -j"$(nproc)"
  fi

  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  summary="$OUT/summary.txt"
  : >"$summary"
  status=0
  log "paper mesh mixed:$N:rcm on $RANKS ranks: every variant validated, each file against one GPU"
  paper=$(fluxjac_standard_mesh mixed "$N" rcm "$MESH_DIR")
  "$FLUXJAC" run --mesh "$paper" --variant all --assembly node --warmup 3 --reps "$REPS" --no-validate -q \
    --force --json "$OUT/one-gpu-node.json" >"$WORK/table.txt" || status=1
  { echo "== one GPU, node assembly"; cat "$WORK/table.txt"; } | tee -a "$summary"
  "${mpirun[@]}" "$FLUXJAC" run --mesh "$paper" --variant all --assembly node --warmup 3 --reps "$REPS" \
    --force -o "$WORK/many.h5" --json "$OUT/many-ranks-node.json" --csv "$OUT/many-ranks-node.csv" >"$WORK/table.txt" \
    2>"$OUT/many-ranks.log" || status=1
  tee -a "$summary" <"$WORK/table.txt"
  for variant in "${variants[@]}"; do
    if "$FLUXJAC" run --mesh "$paper" --variant "$variant" --assembly node --reps 1 --warmup 0 \
         --reference "$WORK/many-$variant.h5" --adiag-tolerance 0 --aoff-tolerance 0 -q >"$WORK/one.txt" 2>&1; then
      echo "$variant: the $RANKS-rank file equals one GPU's bit for bit" | tee -a "$summary"
    else
      echo "$variant: the $RANKS-rank file DIFFERS from one GPU's" | tee -a "$summary"
      status=1
      cat "$WORK/one.txt"
    fi
  done
  if [[ "$EDGE" == 1 ]]; then
    "${mpirun[@]}" "$FLUXJAC" run --mesh "$paper" --variant all --assembly edge --warmup 3 --reps "$REPS" \
      --force --json "$OUT/many-ranks-edge.json" >"$WORK/table.txt" 2>>"$OUT/many-ranks.log" || status=1
    { echo "== edge assembly, $RANKS ranks"; cat "$WORK/table.txt"; } | tee -a "$summary"
  fi

  if [[ "$SCALING" == 1 ]]; then
    counts=$(rank_counts)
    for kind in weak strong; do
      log "$kind scaling over $counts ranks"
      meshes=()
      if [[ $kind == weak && -n "${WEAK_N:-}" ]]; then meshes=(--mesh "mixed:$WEAK_N:rcm"); fi
      if [[ $kind == strong && -n "${STRONG_N:-}" ]]; then meshes=(--mesh "mixed:$STRONG_N:rcm"); fi
      "${mpirun[@]}" "$FLUXJAC" bench --config "configs/$kind-scaling.toml" "${meshes[@]}" --ranks "$counts" \
        --cache "$WORK/cache" --force --json "$OUT/$kind-scaling.json" --csv "$OUT/$kind-scaling.csv" >"$WORK/table.txt" \
        2>"$OUT/$kind-scaling.log" || status=1
      { echo "== $kind scaling"; grep -vE "^(tolerances|$)" "$WORK/table.txt" || true; } | tee -a "$summary"
      rm -rf "$WORK/cache"
    done
  fi

  log "summary (results and logs in $OUT)"
  cat "$summary"
  exit $status
}

# ab BASE.tar.gz: the working tree against a base version on the same GPU (see the header).
cmd_ab() {
  [[ $# -eq 1 && -f "$(from_caller "$1")" ]] ||
    die "usage: scripts/gpu.sh ab BASE.tar.gz (git archive of the base version)"
  archive=$(from_caller "$1")
  require_gpu
  FINAL_OUT=${OUT:-ab-results}
  mkdir -p "$FINAL_OUT"
  OUT=$(mktemp -d)  # everything lands here first, then is packed into FINAL_OUT (one archive to bring back)
  N=${N:-100}
  ORDERS=${ORDERS:-rcm random}
  ORIENTATIONS=${ORIENTATIONS:-A}
  VARIANTS=${VARIANTS:-$VARIANTS_ALL}
  MODES=${MODES:-full compute-only scatter-only}
  REPS=${REPS:-20}
  read -ra extra_run_args <<<"${EXTRA_RUN_ARGS:-}"
  BASE=$(mktemp -d)
  WORK=$(mktemp -d)
  trap ab_pack EXIT
  tar -xzf "$archive" -C "$BASE"
  grep -q '"name": *"cuda"' "$BASE/CMakePresets.json" 2>/dev/null ||
    die "the base ($1) has no CMake preset cuda (CMakePresets.json): archive a version that has it"
  fluxjac_device_libraries

  echo "== build the working tree and the base side by side"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
  if [[ -n "$FLUXJAC_GIVEN" || "${SKIP_BUILD:-0}" == 1 ]]; then
    new=${FLUXJAC:-$(fluxjac_build_dir cuda)/fluxjac}
    echo "working tree: not built (SKIP_BUILD=1 or FLUXJAC given): $new"
    new_build=""
  else
    new=$(fluxjac_build_dir cuda)/fluxjac
    fluxjac_configure_build cuda >"$OUT/build-new.log" 2>&1 &
    new_build=$!
  fi
  fluxjac_configure_source "$BASE" cuda --target fluxjac >"$OUT/build-base.log" 2>&1 &
  base_build=$!
  if [[ -n "$new_build" ]]; then
    wait "$new_build" || { tail -40 "$OUT/build-new.log"; exit 1; }
  fi
  wait "$base_build" || { tail -40 "$OUT/build-base.log"; exit 1; }
  base_binary=$(fluxjac_build_dir cuda "$BASE")/fluxjac
  [[ -x "$new" ]] || die "no fluxjac program at $new"
  FLUXJAC=$new
  require_cuda_build
  if [[ -f "$OUT/build-new.log" ]]; then
    { grep -h "spill" "$OUT/build-new.log" || true; } | sort -u >"$OUT/spills-new.txt"
  fi
  "$new" list | tee "$OUT/list-new.txt"

  if [[ "${TESTS:-1}" == 1 ]]; then
    echo "== GPU tests of the working tree"
    run_ctest "$OUT/ctest-gpu.log" -L gpu -j4
  fi

  status=0
  for order in $ORDERS; do
    mesh=$(fluxjac_standard_mesh mixed "$N" "$order" "$MESH_DIR")
    for orientation in $ORIENTATIONS; do
      if [[ $orientation == A ]]; then flag=(); key=$order; else flag=(--transpose); key=$order-T; fi
      for side in base new; do
        binary=$new
        [[ $side == base ]] && binary=$base_binary
        for mode in $MODES; do
          validate=--no-validate
          [[ $side == new && $mode == full ]] && validate=--validate
          "$binary" run --mesh "$mesh" --variant "$VARIANTS" --mode "$mode" "${flag[@]}" --warmup 3 --reps "$REPS" \
            $validate -q --force --json "$OUT/$side-$key-$mode.json" "${extra_run_args[@]}" >"$WORK/table.txt" 2>&1 ||
            status=1
          if [[ $side == new && $mode == full ]]; then cat "$WORK/table.txt"; fi
        done
      done
    done
  done
  keys=()
  for order in $ORDERS; do
    for orientation in $ORIENTATIONS; do
      if [[ $orientation == A ]]; then keys+=("$order"); else keys+=("$order-T"); fi
    done
  done

  if [[ -n "${NCU:-}" ]] && command -v ncu >/dev/null; then
    echo "== Nsight Compute: $NCU (rcm mesh, one assembly each, mode full)"
    figures="Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Dynamic Shared|Block Limit|Waves|Grid Size"
    figures+="|Block Size|Memory Throughput|DRAM Throughput|Compute \(SM\)|Warp Cycles Per Issued|Stall"
    rcm=$(fluxjac_standard_mesh mixed "$N" rcm "$MESH_DIR")
    for side in base new; do
      binary=$new
      [[ $side == base ]] && binary=$base_binary
      for variant in ${NCU//,/ }; do
        for orientation in $ORIENTATIONS; do
          if [[ $orientation == A ]]; then flag=(); tag=$variant; else flag=(--transpose); tag=$variant-T; fi
          ncu --clock-control none --kernel-name "regex:assembly_kernel" --launch-skip 2 --launch-count 1 \
            --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
            --section MemoryWorkloadAnalysis "$binary" run --mesh "$rcm" --variant "$variant" \
            "${flag[@]}" --warmup 2 --reps 1 --no-validate -q >"$OUT/ncu-$side-$tag.txt" 2>&1 || true
          { grep -E "$figures" "$OUT/ncu-$side-$tag.txt" || true; } |
            awk -v prefix="$side $tag " 'NR <= 40 { print prefix $0 }'  # reads all: no SIGPIPE under pipefail
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
}

# Packs ab's results into FINAL_OUT (on any exit) and removes its temporary folders.
ab_pack() {
  tar -C "$OUT" -czf "$FINAL_OUT/ab-results.tar.gz" . || true
  cp -f "$OUT/compare.txt" "$FINAL_OUT/" 2>/dev/null || true
  rm -rf "$BASE" "$WORK" "$OUT"
}

# largest: the largest mixed box the GPUs of one node hold (see the header).
cmd_largest() {
  [[ $# -eq 0 ]] || die "usage: scripts/gpu.sh largest (no arguments; settings in the environment)"
  GPUS=$(gpu_count)
  RANKS=${RANKS:-$GPUS}
  ((RANKS >= 1)) || die "no GPU found: set RANKS (e.g. RANKS=2 VARIANTS=reference on the CPU)"
  OUT=${OUT:-gpu-results}
  mkdir -p "$OUT"
  N1=${N1:-360}
  STEPS=${STEPS:-weak strong}
  REPS=${REPS:-10}
  VARIANTS=${VARIANTS:-hd,dn5_2}
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  fluxjac_device_libraries
  gpu_build always cuda-mpi "$OUT/build.log" --target fluxjac

  counts=${COUNTS:-$(rank_counts)}
  if ((GPUS > 0)); then
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sort | uniq -c
    nvidia-smi --query-gpu=timestamp,index,memory.used --format=csv,noheader,nounits -lms 500 >"$OUT/gpu-memory.csv" &
    sampler=$!
    trap 'kill $sampler 2>/dev/null || true' EXIT
  fi
  if [[ "${SMOKE:-1}" == 1 ]]; then
    log "smoke: mixed:40:rcm on 1 and $RANKS ranks, validated"
    mpirun -np "$RANKS" --bind-to none "$FLUXJAC" bench --mesh mixed:40:rcm --variant "$VARIANTS" --assembly node \
      --ranks "1,$RANKS" --warmup 1 --reps 3 >"$OUT/smoke.txt" 2>&1 || { tail -30 "$OUT/smoke.txt"; exit 1; }
    tail -4 "$OUT/smoke.txt"
  fi
  summary="$OUT/summary.txt"
  : >"$summary"
  status=0
  for kind in $STEPS; do
    log "$kind scaling of mixed:$N1:rcm over $counts ranks ($VARIANTS, node assembly, median of $REPS)"
    start=$(date +%s)
    mpirun -np "$RANKS" --bind-to none "$FLUXJAC" bench --mesh "mixed:$N1:rcm" --variant "$VARIANTS" --assembly node \
      --ranks "$counts" --scaling "$kind" --warmup 2 --reps "$REPS" --no-validate --force --json "$OUT/$kind.json" \
      --csv "$OUT/$kind.csv" >"$OUT/$kind-table.txt" 2>"$OUT/$kind.log" || status=1
    { echo "== $kind scaling, mixed:$N1:rcm (per GPU unless none) ($(( $(date +%s) - start )) s)"
      cat "$OUT/$kind-table.txt"
      { grep -E "generate: |setup|peak" "$OUT/$kind.log" || true; } | head -40; } | tee -a "$summary"
  done
  if ((GPUS > 0)); then
    kill "$sampler" 2>/dev/null || true
    log "peak GPU memory (MiB) per GPU over the run"
    awk -F', ' '{ if ($3 > peak[$2]) peak[$2] = $3 } END { for (g in peak) printf "GPU %s: %d MiB\n", g, peak[g] }' \
      "$OUT/gpu-memory.csv" | sort | tee -a "$summary"
  fi
  exit $status
}

# profile [VARIANTS] [N]: Nsight Compute profiles of the assembly kernels (see the header).
cmd_profile() {
  [[ $# -le 2 ]] || die "usage: scripts/gpu.sh profile [VARIANTS] [N]"
  require_gpu
  require_ncu
  OUT=${OUT:-profile-results}
  mkdir -p "$OUT"
  profile_variants=${1:-hd,dn5_2,dn_10}
  N=${2:-100}
  read -ra extra_run_args <<<"${EXTRA_RUN_ARGS:-}"
  fluxjac_device_libraries  # the partitioners from .device/, as the build that 'check' made found them
  gpu_build always cuda "$OUT/build.log" --target fluxjac
  require_cuda_build
  mesh=$(fluxjac_standard_mesh mixed "$N" rcm "$MESH_DIR")
  figures="Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy"
  figures+="|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issue Slots Busy|L2 Cache Throughput|L1/TEX Hit"
  figures+="|L2 Hit|Executed Ipc A|dram__bytes|lts__t_sector"
  metrics=dram__bytes_read.sum,dram__bytes_write.sum
  metrics+=,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct
  for variant in ${profile_variants//,/ }; do
    for mode in ${MODES:-full}; do
      for orientation in ${ORIENTATIONS:-A}; do
        tag=A transpose=()
        if [[ $orientation != A ]]; then tag=T; transpose=(--transpose); fi
        file="$OUT/ncu-$variant-$mode-$tag.txt"
        ncu --clock-control none --kernel-name "regex:assembly_kernel" --launch-count 1 \
          --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
          --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SchedulerStats \
          --metrics "$metrics" "$FLUXJAC" run --mesh "$mesh" --variant "$variant" --mode "$mode" --warmup 0 --reps 1 \
          --no-validate -q "${transpose[@]}" "${extra_run_args[@]}" >"$file" 2>&1 || true
        echo "== $variant $mode $orientation"
        { grep -E "$figures" "$file" || true; } | sed 's/^ */  /'
      done
    done
  done
}

# fp64 [FLUXJAC] [N]: FP64 instructions per edge of every GPU variant, counted by Nsight Compute (see the header).
cmd_fp64() {
  [[ $# -le 2 ]] || die "usage: scripts/gpu.sh fp64 [FLUXJAC] [N]"
  if [[ -n "${1:-}" ]]; then
    FLUXJAC=$(from_caller "$1")
    FLUXJAC_GIVEN=1
  fi
  N=${2:-40}
  require_gpu
  require_ncu
  OUT=${OUT:-profile-results}
  mkdir -p "$OUT"
  fluxjac_device_libraries
  gpu_build missing cuda "$OUT/build.log" --target fluxjac
  require_cuda_build
  mesh=$(fluxjac_standard_mesh mixed "$N" rcm "$MESH_DIR")
  edges=$("$FLUXJAC" info "$mesh" | awk '$1 == "edges" && !found { print $2; found = 1 }')
  [[ "$edges" -gt 0 ]] 2>/dev/null || die "no edge count in '$FLUXJAC info $mesh'" 1
  metrics=smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum
  metrics+=,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum
  echo "variant,assembly,edges,dfma,dadd,dmul" >"$OUT/ncu-fp64.csv"
  printf '%-8s %-6s %10s %10s %10s %12s %12s\n' variant assembly "DFMA/edge" "DADD/edge" "DMUL/edge" "FP64 inst" \
    "flops/edge"
  for variant in ${VARIANTS_ALL//,/ }; do
    for assembly in ${ASSEMBLIES:-node edge}; do
      line=$({ ncu --clock-control none --kernel-name "regex:assembly_kernel" --launch-count 1 --metrics "$metrics" \
          --csv "$FLUXJAC" run --mesh "$mesh" --variant "$variant" --assembly "$assembly" --mode compute-only \
          --warmup 0 --reps 1 --no-validate -q 2>/dev/null || true; } |
        awk -F'","' '/dfma_pred_on/ {gsub(/[",]/, "", $NF); f=$NF} /dadd_pred_on/ {gsub(/[",]/, "", $NF); a=$NF}
                     /dmul_pred_on/ {gsub(/[",]/, "", $NF); m=$NF} END {print f, a, m}')
      read -r dfma dadd dmul <<<"$line"
      echo "$variant,$assembly,$edges,${dfma:-},${dadd:-},${dmul:-}" >>"$OUT/ncu-fp64.csv"
      awk -v v="$variant" -v s="$assembly" -v e="$edges" -v f="${dfma:-0}" -v a="${dadd:-0}" -v m="${dmul:-0}" 'BEGIN {
        printf "%-8s %-6s %10.1f %10.1f %10.1f %12.1f %12.1f\n", v, s, f/e, a/e, m/e, (f+a+m)/e, (2*f+a+m)/e }'
    done
  done
}

# node CONFIG.toml [fluxjac bench options]: one benchmark configuration end to end (see the header).
cmd_node() {
  if [[ $# -lt 1 || ! -f "$(from_caller "$1")" ]]; then
    echo "usage: bash scripts/gpu.sh node CONFIG.toml [fluxjac bench options]   (configs/paper.toml, ...)" >&2
    exit 3
  fi
  config=$(from_caller "$1")
  config="$(cd "$(dirname "$config")" && pwd)/$(basename "$config")"
  shift
  build="${BUILD:-build}"
  results="${RESULTS:-results}"
  name="$(basename "$config" .toml)"
  folder="$results/$(date +%Y-%m-%d_%H%M%S)-$name-$(hostname -s 2>/dev/null || hostname)"
  mkdir -p "$folder/plots"

  if [[ -n "$FLUXJAC_GIVEN" || "${SKIP_BUILD:-0}" == 1 ]]; then
    fluxjac=${FLUXJAC:-$build/fluxjac}
    fluxjac_step "build: none (SKIP_BUILD=1 or FLUXJAC given): $fluxjac"
  else
    build_status=0
    fluxjac_configure_build release "$build" 2>&1 | tee "$folder/build.log" || build_status=${PIPESTATUS[0]}
    if [[ $build_status -ne 0 ]]; then
      fluxjac_step "build: FAILED (exit $build_status; $folder/build.log)"
      exit 4
    fi
    fluxjac="$build/fluxjac"
  fi
  if [[ ! -x "$fluxjac" ]]; then
    fluxjac_step "build: no fluxjac program at $fluxjac"
    exit 4
  fi

  fluxjac_step "machine: $folder/machine.txt"
  {
    echo "== date";        date -u +%Y-%m-%dT%H:%M:%SZ
    echo "== host";        hostname
    echo "== git";         git rev-parse --verify -q HEAD || echo "not a git checkout"
                           { git status --short 2>/dev/null || true; } | head -20
    echo "== nvidia-smi";  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
                             --format=csv 2>&1 || true
    echo "== fluxjac device"; "$fluxjac" device
    echo "== fluxjac list";   "$fluxjac" list
  } >"$folder/machine.txt" 2>&1
  cp "$config" "$folder/"

  cache_args=()
  if [[ -n "${FLUXJAC_CACHE:-}" ]]; then cache_args=(--cache "$FLUXJAC_CACHE"); fi
  fluxjac_step "bench: $fluxjac bench --config $config ${cache_args[*]} $*"
  status=0
  "$fluxjac" bench --config "$config" "${cache_args[@]}" --force --csv "$folder/results.csv" --json "$folder/results.json" \
    "$@" 2>&1 | tee "$folder/bench.log" || status=${PIPESTATUS[0]}

  if [[ -f "$folder/results.json" ]]; then
    if /usr/bin/python3 -c 'import matplotlib, numpy' 2>/dev/null; then
      fluxjac_step "plots: $folder/plots"
      /usr/bin/python3 scripts/plot_bench.py "$folder/results.json" --out "$folder/plots" --force || true
    else
      fluxjac_step "plots: SKIPPED (/usr/bin/python3 lacks matplotlib/numpy; run scripts/plot_bench.py elsewhere)"
    fi
    if [[ -n "${BASELINE:-}" ]]; then
      fluxjac_step "compare: $BASELINE -> $folder/results.json"
      compare_status=0
      "$fluxjac" compare "$BASELINE" "$folder/results.json" --time-tolerance "${TIME_TOLERANCE:-0.1}" \
        >"$folder/compare.txt" 2>&1 || compare_status=$?
      tail -3 "$folder/compare.txt"
      if [[ $status -eq 0 ]]; then status=$compare_status; fi
    fi
  fi

  tar -C "$(dirname "$folder")" -czf "$folder.tar.gz" "$(basename "$folder")"
  fluxjac_step "results: $folder/ and $folder.tar.gz (exit $status)"
  exit "$status"
}

# scaling: generation and partition per rank at fixed edges per rank, on the host (see the header).
cmd_scaling() {
  [[ $# -eq 0 ]] || die "usage: scripts/gpu.sh scaling (no arguments; settings in the environment)"
  OUT=${OUT:-setup-results}
  mkdir -p "$OUT"
  read -ra ranks <<<"${RANKS:-1 2 4}"
  GEN_N1=${GEN_N1:-150}
  PART_N1=${PART_N1:-100}
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  fluxjac_device_libraries
  build_dir_arg=()
  if [[ -n "${BUILD:-}" ]]; then build_dir_arg=("$BUILD"); fi
  gpu_build missing mpi "$OUT/build.log" "${build_dir_arg[@]}" -DFLUXJAC_TESTS=OFF --target fluxjac
  largest=1
  for p in "${ranks[@]}"; do
    if ((p > largest)); then largest=$p; fi
  done
  counts=$(IFS=,; echo "${ranks[*]}")
  summary="$OUT/summary.txt"
  echo "host: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" >"$summary"

  # Generation: bench's weak scaling grows mixed:GEN_N1 with the ranks; every count's mesh is generated in parts (one
  # rank: one part). The CPU reference is timed once, unvalidated: the steps are what this measures.
  mpirun -np "$largest" --bind-to none "$FLUXJAC" bench --mesh "mixed:$GEN_N1:rcm" --variant reference \
    --ranks "$counts" --scaling weak --warmup 0 --reps 1 --no-validate --force --json "$OUT/generation.json" \
    >"$OUT/generation.log" 2>&1 || { tail -30 "$OUT/generation.log"; exit 1; }

  # Partition: a file of PART_N1 per rank (made by one process), partitioned by P ranks with PT-Scotch and written.
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  for p in "${ranks[@]}"; do
    ((p > 1)) || continue
    n=$(python3 -c "print(round($PART_N1 * $p ** (1 / 3)))")
    mesh=$(fluxjac_standard_mesh mixed "$n" rcm "$WORK")
    mpirun -np "$p" --bind-to none "$FLUXJAC" mesh partition "$mesh" --parts "$p" --force -o "$WORK/parts-$p.h5" \
      >"$OUT/partition-$p.log" 2>&1 || { tail -30 "$OUT/partition-$p.log"; exit 1; }
    rm -f "$mesh" "$WORK/parts-$p.h5"
  done

  python3 - "$OUT" "${ranks[@]}" >>"$summary" <<'EOF'
import json, re, sys
out, ranks = sys.argv[1], [int(p) for p in sys.argv[2:]]
gib = 2.0 ** 30
print("generation in parts (mixed:N:rcm, bench --scaling weak): seconds on the slowest rank; peak host memory per rank")
runs = json.load(open(f"{out}/generation.json"))["runs"]
for r in runs:
    steps = r["parallel"]["partition"]["steps"]
    total = sum(s["seconds"]["max"] for s in steps)
    cells = "  ".join(f"{s['step']} {s['seconds']['max']:.2f}" for s in steps)
    print(f"  {r['ranks']} rank(s)  {r['mesh']:16} {r['n_edges'] / r['ranks'] / 1e6:6.2f}M edges/rank  {total:7.2f} s  "
          f"({cells})  peak {steps[-1]['peak_bytes']['max'] / gib:.2f} GiB")
print("PT-Scotch partition of a file (mesh partition under mpirun): seconds on the slowest rank; peak per rank")
line = re.compile(r"^(read slices|graph|partition|redistribute|write): ([0-9.]+) s \(slowest rank\), "
                  r"peak memory per rank .* / ([0-9.]+ [KMG]iB) \(min")
for p in ranks:
    if p < 2:
        continue
    steps = [m.groups() for m in map(line.match, open(f"{out}/partition-{p}.log")) if m]
    total = sum(float(s) for _, s, _ in steps)
    edges = re.search(r"([0-9]+) edges in", open(f"{out}/partition-{p}.log").read())
    per_rank = int(edges.group(1)) / p / 1e6 if edges else float("nan")
    print(f"  {p} ranks  {per_rank:6.2f}M edges/rank  {total:7.2f} s  ("
          + "  ".join(f"{name} {s}" for name, s, _ in steps) + f")  peak {steps[-1][2] if steps else '-'}")
EOF
  cat "$summary"
}

# solve [MESH.h5]: the solve's figures on one GPU and on the node's GPUs (see the header).
cmd_solve() {
  [[ $# -le 1 ]] || die "usage: scripts/gpu.sh solve [MESH.h5]"
  require_gpu
  OUT=${OUT:-solve-results}
  mkdir -p "$OUT"
  local gpus ranks paper weak_n tolerance=${TOLERANCE:-1e-8}
  gpus=$(gpu_count)
  ranks=${RANKS:-$gpus}
  weak_n=${WEAK_N:-$(python3 -c "print(round(${N:-100} * $ranks ** (1 / 3)))")}
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  fluxjac_device_libraries
  gpu_build always cuda-mpi "$OUT/build.log"
  require_cuda_build
  if [[ $# -eq 1 ]]; then paper=$(from_caller "$1"); else paper=$(fluxjac_standard_mesh mixed "${N:-100}" rcm "$MESH_DIR"); fi
  local status=0 first=1 cfl preconditioner precision extra
  log "one GPU: hd, every CFL, preconditioner and Aoff precision on $paper"
  for cfl in ${CFLS:-10 100 1000}; do
    for preconditioner in ${PRECONDITIONERS:-pbjacobi mcgs}; do
      for precision in ${PRECISIONS:-f32 bf16}; do
        extra=()
        if [[ $first == 1 ]]; then extra=(--cusparse); first=0; fi
        "$FLUXJAC" solve --mesh "$paper" --variant hd --cfl "$cfl" --preconditioner "$preconditioner" \
          --aoff-precision "$precision" --tolerance "$tolerance" "${extra[@]}" -q --force \
          --json "$OUT/solve-1-cfl$cfl-$preconditioner-$precision.json" | tail -n +2 || status=1
      done
    done
  done
  if [[ "${SCALING:-1}" == 1 && $gpus -ge 2 ]]; then
    log "$ranks GPUs: block Jacobi at CFL 100 on the same mesh, and weak scaling (mixed:$weak_n:rcm in parts)"
    mpirun -np "$ranks" --bind-to none "$FLUXJAC" solve --mesh "$paper" --variant hd --cfl 100 \
      --tolerance "$tolerance" -q --force --json "$OUT/solve-$ranks-strong.json" | tail -n +2 || status=1
    mpirun -np "$ranks" --bind-to none "$FLUXJAC" solve --mesh "mixed:$weak_n:rcm" --variant hd --cfl 100 \
      --tolerance "$tolerance" -q --force --json "$OUT/solve-$ranks-weak.json" | tail -n +2 || status=1
  fi
  log "summary (JSON in $OUT)"
  python3 - "$OUT"/solve-*.json <<'PYTHON' | tee "$OUT/summary.txt"
import json, sys
print(f"{'file':<36} {'ranks':>5} {'nodes':>9} {'cfl':>5} {'pc':<9} {'aoff':<4} {'its':>5} {'ms/it':>7} "
      f"{'prod ms':>8} {'solve ms':>9} {'rel.res':>9}")
for path in sys.argv[1:]:
    d = json.load(open(path))
    print(f"{path.rsplit('/', 1)[-1]:<36} {d.get('ranks', 1):>5} {d['n_nodes']:>9} {d['cfl']:>5g} "
          f"{d['preconditioner']:<9} {d['aoff_precision']:<4} {d['iterations']:>5} {d['ms_per_iteration']:>7.3f} "
          f"{d['product_ms']:>8.4f} {d['solve_ms']:>9.2f} {d['relative_residual']:>9.2e}")
PYTHON
  exit $status
}

case "$SUBCOMMAND" in
  check | mpi | ab | largest | profile | fp64 | node | scaling | solve) "cmd_$SUBCOMMAND" "$@" ;;
  help | -h | --help) usage ;;
  *) usage >&2
     die "unknown subcommand '$SUBCOMMAND' (check, mpi, ab, largest, profile, fp64, node, scaling, solve, help)" ;;
esac
