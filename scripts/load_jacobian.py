#!/usr/bin/python3
"""Load a fluxjac Jacobian file (`fluxjac run --output J.h5`) into SciPy (docs/formats.md, "Using the Jacobian").

As a module (with scripts/ on sys.path, or this file copied beside your code):

    from load_jacobian import load_jacobian, read_jacobian
    A = load_jacobian("J.h5")       # scipy.sparse.bsr_matrix of 5x5 blocks, float64: Adiag + Aoff in one matrix
    y = A @ v                       # v: float64 [5 n_nodes], node-major: v[5 i + c] is component c of node i
    J = read_jacobian("J.h5")       # the datasets as NumPy arrays (J.adiag, J.row_ptr, J.col_idx, J.aoff)
    J.residual                      # R at the state, float64 [n_nodes, 5] (`run --residual`; else None)
    J.orientation                   # "A" (dR/dQ) or "A^T" (written by `fluxjac run --transpose`)

From the shell:

    /usr/bin/python3 scripts/load_jacobian.py J.h5                   # what the file holds
    /usr/bin/python3 scripts/load_jacobian.py J.h5 --check-product   # and A @ v against the datasets

The file keeps the diagonal blocks (/jacobian/adiag, float64) apart from the off-diagonal block-CSR matrix
(/jacobian/row_ptr, col_idx, aoff; Aoff in float32, no diagonal). `load_jacobian` merges them into one BSR
matrix whose rows hold their blocks in ascending column order, the diagonal block at its place among them. It is the
matrix the file holds: A = dR/dQ, or A^T for a file written with --transpose (attribute orientation, "A" or "A^T";
files of version 1 have none and hold A).

Needs Debian's python3-h5py, python3-numpy and python3-scipy (read_jacobian alone needs no SciPy).
Exit codes: 0 ok, 1 the product check failed, 2 invalid file, 3 usage.
"""

import argparse
import dataclasses
import sys

import h5py
import numpy as np

FORMAT = "fluxjac-jacobian"
VERSIONS = (1, 2, 3)  # version 3 may hold /residual; version 2 records the orientation; version 1 files hold A
ORIENTATIONS = ("A", "A^T")
BLOCK = 5
EXIT_CHECK_FAILED = 1
EXIT_INVALID_INPUT = 2
EXIT_USAGE = 3


class JacobianFileError(Exception):
    """A file that is not a valid fluxjac Jacobian; the message names the file and the dataset."""


@dataclasses.dataclass
class JacobianArrays:
    """The datasets of a Jacobian file, as stored (docs/formats.md, "Jacobian")."""
    adiag: np.ndarray    # float64 [n_nodes, 5, 5]: block i is dR_i/dQ_i, row-major
    row_ptr: np.ndarray  # int64 [n_nodes + 1]: row i's off-diagonal blocks are row_ptr[i] .. row_ptr[i + 1] - 1
    col_idx: np.ndarray  # int32 [nnz]: the column (node) of each off-diagonal block, ascending within a row
    aoff: np.ndarray     # float32 [nnz, 5, 5]: block k of row i is dR_i/dQ_col_idx[k], row-major
    attributes: dict     # the string attributes of /jacobian: variant, mesh_file, state_file, fluxjac_version, ...
    orientation: str = "A"  # the matrix the datasets hold: "A" = dR/dQ or "A^T", its transpose (same layout)
    version: int = VERSIONS[-1]
    residual: np.ndarray = None  # float64 [n_nodes, 5]: R at the state (/residual: version 3, `--residual`; else None)

    @property
    def n_nodes(self):
        return self.adiag.shape[0]

    @property
    def nnz(self):
        """The number of off-diagonal blocks."""
        return self.col_idx.shape[0]


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def read_jacobian(path):
    """Reads and checks the four datasets of a Jacobian file. Raises JacobianFileError naming the dataset and
    the first offending index for what fluxjac itself would refuse (types, shapes, row_ptr, col_idx, values)."""
    def fail(where, message):
        raise JacobianFileError(f"{path}: {where}: {message}")

    try:
        file = h5py.File(path, "r")
    except OSError as error:
        raise JacobianFileError(f"{path}: cannot open as HDF5 ({error})") from None
    with file:
        kind, version = file.attrs.get("format"), file.attrs.get("version")
        if kind is None or _text(kind) != FORMAT or version not in VERSIONS:
            fail("/", f"format {kind!r} version {version!r}, expected {FORMAT!r} version "
                 f"{' or '.join(map(str, VERSIONS))}")
        arrays = {}
        for name, types in (("adiag", ("float64",)), ("row_ptr", ("int64", "int32")),
                            ("col_idx", ("int32", "int64")), ("aoff", ("float32",))):
            dataset = file.get(f"jacobian/{name}")
            if not isinstance(dataset, h5py.Dataset):
                fail(f"/jacobian/{name}", "dataset not found")
            if dataset.dtype.name not in types:
                fail(f"/jacobian/{name}", f"type {dataset.dtype.name}, expected {' or '.join(types)}")
            arrays[name] = dataset[()]
        attributes = {key: _text(value) for key, value in file["jacobian"].attrs.items()}
        residual = None
        if version >= 3 and "residual" in file:
            dataset = file.get("residual")
            if not isinstance(dataset, h5py.Dataset):
                fail("/residual", "not a dataset")
            if dataset.dtype.name != "float64":
                fail("/residual", f"type {dataset.dtype.name}, expected float64")
            residual = dataset[()]
    orientation = attributes.get("orientation", "A" if version == 1 else None)
    if orientation not in ORIENTATIONS:
        fail("/jacobian", f"attribute orientation is {orientation!r}, expected 'A' or 'A^T'")

    adiag, row_ptr, col_idx, aoff = arrays["adiag"], arrays["row_ptr"], arrays["col_idx"], arrays["aoff"]
    if adiag.ndim != 3 or adiag.shape[1:] != (BLOCK, BLOCK) or adiag.shape[0] == 0:
        fail("/jacobian/adiag", f"shape {adiag.shape}, expected [n_nodes > 0, 5, 5]")
    n_nodes = adiag.shape[0]
    if row_ptr.shape != (n_nodes + 1,):
        fail("/jacobian/row_ptr", f"shape {row_ptr.shape}, expected [n_nodes + 1] = [{n_nodes + 1}]")
    if col_idx.ndim != 1:
        fail("/jacobian/col_idx", f"shape {col_idx.shape}, expected [nnz]")
    nnz = col_idx.shape[0]
    if aoff.shape != (nnz, BLOCK, BLOCK):
        fail("/jacobian/aoff", f"shape {aoff.shape}, expected [nnz, 5, 5] = [{nnz}, 5, 5]")
    row_ptr = row_ptr.astype(np.int64)
    if row_ptr[0] != 0:
        fail("/jacobian/row_ptr[0]", f"is {row_ptr[0]}, expected 0")
    bad = np.flatnonzero(np.diff(row_ptr) < 0)
    if bad.size:
        fail(f"/jacobian/row_ptr[{bad[0] + 1}]", "is less than the entry before it (row_ptr must not decrease)")
    if row_ptr[-1] != nnz:
        fail(f"/jacobian/row_ptr[{n_nodes}]", f"is {row_ptr[-1]}, expected nnz = {nnz}")
    rows = np.repeat(np.arange(n_nodes), np.diff(row_ptr))
    columns = col_idx.astype(np.int64)
    bad = np.flatnonzero((columns < 0) | (columns >= n_nodes) | (columns == rows))
    if bad.size:
        k = bad[0]
        fail(f"/jacobian/col_idx[{k}]", f"column {columns[k]} of row {rows[k]}: out of range [0, {n_nodes}) or the "
             "diagonal (which belongs in /jacobian/adiag)")
    same_row = rows[1:] == rows[:-1]
    bad = np.flatnonzero(same_row & (columns[1:] <= columns[:-1]))
    if bad.size:
        k = bad[0] + 1
        fail(f"/jacobian/col_idx[{k}]", f"column {columns[k]} follows column {columns[k - 1]} in row {rows[k]} "
             "(columns must be strictly ascending within a row)")
    for name, values in (("adiag", adiag), ("aoff", aoff)):
        bad = np.flatnonzero(~np.isfinite(values.reshape(-1)))
        if bad.size:
            block, entry = divmod(int(bad[0]), BLOCK * BLOCK)
            fail(f"/jacobian/{name}[{block}]", f"entry {divmod(entry, BLOCK)} is not finite")
    if residual is not None:
        if residual.shape != (n_nodes, BLOCK):
            fail("/residual", f"shape {residual.shape}, expected [n_nodes, 5] = [{n_nodes}, 5]")
        bad = np.flatnonzero(~np.isfinite(residual.reshape(-1)))
        if bad.size:
            node, component = divmod(int(bad[0]), BLOCK)
            fail(f"/residual[{node}]", f"component {component} is not finite")
    return JacobianArrays(adiag=adiag, row_ptr=row_ptr, col_idx=col_idx.astype(np.int32), aoff=aoff,
                          attributes=attributes, orientation=orientation, version=int(version), residual=residual)


def to_bsr(jacobian):
    """The whole Jacobian the arrays hold (A = Adiag + Aoff, or A^T of a file written with --transpose) as one scipy.sparse.bsr_matrix of 5x5 blocks, float64, shape
    [5 n_nodes, 5 n_nodes]: row i holds the blocks of row_ptr[i] .. row_ptr[i + 1] - 1 and the diagonal block,
    in ascending column order (sorted indices, no duplicates)."""
    import scipy.sparse  # only here: read_jacobian and the summary work without SciPy

    n_nodes, nnz = jacobian.n_nodes, jacobian.nnz
    counts = np.diff(jacobian.row_ptr)
    rows = np.repeat(np.arange(n_nodes, dtype=np.int64), counts)
    after_diagonal = jacobian.col_idx > rows
    # In the merged row i every block moves right by the i diagonal blocks of the rows above it, and by one more
    # when it lies right of its own row's diagonal; the diagonal block goes after the columns below i.
    off_position = np.arange(nnz, dtype=np.int64) + rows + after_diagonal
    diagonal_position = (jacobian.row_ptr[:-1] + np.arange(n_nodes) + counts -
                         np.bincount(rows[after_diagonal], minlength=n_nodes))
    data = np.empty((nnz + n_nodes, BLOCK, BLOCK), dtype=np.float64)
    data[off_position] = jacobian.aoff
    data[diagonal_position] = jacobian.adiag
    indices = np.empty(nnz + n_nodes, dtype=np.int64)
    indices[off_position] = jacobian.col_idx
    indices[diagonal_position] = np.arange(n_nodes)
    indptr = jacobian.row_ptr + np.arange(n_nodes + 1)
    matrix = scipy.sparse.bsr_matrix((data, indices, indptr), shape=(BLOCK * n_nodes, BLOCK * n_nodes),
                                     blocksize=(BLOCK, BLOCK))
    matrix.has_sorted_indices = True
    return matrix


def load_jacobian(path):
    """The Jacobian file at path as one scipy.sparse.bsr_matrix, Adiag + Aoff (see to_bsr): the BSR matrix of A, or
    of A^T when the file's orientation is "A^T"."""
    return to_bsr(read_jacobian(path))


def product_from_datasets(jacobian, v):
    """A @ v straight from the datasets, without SciPy: y_i = Adiag[i] v_i + sum over k of row i of
    Aoff[k] v_col_idx[k], in float64. v and the result are [5 n_nodes], node-major."""
    nodes = np.asarray(v, dtype=np.float64).reshape(jacobian.n_nodes, BLOCK)
    y = np.einsum("irc,ic->ir", jacobian.adiag, nodes)
    rows = np.repeat(np.arange(jacobian.n_nodes), np.diff(jacobian.row_ptr))
    np.add.at(y, rows, np.einsum("krc,kc->kr", jacobian.aoff.astype(np.float64), nodes[jacobian.col_idx]))
    return y.reshape(-1)


def summary(path, jacobian):
    """Lines describing the file: provenance, sizes, row lengths, value ranges."""
    counts = np.diff(jacobian.row_ptr)
    stored = sum(a.nbytes for a in (jacobian.adiag, jacobian.row_ptr, jacobian.col_idx, jacobian.aoff))
    lines = [f"{path}: fluxjac Jacobian, version {jacobian.version}",
             f"  orientation: {jacobian.orientation}" + (" (the transpose of dR/dQ)" if jacobian.orientation == "A^T"
                                                           else " (dR/dQ)")]
    for key in ("variant", "mesh_file", "state_file", "fluxjac_version"):
        if key in jacobian.attributes:
            lines.append(f"  {key}: {jacobian.attributes[key]}")
    lines += [
        f"  nodes: {jacobian.n_nodes:,} (matrix {BLOCK * jacobian.n_nodes:,} x {BLOCK * jacobian.n_nodes:,}, "
        f"{BLOCK}x{BLOCK} row-major blocks)",
        f"  blocks: {jacobian.n_nodes:,} diagonal (float64) + {jacobian.nnz:,} off-diagonal (float32); "
        f"off-diagonal blocks per row: min {counts.min()}, mean {counts.mean():.2f}, max {counts.max()}",
        f"  max |Adiag| {np.abs(jacobian.adiag).max():.6g}, max |Aoff| {np.abs(jacobian.aoff).max():.6g}; "
        f"{stored / 1e6:.3g} MB of arrays",
    ]
    return lines


def check_product(jacobian, seed):
    """(ok, line): the merged BSR matrix times a random vector against product_from_datasets."""
    v = np.random.default_rng(seed).standard_normal(BLOCK * jacobian.n_nodes)
    y = to_bsr(jacobian) @ v
    expected = product_from_datasets(jacobian, v)
    scale = np.abs(expected).max()
    error = np.abs(y - expected).max() / scale if scale > 0 else np.abs(y).max()
    ok = error <= 1e-12
    return ok, (f"  A @ v (random v, seed {seed}) against the datasets block by block: max difference "
                f"{error:.2e} of max |A v| ({'ok' if ok else 'FAILED'}, tolerance 1e-12)")


class ArgumentParser(argparse.ArgumentParser):
    """argparse with fluxjac's usage exit code (3) instead of argparse's 2, which here means invalid input."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def main(argv=None):
    parser = ArgumentParser(description=__doc__.split("\n\n")[0],
                            epilog="Recipes for SciPy, PETSc and GPU solvers: docs/formats.md, \"Using the "
                                   "Jacobian\".")
    parser.add_argument("jacobian", help="a Jacobian file written by fluxjac run --output")
    parser.add_argument("--check-product", action="store_true",
                        help="also compare A @ v of the loaded matrix with a product taken from the datasets "
                             "(needs SciPy); exit code 1 when they differ")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random v for --check-product (1)")
    args = parser.parse_args(argv)
    try:
        jacobian = read_jacobian(args.jacobian)
    except JacobianFileError as error:
        print(error, file=sys.stderr)
        return EXIT_INVALID_INPUT
    print("\n".join(summary(args.jacobian, jacobian)))
    if not args.check_product:
        return 0
    try:
        import scipy.sparse  # noqa: F401
    except ImportError:
        print("--check-product needs SciPy: install Debian's python3-scipy", file=sys.stderr)
        return EXIT_USAGE
    ok, line = check_product(jacobian, args.seed)
    print(line)
    return 0 if ok else EXIT_CHECK_FAILED


if __name__ == "__main__":
    sys.exit(main())
