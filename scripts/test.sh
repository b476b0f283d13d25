#!/usr/bin/env bash
# fluxjac — set up, build into build/, and run the whole test suite with CTest on all cores. GPU tests skip
# themselves (with a message) where there is no GPU or no CUDA build; this script says so too. Works from any
# folder; CI runs it through .ci/run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

cd "$FLUXJAC_ROOT"
fluxjac_install_packages
fluxjac_configure_build build

if [[ "$(build/fluxjac list)" == *'cuda*'* ]]; then
  fluxjac_step "NOTE: this build has no CUDA variants: GPU tests are SKIPPED (CPU tests still cover their lane mapping)"
elif ! fluxjac_gpu_present; then
  fluxjac_step "NOTE: CUDA variants built but no GPU found: GPU tests are SKIPPED"
fi

fluxjac_step "test: ctest --test-dir build --output-on-failure -j$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
