# ctest-label: cli
"""`fluxjac solve` against SciPy on the system it writes (docs/formats.md, "Solve output").

    /usr/bin/python3 tests/test_solve.py BUILD/fluxjac        (ctest runs it in a folder of the build tree)

On generated meshes, with the CPU reference assembling: the file's /solve/shift equals the local time step of
docs/formats.md computed here from the mesh and state with NumPy; M = diag(s) (x) I5 + Adiag + Aoff rebuilt from the
file's own arrays has |M dQ + R| / |R| at most the tolerance (and the file's relative_residual says the same); dQ
equals SciPy's direct solve (scipy.sparse.linalg.spsolve) of the same system to what the tolerance and the
system's conditioning allow; a tighter tolerance takes more iterations and comes closer. Bad options (a CFL of 0,
-1 or nan, a restart of 0, a tolerance of 0 or 1, an unknown preconditioner, --cusparse with a variant that solves
on the host) are refused with one line, exit 3 (usage), and nothing written. Exits 77
(ctest: skipped) when /usr/bin/python3 has no SciPy or h5py.
"""

import json
import pathlib
import subprocess
import sys

SKIP = 77
try:
    import h5py
    import numpy as np
    import scipy.sparse
    import scipy.sparse.linalg
except ImportError as missing:
    print(f"SKIPPED: /usr/bin/python3 has no {missing.name}: install Debian's python3-h5py, python3-numpy and "
          "python3-scipy (scripts/common.sh lists them)")
    sys.exit(SKIP)

failures = []


def check(condition, message):
    print(("ok     " if condition else "FAILED ") + message)
    if not condition:
        failures.append(message)


def run(*args, expect=0):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if result.returncode != expect:
        print(result.stdout, result.stderr)
        raise SystemExit(f"{' '.join(map(str, args))}: exit code {result.returncode}, expected {expect}")
    return result


def shift_of(mesh_path, cfl):
    """s_i = (1/CFL) sum over i's edges of A_e (|u_i . n_e| + c_i), u and c of node i."""
    with h5py.File(mesh_path) as f:
        edges, normals, areas = f["mesh/edges"][()], f["mesh/normals"][()], f["mesh/areas"][()]
        Q, gamma = f["state/Q"][()], float(f["state"].attrs["gamma"])
    u = Q[:, 1:4] / Q[:, :1]
    c = np.sqrt(gamma * (gamma - 1.0) * (Q[:, 4] - 0.5 * Q[:, 0] * (u * u).sum(1)) / Q[:, 0])
    shift = np.zeros(len(Q))
    for side in (0, 1):
        i = edges[:, side]
        np.add.at(shift, i, areas * (np.abs((u[i] * normals).sum(1)) + c[i]) / cfl)
    return shift


def system_of(path):
    """M, -R, dQ and the /solve attributes, from the file's own arrays."""
    with h5py.File(path) as f:
        adiag, aoff = f["jacobian/adiag"][()], f["jacobian/aoff"][()].astype(np.float64)
        row_ptr, col_idx = f["jacobian/row_ptr"][()], f["jacobian/col_idx"][()]
        residual, shift, delta = f["residual"][()], f["solve/shift"][()], f["solve/delta"][()]
        attributes = {key: value for key, value in f["solve"].attrs.items()}
        if "solve/aoff_f64" in f:  # --aoff-precision f64: M's Aoff as the solve used it
            check(np.array_equal(f["solve/aoff_f64"][()].astype(np.float32), f["jacobian/aoff"][()]),
                  f"{path}: /solve/aoff_f64 rounds to the file's float32 /jacobian/aoff")
            aoff = f["solve/aoff_f64"][()]
    n = len(adiag)
    diagonal = adiag + shift[:, None, None] * np.eye(5)
    blocks = scipy.sparse.bsr_matrix((diagonal, np.arange(n), np.arange(n + 1)), shape=(5 * n, 5 * n))
    off = scipy.sparse.bsr_matrix((aoff, col_idx, row_ptr), shape=(5 * n, 5 * n))
    return (blocks + off).tocsr(), -residual.reshape(-1), delta.reshape(-1), shift, attributes


def check_case(fluxjac, spec, cfl, tolerance, preconditioner="pbjacobi", sweeps=2, aoff_precision="f32"):
    mesh_path = pathlib.Path(f"{spec.replace(':', '-')}.h5")
    if not mesh_path.exists():
        kind, n, order = spec.split(":")
        run(fluxjac, "mesh", "gen", "-q", "--kind", kind, "--n", n, "--order", order, "-o", mesh_path)
    name = f"{spec} cfl {cfl:g} tol {tolerance:g} {preconditioner} aoff {aoff_precision}"
    output = pathlib.Path(f"step-{spec.replace(':', '-')}-{cfl:g}-{tolerance:g}-{preconditioner}-{aoff_precision}.h5")
    report = pathlib.Path("s.json")
    run(fluxjac, "solve", "-q", "--mesh", mesh_path, "--variant", "reference", "--cfl", cfl, "--tolerance", tolerance,
        "--preconditioner", preconditioner, "--sweeps", sweeps, "--aoff-precision", aoff_precision, "--force",
        "-o", output, "--json", report)
    M, b, dQ, shift, attributes = system_of(output)
    check(attributes["aoff_precision"] == aoff_precision and json.loads(report.read_text())["aoff_precision"] ==
          aoff_precision, f"{name}: the file and the JSON say aoff_precision {aoff_precision}")
    if aoff_precision == "bf16":
        with h5py.File(output) as f:
            bits = f["jacobian/aoff"][()].view(np.uint32)
        check(np.all(bits & 0xFFFF == 0), f"{name}: every Aoff value of the file is a bfloat16 (low 16 bits zero)")
    figures = json.loads(report.read_text())
    expected_shift = shift_of(mesh_path, cfl)
    check(np.abs(shift - expected_shift).max() <= 1e-13 * np.abs(expected_shift).max(),
          f"{name}: /solve/shift is the local time step of docs/formats.md")
    relative = np.linalg.norm(M @ dQ - b) / np.linalg.norm(b)
    check(relative <= tolerance, f"{name}: |M dQ + R| / |R| = {relative:.2e} from the file's arrays, at most {tolerance}")
    check(abs(attributes["relative_residual"] - relative) <= 1e-3 * relative + 1e-15,
          f"{name}: the file's relative_residual ({attributes['relative_residual']:.3e}) is it")
    expected_sweeps = sweeps if preconditioner == "mcgs" else 0
    check(attributes["preconditioner"] == preconditioner and attributes["sweeps"] == expected_sweeps,
          f"{name}: the file says {attributes['preconditioner']} with {attributes['sweeps']} sweeps")
    check(attributes["iterations"] == figures["iterations"] and figures["converged"] and
          len(figures["history"]) == figures["iterations"],
          f"{name}: {figures['iterations']} iterations in the file and the JSON, a history entry each")
    direct = scipy.sparse.linalg.spsolve(M.tocsc(), b)
    # |dQ - direct| / |direct| <= cond(M) * tolerance; the conditioning of these systems stays below 1e3.
    difference = np.linalg.norm(dQ - direct) / np.linalg.norm(direct)
    check(difference <= 1e3 * tolerance, f"{name}: dQ equals SciPy's direct solve to {difference:.1e}")
    return figures["iterations"], difference


def check_bad_options(fluxjac):
    output = pathlib.Path("bad.h5")
    for option, value, words in [("--cfl", "0", "positive"), ("--cfl", "-1", "positive"), ("--cfl", "nan", "positive"),
                                 ("--restart", "0", "at least 1"), ("--tolerance", "0", "between 0 and 1"),
                                 ("--tolerance", "1", "between 0 and 1"),
                                 ("--preconditioner", "ilu", "pbjacobi"), ("--sweeps", "0", "1 to 100")]:
        result = run(fluxjac, "solve", "-q", "--mesh", "mixed-3-rcm.h5", "--variant", "reference", option, value,
                     "-o", output, expect=3)
        lines = result.stderr.strip().splitlines()
        check(len(lines) == 1 and option in lines[0] and words in lines[0] and not output.exists(),
              f"{option} {value}: one line naming it ({lines[-1] if lines else ''}), exit 3 (usage), nothing written")
    for extra, words in [(["--aoff-precision", "f16"], "use f64, f32 or bf16"),
                         (["--aoff-precision", "f64", "--variant", "hd:cpu"], "--variant reference")]:
        result = run(fluxjac, "solve", "-q", "--mesh", "mixed-3-rcm.h5", *extra, "-o", output, expect=3)
        lines = result.stderr.strip().splitlines()
        check(len(lines) == 1 and words in lines[0] and not output.exists(),
              f"{' '.join(extra)}: one line ({lines[-1] if lines else ''}), exit 3, nothing written")
    # cuSPARSE's product is timed beside the GPU solve's: a variant that solves on the host is refused.
    result = run(fluxjac, "solve", "-q", "--mesh", "mixed-3-rcm.h5", "--variant", "reference", "--cusparse",
                 "-o", output, expect=3)
    lines = result.stderr.strip().splitlines()
    check(len(lines) == 1 and "--cusparse" in lines[0] and "reference" in lines[0] and not output.exists(),
          f"--cusparse with the reference: one line naming both ({lines[-1] if lines else ''}), exit 3, nothing written")


def check_convergence_chart():
    """scripts/plot_solve.py draws the history of the JSON a solve wrote, refuses to replace it, and replaces it with
    --force."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("SKIPPED (chart): /usr/bin/python3 has no matplotlib (Debian's python3-matplotlib)")
        return
    script = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "plot_solve.py"
    chart = pathlib.Path("charts") / "convergence.png"
    if chart.exists():
        chart.unlink()
    run(sys.executable, script, "s.json", "--out", "charts")
    check(chart.stat().st_size > 10000, f"plot_solve.py draws {chart} ({chart.stat().st_size} bytes)")
    before = chart.read_bytes()
    refused = run(sys.executable, script, "s.json", "--out", "charts", expect=1)
    check("--force" in refused.stderr and chart.read_bytes() == before,
          f"plot_solve.py refuses to replace {chart} without --force: {refused.stderr.strip()}")
    run(sys.executable, script, "s.json", "--out", "charts", "--force")


def main():
    fluxjac = pathlib.Path(sys.argv[1]).resolve()
    loose = check_case(fluxjac, "mixed:3:rcm", 50.0, 1e-6)
    tight = check_case(fluxjac, "mixed:3:rcm", 50.0, 1e-10)
    check(tight[0] > loose[0] and tight[1] < loose[1],
          f"a tighter tolerance takes more iterations ({loose[0]} -> {tight[0]}) and comes closer "
          f"({loose[1]:.1e} -> {tight[1]:.1e})")
    check_case(fluxjac, "tet:4:random", 10.0, 1e-9)
    gauss_seidel = check_case(fluxjac, "mixed:3:rcm", 50.0, 1e-10, "mcgs", 3)
    check(gauss_seidel[0] < tight[0], f"3 Gauss-Seidel sweeps take fewer iterations than block Jacobi "
          f"({gauss_seidel[0]} against {tight[0]})")
    # Aoff's precision: float64 and bfloat16 solve their own M to the tolerance; the iterations barely move.
    f64 = check_case(fluxjac, "mixed:3:rcm", 50.0, 1e-10, aoff_precision="f64")
    bf16 = check_case(fluxjac, "mixed:3:rcm", 50.0, 1e-10, aoff_precision="bf16")
    check(abs(f64[0] - tight[0]) <= 1 and abs(bf16[0] - tight[0]) <= 0.15 * tight[0],
          f"iterations with Aoff in f64, f32, bf16: {f64[0]}, {tight[0]}, {bf16[0]}")
    check_bad_options(fluxjac)
    check_convergence_chart()
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
