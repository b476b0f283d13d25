#!/usr/bin/env bash
# session 7 call 3: batched stores (base) against batched stores + one-load tile descriptor (new), rcm and random
set -uo pipefail
export ORDERS="rcm random" TESTS=1
bash scripts/gpu-ab.sh .device/base.tar.gz
