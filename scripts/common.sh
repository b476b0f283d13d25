#!/usr/bin/env bash
# fluxjac — shared functions for the set-up, build, test and run scripts. Source it; do not run it.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
#   fluxjac_install_packages            # Debian packages the build and the Python scripts need
#   fluxjac_configure_build build       # cmake (Ninja, Release, CUDA AUTO) and build with all cores
#
# Environment: FLUXJAC_CUDA (AUTO, ON or OFF; default AUTO: CUDA where /usr/local/cuda/bin/nvcc exists),
# CMAKE_CUDA_ARCHITECTURES (default 90, set in CMakeLists.txt), FLUXJAC_SKIP_PACKAGES=1 (no apt-get at all).
set -euo pipefail

# The repository root: the parent of this scripts/ folder, wherever the caller was started from.
FLUXJAC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages (docs/design.md, "Build and machines"): the build (compiler, CMake, Ninja, HDF5, CLI11, fmt,
# nlohmann-json, GoogleTest), METIS (for `fluxjac mesh partition`), PT-Scotch (the parallel partition under mpirun),
# Open MPI (many ranks under mpirun), clang-format (the format check) and the Python scripts (h5py, NumPy,
# Matplotlib; SciPy for scripts/load_jacobian.py and its test; meshio and gmsh for the mesh import; PyTorch, whose
# functorch has the vmap and jacfwd of torch.func, so that tests/test_peer_torch.py runs the PyTorch peer of
# scripts/peers on the CPU: about 150 packages with its libraries, some 50 MB to download).
FLUXJAC_PACKAGES=(build-essential cmake ninja-build libhdf5-dev libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev
                  libmetis-dev libptscotch-dev libopenmpi-dev openmpi-bin clang-format pkg-config python3-h5py
                  python3-numpy python3-matplotlib python3-scipy python3-meshio gmsh python3-torch)

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

# Configures BUILD_DIR (relative to the repository root unless absolute) with Ninja in Release mode and builds
# it with all cores. CUDA is AUTO unless FLUXJAC_CUDA says otherwise; CMAKE_CUDA_ARCHITECTURES is passed on
# when set. Returns the failing step's status, also where the caller tests it (which turns set -e off inside).
fluxjac_configure_build() {
  local build_dir="${1:?usage: fluxjac_configure_build BUILD_DIR}"
  [[ "$build_dir" = /* ]] || build_dir="$FLUXJAC_ROOT/$build_dir"
  local options=(-S "$FLUXJAC_ROOT" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
                 "-DFLUXJAC_CUDA=${FLUXJAC_CUDA:-AUTO}")
  if [[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ]]; then
    options+=("-DCMAKE_CUDA_ARCHITECTURES=$CMAKE_CUDA_ARCHITECTURES")
  fi
  fluxjac_step "configure: cmake ${options[*]}"
  cmake "${options[@]}" || return
  fluxjac_step "build: $build_dir with $(nproc) jobs"
  cmake --build "$build_dir" --parallel "$(nproc)" || return
}

# True when an NVIDIA GPU is visible to this process. (Tests with [[ ]] rather than '| grep -q': under
# pipefail, grep quitting early can fail the writer with SIGPIPE.)
fluxjac_gpu_present() {
  command -v nvidia-smi >/dev/null 2>&1 && [[ "$(nvidia-smi -L 2>/dev/null)" == *GPU* ]]
}
