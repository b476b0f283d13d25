# ctest-label: cli
"""scripts/load_jacobian.py on Jacobians that `fluxjac run` writes (the bundled mesh and a generated one).

    /usr/bin/python3 tests/test_load_jacobian.py BUILD/fluxjac        (ctest runs it in a folder of the build tree)

For each file: the loaded BSR matrix's A @ v equals a product taken block by block, in plain loops, from the
datasets as h5py reads them; it equals a central difference of the residual R(Q) of docs/formats.md, "Residual
and sign convention", computed here with the Roe flux of docs/design.md, "The Roe flux, exactly"; and the
mistakes a loader can make (blocks read column-major, the matrix transposed, Adiag left out, v ordered by
component) each fail both comparisons. A file written with --transpose loads as the BSR matrix of A^T: the
transpose of the A file's matrix, exactly, and (A^T)^T @ v the central difference again; a version 1 file without
the orientation loads as A. The command-line mode prints its summary, passes --check-product, and names the dataset
of a file with unsorted columns (exit code 2). Exits 77 (ctest: skipped) when /usr/bin/python3
has no SciPy.
"""

import pathlib
import subprocess
import sys

SKIP = 77
ROOT = pathlib.Path(__file__).resolve().parent.parent
LOADER = ROOT / "scripts" / "load_jacobian.py"

try:
    import h5py
    import numpy as np
    import scipy.sparse  # noqa: F401
except ImportError as missing:
    print(f"SKIPPED: /usr/bin/python3 has no {missing.name}: install Debian's python3-h5py, python3-numpy and "
          "python3-scipy (scripts/common.sh lists them)")
    sys.exit(SKIP)

sys.path.insert(0, str(ROOT / "scripts"))
import load_jacobian  # noqa: E402

failures = []


def check(condition, message):
    print(("ok      " if condition else "FAILED  ") + message)
    if not condition:
        failures.append(message)


def run(*command):
    """Runs a command, echoing it; a non-zero exit stops the test."""
    print("$ " + " ".join(str(part) for part in command))
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stdout + result.stderr)
        sys.exit(f"exit code {result.returncode}: {' '.join(str(part) for part in command)}")
    return result.stdout


# ---- the residual of docs/formats.md, with the flux of docs/design.md ---------------------------------------

GAMMA = 1.4
GM1 = GAMMA - 1.0  # evaluated in double, as the flux code does


def roe_flux(UL, UR, normal):
    """EDU3D's roe_ddt per unit area, for arrays of edges: UL, UR [n, 5] conservative, normal [n, 3] unit."""
    nx, ny, nz = normal[:, 0], normal[:, 1], normal[:, 2]

    def side(U):
        rho = U[:, 0]
        u, v, w = U[:, 1] / rho, U[:, 2] / rho, U[:, 3] / rho
        qn = (u * nx + v * ny) + w * nz
        p = GM1 * (U[:, 4] - (0.5 * rho) * ((u * u + v * v) + w * w))
        a = np.sqrt((GAMMA * p) / rho)
        H = (a * a) / GM1 + 0.5 * ((u * u + v * v) + w * w)
        m = rho * qn
        return rho, u, v, w, qn, p, H, np.stack([m, m * u + p * nx, m * v + p * ny, m * w + p * nz, m * H])

    rhoL, uL, vL, wL, qnL, pL, HL, fL = side(UL)
    rhoR, uR, vR, wR, qnR, pR, HR, fR = side(UR)
    RT = np.sqrt(rhoR / rhoL)
    rho = RT * rhoL
    u, v, w, H = ((xL + RT * xR) / (1 + RT) for xL, xR in ((uL, uR), (vL, vR), (wL, wR), (HL, HR)))
    a = np.sqrt(GM1 * (H - 0.5 * ((u * u + v * v) + w * w)))
    qn = (u * nx + v * ny) + w * nz
    drho, dp, dqn, du, dv, dw = rhoR - rhoL, pR - pL, qnR - qnL, uR - uL, vR - vL, wR - wL
    LdU = [(dp - (rho * a) * dqn) / ((2 * a) * a), drho - dp / (a * a), (dp + (rho * a) * dqn) / ((2 * a) * a), rho]
    d = 0.2 * a
    ws = [np.abs(qn - a), np.abs(qn), np.abs(qn + a), np.abs(qn)]
    ws = [np.where(s < d, 0.5 * ((s * s) / d + d), s) for s in ws]
    one, zero = np.ones_like(u), np.zeros_like(u)
    r = [np.stack([one, u - a * nx, v - a * ny, w - a * nz, H - a * qn]),
         np.stack([one, u, v, w, 0.5 * ((u * u + v * v) + w * w)]),
         np.stack([one, u + a * nx, v + a * ny, w + a * nz, H + a * qn]),
         np.stack([zero, du - dqn * nx, dv - dqn * ny, dw - dqn * nz, ((u * du + v * dv) + w * dw) - qn * dqn])]
    diss = (((ws[0] * LdU[0]) * r[0] + (ws[1] * LdU[1]) * r[1]) + (ws[2] * LdU[2]) * r[2]) + (ws[3] * LdU[3]) * r[3]
    return (0.5 * ((fL + fR) - diss)).T


def residual(edges, normals, areas, Q):
    """R_i: + A_e F(Q_L, Q_R, n_e) at each edge's left node, - at its right node."""
    flux = areas[:, None] * roe_flux(Q[edges[:, 0]], Q[edges[:, 1]], normals)
    R = np.zeros_like(Q)
    np.add.at(R, edges[:, 0], flux)
    np.add.at(R, edges[:, 1], -flux)
    return R


# ---- independent readings of the file -----------------------------------------------------------------------

def raw_datasets(path):
    with h5py.File(path, "r") as f:
        return {name: f[f"jacobian/{name}"][()] for name in ("adiag", "row_ptr", "col_idx", "aoff")}


def product_in_loops(raw, v):
    """A @ v, one 5x5 block at a time, entry by entry, straight from the stored arrays."""
    adiag, row_ptr, col_idx, aoff = raw["adiag"], raw["row_ptr"], raw["col_idx"], raw["aoff"]
    n_nodes = adiag.shape[0]
    nodes = v.reshape(n_nodes, 5)
    y = np.zeros((n_nodes, 5))
    for i in range(n_nodes):
        blocks = [(adiag[i], i)] + [(aoff[k], col_idx[k]) for k in range(row_ptr[i], row_ptr[i + 1])]
        for block, j in blocks:
            for r in range(5):
                for c in range(5):
                    y[i, r] += float(block[r, c]) * nodes[j, c]
    return y.reshape(-1)


def relative_difference(y, expected):
    return np.abs(y - expected).max() / np.abs(expected).max()


def check_file(fluxjac, mesh, name):
    jacobian_path = f"J-{name}.h5"
    run(fluxjac, "run", "--mesh", mesh, "--variant", "reference", "--residual", "--force", "-o", jacobian_path)
    raw = raw_datasets(jacobian_path)
    n_nodes, nnz = raw["adiag"].shape[0], raw["col_idx"].shape[0]
    check([raw[k].dtype.name for k in ("adiag", "row_ptr", "col_idx", "aoff")] ==
          ["float64", "int64", "int32", "float32"],
          f"{name}: stored types adiag float64, row_ptr int64, col_idx int32, aoff float32 (docs/formats.md)")

    A = load_jacobian.load_jacobian(jacobian_path)
    check(isinstance(A, scipy.sparse.bsr_matrix) and A.blocksize == (5, 5) and A.shape == (5 * n_nodes, 5 * n_nodes),
          f"{name}: a {A.shape} BSR matrix of 5x5 blocks ({n_nodes} nodes)")
    A_sorted = A.copy()
    A_sorted.sort_indices()
    check(A.indices.size == n_nodes + nnz and np.array_equal(A.indices, A_sorted.indices),
          f"{name}: {n_nodes} diagonal + {nnz} off-diagonal blocks, columns ascending in every row")

    rng = np.random.default_rng(7)
    v = rng.standard_normal(5 * n_nodes)
    y = A @ v
    loops = product_in_loops(raw, v)
    error = relative_difference(y, loops)
    check(error <= 1e-13, f"{name}: A @ v equals the block-by-block product of the datasets "
          f"(max difference {error:.1e} of max |A v|, tolerance 1e-13)")

    with h5py.File(mesh, "r") as f:
        edges, normals, areas, Q = (f[k][()] for k in ("mesh/edges", "mesh/normals", "mesh/areas", "state/Q"))
    edges = edges.astype(np.int64)
    # A direction scaled to each component's size, so every entry of Q moves by about the same relative step.
    direction = (rng.standard_normal(Q.shape) * np.abs(Q).max(axis=0)).reshape(-1)
    h = 1e-6
    central = (residual(edges, normals, areas, Q + h * direction.reshape(Q.shape)) -
               residual(edges, normals, areas, Q - h * direction.reshape(Q.shape))).reshape(-1) / (2 * h)
    error = relative_difference(A @ direction, central)
    check(error <= 1e-6, f"{name}: A @ v equals the central difference of the residual along v "
          f"(max difference {error:.1e} of max |dR/dQ v|, tolerance 1e-6; Aoff is float32)")
    written = load_jacobian.read_jacobian(jacobian_path).residual
    error = relative_difference(written.reshape(-1), residual(edges, normals, areas, Q).reshape(-1))
    check(written.shape == (n_nodes, 5) and error <= 1e-13,
          f"{name}: /residual equals the NumPy residual R(Q) (max difference {error:.1e} of max |R|)")

    # What a wrong loader would give: each must miss both references by far more than their tolerances.
    arrays = load_jacobian.read_jacobian(jacobian_path)
    column_major = load_jacobian.JacobianArrays(
        adiag=arrays.adiag.transpose(0, 2, 1).copy(), row_ptr=arrays.row_ptr, col_idx=arrays.col_idx,
        aoff=arrays.aoff.transpose(0, 2, 1).copy(), attributes=arrays.attributes)
    without_adiag = scipy.sparse.bsr_matrix((arrays.aoff.astype(np.float64), arrays.col_idx, arrays.row_ptr),
                                            shape=A.shape, blocksize=(5, 5))
    by_component = v.reshape(5, n_nodes).T.reshape(-1)  # v[c n_nodes + i] taken as component c of node i
    wrong = {
        "blocks read column-major": (load_jacobian.to_bsr(column_major) @ v,
                                     load_jacobian.to_bsr(column_major) @ direction),
        "the matrix transposed": (A.T @ v, A.T @ direction),
        "Adiag left out": (without_adiag @ v, without_adiag @ direction),
        "v ordered by component": (A @ by_component, None),
    }
    for mistake, (product, along_direction) in wrong.items():
        error = relative_difference(product, loops)
        check(error > 1e-3, f"{name}: {mistake}: differs from the block-by-block product ({error:.1e})")
        if along_direction is not None:
            error = relative_difference(along_direction, central)
            check(error > 1e-3, f"{name}: {mistake}: differs from the central difference ({error:.1e})")
    check_transpose(fluxjac, mesh, name, A, direction, central)
    return jacobian_path


def check_transpose(fluxjac, mesh, name, A, direction, central):
    """The file of `run --transpose` holds A^T: loaded, it is A.T exactly; an old file without the attribute is A."""
    transpose_path = f"JT-{name}.h5"
    run(fluxjac, "run", "--mesh", mesh, "--variant", "reference", "--transpose", "--force", "-o", transpose_path)
    arrays = load_jacobian.read_jacobian(transpose_path)
    check(arrays.orientation == "A^T" and arrays.version == 3,
          f"{name}: --transpose writes version 3 with orientation A^T ({arrays.version}, {arrays.orientation})")
    check(arrays.residual is None, f"{name}: a run without --residual writes no /residual, and it loads as None")
    AT = load_jacobian.load_jacobian(transpose_path)
    check(isinstance(AT, scipy.sparse.bsr_matrix) and AT.blocksize == (5, 5),
          f"{name}: the A^T file loads as a BSR matrix of 5x5 blocks")
    difference = abs(AT - A.T.tobsr(blocksize=(5, 5))).max()
    check(difference == 0.0, f"{name}: the A^T file's matrix is the transpose of the A file's, exactly ({difference})")
    error = relative_difference(AT.T @ direction, central)
    check(error <= 1e-6, f"{name}: (A^T)^T @ v equals the central difference of the residual ({error:.1e})")
    error = relative_difference(AT @ direction, central)
    check(error > 1e-3, f"{name}: A^T @ v is not the central difference: the orientation matters ({error:.1e})")

    old = f"J-{name}-version1.h5"
    with h5py.File(f"J-{name}.h5", "r") as source, h5py.File(old, "w") as target:
        for key, value in source.attrs.items():
            target.attrs[key] = value
        target.attrs["version"] = np.int32(1)
        source.copy("jacobian", target)
        del target["jacobian"].attrs["orientation"]
    arrays = load_jacobian.read_jacobian(old)
    check(arrays.orientation == "A" and arrays.version == 1, f"{name}: a version 1 file without orientation holds A")


def check_command_line(jacobian_path):
    summary = run(sys.executable, LOADER, jacobian_path, "--check-product")
    print(summary, end="")
    n_nodes = raw_datasets(jacobian_path)["adiag"].shape[0]
    check(f"nodes: {n_nodes:,}" in summary and "variant: reference" in summary and "(ok," in summary and
          "orientation: A (dR/dQ)" in summary,
          "load_jacobian.py --check-product: summary with nodes, variant and orientation, product ok, exit code 0")

    unsorted = "unsorted-columns.h5"
    with h5py.File(jacobian_path, "r") as source, h5py.File(unsorted, "w") as target:
        for key, value in source.attrs.items():
            target.attrs[key] = value
        source.copy("jacobian", target)
        source.copy("residual", target)
        row_ptr, col_idx = target["jacobian/row_ptr"][()], target["jacobian/col_idx"][()]
        row = int(np.flatnonzero(np.diff(row_ptr) >= 2)[0])
        first = int(row_ptr[row])
        col_idx[first], col_idx[first + 1] = col_idx[first + 1], col_idx[first]
        target["jacobian/col_idx"][...] = col_idx
    result = subprocess.run([sys.executable, str(LOADER), unsorted], capture_output=True, text=True)
    print(result.stderr, end="")
    check(result.returncode == 2 and f"/jacobian/col_idx[{first + 1}]" in result.stderr and
          "strictly ascending" in result.stderr,
          "load_jacobian.py on a file with unsorted columns: exit code 2, the message names the dataset and index")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test_load_jacobian.py FLUXJAC_EXECUTABLE")
    fluxjac = pathlib.Path(sys.argv[1]).resolve()
    bundled = check_file(fluxjac, ROOT / "meshes" / "box-mixed-6-rcm.h5", "box-mixed-6-rcm")
    run(fluxjac, "mesh", "gen", "--kind", "tet", "--n", "4", "--order", "random", "--seed", "3", "--force", "-o", "box-tet-4.h5")
    check_file(fluxjac, "box-tet-4.h5", "box-tet-4-random")
    check_command_line(bundled)
    print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
