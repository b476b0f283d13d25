#!/usr/bin/env bash
# fluxjac — set up, build into build/, and run the default configuration (configs/default.toml: the CPU
# reference on the bundled mesh meshes/box-mixed-6-rcm.h5, validated, 5 repetitions). Works from any folder.
#
#   bash scripts/run.sh                                   # the default run
#   bash scripts/run.sh --variant all --csv runs.csv      # extra arguments go to 'fluxjac run'
#   FLUXJAC_CUDA=OFF bash scripts/run.sh                  # CPU-only build
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

cd "$FLUXJAC_ROOT"
fluxjac_install_packages
fluxjac_configure_build release build
fluxjac_step "run: build/fluxjac run --config configs/default.toml $*"
build/fluxjac run --config configs/default.toml "$@"
