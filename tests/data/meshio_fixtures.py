#!/usr/bin/python3
"""Fixtures for tests/test_mesh_import.cpp, made with meshio in one process (so the suite stays fast).

    meshio_fixtures.py roundtrip ELEMENTS.h5 OUTDIR
        Writes the element mesh in every format below with meshio, imports each file back with
        scripts/import_mesh.py into OUTDIR/NAME.h5 and prints "NAME ok" or "NAME FAIL reason" per format.
    meshio_fixtures.py bad OUTDIR
        Writes inputs import_mesh.py must refuse: surface.vtu (triangles in 3D), planar.vtu (a 2D mesh),
        collapsed.vtu (a hexahedron collapsed in no known pattern).
"""

import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import import_mesh  # noqa: E402

TO_MESHIO = {"tetrahedra": "tetra", "pyramids": "pyramid", "prisms": "wedge", "hexahedra": "hexahedron"}
# name: (file name, meshio format, cell types it can hold)
FORMATS = {
    "gmsh22": ("mesh.msh", "gmsh22", None),
    "su2": ("mesh.su2", "su2", None),
    "vtk": ("mesh.vtk", "vtk", None),
    "vtu": ("mesh.vtu", "vtu", None),
    "medit": ("mesh.mesh", "medit", None),
    "medit_binary": ("mesh.meshb", "medit", None),
    "xdmf": ("mesh.xdmf", "xdmf", None),
    "ugrid": ("mesh.ugrid", "ugrid", None),
    "nastran": ("mesh.bdf", "nastran", None),
    "tecplot": ("mesh.dat", "tecplot", None),  # bricks with repeated vertices
    "cgns": ("mesh.cgns", "cgns", {"tetrahedra"}),  # meshio writes tetrahedra only
}


def read_elements(path):
    with h5py.File(path, "r") as f:
        group = f["elements"]
        points = group["coords"][...]
        blocks = {name: group[name][...] for name in TO_MESHIO if name in group}
        state = group["state/Q"][...] if "state" in group else None
    return points, blocks, state


def roundtrip(elements_path, out):
    import meshio

    points, blocks, state = read_elements(elements_path)
    for name, (file_name, file_format, supported) in FORMATS.items():
        kept = {block: cells for block, cells in blocks.items() if supported is None or block in supported}
        cells = [(TO_MESHIO[block], cells) for block, cells in kept.items()]
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, file_name)
        try:
            meshio.write(path, meshio.Mesh(points, cells), file_format=file_format)
            import_mesh.import_mesh(path, os.path.join(out, name + ".h5"), quiet=True)
            print(name, "ok")
        except Exception as error:  # report and go on: the C++ test names the format
            print(name, "FAIL", type(error).__name__, str(error).replace("\n", " "))
    # VTK lists prism bases the other way round: such a file must come back the same after import.
    vtk_cells = [(TO_MESHIO[block], cells[:, [0, 2, 1, 3, 5, 4]] if block == "prisms" else cells)
                 for block, cells in blocks.items()]
    point_data = {"Q": state} if state is not None else {}
    os.makedirs(os.path.join(out, "vtk_wedges"), exist_ok=True)
    path = os.path.join(out, "vtk_wedges", "mesh.vtu")
    meshio.write(path, meshio.Mesh(points, vtk_cells, point_data=point_data))
    try:
        import_mesh.import_mesh(path, os.path.join(out, "vtk_wedges.h5"),
                                state_field="Q" if state is not None else None, quiet=True)
        print("vtk_wedges ok")
    except Exception as error:
        print("vtk_wedges FAIL", type(error).__name__, error)


def bad(out):
    import meshio

    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1]], float)
    meshio.write(os.path.join(out, "surface.vtu"),
                 meshio.Mesh(square, [("triangle", np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]]))]))
    meshio.write(os.path.join(out, "planar.vtu"),
                 meshio.Mesh(square[:4, :2], [("triangle", np.array([[0, 1, 2], [0, 2, 3]]))]))
    meshio.write(os.path.join(out, "collapsed.vtu"),
                 meshio.Mesh(square, [("hexahedron", np.array([[0, 1, 2, 3, 4, 4, 4, 0]]))]))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "roundtrip":
        roundtrip(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "bad":
        bad(sys.argv[2])
    else:
        sys.exit(__doc__)
