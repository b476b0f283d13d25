#!/usr/bin/env bash
# fluxjac — a real geometry: a swept, tapered half wing with NACA 0012 sections on a symmetry plane (y = 0) in a
# far-field box, meshed with tetrahedra by Debian's gmsh, imported with scripts/import_mesh.py and turned into a
# median-dual edge mesh by `fluxjac mesh dual`.
#
#   scripts/make_wing_mesh.sh -o wing.h5                   # --size 0.05: 130k edges, 7 s on 2 cores
#   scripts/make_wing_mesh.sh --size 0.008 -o wing-1M.h5   # 1.14M edges, 72 s (docs/formats.md has a table)
#
# Lengths are in root chords: x runs downstream along the chord, y along the span, z up. --size is the target
# edge length on the wing; cells grow linearly with the distance (by --growth per chord) to the far field, and the
# leading edge is refined by curvature. Halving --size gives about 2.3x the edges (the fine wing surface and the
# graded volume around it).
# Files: OUT (edge mesh), OUT without .h5 plus -elements.h5 (element mesh; with --keep, also .geo and .msh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON=/usr/bin/python3

size=0.05 span=3 taper=0.5 sweep=30 farfield=10 growth=0.15 curvature=12 sections=60 threads=""
order=rcm output="" fluxjac="${FLUXJAC:-}" keep=0 elements_only=0 geo_only=0 state_args=()

usage() {
  cat <<EOF
Usage: scripts/make_wing_mesh.sh -o OUT.h5 [options]

Meshes a swept, tapered half wing (NACA 0012 sections) in a far-field box with gmsh, then runs
scripts/import_mesh.py and 'fluxjac mesh dual'. Lengths in root chords.

  -o, --output NAME.h5   edge mesh to write; the element mesh goes beside it as NAME-elements.h5
  --size H               target cell size on the wing surface (default $size); 0.008 gives 1.14M edges
  --span B               semi-span (default $span)
  --taper T              tip chord / root chord (default $taper)
  --sweep DEG            leading-edge sweep angle in degrees (default $sweep)
  --farfield F           far-field distance from the wing in root chords (default $farfield)
  --growth G             size growth per unit distance from the wing (default $growth): size = H + G * distance
  --curvature N          cells per 2 pi of surface curvature radius (default $curvature; 0: off)
  --sections N           spline points per airfoil surface (default $sections)
  --threads N            gmsh threads (default: all cores)
  --order O              node ordering for 'fluxjac mesh dual': natural, rcm or random (default $order)
  --mach M, --alpha DEG, --beta DEG
                         freestream state for 'fluxjac mesh dual' (its defaults otherwise)
  --fluxjac PATH         fluxjac executable (default: \$FLUXJAC, build/fluxjac, then PATH)
  --geo-only             write OUT without .h5 plus .geo (open it in the gmsh GUI) and stop
  --elements-only        stop after import_mesh.py (e.g. to run 'fluxjac mesh dual' on another machine)
  --keep                 keep the generated .geo and .msh beside the output
  -h, --help             this help

Needs Debian's gmsh, python3-meshio, python3-h5py and python3-numpy.
EOF
}

die() {
  printf 'make_wing_mesh.sh: error: %s\n' "$*" >&2
  exit 3
}

step() {
  printf '[make_wing_mesh %5ds] %s\n' "$SECONDS" "$*" >&2
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    -o | --output) output="${2:?}"; shift 2 ;;
    --size) size="${2:?}"; shift 2 ;;
    --span) span="${2:?}"; shift 2 ;;
    --taper) taper="${2:?}"; shift 2 ;;
    --sweep) sweep="${2:?}"; shift 2 ;;
    --farfield) farfield="${2:?}"; shift 2 ;;
    --growth) growth="${2:?}"; shift 2 ;;
    --curvature) curvature="${2:?}"; shift 2 ;;
    --sections) sections="${2:?}"; shift 2 ;;
    --threads) threads="${2:?}"; shift 2 ;;
    --order) order="${2:?}"; shift 2 ;;
    --mach | --alpha | --beta) state_args+=("$1" "${2:?}"); shift 2 ;;
    --fluxjac) fluxjac="${2:?}"; shift 2 ;;
    --elements-only) elements_only=1; shift ;;
    --geo-only) geo_only=1; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done

[[ -n "$output" ]] || { usage >&2; die "give the output file with -o OUT.h5"; }
positive() { awk -v v="$2" 'BEGIN { exit !(v + 0 > 0) }' || die "$1 must be a positive number, not '$2'"; }
positive --size "$size"
positive --span "$span"
positive --taper "$taper"
positive --farfield "$farfield"
positive --growth "$growth"
positive --sections "$sections"
awk -v v="$sweep" 'BEGIN { exit !(v + 0 > -80 && v + 0 < 80) }' || die "--sweep must be between -80 and 80 degrees"
[[ "$order" =~ ^(natural|rcm|random)$ ]] || die "--order must be natural, rcm or random"
command -v gmsh >/dev/null || die "gmsh not found: apt-get install gmsh"
"$PYTHON" -c "import meshio, h5py" 2>/dev/null || die "$PYTHON cannot import meshio and h5py: apt-get install python3-meshio python3-h5py"
threads="${threads:-$(nproc)}"

if [[ $elements_only -eq 0 && $geo_only -eq 0 ]]; then
  if [[ -z "$fluxjac" ]]; then
    if [[ -x "$ROOT/build/fluxjac" ]]; then fluxjac="$ROOT/build/fluxjac"
    elif command -v fluxjac >/dev/null; then fluxjac="$(command -v fluxjac)"
    else die "fluxjac not found: build it (scripts/test.sh or cmake) or pass --fluxjac PATH"; fi
  fi
  [[ -x "$fluxjac" ]] || die "--fluxjac $fluxjac is not an executable"
fi

stem="${output%.h5}"
elements="$stem-elements.h5"
work="$(mktemp -d "${TMPDIR:-/tmp}/fluxjac-wing.XXXXXX")"
trap 'rm -rf "$work"' EXIT
geo="$work/wing.geo"
msh="$work/wing.msh"

# ---- geometry and mesh controls (gmsh .geo, OpenCASCADE kernel) -----------------------------------------------
cat >"$geo" <<EOF
// Swept, tapered half wing with NACA 0012 sections in a far-field box; written by scripts/make_wing_mesh.sh.
SetFactory("OpenCASCADE");
size = $size; span = $span; taper = $taper; sweep = $sweep; farfield = $farfield; growth = $growth;
n = $sections;  // spline points per airfoil surface, cosine-spaced (clustered at both edges)
thickness = 0.12;
chord[] = {1, taper};
x_le[] = {0, span * Tan(sweep * Pi / 180)};
y_le[] = {0, span};

// ---- sections: upper surface from the trailing edge to the leading edge, lower back to the trailing edge ----
// NACA 4-digit thickness with the closed-trailing-edge coefficient (-0.1036), so the trailing edge is sharp.
For s In {0:1}
  le = newp; Point(le) = {x_le[s], y_le[s], 0};
  te = newp; Point(te) = {x_le[s] + chord[s], y_le[s], 0};
  upper[] = {te};
  lower[] = {le};
  For i In {1:n-1}
    xu = (1 + Cos(Pi * i / n)) / 2;  // from the trailing edge to the leading edge
    tu = 5 * thickness * (0.2969 * Sqrt(xu) - 0.1260 * xu - 0.3516 * xu^2 + 0.2843 * xu^3 - 0.1036 * xu^4);
    p = newp; Point(p) = {x_le[s] + chord[s] * xu, y_le[s], chord[s] * tu}; upper[] += p;
    xl = (1 - Cos(Pi * i / n)) / 2;  // from the leading edge to the trailing edge
    tl = 5 * thickness * (0.2969 * Sqrt(xl) - 0.1260 * xl - 0.3516 * xl^2 + 0.2843 * xl^3 - 0.1036 * xl^4);
    p = newp; Point(p) = {x_le[s] + chord[s] * xl, y_le[s], -chord[s] * tl}; lower[] += p;
  EndFor
  upper[] += le;
  lower[] += te;
  cu = newc; Spline(cu) = upper[];
  cl = newc; Spline(cl) = lower[];
  wire[s] = newll; Wire(wire[s]) = {cu, cl};
EndFor
Ruled ThruSections(1) = {wire[0], wire[1]};  // straight generators: linear taper and sweep

// ---- far field: the box around the wing, the wing cut out; y = 0 is the symmetry plane -------------------------
x_min = -farfield; x_max = x_le[1] + taper + farfield; z_max = farfield; y_max = span + farfield;
Box(2) = {x_min, 0, -z_max, x_max - x_min, y_max, 2 * z_max};
BooleanDifference(3) = { Volume{2}; Delete; }{ Volume{1}; Delete; };
// The wing's upper, lower and tip surfaces: the only ones inside a box just around the wing (OpenCASCADE boxes
// of spline surfaces are a little larger than the surfaces, hence the margin).
margin = 0.1;
wing[] = Surface In BoundingBox {-margin, -margin, -5 * thickness, x_le[1] + taper + margin, span + margin, 5 * thickness};
Printf("wing surfaces: %g", #wing[]);

// ---- sizes: the target size on the wing, growing linearly with the distance to the far-field size ------------
far_size = size + growth * farfield;
Field[1] = Distance;
Field[1].SurfacesList = {wing[]};
Field[2] = Threshold;
Field[2].InField = 1;
Field[2].SizeMin = size;
Field[2].SizeMax = far_size;
Field[2].DistMin = 0;
Field[2].DistMax = farfield;
Background Field = 2;
Mesh.MeshSizeMax = far_size;
Mesh.MeshSizeFromPoints = 0;
Mesh.MeshSizeExtendFromBoundary = 0;
Mesh.MeshSizeFromCurvature = $curvature;
Mesh.Algorithm = 6;     // Frontal-Delaunay surfaces
Mesh.Algorithm3D = 1;   // Delaunay (HXT of gmsh 4.8 spends minutes optimizing graded meshes)
General.NumThreads = $threads;
Mesh.Binary = 1;
EOF

if [[ $geo_only -eq 1 ]]; then
  cp "$geo" "$stem.geo"
  step "done: $stem.geo"
  exit 0
fi

step "gmsh: wing (size $size, span $span, taper $taper, sweep $sweep deg, far field $farfield), $threads threads"
# gmsh's stage lines (and its Delaunay refinement progress, which is what takes minutes on fine meshes) stay
# visible; the full log is kept for the error case.
set +e
gmsh "$geo" -3 -format msh41 -o "$msh" 2>&1 | tee "$work/gmsh.log" |
  grep --line-buffered -E "^Info *: (Meshing [123]D|Done meshing [123]D|It\. [0-9]+ |Optimizing mesh|Done optimizing|[0-9]+ nodes [0-9]+ elements|Writing)" |
  sed -u 's/^Info *: /  gmsh: /' >&2
gmsh_status=${PIPESTATUS[0]}
set -e
if [[ $gmsh_status -ne 0 ]]; then
  tail -20 "$work/gmsh.log" >&2
  die "gmsh failed with status $gmsh_status (log above)"
fi
grep -q "wing surfaces: 3$" "$work/gmsh.log" || die "gmsh did not find the 3 wing surfaces (look at the geometry: --geo-only)"
step "gmsh: done ($(du -h "$msh" | cut -f1))"
if [[ $keep -eq 1 ]]; then cp "$geo" "$stem.geo"; cp "$msh" "$stem.msh"; fi

step "import_mesh.py -> $elements"
"$PYTHON" "$ROOT/scripts/import_mesh.py" "$msh" -o "$elements"
if [[ $elements_only -eq 1 ]]; then
  step "done: $elements ($(du -h "$elements" | cut -f1)); next: fluxjac mesh dual $elements --order $order -o $output"
  exit 0
fi

step "fluxjac mesh dual -> $output"
"$fluxjac" mesh dual "$elements" --order "$order" "${state_args[@]}" -o "$output"
step "done: $output ($(du -h "$output" | cut -f1)), $elements ($(du -h "$elements" | cut -f1))"
