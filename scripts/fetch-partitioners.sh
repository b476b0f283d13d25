#!/usr/bin/env bash
# fetch-partitioners.sh — METIS and PT-Scotch for a GPU node without a package manager or network: downloads
# Debian's packages here (METIS: libmetis5, libmetis-dev; PT-Scotch: libptscotch-7.0, libptscotch-dev,
# libscotch-7.0, libscotch-dev; the node's own Open MPI, zlib, bzip2 and xz libraries serve them) and unpacks them
# into FOLDER/metis and FOLDER/ptscotch (default FOLDER: .device, git-ignored) to copy to the node (the device call's
# `carry`). fluxjac_device_libraries (scripts/common.sh, called by every scripts/gpu.sh subcommand that builds) then
# points CMake and the loader at them; by hand:
#   cmake --preset cuda-mpi -DMETIS_ROOT=FOLDER/metis/usr -DPTSCOTCH_ROOT=FOLDER/ptscotch/usr
#   LD_LIBRARY_PATH=FOLDER/metis/usr/lib/x86_64-linux-gnu:FOLDER/ptscotch/usr/lib/x86_64-linux-gnu/scotch-int64
# (fluxjac uses PT-Scotch's 64-bit SCOTCH_Num build, include/scotch-int64 and lib/x86_64-linux-gnu/scotch-int64.)
#   bash scripts/fetch-partitioners.sh [FOLDER]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
folder=${1:-.device}
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
unpack() {  # unpack TARGET PACKAGE...
  local target=$1
  shift
  mkdir -p "$download/$target"
  (cd "$download/$target" && apt-get download "$@")
  mkdir -p "$folder/$target"
  for package in "$download/$target"/*.deb; do dpkg -x "$package" "$folder/$target"; done
}
unpack metis libmetis5 libmetis-dev
unpack ptscotch libptscotch-7.0 libptscotch-dev libscotch-7.0 libscotch-dev
echo "METIS unpacked into $folder/metis: METIS_ROOT=$folder/metis/usr"
echo "PT-Scotch unpacked into $folder/ptscotch: PTSCOTCH_ROOT=$folder/ptscotch/usr"
