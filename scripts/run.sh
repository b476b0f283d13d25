#!/usr/bin/env bash
# fluxjac — set up, build into build/, and run the default configuration (configs/default.toml: the CPU
# reference on the bundled mesh meshes/box-mixed-6-rcm.h5, validated, 5 repetitions). Works from any folder.
#
#   bash scripts/run.sh                                   # the default run
#   bash scripts/run.sh --variant all --csv runs.csv      # extra arguments go to 'fluxjac run'
#   FLUXJAC_CUDA=ON bash scripts/run.sh                   # the CUDA variants too, also where no GPU is found
#
# It builds the fluxjac program alone (no tests), for the CPU only where no GPU is found (nvidia-smi lists none), and
# says which; scripts/test.sh builds everything, the CUDA code too wherever nvcc is installed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

cd "$FLUXJAC_ROOT"
fluxjac_install_packages
if [[ -z "${FLUXJAC_CUDA:-}" ]] && ! fluxjac_has_gpu; then
  export FLUXJAC_CUDA=OFF
  fluxjac_step "build: no GPU found, so the CPU build (FLUXJAC_CUDA=ON bash scripts/run.sh builds the CUDA variants)"
fi
fluxjac_configure_build release build --target fluxjac
fluxjac_step "run: build/fluxjac run --config configs/default.toml $*"
build/fluxjac run --config configs/default.toml "$@"
