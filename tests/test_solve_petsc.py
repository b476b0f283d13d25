# ctest-label: cli
"""`fluxjac solve` against PETSc on the system it writes (docs/formats.md, "Solve output"; docs/design.md "The solve").

    /usr/bin/python3 tests/test_solve_petsc.py BUILD/fluxjac        (ctest runs it in a folder of the build tree)

Debian's petsc4py (PETSc 3.18) solves M dQ = -R rebuilt from the file's own arrays with the method fluxjac runs:
FGMRES with the same restart, right-preconditioned by point-block Jacobi (PCPBJACOBI: the 5x5 diagonal blocks of M
inverted), classical Gram-Schmidt (PETSc's default), a zero initial guess and the same relative tolerance. Its
iterations must be within 1 of fluxjac's and its dQ equal fluxjac's to what the tolerance allows, in each precision
of Aoff (the system's Aoff as the file says the solve used it). Exits 77 (ctest: skipped) where /usr/bin/python3 has
no petsc4py (Debian's python3-petsc4py; scripts/common.sh lists it), h5py or SciPy.
"""

import glob
import json
import os
import pathlib
import subprocess
import sys

# The SciPy test's checks, runner and the system rebuilt from the file (it exits 77 itself without h5py or SciPy).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import test_solve  # noqa: E402
from test_solve import SKIP, check, run, system_of  # noqa: E402

# Debian's petsc4py lies in its PETSc's folder, which the petsc4py.pth of dist-packages puts on sys.path through
# PETSC_DIR or the /usr/lib/petsc link of a PETSc development package; without either, the installed PETSc's folder.
if not os.environ.get("PETSC_DIR") and not os.path.exists("/usr/lib/petsc"):
    for folder in sorted(glob.glob("/usr/lib/petscdir/petsc3.*/*-real/lib/python3/dist-packages"))[-1:]:
        os.environ["PETSC_DIR"] = str(pathlib.Path(folder).parents[2])
        sys.path.append(folder)
try:
    import petsc4py

    petsc4py.init([])
    from petsc4py import PETSc
except ImportError:
    print("SKIPPED: /usr/bin/python3 has no petsc4py: install Debian's python3-petsc4py (scripts/common.sh lists it)")
    sys.exit(SKIP)

import numpy as np  # noqa: E402  (test_solve checked that it is there)


def petsc_solve(M, b, restart, tolerance):
    M.sort_indices()
    A = PETSc.Mat().createAIJ(size=M.shape, bsize=5, csr=(M.indptr.astype(PETSc.IntType),
                                                            M.indices.astype(PETSc.IntType), M.data))
    A.assemble()
    ksp = PETSc.KSP().create()
    ksp.setOperators(A)
    ksp.setType(PETSc.KSP.Type.FGMRES)
    ksp.setGMRESRestart(restart)
    ksp.getPC().setType(PETSc.PC.Type.PBJACOBI)
    ksp.setTolerances(rtol=tolerance, atol=0.0, max_it=10000)
    ksp.setInitialGuessNonzero(False)
    x, rhs = A.createVecs()
    rhs.setArray(b)
    ksp.solve(rhs, x)
    return ksp.getIterationNumber(), ksp.getConvergedReason(), x.getArray().copy()


def compare(fluxjac, mesh, cfl, tolerance, restart, precision):
    name = f"{mesh} cfl {cfl:g} tol {tolerance:g} restart {restart} aoff {precision}"
    output, report = pathlib.Path("step.h5"), pathlib.Path("step.json")
    run(fluxjac, "solve", "-q", "--mesh", mesh, "--variant", "reference", "--cfl", cfl, "--tolerance", tolerance,
        "--restart", restart, "--aoff-precision", precision, "--force", "-o", output, "--json", report)
    figures = json.loads(report.read_text())
    M, b, dQ, _, _ = system_of(output)
    iterations, reason, x = petsc_solve(M, b, restart, tolerance)
    check(reason > 0, f"{name}: PETSc converged (reason {reason})")
    check(abs(iterations - figures["iterations"]) <= 1,
          f"{name}: PETSc's FGMRES({restart}) + PBJACOBI takes {iterations} iterations, fluxjac {figures['iterations']}")
    difference = np.linalg.norm(x - dQ) / np.linalg.norm(x)
    # Both stop at |r| <= tolerance |b|: their dQ differ by at most cond(M) x tolerance (below 1e3 here).
    check(difference <= 1e3 * tolerance, f"{name}: dQ equals PETSc's to {difference:.1e}")


def main():
    fluxjac = pathlib.Path(sys.argv[1]).resolve()
    mesh = pathlib.Path("mixed-8-rcm.h5")
    run(fluxjac, "mesh", "gen", "-q", "--kind", "mixed", "--n", 8, "--order", "rcm", "-o", mesh, "--force")
    for cfl, tolerance, restart, precision in [(10.0, 1e-8, 30, "f32"), (100.0, 1e-10, 30, "f32"),
                                               (100.0, 1e-10, 5, "f32"), (100.0, 1e-10, 30, "f64"),
                                               (100.0, 1e-10, 30, "bf16")]:
        compare(fluxjac, mesh, cfl, tolerance, restart, precision)
    if test_solve.failures:
        sys.exit(f"{len(test_solve.failures)} check(s) failed")


if __name__ == "__main__":
    main()
