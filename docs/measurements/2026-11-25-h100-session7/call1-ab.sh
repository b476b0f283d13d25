#!/usr/bin/env bash
# session 7 call 1: HEAD against (constant divisor folded + batched node stores), rcm, 3 modes; SASS MUFU counts
set -uo pipefail
export ORDERS=rcm TESTS=1 NCU=${NCU:-}
bash scripts/gpu-ab.sh .device/base.tar.gz
echo "== SASS: MUFU.RCP64H / MUFU.RSQ64H / spills per node kernel (new build)"
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass build-gpu/fluxjac > "$OUT/sass.txt" 2>/dev/null || cuobjdump -sass build-gpu/libfluxjac*.a > "$OUT/sass.txt" 2>/dev/null
  awk '/Function :/{f=$3} /MUFU.RCP64H/{r[f]++} /MUFU.RSQ64H/{q[f]++} /STL/{s[f]++} END{for(k in r) if (k ~ /node_assembly/) print k, "rcp", r[k], "rsq", q[k]+0, "STL", s[k]+0}' "$OUT/sass.txt" | c++filt | sed 's/(fluxjac::DeviceEdges.*//' | cut -c1-200
  gzip -f "$OUT/sass.txt"
else echo "no cuobjdump"; ls /usr/local/cuda/bin; fi
