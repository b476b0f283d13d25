#!/usr/bin/env bash
# fetch-metis.sh — METIS for a GPU node without a package manager or network: downloads Debian's libmetis5 and
# libmetis-dev here and unpacks them into a folder (default .device/metis, git-ignored) to copy to the node. Then:
#   cmake ... -DMETIS_ROOT=<folder>/usr      and at run time    LD_LIBRARY_PATH=<folder>/usr/lib/x86_64-linux-gnu
#   bash scripts/fetch-metis.sh [FOLDER]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
folder=${1:-.device/metis}
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
(cd "$download" && apt-get download libmetis5 libmetis-dev)
mkdir -p "$folder"
for package in "$download"/*.deb; do dpkg -x "$package" "$folder"; done
echo "METIS unpacked into $folder: METIS_ROOT=$folder/usr"
