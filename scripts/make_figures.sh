#!/usr/bin/env bash
# make_figures.sh — the charts of docs/figures/, drawn from the curated result files of docs/results/ (how each
# was produced: docs/results/README.md). Every chart names its device, mesh and the fluxjac revision of its data.
#
#   bash scripts/make_figures.sh
#
# Needs Debian's python3-matplotlib and python3-numpy (/usr/bin/python3). The charts that the results hold no data
# for (the block-size sweep, the halo chart of runs outside a scaling sweep) are skipped with a note.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rm -f docs/figures/*.png
/usr/bin/python3 scripts/plot_bench.py docs/results/*.json docs/results/*-check/*-A.json docs/results/*-check/*-AT.json --out docs/figures
/usr/bin/python3 scripts/plot_solve.py docs/results/*-solve/*.json docs/results/*-aoff-precision/*.json --out docs/figures
