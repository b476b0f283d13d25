#!/usr/bin/env bash
# fluxjac — shared functions for the set-up, build, test, run and GPU scripts. Source it; do not run it. It is the one
# place that configures a build: through the CMake presets of CMakePresets.json (release, cpu, cuda, cuda-mpi, mpi,
# debug; binary folder build/<preset>).
#
#   source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
#   fluxjac_install_packages                  # Debian packages the build and the Python scripts need
#   fluxjac_configure_build release build     # cmake --preset release into build/, then build it with all cores
#   fluxjac_configure_build cuda-mpi --target fluxjac    # build/cuda-mpi, only the fluxjac program
#   fluxjac_configure_source "$BASE" cuda     # another checkout's preset (its own CMakePresets.json)
#   fluxjac_device_libraries                  # METIS and PT-Scotch unpacked into .device/, for CMake and the loader
#   FLUXJAC=build/cuda/fluxjac fluxjac_standard_mesh mixed 100 rcm build/meshes   # prints build/meshes/mixed-100-rcm.h5
#
# Environment: FLUXJAC_CUDA (AUTO, ON or OFF: overrides the preset's; unset, the preset decides: release AUTO, CUDA
# where /usr/local/cuda/bin/nvcc exists), CMAKE_CUDA_ARCHITECTURES (overrides the preset's; default 90, set in the
# presets and CMakeLists.txt), FLUXJAC_SKIP_PACKAGES=1 (no apt-get at all), METIS_ROOT and PTSCOTCH_ROOT
# (partitioners outside the system; fluxjac_device_libraries sets them from .device/).
set -euo pipefail

# The repository root: the parent of this scripts/ folder, wherever the caller was started from.
FLUXJAC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages (docs/design.md, "Build and machines"): the build (compiler, CMake, Ninja, HDF5, CLI11, fmt,
# nlohmann-json, GoogleTest), METIS (for `fluxjac mesh partition`), PT-Scotch (the parallel partition under mpirun),
# Open MPI (many ranks under mpirun), clang-format (the format check) and the Python scripts (h5py, NumPy,
# Matplotlib; SciPy for scripts/load_jacobian.py and its test; meshio and gmsh for the mesh import; PyTorch, whose
# functorch has the vmap and jacfwd of torch.func, so that tests/test_peer_torch.py runs the PyTorch peer of
# scripts/peers on the CPU: about 150 packages with its libraries, some 50 MB to download; petsc4py, whose PETSc
# solves the systems `fluxjac solve` writes in tests/test_solve_petsc.py: about 50 packages).
FLUXJAC_PACKAGES=(build-essential cmake ninja-build libhdf5-dev libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev
                  libmetis-dev libptscotch-dev libopenmpi-dev openmpi-bin clang-format pkg-config python3-h5py
                  python3-numpy python3-matplotlib python3-scipy python3-meshio gmsh python3-torch python3-petsc4py)

# Prints one visible step line on stderr.
fluxjac_step() {
  printf '==> %s\n' "$*" >&2
}

# Installs the packages of FLUXJAC_PACKAGES that dpkg does not report as installed. Runs apt-get as root, or
# through sudo where it exists. When it cannot (no sudo, no network, tools installed outside apt), it warns and
# goes on: the configure step then names whatever is really missing.
fluxjac_install_packages() {
  if [[ "${FLUXJAC_SKIP_PACKAGES:-0}" == 1 ]]; then
    fluxjac_step "packages: skipped (FLUXJAC_SKIP_PACKAGES=1)"
    return 0
  fi
  local missing=() package
  for package in "${FLUXJAC_PACKAGES[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" != "install ok installed" ]]; then
      missing+=("$package")
    fi
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    fluxjac_step "packages: all ${#FLUXJAC_PACKAGES[@]} present"
    return 0
  fi
  local as_root=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1; then
      fluxjac_step "packages: WARNING: missing ${missing[*]}, and not root without sudo: install them yourself"
      return 0
    fi
    as_root=(sudo)
  fi
  fluxjac_step "packages: installing ${missing[*]}"
  if ! { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
         "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
           "${missing[@]}"; }; then
    fluxjac_step "packages: WARNING: apt-get could not install ${missing[*]}; continuing"
  fi
}

# Whether this machine has an NVIDIA GPU that nvidia-smi lists.
fluxjac_has_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q "^GPU "
}

# Prints the binary folder of configure preset PRESET of the checkout SOURCE_DIR (default: this one): the presets'
# binaryDir, ${sourceDir}/build/${presetName}.
fluxjac_build_dir() {
  local preset="${1:?usage: fluxjac_build_dir PRESET [SOURCE_DIR]}" source="${2:-$FLUXJAC_ROOT}"
  printf '%s/build/%s\n' "$source" "$preset"
}

# Configures preset PRESET of the checkout SOURCE_DIR (its own CMakePresets.json) with `cmake --preset` and builds it
# with all cores. BUILD_DIR (a path, relative to SOURCE_DIR unless absolute; it must not start with '-') puts the
# build there instead of the preset's build/PRESET. Arguments after it go to the configure step (-DNAME=VALUE ...),
# except `--target NAME`, which the build step gets (only that target is built). FLUXJAC_CUDA and
# CMAKE_CUDA_ARCHITECTURES, when set, override the preset's. Returns the failing step's status, also where the caller
# tests it (which turns set -e off inside).
fluxjac_configure_source() {
  local usage="usage: fluxjac_configure_source SOURCE_DIR PRESET [BUILD_DIR] [-DNAME=VALUE ...] [--target NAME]"
  local source="${1:?$usage}" preset="${2:?$usage}"
  shift 2
  source="$(cd "$source" && pwd)" || return
  local build_dir=""
  if [[ $# -gt 0 && "$1" != -* ]]; then
    build_dir="$1"
    shift
    [[ "$build_dir" = /* ]] || build_dir="$source/$build_dir"
  fi
  local configure_args=(--preset "$preset") build_args=() build_targets=()
  [[ -n "$build_dir" ]] && configure_args+=(-B "$build_dir")
  while [[ $# -gt 0 ]]; do
    if [[ "$1" == --target ]]; then
      build_targets+=(--target "${2:?--target needs a name}")
      shift 2
    else
      configure_args+=("$1")
      shift
    fi
  done
  [[ -n "${FLUXJAC_CUDA:-}" ]] && configure_args+=("-DFLUXJAC_CUDA=$FLUXJAC_CUDA")
  [[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ]] && configure_args+=("-DCMAKE_CUDA_ARCHITECTURES=$CMAKE_CUDA_ARCHITECTURES")
  if [[ -n "$build_dir" ]]; then
    build_args=("$build_dir")  # a build preset would build the preset's own folder
  else
    build_args=(--preset "$preset")
    build_dir="$(fluxjac_build_dir "$preset" "$source")"
  fi
  fluxjac_step "configure: (cd $source && cmake ${configure_args[*]})"
  (cd "$source" && cmake "${configure_args[@]}") || return
  fluxjac_step "build: $build_dir with $(nproc) jobs${build_targets[*]:+, ${build_targets[*]}}"
  (cd "$source" && cmake --build "${build_args[@]}" --parallel "$(nproc)" "${build_targets[@]}") || return
}

# Configures and builds preset PRESET of this checkout (see fluxjac_configure_source): into build/PRESET, or into
# BUILD_DIR (relative to the repository root) when given, e.g. `fluxjac_configure_build release build`, the build of
# scripts/test.sh and scripts/run.sh.
# Writes .source-revision ("COMMIT TREE", git-ignored) for a copy of this checkout that goes to another machine with
# a stale .git: its build then records COMMIT where its files hash to TREE (cmake/revision.cmake). Only for a clean
# tree: with changes not committed there is no commit to name, and the file is removed.
fluxjac_stamp_revision() {
  rm -f "$FLUXJAC_ROOT/.source-revision"
  if [[ -z "$(git -C "$FLUXJAC_ROOT" status --porcelain --untracked-files=normal 2>/dev/null)" ]]; then
    git -C "$FLUXJAC_ROOT" log -1 --format='%h %T' >"$FLUXJAC_ROOT/.source-revision" 2>/dev/null ||
      rm -f "$FLUXJAC_ROOT/.source-revision"
  fi
}

fluxjac_configure_build() {
  fluxjac_configure_source "$FLUXJAC_ROOT" "${1:?usage: fluxjac_configure_build PRESET [BUILD_DIR] [options...]}" \
    "${@:2}"
}

# Points CMake and the loader at the partitioners that scripts/fetch-partitioners.sh unpacked into the checkout
# (.device/metis/usr, .device/ptscotch/usr): exports METIS_ROOT and PTSCOTCH_ROOT (unless already set) and puts their
# library folders first in LD_LIBRARY_PATH. PT-Scotch's 64-bit build (lib/x86_64-linux-gnu/scotch-int64) must come
# before any other libptscotch: its libraries have the sonames of the 32-bit build. Does nothing where neither is.
fluxjac_device_libraries() {
  if [[ -z "${METIS_ROOT:-}" && -d "$FLUXJAC_ROOT/.device/metis/usr" ]]; then
    METIS_ROOT="$FLUXJAC_ROOT/.device/metis/usr"
  fi
  if [[ -n "${METIS_ROOT:-}" ]]; then
    export METIS_ROOT
    export LD_LIBRARY_PATH="$METIS_ROOT/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  if [[ -z "${PTSCOTCH_ROOT:-}" && -d "$FLUXJAC_ROOT/.device/ptscotch/usr" ]]; then
    PTSCOTCH_ROOT="$FLUXJAC_ROOT/.device/ptscotch/usr"
  fi
  if [[ -n "${PTSCOTCH_ROOT:-}" ]]; then
    export PTSCOTCH_ROOT
    export LD_LIBRARY_PATH="$PTSCOTCH_ROOT/lib/x86_64-linux-gnu/scotch-int64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
}

# Makes the box mesh KIND (tet, prism, mixed) of N hexahedra per direction in node order ORDER (natural, random, rcm)
# as DIR/KIND-N-ORDER.h5 with "$FLUXJAC" mesh gen, and prints that path. A file already there is kept, unless it is
# older than $FLUXJAC (a rebuilt generator may make another mesh); mesh gen writes atomically, so a stopped run
# leaves no half file. N=100 mixed is the paper size (1.03M nodes, 5.58M edges).
fluxjac_standard_mesh() {
  local usage="usage: fluxjac_standard_mesh KIND N ORDER DIR (with FLUXJAC set)"
  local kind="${1:?$usage}" n="${2:?$usage}" order="${3:?$usage}" dir="${4:?$usage}"
  local fluxjac="${FLUXJAC:?fluxjac_standard_mesh: FLUXJAC names no fluxjac binary}"
  local file="$dir/$kind-$n-$order.h5"
  if [[ ! -s "$file" || "$fluxjac" -nt "$file" ]]; then
    mkdir -p "$dir"
    fluxjac_step "mesh: $kind N=$n $order -> $file"
    "$fluxjac" mesh gen --kind "$kind" --n "$n" --order "$order" -q --force -o "$file" >&2 || return
  fi
  printf '%s\n' "$file"
}

# True when an NVIDIA GPU is visible to this process. (Tests with [[ ]] rather than '| grep -q': under
# pipefail, grep quitting early can fail the writer with SIGPIPE.)
fluxjac_gpu_present() {
  command -v nvidia-smi >/dev/null 2>&1 && [[ "$(nvidia-smi -L 2>/dev/null)" == *GPU* ]]
}
