#!/usr/bin/python3
"""Import a 3D mesh that meshio reads into a fluxjac element-mesh file (docs/formats.md).

    /usr/bin/python3 scripts/import_mesh.py wing.msh -o wing-elements.h5
    fluxjac mesh dual wing-elements.h5 --order rcm -o wing.h5

Reads whatever Debian's python3-meshio reads (Gmsh .msh, SU2 .su2, VTK .vtk/.vtu, Medit .mesh/.meshb,
XDMF, UGRID, Nastran, Netgen, Exodus, CGNS as meshio writes it, ...), keeps the 3D cells and writes
/elements/coords and /elements/{tetrahedra,pyramids,prisms,hexahedra} in CGNS vertex order:

* lower-dimensional cells (boundary triangles and quadrilaterals, lines, points) are dropped;
* second-order cells (tetra10, hexahedron27, ...) keep their corner vertices;
* hexahedra with repeated vertices (Tecplot FEBRICK) become the tetrahedra, pyramids or prisms they are;
* orientation: formats disagree on the vertex order of prisms (VTK lists the base the other way round
  from CGNS and Gmsh) and some writers invert whole blocks, so a cell block whose cells mostly have a
  negative volume in CGNS order is mirrored as a whole (reported; --keep-orientation turns this off).
  Cells still inverted after that are errors that `fluxjac mesh dual` names;
* nodes that no 3D cell uses are dropped (reported).

A surface-only or 2D mesh is an error that says so. With --state-field NAME, the point field NAME
(5 components: rho, rho u, rho v, rho w, rho E, gamma = 1.4) is stored as /elements/state/Q.
Exit codes: 0 ok, 2 invalid input, 3 usage.
"""

import argparse
import contextlib
import io
import os
import sys

import numpy as np

FORMAT = "fluxjac-element-mesh"
VERSION = 1
EXIT_INVALID_INPUT = 2
EXIT_USAGE = 3

# fluxjac block name, vertex count, and the meshio cell types that map onto it (corners first).
BLOCKS = {
    "tetrahedra": (4, ("tetra", "tetra10")),
    "pyramids": (5, ("pyramid", "pyramid13", "pyramid14")),
    "prisms": (6, ("wedge", "wedge12", "wedge15", "wedge18")),
    "hexahedra": (8, ("hexahedron", "hexahedron20", "hexahedron24", "hexahedron27")),
}
# Outward face loops in CGNS vertex order (the right-hand rule gives the normal leaving the cell); used
# only for the sign of the cell volume.
FACE_LOOPS = {
    "tetrahedra": [(0, 2, 1), (0, 1, 3), (1, 2, 3), (0, 3, 2)],
    "pyramids": [(0, 3, 2, 1), (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)],
    "prisms": [(0, 2, 1), (3, 4, 5), (0, 1, 4, 3), (1, 2, 5, 4), (2, 0, 3, 5)],
    "hexahedra": [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)],
}
# A vertex permutation per type that mirrors a cell (turns an inverted cell right side out); for prisms it
# is also the VTK_WEDGE <-> CGNS conversion.
MIRROR = {
    "tetrahedra": [0, 2, 1, 3],
    "pyramids": [0, 3, 2, 1, 4],
    "prisms": [0, 2, 1, 3, 5, 4],
    "hexahedra": [0, 3, 2, 1, 4, 7, 6, 5],
}
# Cell types meshio knows that are not 3D (dropped) and 3D types fluxjac cannot use (an error).
LOWER_DIMENSIONAL_PREFIXES = ("vertex", "line", "triangle", "quad", "polygon")


class MeshImportError(Exception):
    """A problem with the input that the user must fix; carries the exit code."""

    def __init__(self, message, code=EXIT_INVALID_INPUT):
        super().__init__(message)
        self.code = code


def log(quiet, message):
    if not quiet:
        print(f"[import_mesh] {message}", file=sys.stderr, flush=True)


def signed_volumes(points, cells, block):
    """Volume of each cell (vertex order as given, CGNS convention): the sum over the outward face fans
    (face centroid, v_i, v_i+1) of the tetrahedra they close with the cell centroid."""
    x = points[cells]  # [n, k, 3]
    center = x.mean(axis=1)
    volume = np.zeros(len(cells))
    for loop in FACE_LOOPS[block]:
        face = x[:, list(loop)]
        face_center = face.mean(axis=1)
        for i in range(len(loop)):
            a = face[:, i] - center
            b = face[:, (i + 1) % len(loop)] - center
            volume += np.einsum("ij,ij->i", face_center - center, np.cross(a, b)) / 6.0
    return volume


def split_collapsed_hexahedra(hexahedra):
    """Bricks with repeated vertices (Tecplot FEBRICK and writers like it): returns {block: cells} for the
    real types. Recognised: tetrahedron a b c c d d d d, pyramid a b c d e e e e, prism a b c c d e f f
    (triangles a b c and d e f) and prism a b c d e e f f (a quadrilateral a b c d under the edge e f).
    The orientation is settled afterwards, block by block, like that of any other cell."""
    h = hexahedra
    top_point = (h[:, 4] == h[:, 5]) & (h[:, 4] == h[:, 6]) & (h[:, 4] == h[:, 7])
    tet = top_point & (h[:, 2] == h[:, 3])
    pyramid = top_point & ~tet
    prism_triangles = ~top_point & (h[:, 2] == h[:, 3]) & (h[:, 6] == h[:, 7])
    prism_edge = ~top_point & ~prism_triangles & (h[:, 4] == h[:, 5]) & (h[:, 6] == h[:, 7])
    plain = ~(tet | pyramid | prism_triangles | prism_edge)
    repeats = np.array([len(set(row)) < 8 for row in h[plain]], dtype=bool)
    if repeats.any():
        bad = int(np.flatnonzero(plain)[np.flatnonzero(repeats)[0]])
        raise MeshImportError(
            f"hexahedron {bad} repeats vertices in an unknown pattern {h[bad].tolist()} (known collapses: "
            "a b c c d d d d, a b c d e e e e, a b c c d e f f, a b c d e e f f)")
    return {
        "tetrahedra": h[tet][:, [0, 1, 2, 4]],
        "pyramids": h[pyramid][:, [0, 1, 2, 3, 4]],
        "prisms": np.concatenate([h[prism_triangles][:, [0, 1, 2, 4, 5, 6]], h[prism_edge][:, [0, 4, 1, 3, 6, 2]]]),
        "hexahedra": h[plain],
    }


def read_mesh(path, file_format, quiet):
    import meshio  # imported here so that --help works without meshio

    if not os.path.exists(path):
        raise MeshImportError(f"{path}: no such file")
    messages = io.StringIO()  # meshio's readers print warnings and blank lines: pass on the text only
    try:
        with contextlib.redirect_stderr(messages), contextlib.redirect_stdout(messages):
            return meshio.read(path, file_format=file_format)
    except meshio.ReadError as error:
        raise MeshImportError(f"{path}: meshio cannot read it: {error}")
    except Exception as error:  # meshio raises many kinds for damaged or unsupported files
        raise MeshImportError(f"{path}: meshio failed to read it ({type(error).__name__}: {error})")
    finally:
        for line in messages.getvalue().splitlines():
            if line.strip():
                log(quiet, "meshio: " + line.strip())


def collect_cells(mesh, path):
    """The 3D cells of a meshio mesh as {block: int64 [n, k]} and a summary of what was dropped."""
    blocks = {name: [] for name in BLOCKS}
    dropped, notes, found = {}, [], {}
    type_to_block = {t: name for name, (_, types) in BLOCKS.items() for t in types}
    for cell_block in mesh.cells:
        kind, data = cell_block.type, np.asarray(cell_block.data)
        found[kind] = found.get(kind, 0) + len(data)
        if kind in type_to_block:
            name = type_to_block[kind]
            k = BLOCKS[name][0]
            if data.shape[1] > k:
                notes.append(f"{len(data)} {kind} reduced to their {k} corner vertices")
            data = data[:, :k].astype(np.int64)
            if name == "hexahedra":
                for split_name, cells in split_collapsed_hexahedra(data).items():
                    if split_name != "hexahedra" and len(cells):
                        notes.append(f"{len(cells)} collapsed hexahedra read as {split_name}")
                    blocks[split_name].append(cells)
            else:
                blocks[name].append(data)
        elif kind.startswith(LOWER_DIMENSIONAL_PREFIXES):
            dropped[kind] = dropped.get(kind, 0) + len(data)
        else:
            raise MeshImportError(
                f"{path}: {len(data)} cells of type '{kind}' are not supported "
                "(fluxjac takes tetrahedra, pyramids, prisms and hexahedra, linear or higher order)")
    blocks = {name: np.concatenate(parts) if parts else np.zeros((0, BLOCKS[name][0]), np.int64)
              for name, parts in blocks.items()}
    if sum(len(cells) for cells in blocks.values()) == 0:
        listing = ", ".join(f"{n} {t}" for t, n in found.items()) or "no cells at all"
        planar = mesh.points.shape[1] < 3 or np.ptp(mesh.points[:, 2]) == 0.0
        what = "a 2D mesh" if planar else "a surface-only mesh"
        raise MeshImportError(
            f"{path}: no 3D cells (found: {listing}): this is {what}; fluxjac needs a volume mesh of "
            "tetrahedra, pyramids, prisms or hexahedra (mesh the volume, e.g. gmsh -3)")
    return blocks, dropped, notes


def orient_blocks(points, blocks, quiet):
    """Mirrors every block whose cells mostly have negative volume in CGNS order (see the module doc)."""
    for name, cells in blocks.items():
        if len(cells) == 0:
            continue
        volumes = signed_volumes(points, cells, name)
        negative = int((volumes < 0).sum())
        if 2 * negative > len(cells):
            blocks[name] = cells[:, MIRROR[name]]
            log(quiet, f"{name}: {negative} of {len(cells)} have negative volume in CGNS vertex order; "
                       "mirrored the block (VTK prism order or an inverted writer)")
            negative = len(cells) - negative
        if negative:
            log(quiet, f"WARNING: {name}: {negative} of {len(cells)} cells are inverted or degenerate; "
                       "'fluxjac mesh dual' will name them")


def compact_nodes(points, blocks, fields):
    """Drops nodes no cell uses; renumbers the cells and the point fields."""
    used = np.zeros(len(points), bool)
    for cells in blocks.values():
        used[cells.ravel()] = True
    if used.all():
        return points, blocks, fields, 0
    new_id = np.cumsum(used) - 1
    return (points[used], {name: new_id[cells] for name, cells in blocks.items()},
            {name: values[used] for name, values in fields.items()}, int((~used).sum()))


def state_from_field(mesh, name, path):
    if name not in mesh.point_data:
        available = ", ".join(f"{k} {np.asarray(v).shape}" for k, v in mesh.point_data.items()) or "none"
        raise MeshImportError(f"{path}: no point field '{name}' for --state-field (point fields: {available})",
                           EXIT_USAGE)
    values = np.asarray(mesh.point_data[name], dtype=np.float64)
    if values.ndim != 2 or values.shape[1] != 5:
        raise MeshImportError(f"{path}: point field '{name}' has shape {values.shape}; --state-field needs "
                           "[n_points, 5] conservative values (rho, rho u, rho v, rho w, rho E)")
    return values


def write_element_mesh(out, points, blocks, state, compress):
    import h5py

    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise MeshImportError(f"{out}: the output folder {folder} does not exist", EXIT_USAGE)
    n_nodes = len(points)
    index_type = np.int32 if n_nodes <= np.iinfo(np.int32).max else np.int64
    options = {"compression": "gzip", "compression_opts": 4, "shuffle": True} if compress else {}
    temporary = f"{out}.tmp-{os.getpid()}"
    try:
        with h5py.File(temporary, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["version"] = np.int32(VERSION)
            group = f.create_group("elements")
            group.create_dataset("coords", data=np.asarray(points, np.float64), **options)
            for name, cells in blocks.items():
                if len(cells):
                    group.create_dataset(name, data=cells.astype(index_type), **options)
            if state is not None:
                state_group = group.create_group("state")
                state_group.attrs["gamma"] = 1.4
                state_group.create_dataset("Q", data=state, **options)
        os.replace(temporary, out)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def import_mesh(path, out, file_format=None, state_field=None, keep_orientation=False, compress=True, quiet=False):
    """Reads path with meshio and writes the element-mesh file out; returns the counts written."""
    mesh = read_mesh(path, file_format, quiet)
    points = np.asarray(mesh.points, dtype=np.float64)
    blocks, dropped, notes = collect_cells(mesh, path)
    if points.ndim != 2 or points.shape[1] != 3:
        raise MeshImportError(f"{path}: points have {points.shape[1]} coordinates; a 3D mesh needs x, y, z")
    if not np.isfinite(points).all():
        raise MeshImportError(f"{path}: node {int(np.flatnonzero(~np.isfinite(points).all(axis=1))[0])} "
                           "has a non-finite coordinate")
    for note in notes:
        log(quiet, note)
    if dropped:
        log(quiet, "dropped lower-dimensional cells: " + ", ".join(f"{n} {t}" for t, n in dropped.items()))
    fields = {"state": state_from_field(mesh, state_field, path)} if state_field else {}
    points, blocks, fields, n_unused = compact_nodes(points, blocks, fields)
    if n_unused:
        log(quiet, f"dropped {n_unused} nodes that no 3D cell uses")
    if not keep_orientation:
        orient_blocks(points, blocks, quiet)
    write_element_mesh(out, points, blocks, fields.get("state"), compress)
    counts = {name: len(cells) for name, cells in blocks.items()}
    log(quiet, f"{out}: {len(points)} nodes, " + ", ".join(f"{n} {name}" for name, n in counts.items()))
    return counts


class ArgumentParser(argparse.ArgumentParser):
    """argparse with fluxjac's usage exit code (3) instead of argparse's 2, which here means invalid input."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def main(argv=None):
    parser = ArgumentParser(
        description=__doc__,
        epilog="Then: fluxjac mesh dual OUT.h5 -o EDGES.h5 (see docs/formats.md)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", help="mesh file meshio reads (.msh, .su2, .vtk, .vtu, .mesh, .meshb, .cgns, ...)")
    parser.add_argument("-o", "--output", required=True, help="element-mesh HDF5 file to write (atomically)")
    parser.add_argument("--format", dest="file_format", default=None,
                        help="meshio format name when the extension does not say (e.g. gmsh, su2, vtu, medit)")
    parser.add_argument("--state-field", default=None,
                        help="point field with the conservative state [n_points, 5], stored as /elements/state/Q")
    parser.add_argument("--keep-orientation", action="store_true",
                        help="keep the vertex order as read (no mirroring of blocks with negative volumes)")
    parser.add_argument("--no-compress", action="store_true", help="write uncompressed datasets")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    try:
        import_mesh(args.input, args.output, args.file_format, args.state_field, args.keep_orientation,
                    not args.no_compress, args.quiet)
    except MeshImportError as error:
        print(f"import_mesh.py: error: {error}", file=sys.stderr)
        return error.code
    except ModuleNotFoundError as error:
        print(f"import_mesh.py: error: {error}: install Debian's python3-meshio and python3-h5py and run "
              "with /usr/bin/python3", file=sys.stderr)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
