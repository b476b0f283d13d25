"""What the peer scripts share: fluxjac's Roe flux and assembly written once for any array library, the files they
read and write, the check against a fluxjac Jacobian file, the timing loop, the table and the JSON record.

The peers (scripts/peers/roe_jax.py, scripts/peers/roe_torch.py) compute the Jacobian that `fluxjac run` computes,
with a framework's own automatic differentiation, so that fluxjac's times can be set beside theirs on the same mesh
and GPU (docs/performance.md, "Peers: JAX and PyTorch"). This module needs h5py and NumPy only; a peer adds its
framework. The flux, the four-block rule and the check follow fluxjac's:
- the flux: docs/design.md, "The Roe flux, exactly" (kernels/physics/roe_flux.hpp), entropy fix and all, with the
  derivative rules there: |x| takes the sign of the value, comparisons use values only;
- the signs of the four blocks: docs/formats.md, "Residual and sign convention";
- the layout of the Jacobian file: docs/formats.md, "Jacobian";
- the check: src/jacobian/compare.hpp (pattern first, then max|A - R| / max|R| per matrix, with its tolerances).

`complex_step_blocks` gives the same per-edge blocks without a framework (complex-step differentiation of the same
flux in NumPy, exact to rounding): the CPU tests use it to check the flux, the assembly, the writer and the check
where no framework is installed (tests/test_peers.py).
"""

import argparse
import dataclasses
import json
import math
import os
import pathlib
import statistics
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from load_jacobian import JacobianFileError, read_jacobian  # noqa: E402  (scripts/load_jacobian.py)

# ---- exit codes (the same in every peer script) ---------------------------------------------------------------
EXIT_OK = 0              # ran; the Jacobian passed the check, or there was none
EXIT_CHECK_FAILED = 1    # the Jacobian differs from the --check file beyond the tolerances, or in its pattern
EXIT_INVALID_INPUT = 2   # an input file is missing or not what fluxjac would read; a usage error
EXIT_NO_DEVICE = 3       # --device gpu, and the framework sees no GPU
EXIT_NO_FRAMEWORK = 77   # the framework is not importable (ctest counts 77 as skipped)

EDGE_MESH_FORMAT, EDGE_MESH_VERSION = "fluxjac-edge-mesh", 1
JACOBIAN_FORMAT, JACOBIAN_VERSION = "fluxjac-jacobian", 2
BLOCK = 5
#: src/jacobian/compare.hpp, Tolerances: Adiag is float64 (summation order and contraction differ), Aoff float32.
TOLERANCES = {"adiag": 1e-12, "aoff": 1e-6}

GAMMA = 1.4
GAMMA_MINUS_ONE = GAMMA - 1.0  # evaluated in double (0x3FD9999999999998), as fluxjac does: never the literal 0.4
ENTROPY_FIX_FRACTION = 0.2     # Harten's delta = 0.2 a


class InputError(Exception):
    """An input that cannot be used; the message names the file and the dataset."""


# ---- the Roe flux, once for every array library ---------------------------------------------------------------

@dataclasses.dataclass
class ArrayOps:
    """What the flux and the assembly need from an array library beyond + - * /.

    sqrt, where: elementwise. less(a, b): the comparison of values (under differentiation, of the primal values).
    zeros(shape, dtype): a new array; index_add(target, index, values): target with values added at the rows
    index (repeated indices add up); put(target, index, values): target with rows index set (indices distinct);
    stack(parts): the parts along a new last axis; float32(x): x rounded to float32. dtype names are "float64"
    and "float32"."""
    sqrt: object
    where: object
    less: object
    zeros: object
    index_add: object
    put: object
    stack: object
    float32: object


def value_abs(ops, x):
    """|x| with the sign of the value: derivative -x' for x < 0 and +x' otherwise, also at exactly 0."""
    return ops.where(ops.less(x, 0.0), -x, x)


def harten_entropy_fix(ops, wave_speed, delta):
    """Harten's fix: below delta, |lambda| becomes 0.5 (lambda^2 / delta + delta); delta is differentiated too."""
    return ops.where(ops.less(wave_speed, delta), 0.5 * ((wave_speed * wave_speed) / delta + delta), wave_speed)


def roe_flux(ops, UL, UR, nx, ny, nz):
    """EDU3D's roe_ddt per unit area, F(UL, UR, n), from the five conservative components of each side.

    UL, UR: sequences of five arrays (or scalars of one edge); nx, ny, nz the unit normal. Returns the five flux
    components. Sums run left to right and brackets stand as in kernels/physics/roe_flux.hpp."""
    def side(U):
        rho = U[0]
        u, v, w = U[1] / U[0], U[2] / U[0], U[3] / U[0]
        p = GAMMA_MINUS_ONE * (U[4] - (0.5 * rho) * ((u * u + v * v) + w * w))
        qn = (u * nx + v * ny) + w * nz
        a = ops.sqrt((GAMMA * p) / rho)
        H = (a * a) / GAMMA_MINUS_ONE + 0.5 * ((u * u + v * v) + w * w)
        return rho, u, v, w, p, qn, H

    rhoL, uL, vL, wL, pL, qnL, HL = side(UL)
    rhoR, uR, vR, wR, pR, qnR, HR = side(UR)

    # ---- Roe averages ----
    RT = ops.sqrt(rhoR / rhoL)
    rho = RT * rhoL
    denominator = 1.0 + RT
    u = (uL + RT * uR) / denominator
    v = (vL + RT * vR) / denominator
    w = (wL + RT * wR) / denominator
    H = (HL + RT * HR) / denominator
    kinetic = 0.5 * ((u * u + v * v) + w * w)
    a = ops.sqrt(GAMMA_MINUS_ONE * (H - kinetic))
    qn = (u * nx + v * ny) + w * nz

    # ---- wave strengths ----
    drho, dp, dqn = rhoR - rhoL, pR - pL, qnR - qnL
    du, dv, dw = uR - uL, vR - vL, wR - wL
    rho_a_dqn = (rho * a) * dqn
    two_a_a = (2.0 * a) * a
    LdU1 = (dp - rho_a_dqn) / two_a_a
    LdU2 = drho - dp / (a * a)
    LdU3 = (dp + rho_a_dqn) / two_a_a
    LdU4 = rho

    # ---- wave speeds, Harten's entropy fix on all four ----
    delta = ENTROPY_FIX_FRACTION * a
    ws1 = harten_entropy_fix(ops, value_abs(ops, qn - a), delta)
    ws2 = harten_entropy_fix(ops, value_abs(ops, qn), delta)
    ws3 = harten_entropy_fix(ops, value_abs(ops, qn + a), delta)
    ws4 = ws2

    # ---- dissipation (shear waves combined) ----
    c1, c2, c3, c4 = ws1 * LdU1, ws2 * LdU2, ws3 * LdU3, ws4 * LdU4
    diss_mass = (c1 + c2) + c3
    diss_x = ((c1 * (u - a * nx) + c2 * u) + c3 * (u + a * nx)) + c4 * (du - dqn * nx)
    diss_y = ((c1 * (v - a * ny) + c2 * v) + c3 * (v + a * ny)) + c4 * (dv - dqn * ny)
    diss_z = ((c1 * (w - a * nz) + c2 * w) + c3 * (w + a * nz)) + c4 * (dw - dqn * nz)
    diss_energy = ((c1 * (H - a * qn) + c2 * kinetic) + c3 * (H + a * qn)) + c4 * (((u * du + v * dv) + w * dw)
                                                                                    - qn * dqn)

    # ---- central part plus dissipation ----
    mL, mR = rhoL * qnL, rhoR * qnR
    return (0.5 * ((mL + mR) - diss_mass),
            0.5 * (((mL * uL + pL * nx) + (mR * uR + pR * nx)) - diss_x),
            0.5 * (((mL * vL + pL * ny) + (mR * vR + pR * ny)) - diss_y),
            0.5 * (((mL * wL + pL * nz) + (mR * wR + pR * nz)) - diss_z),
            0.5 * ((mL * HL + mR * HR) - diss_energy))


# ---- the mesh and the block-CSR pattern -----------------------------------------------------------------------

@dataclasses.dataclass
class EdgeMesh:
    """An edge mesh and its state, as fluxjac reads them (docs/formats.md, "Edge mesh and state")."""
    path: str
    state_path: str
    n_nodes: int
    edges: np.ndarray    # int64 [n_edges, 2]: (L, R)
    normals: np.ndarray  # float64 [n_edges, 3]
    areas: np.ndarray    # float64 [n_edges]
    Q: np.ndarray        # float64 [n_nodes, 5]

    @property
    def n_edges(self):
        return self.edges.shape[0]


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def _dataset(file, path, name, kinds, shape):
    dataset = file.get(name)
    if not isinstance(dataset, h5py.Dataset):
        raise InputError(f"{path}: {name}: dataset not found")
    if dataset.dtype.name not in kinds:
        raise InputError(f"{path}: {name}: type {dataset.dtype.name}, expected {' or '.join(kinds)}")
    if len(dataset.shape) != len(shape) or any(want is not None and got != want
                                               for got, want in zip(dataset.shape, shape)):
        expected = ", ".join("n" if want is None else str(want) for want in shape)
        raise InputError(f"{path}: {name}: shape {list(dataset.shape)}, expected [{expected}]")
    return dataset[()]


def _open(path, what):
    try:
        file = h5py.File(path, "r")
    except OSError as error:
        raise InputError(f"{path}: cannot open as HDF5 ({error})") from None
    kind, version = file.attrs.get("format"), file.attrs.get("version")
    if kind is None or _text(kind) != EDGE_MESH_FORMAT or version != EDGE_MESH_VERSION:
        file.close()
        raise InputError(f"{path}: format {kind!r} version {version!r}: not {what} "
                         f"({EDGE_MESH_FORMAT!r} version {EDGE_MESH_VERSION})")
    return file


def read_edge_mesh(path, state_path=None):
    """The edges, normals, areas and state of an edge-mesh file (the state from state_path when given). Checks
    what the peer relies on (format, types, shapes, node ids in range, gamma); fluxjac checks the rest."""
    state_path = state_path or path
    with _open(path, "an edge mesh") as file:
        edges = _dataset(file, path, "/mesh/edges", ("int32", "int64"), (None, 2)).astype(np.int64)
        normals = _dataset(file, path, "/mesh/normals", ("float64",), (edges.shape[0], 3))
        areas = _dataset(file, path, "/mesh/areas", ("float64",), (edges.shape[0],))
        if "n_nodes" not in file["/mesh"].attrs:
            raise InputError(f"{path}: /mesh: attribute n_nodes not found")
        n_nodes = int(file["/mesh"].attrs["n_nodes"])
    with _open(state_path, "an edge mesh with a state") as file:
        Q = _dataset(file, state_path, "/state/Q", ("float64",), (n_nodes, BLOCK))
        gamma = file["/state"].attrs.get("gamma")
        if gamma is None or float(gamma) != GAMMA:
            raise InputError(f"{state_path}: /state: attribute gamma is {gamma!r}; only {GAMMA} is supported")
    bad = np.flatnonzero((edges < 0).any(axis=1) | (edges >= n_nodes).any(axis=1) | (edges[:, 0] == edges[:, 1]))
    if bad.size:
        raise InputError(f"{path}: /mesh/edges[{bad[0]}]: {edges[bad[0]].tolist()} is out of range [0, {n_nodes}) "
                         "or a self-loop")
    return EdgeMesh(path=str(path), state_path=str(state_path), n_nodes=n_nodes, edges=edges, normals=normals,
                    areas=areas, Q=Q)


@dataclasses.dataclass
class Pattern:
    """fluxjac's block-CSR pattern of a mesh (row i: one block per neighbour, columns ascending, no diagonal) and
    where each edge's two off-diagonal blocks go."""
    row_ptr: np.ndarray  # int64 [n_nodes + 1]
    col_idx: np.ndarray  # int32 [nnz]
    slot_lr: np.ndarray  # int64 [n_edges]: the position of block (L, R)
    slot_rl: np.ndarray  # int64 [n_edges]: the position of block (R, L)


def block_csr_pattern(mesh):
    L, R = mesh.edges[:, 0], mesh.edges[:, 1]
    rows, columns = np.concatenate([L, R]), np.concatenate([R, L])
    order = np.lexsort((columns, rows))
    slot = np.empty_like(order)
    slot[order] = np.arange(order.size)
    row_ptr = np.zeros(mesh.n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=mesh.n_nodes), out=row_ptr[1:])
    return Pattern(row_ptr=row_ptr, col_idx=columns[order].astype(np.int32), slot_lr=slot[:mesh.n_edges],
                   slot_rl=slot[mesh.n_edges:])


def assemble(ops, n_nodes, nnz, L, R, slot_lr, slot_rl, JL, JR):
    """Adiag (float64 [n_nodes, 5, 5]) and Aoff (float32 [nnz, 5, 5]) from the per-edge blocks JL = A dF/dQ_L and
    JR = A dF/dQ_R ([n_edges, 5, 5] each), by the four-block rule of docs/formats.md, "Residual and sign
    convention": Adiag[L] += JL, Aoff[L,R] = JR, Adiag[R] -= JR, Aoff[R,L] = -JL."""
    adiag = ops.index_add(ops.index_add(ops.zeros((n_nodes, BLOCK, BLOCK), "float64"), L, JL), R, -JR)
    aoff = ops.put(ops.put(ops.zeros((nnz, BLOCK, BLOCK), "float32"), slot_lr, ops.float32(JR)), slot_rl,
                   ops.float32(-JL))
    return adiag, aoff


# ---- the per-edge blocks without a framework: complex step ---------------------------------------------------

def _numpy_ops():
    def index_add(target, index, values):
        np.add.at(target, index, values)
        return target

    def put(target, index, values):
        target[index] = values
        return target

    return ArrayOps(sqrt=np.sqrt, where=np.where, less=lambda a, b: np.real(a) < np.real(b),
                    zeros=lambda shape, dtype: np.zeros(shape, dtype=dtype), index_add=index_add, put=put,
                    stack=lambda parts: np.stack(parts, axis=-1), float32=lambda x: x.astype(np.float32))


NUMPY_OPS = _numpy_ops()


def flux_of_edges(ops, UL, UR, normals):
    """The flux of every edge, [n, 5], from the states UL, UR [n, 5] and normals [n, 3] (per unit area)."""
    return ops.stack(roe_flux(ops, [UL[:, k] for k in range(BLOCK)], [UR[:, k] for k in range(BLOCK)],
                              normals[:, 0], normals[:, 1], normals[:, 2]))


def complex_step_blocks(mesh, step=1e-30):
    """JL, JR [n_edges, 5, 5] (area included) by complex-step differentiation of roe_flux in NumPy: exact to
    rounding, no framework needed. For the tests, and small meshes (it evaluates the flux ten times)."""
    UL, UR = mesh.Q[mesh.edges[:, 0]].astype(complex), mesh.Q[mesh.edges[:, 1]].astype(complex)
    blocks = []
    for side in (UL, UR):
        columns = []
        for k in range(BLOCK):
            side[:, k] += step * 1j
            columns.append(np.imag(flux_of_edges(NUMPY_OPS, UL, UR, mesh.normals)) / step)
            side[:, k] -= step * 1j
        blocks.append(np.stack(columns, axis=-1) * mesh.areas[:, None, None])
    return blocks[0], blocks[1]


# ---- the check against a fluxjac Jacobian file ---------------------------------------------------------------

def relative_error(values, reference):
    """max|a - r| / max|r| (src/jacobian/compare.cpp): infinite if any entry is not finite or the reference is zero
    where the values are not; 0 for two zero matrices."""
    a, r = values.astype(np.float64).reshape(-1), reference.astype(np.float64).reshape(-1)
    if not (np.isfinite(a).all() and np.isfinite(r).all()):
        return math.inf
    difference = float(np.max(np.abs(a - r), initial=0.0))
    largest = float(np.max(np.abs(r), initial=0.0))
    if largest == 0.0:
        return 0.0 if difference == 0.0 else math.inf
    return difference / largest


def pattern_difference(row_ptr, col_idx, reference):
    """The first difference between a pattern and a reference file's ("" when they are the same)."""
    if row_ptr.size - 1 != reference.n_nodes:
        return f"node counts differ ({row_ptr.size - 1} vs {reference.n_nodes})"
    if col_idx.size != reference.nnz:
        return f"block counts differ ({col_idx.size} vs {reference.nnz})"
    for name, ours, theirs in (("row_ptr", row_ptr, reference.row_ptr), ("col_idx", col_idx, reference.col_idx)):
        bad = np.flatnonzero(ours != theirs)
        if bad.size:
            return f"{name}[{bad[0]}] differs ({ours[bad[0]]} vs {theirs[bad[0]]})"
    return ""


def check_against(pattern, adiag, aoff, reference_path):
    """Compares a Jacobian with a fluxjac Jacobian file as fluxjac's compare does: pattern first, then the relative
    max-norm error of Adiag and of Aoff against TOLERANCES. Returns the record's `check` member."""
    reference = read_jacobian(reference_path)
    message = pattern_difference(pattern.row_ptr, pattern.col_idx, reference)
    record = {"file": str(reference_path), "reference_variant": reference.attributes.get("variant", ""),
              "same_pattern": not message, "pattern_message": message,
              "adiag_error": None, "aoff_error": None,
              "adiag_tolerance": TOLERANCES["adiag"], "aoff_tolerance": TOLERANCES["aoff"], "passed": False}
    if not message:
        record["adiag_error"] = relative_error(adiag, reference.adiag)
        record["aoff_error"] = relative_error(aoff, reference.aoff)
        record["passed"] = (record["adiag_error"] <= TOLERANCES["adiag"]
                            and record["aoff_error"] <= TOLERANCES["aoff"])
    return record


# ---- the Jacobian file -----------------------------------------------------------------------------------------

def write_jacobian(path, pattern, adiag, aoff, variant, mesh):
    """Writes the Jacobian in fluxjac's layout (docs/formats.md, "Jacobian"): under a temporary name, renamed when
    complete. `fluxjac run --reference` and `fluxjac info` read it."""
    path = pathlib.Path(path)
    temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        with h5py.File(temporary, "w") as file:
            file.attrs["format"] = JACOBIAN_FORMAT
            file.attrs["version"] = np.int32(JACOBIAN_VERSION)
            group = file.create_group("jacobian")
            group.create_dataset("adiag", data=np.ascontiguousarray(adiag, dtype=np.float64))
            group.create_dataset("row_ptr", data=pattern.row_ptr.astype(np.int64))
            group.create_dataset("col_idx", data=pattern.col_idx.astype(np.int32))
            group.create_dataset("aoff", data=np.ascontiguousarray(aoff, dtype=np.float32))
            group.attrs["orientation"] = "A"  # the peers assemble A = dR/dQ (docs/formats.md, "Orientation")
            group.attrs["variant"] = variant
            group.attrs["mesh_file"] = mesh.path
            group.attrs["state_file"] = mesh.state_path
            group.attrs["fluxjac_version"] = f"peer script {pathlib.Path(sys.argv[0]).name}"
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


# ---- timing, table, record -------------------------------------------------------------------------------------

def stats(samples_ms):
    """min, median, max (the median of an even count is the mean of the middle two, as fluxjac's)."""
    return {"min": min(samples_ms), "median": statistics.median(samples_ms), "max": max(samples_ms)}


def hd_median_ms(results_path, n_edges):
    """The median time of fluxjac's hd in mode full on a mesh of n_edges edges in a `fluxjac run --json` file
    (the fastest if several), or None."""
    with open(results_path) as file:
        runs = json.load(file).get("runs", [])
    times = [run["assembly_ms"]["median"] for run in runs
             if run.get("variant") == "hd" and run.get("mode") == "full" and run.get("status") == "ok"
             and run.get("n_edges") == n_edges and run.get("ranks", 1) == 1 and run.get("assembly_ms")]
    return min(times) if times else None


def argument_parser(peer, method):
    parser = argparse.ArgumentParser(
        description=f"The Jacobian of fluxjac's Roe flux by {method}, assembled into fluxjac's block-CSR layout, "
                    "timed, and checked against a fluxjac Jacobian file.",
        epilog="exit codes: 0 ok, 1 the check failed, 2 invalid input or usage, 3 --device gpu without a GPU, "
               f"77 {peer} not importable")
    parser.add_argument("--mesh", required=True, help="edge mesh with its state (fluxjac mesh gen, mesh dual)")
    parser.add_argument("--state", help="the state from another edge-mesh file (as fluxjac run --state)")
    parser.add_argument("--check", metavar="J.h5", help="a Jacobian file fluxjac wrote (run --output) to check "
                                                        "against, with fluxjac's measures and tolerances")
    parser.add_argument("-o", "--output", metavar="OUT.h5", help="write the Jacobian in fluxjac's layout")
    parser.add_argument("--device", choices=("auto", "gpu", "cpu"), default="auto",
                        help="auto: the GPU where the framework sees one (default)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--reps", type=int, default=20, help="timed repetitions (default 20)")
    parser.add_argument("--baseline", metavar="RESULTS.json",
                        help="a fluxjac run --json file of the same mesh: report the time relative to its hd")
    parser.add_argument("--json", metavar="FILE", help="write the record (device, mesh, times, errors) as JSON")
    return parser


def parse_arguments(peer, method, argv=None):
    arguments = argument_parser(peer, method).parse_args(argv)
    if arguments.reps < 1 or arguments.warmup < 0:
        print(f"{peer}: --reps must be at least 1 and --warmup at least 0", file=sys.stderr)
        sys.exit(EXIT_INVALID_INPUT)
    return arguments


def framework_missing(peer, module, hint):
    """Says that the framework is missing and exits EXIT_NO_FRAMEWORK."""
    print(f"SKIPPED: {peer}: {sys.executable} cannot import {module} ({hint})", file=sys.stderr)
    sys.exit(EXIT_NO_FRAMEWORK)


@dataclasses.dataclass
class Peer:
    """One framework's way to the Jacobian. `prepare(mesh, pattern)` moves the inputs to the device and returns
    them; `blocks(inputs)` computes JL, JR (the differentiated flux, area included); `assemble(inputs, JL, JR)`
    returns Adiag, Aoff on the device; `to_host(array)` a NumPy copy; `synchronize(result)` returns when the device
    has computed `result` (JAX: block_until_ready; PyTorch: torch.cuda.synchronize)."""
    name: str
    method: str
    framework: str
    device: str
    prepare: object
    blocks: object
    assemble: object
    to_host: object
    synchronize: object


def _timed(peer, work):
    """work() and its wall time in ms, until the device has finished it (the work before it has: each step waits)."""
    start = time.perf_counter()
    result = work()
    peer.synchronize(result)
    return result, 1e3 * (time.perf_counter() - start)


def run(peer, arguments):
    """Reads the mesh, times the peer's Jacobian (blocks) and assembly apart, checks, writes, prints the table and
    the summary line, writes the record; returns the exit code."""
    try:
        mesh = read_edge_mesh(arguments.mesh, arguments.state)
        pattern = block_csr_pattern(mesh)
        baseline = hd_median_ms(arguments.baseline, mesh.n_edges) if arguments.baseline else None
    except (InputError, OSError, ValueError, KeyError, TypeError) as error:
        print(f"{peer.name}: {error}", file=sys.stderr)
        return EXIT_INVALID_INPUT
    inputs = peer.prepare(mesh, pattern)
    blocks_ms, assembly_ms, total_ms = [], [], []
    for repetition in range(arguments.warmup + arguments.reps):
        (JL, JR), blocks_time = _timed(peer, lambda: peer.blocks(inputs))
        (adiag, aoff), assembly_time = _timed(peer, lambda: peer.assemble(inputs, JL, JR))
        if repetition >= arguments.warmup:
            blocks_ms.append(blocks_time)
            assembly_ms.append(assembly_time)
            total_ms.append(blocks_time + assembly_time)
    adiag, aoff = peer.to_host(adiag), peer.to_host(aoff)

    check = None
    if arguments.check:
        try:
            check = check_against(pattern, adiag, aoff, arguments.check)
        except JacobianFileError as error:
            print(f"{peer.name}: {error}", file=sys.stderr)
            return EXIT_INVALID_INPUT
    if arguments.output:
        write_jacobian(arguments.output, pattern, adiag, aoff, f"{peer.name} {peer.method}", mesh)

    record = {"peer": peer.name, "method": peer.method, "framework": peer.framework, "device": peer.device,
              "mesh_file": mesh.path, "n_nodes": mesh.n_nodes, "n_edges": mesh.n_edges,
              "n_offdiag_blocks": int(pattern.col_idx.size), "warmup": arguments.warmup, "reps": arguments.reps,
              "jacobian_ms": stats(blocks_ms), "assembly_ms": stats(assembly_ms), "total_ms": stats(total_ms),
              "ns_per_edge": 1e6 * statistics.median(total_ms) / mesh.n_edges,
              "hd_ms": baseline,
              "time_relative_to_hd": statistics.median(total_ms) / baseline if baseline else None,
              "check": check}
    print_table(record)
    if arguments.json:
        with open(arguments.json, "w") as file:
            json.dump(record, file, indent=1)
            file.write("\n")
    return EXIT_OK if check is None or check["passed"] else EXIT_CHECK_FAILED


def verdict(check):
    if check is None:
        return "not checked"
    if not check["same_pattern"]:
        return f"FAIL (pattern: {check['pattern_message']})"
    return (f"{'PASS' if check['passed'] else 'FAIL'} (Adiag {check['adiag_error']:.1e}, "
            f"Aoff {check['aoff_error']:.1e})")


def print_table(record):
    """The table, then one summary line that starts with `peer ` (scripts/gpu.sh check collects it)."""
    print(f"{record['peer']}: {record['method']}, {record['framework']}, on {record['device']}")
    print(f"mesh {record['mesh_file']}: {record['n_nodes']} nodes, {record['n_edges']} edges; "
          f"{record['warmup']} warm-up, {record['reps']} timed repetitions (ms)")
    print(f"{'':<10} {'median':>10} {'min':>10} {'max':>10}")
    for key, label in (("jacobian_ms", "jacobian"), ("assembly_ms", "assembly"), ("total_ms", "total")):
        times = record[key]
        print(f"{label:<10} {times['median']:>10.3f} {times['min']:>10.3f} {times['max']:>10.3f}")
    relative = record["time_relative_to_hd"]
    print(f"peer {record['peer']:<6} {record['method']:<18} {record['total_ms']['median']:10.3f} ms "
          f"(jacobian {record['jacobian_ms']['median']:.3f}, assembly {record['assembly_ms']['median']:.3f})  "
          f"x hd {'n/a' if relative is None else f'{relative:.1f}'}  {verdict(record['check'])}")
