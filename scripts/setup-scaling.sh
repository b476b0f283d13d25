#!/usr/bin/env bash
# setup-scaling.sh — the host side of many ranks at a fixed number of edges per rank (weak scaling): generation in
# parts (a generator spec under mpirun, one part per rank) and the PT-Scotch partition of a file, each step's time on
# the slowest rank and every rank's peak host memory. No GPU needed; run it on a host with a core per rank. Its figures:
# docs/performance.md, "Generation and partition per rank".
#
#   bash scripts/setup-scaling.sh
#   env: RANKS ("1 2 4"), GEN_N1 (150: mixed:GEN_N1:rcm per rank for generation), PART_N1 (100: the same for
#        partition; one rank has nothing to partition, so it starts at 2), BUILD (build-cpu: configured and built here
#        with MPI and PT-Scotch unless it holds a fluxjac already; FLUXJAC names another binary)
# $OUT (default setup-results/) receives generation.json (bench's weak-scaling records with the steps), the logs and
# summary.txt, which is printed last.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-setup-results}
mkdir -p "$OUT"
RANKS=${RANKS:-1 2 4}
GEN_N1=${GEN_N1:-150}
PART_N1=${PART_N1:-100}
BUILD=${BUILD:-build-cpu}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
# shellcheck source=scripts/device-libraries.sh
source scripts/device-libraries.sh
FLUXJAC=${FLUXJAC:-$BUILD/fluxjac}
if [[ ! -x "$FLUXJAC" ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLUXJAC_MPI=ON -DFLUXJAC_PTSCOTCH=ON \
    -DFLUXJAC_TESTS=OFF >"$OUT/configure.log" 2>&1 || { cat "$OUT/configure.log"; exit 1; }
  cmake --build "$BUILD" -j"$(nproc)" --target fluxjac >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
fi
largest=1
for p in $RANKS; do ((p > largest)) && largest=$p; done
counts=$(echo $RANKS | tr ' ' ',')
summary="$OUT/summary.txt"
echo "host: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)" >"$summary"

# Generation: bench's weak scaling grows mixed:GEN_N1 with the ranks; every count's mesh is generated in parts (one
# rank: one part). The CPU reference is timed once, unvalidated: the steps are what this measures.
mpirun -np "$largest" --bind-to none "$FLUXJAC" bench --mesh "mixed:$GEN_N1:rcm" --variant reference --ranks "$counts" \
  --scaling weak --warmup 0 --reps 1 --no-validate --json "$OUT/generation.json" >"$OUT/generation.log" 2>&1 ||
  { tail -30 "$OUT/generation.log"; exit 1; }

# Partition: a file of PART_N1 per rank (made by one process), partitioned by P ranks with PT-Scotch and written.
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for p in $RANKS; do
  ((p > 1)) || continue
  n=$(python3 -c "print(round($PART_N1 * $p ** (1 / 3)))")
  "$FLUXJAC" mesh gen --kind mixed --n "$n" --order rcm -q -o "$WORK/mixed-$n.h5" >/dev/null
  mpirun -np "$p" --bind-to none "$FLUXJAC" mesh partition "$WORK/mixed-$n.h5" --parts "$p" -o "$WORK/parts-$p.h5" \
    >"$OUT/partition-$p.log" 2>&1 || { tail -30 "$OUT/partition-$p.log"; exit 1; }
  rm -f "$WORK/mixed-$n.h5" "$WORK/parts-$p.h5"
done

python3 - "$OUT" $RANKS >>"$summary" <<'EOF'
import json, re, sys
out, ranks = sys.argv[1], [int(p) for p in sys.argv[2:]]
gib = 2.0 ** 30
print("generation in parts (mixed:N:rcm, bench --scaling weak): seconds on the slowest rank; peak host memory per rank")
runs = json.load(open(f"{out}/generation.json"))["runs"]
for r in runs:
    steps = r["parallel"]["partition"]["steps"]
    total = sum(s["seconds"]["max"] for s in steps)
    cells = "  ".join(f"{s['step']} {s['seconds']['max']:.2f}" for s in steps)
    print(f"  {r['ranks']} rank(s)  {r['mesh']:16} {r['n_edges'] / r['ranks'] / 1e6:6.2f}M edges/rank  {total:7.2f} s  "
          f"({cells})  peak {steps[-1]['peak_bytes']['max'] / gib:.2f} GiB")
print("PT-Scotch partition of a file (mesh partition under mpirun): seconds on the slowest rank; peak per rank")
line = re.compile(r"^(read slices|graph|partition|redistribute|write): ([0-9.]+) s \(slowest rank\), "
                  r"peak memory per rank .* / ([0-9.]+ [KMG]iB) \(min")
for p in ranks:
    if p < 2:
        continue
    steps = [m.groups() for m in map(line.match, open(f"{out}/partition-{p}.log")) if m]
    total = sum(float(s) for _, s, _ in steps)
    edges = re.search(r"([0-9]+) edges in", open(f"{out}/partition-{p}.log").read())
    per_rank = int(edges.group(1)) / p / 1e6 if edges else float("nan")
    print(f"  {p} ranks  {per_rank:6.2f}M edges/rank  {total:7.2f} s  ("
          + "  ".join(f"{name} {s}" for name, s, _ in steps) + f")  peak {steps[-1][2] if steps else '-'}")
EOF
cat "$summary"
