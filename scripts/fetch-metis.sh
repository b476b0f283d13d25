#!/usr/bin/env bash
# fetch-metis.sh — METIS for a machine without a package manager (the lent GPU nodes): downloads Debian's libmetis5
# and libmetis-dev here and unpacks them into a folder (default .device/metis, git-ignored) to carry there. Then:
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
