#!/usr/bin/env bash
# fluxjac — set up, build into build/, and run the whole test suite with CTest on all cores. GPU tests skip
# themselves (with a message) where there is no GPU or no CUDA build; this script says so too. Works from any
# folder; CI runs it through .ci/run.
#
# While ctest runs, it prints its progress every tenth of the tests and each failure as it happens, with the failed
# test's output (ctest --output-on-failure); everything ctest printed goes to build/ctest.log. It ends with the
# summary (scripts/ctest_summary.py): the failed tests by name, the counts, and the skipped tests counted by label
# and reason, in this form (the counts are the suite's of the day) on a machine without a GPU:
#   N tests: P passed, 0 failed, S skipped (and 1 disabled: MeshGenBenchmark.PaperSizeMixedRcm)
#     skipped  gpu    G  no CUDA device
# The exit status is ctest's.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

cd "$FLUXJAC_ROOT"
fluxjac_install_packages
fluxjac_configure_build release build

if [[ "$(build/fluxjac list)" == *'cuda*'* ]]; then
  fluxjac_step "NOTE: this build has no CUDA variants: GPU tests are SKIPPED (CPU tests still cover their lane mapping)"
elif ! fluxjac_gpu_present; then
  fluxjac_step "NOTE: CUDA variants built but no GPU found: GPU tests are SKIPPED"
fi

# Shows ctest's progress lines only every tenth of the tests, failures (and the output ctest prints after them) as
# they come, anything unexpected, and nothing from ctest's own closing summary.
fluxjac_ctest_progress() {
  awk '
    /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
      showing = 0
      split($1, fraction, "/")
      if ($0 ~ /\*\*\*/ && $0 !~ /\*\*\*Skipped/ && $0 !~ /Disabled/) {
        failed++; showing = 1; print; fflush(); next
      }
      if (fraction[1] * 10 >= (step + 1) * fraction[2]) {
        while (fraction[1] * 10 >= (step + 1) * fraction[2]) step++
        printf "    %d/%d tests done, %d failed\n", fraction[1], fraction[2], failed; fflush()
      }
      next
    }
    /tests passed, / { finished = 1 }
    finished || /^ *Start +[0-9]+: / || /^Test project / || /^Internal ctest changing/ { next }
    showing || !/^ *$/ { print; fflush() }'
}

log=build/ctest.log
results=build/ctest-results.xml
fluxjac_step "test: ctest --test-dir build --output-on-failure -j$(nproc) (all of its output: $log)"
status=0
rm -f "$results"
ctest --test-dir build --output-on-failure -j"$(nproc)" --output-junit "$FLUXJAC_ROOT/$results" 2>&1 |
  tee "$log" | fluxjac_ctest_progress || status=${PIPESTATUS[0]}

fluxjac_step "summary (exit status $status; details: $log)"
if ! /usr/bin/python3 scripts/ctest_summary.py build "$results" --log "$log" 2>&1; then
  # Without Python or the results file, ctest's own lines: the counts and the failed tests.
  sed -n -e '/tests passed, /p' -e '/The following tests FAILED:/,/^$/p' "$log"
fi
exit "$status"
