# device-libraries.sh — sourced by gpu-check.sh and gpu-mpi.sh: where the partitioners unpacked by
# scripts/fetch-partitioners.sh lie in the checkout (.device/metis/usr, .device/ptscotch/usr), exports METIS_ROOT and
# PTSCOTCH_ROOT for CMake (unless already set) and puts their library folders first in LD_LIBRARY_PATH. PT-Scotch's
# 64-bit build (lib/x86_64-linux-gnu/scotch-int64) must come before any other libptscotch: its libraries have the
# sonames of the 32-bit build. Source it from the repository root.
if [[ -z "${METIS_ROOT:-}" && -d .device/metis/usr ]]; then METIS_ROOT=$PWD/.device/metis/usr; fi
if [[ -n "${METIS_ROOT:-}" ]]; then
  export METIS_ROOT
  export LD_LIBRARY_PATH="$METIS_ROOT/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [[ -z "${PTSCOTCH_ROOT:-}" && -d .device/ptscotch/usr ]]; then PTSCOTCH_ROOT=$PWD/.device/ptscotch/usr; fi
if [[ -n "${PTSCOTCH_ROOT:-}" ]]; then
  export PTSCOTCH_ROOT
  export LD_LIBRARY_PATH="$PTSCOTCH_ROOT/lib/x86_64-linux-gnu/scotch-int64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
