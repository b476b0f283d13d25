# ctest-label: cli
"""The peer scripts' shared module, scripts/peers/common.py, on the CPU and without any framework.

    /usr/bin/python3 tests/test_peers.py BUILD/fluxjac        (ctest runs it in a folder of the build tree)

The peers (scripts/peers/roe_jax.py, roe_torch.py) differentiate common.roe_flux with their framework and assemble
with common.assemble; here the same two run on NumPy, the derivatives by complex step (exact to rounding), so that
what the peers share is checked wherever the tests run:
- the flux gives the Fortran code's values bit for bit on the 24 vectors of tests/data/roe_flux_vectors.txt, and
  its complex-step derivatives their Jacobian to 1e-13 of the largest entry;
- on a generated mesh where Harten's entropy fix fires, the assembled Jacobian passes the check against the file
  `fluxjac run --variant reference` writes, the file common.write_jacobian writes passes `fluxjac run --reference`,
  and `fluxjac info` reads it;
- the check fails, as fluxjac's compare does, for an Aoff or Adiag entry off by more than the tolerance, a wrong
  sign convention, the transposed matrix, and the Jacobian of another mesh (a pattern difference).
test_peer_torch.py and test_peer_jax.py run the peer scripts themselves with check_peer_script below.
"""

import dataclasses
import json
import pathlib
import subprocess
import sys

SKIP = 77
ROOT = pathlib.Path(__file__).resolve().parent.parent
PEERS = ROOT / "scripts" / "peers"

try:
    import h5py  # noqa: F401
    import numpy as np
except ImportError as missing:
    print(f"SKIPPED: {sys.executable} has no {missing.name}: install Debian's python3-h5py and python3-numpy "
          "(scripts/common.sh lists them)")
    sys.exit(SKIP)

sys.path.insert(0, str(PEERS))
import common  # noqa: E402

failures = []


def check(condition, message):
    print(("ok      " if condition else "FAILED  ") + message)
    if not condition:
        failures.append(message)


def run(*command, expect=0):
    """Runs a command, echoing it; an exit code other than `expect` stops the test."""
    print("$ " + " ".join(str(part) for part in command))
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True)
    if result.returncode != expect:
        print(result.stdout + result.stderr)
        sys.exit(f"exit code {result.returncode}, expected {expect}: {' '.join(str(part) for part in command)}")
    return result


def make_case(fluxjac):
    """A small generated mesh (random order; its state fires the entropy fix), fluxjac's reference Jacobian of it,
    and the reference Jacobian of another mesh. Returns their paths."""
    run(fluxjac, "mesh", "gen", "--kind", "mixed", "--n", "4", "--order", "random", "-q", "--force", "-o", "small.h5")
    run(fluxjac, "run", "--mesh", "small.h5", "--variant", "reference", "-q", "--force", "-o", "small-reference.h5")
    run(fluxjac, "mesh", "gen", "--kind", "tet", "--n", "3", "-q", "--force", "-o", "other.h5")
    run(fluxjac, "run", "--mesh", "other.h5", "--variant", "reference", "-q", "--force", "-o", "other-reference.h5")
    return "small.h5", "small-reference.h5", "other-reference.h5"


def scale_largest(values, factor):
    """A copy of values with its largest entry (in magnitude) multiplied by factor: the relative max-norm error
    becomes |factor - 1|."""
    changed = values.copy()
    changed.flat[np.argmax(np.abs(changed))] *= factor
    return changed


def perturbed_copy(source, target, dataset, factor):
    """A copy of a Jacobian file with the largest entry of /jacobian/DATASET multiplied by factor."""
    with h5py.File(source, "r") as original, h5py.File(target, "w") as copy:
        for key, value in original.attrs.items():
            copy.attrs[key] = value
        original.copy("jacobian", copy)
        if "residual" in original:
            original.copy("residual", copy)
        values = copy[f"jacobian/{dataset}"]
        values[...] = scale_largest(values[()], factor)
    return target


def check_peer_script(fluxjac, script):
    """Runs a peer script on the CPU against fluxjac's reference Jacobian; exits 77 (skipped) when its framework is
    missing. Checks its record and summary line, its file (fluxjac run --reference passes on it), its time relative
    to a baseline's hd, and its exit codes for a failed check (1) and for a mesh that does not exist (2)."""
    mesh, reference, other_reference = make_case(fluxjac)
    rows = h5py.File(mesh, "r")["mesh/edges"].shape[0]
    with open("baseline.json", "w") as file:
        json.dump({"runs": [{"variant": "hd", "mode": "full", "status": "ok", "n_edges": rows, "ranks": 1,
                             "assembly_ms": {"min": 0.5, "median": 0.5, "max": 0.5}}]}, file)
    command = [sys.executable, PEERS / script, "--mesh", mesh, "--device", "cpu", "--warmup", "1", "--reps", "2"]
    print("$ " + " ".join(str(part) for part in command + ["--check", reference, "..."]))
    result = subprocess.run([str(part) for part in command + ["--check", reference, "-o", "peer.h5", "--json",
                                                              "peer.json", "--baseline", "baseline.json"]],
                            capture_output=True, text=True)
    print(result.stdout + result.stderr)
    if result.returncode == common.EXIT_NO_FRAMEWORK:
        print(f"SKIPPED: {script}: its framework is not importable by {sys.executable}")
        sys.exit(SKIP)
    check(result.returncode == 0, f"{script} exits 0 on a Jacobian that passes the check")
    with open("peer.json") as file:
        record = json.load(file)
    checked = record["check"] or {}
    check(checked.get("passed") is True and checked.get("same_pattern") is True
          and checked["adiag_error"] <= 1e-12 and checked["aoff_error"] <= 1e-6,
          f"{script}: the record says PASS (Adiag {checked.get('adiag_error')}, Aoff {checked.get('aoff_error')})")
    check(record["n_edges"] == rows and record["reps"] == 2 and record["total_ms"]["median"] > 0
          and abs(record["time_relative_to_hd"] - record["total_ms"]["median"] / 0.5) < 1e-9,
          f"{script}: the record's sizes, repetitions, and time relative to the baseline's hd")
    summary = [line for line in result.stdout.splitlines() if line.startswith("peer ")]
    check(len(summary) == 1 and "PASS" in summary[0] and " x hd " in summary[0],
          f"{script}: one summary line for scripts/gpu.sh check, with x hd and PASS: {summary}")
    verdict = run(fluxjac, "run", "--mesh", mesh, "--variant", "reference", "--reference", "peer.h5")
    check("PASS" in verdict.stdout, f"{script}: fluxjac run --reference accepts the peer's file and validates on it")

    failed = subprocess.run([str(part) for part in command + ["--check", other_reference]], capture_output=True,
                            text=True)
    check(failed.returncode == common.EXIT_CHECK_FAILED and "FAIL (pattern" in failed.stdout,
          f"{script}: exit code 1 and FAIL (pattern ...) against another mesh's Jacobian")
    perturbed = perturbed_copy(reference, "perturbed.h5", "aoff", 1.0 + 1e-5)
    failed = subprocess.run([str(part) for part in command + ["--check", perturbed]], capture_output=True, text=True)
    check(failed.returncode == common.EXIT_CHECK_FAILED and "FAIL (Adiag" in failed.stdout,
          f"{script}: exit code 1 against a reference with one Aoff entry off by 1e-5")
    missing = subprocess.run([str(part) for part in command[:3] + ["no-such-mesh.h5"]], capture_output=True,
                             text=True)
    check(missing.returncode == common.EXIT_INVALID_INPUT, f"{script}: exit code 2 for a mesh that does not exist")


def finish():
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("all checks passed")


# ---- the flux against the Fortran vectors ---------------------------------------------------------------------

def check_fortran_vectors():
    vectors = np.loadtxt(ROOT / "tests" / "data" / "roe_flux_vectors.txt")
    UL, UR, normals, F, J = vectors[:, 0:5], vectors[:, 5:10], vectors[:, 10:13], vectors[:, 13:18], vectors[:, 18:]
    flux = common.flux_of_edges(common.NUMPY_OPS, UL, UR, normals)
    check(np.array_equal(flux, F), f"roe_flux: the Fortran values bit for bit on {len(F)} vectors "
                                   f"(largest difference {np.abs(flux - F).max():.2e})")
    mesh = common.EdgeMesh(path="vectors", state_path="vectors", n_nodes=2 * len(F),
                           edges=np.arange(2 * len(F)).reshape(-1, 2), normals=normals, areas=np.ones(len(F)),
                           Q=np.stack([UL, UR], axis=1).reshape(-1, 5))
    JL, JR = common.complex_step_blocks(mesh)
    ours = np.concatenate([JL, JR], axis=2).reshape(len(F), 50)
    worst = (np.abs(ours - J).max(axis=1) / np.abs(J).max(axis=1)).max()
    check(worst <= 1e-13, f"complex-step derivatives of roe_flux: the Fortran Jacobian to {worst:.1e} (<= 1e-13)")


# ---- the assembly and the check against fluxjac's file --------------------------------------------------------

def check_assembly(fluxjac):
    mesh_path, reference, other_reference = make_case(fluxjac)
    mesh = common.read_edge_mesh(mesh_path)
    pattern = common.block_csr_pattern(mesh)

    fired = []

    def less(a, b):  # the entropy-fix tests are those against a state-dependent delta (not the literal 0.0)
        below = np.real(a) < np.real(b)
        if not np.isscalar(b):
            fired.append(int(below.sum()))
        return below

    counting = dataclasses.replace(common.NUMPY_OPS, less=less)
    common.flux_of_edges(counting, mesh.Q[mesh.edges[:, 0]], mesh.Q[mesh.edges[:, 1]], mesh.normals)
    check(sum(fired) > 0, f"Harten's entropy fix fires on the test mesh ({sum(fired)} wave speeds of "
                          f"{mesh.n_edges} edges)")

    JL, JR = common.complex_step_blocks(mesh)
    L, R = mesh.edges[:, 0], mesh.edges[:, 1]

    def assembled(JL, JR, pattern=pattern):
        return common.assemble(common.NUMPY_OPS, mesh.n_nodes, pattern.col_idx.size, L, R, pattern.slot_lr,
                               pattern.slot_rl, JL, JR)

    adiag, aoff = assembled(JL, JR)
    result = common.check_against(pattern, adiag, aoff, reference)
    check(result["passed"] and result["same_pattern"],
          f"complex step + common.assemble pass against fluxjac's reference file (Adiag {result['adiag_error']:.1e}, "
          f"Aoff {result['aoff_error']:.1e})")

    common.write_jacobian("peer.h5", pattern, adiag, aoff, "complex step", mesh)
    verdict = run(fluxjac, "run", "--mesh", mesh_path, "--variant", "reference", "--reference", "peer.h5")
    check("PASS" in verdict.stdout, "fluxjac run --reference validates against the file common.write_jacobian wrote")
    info = run(fluxjac, "info", "peer.h5").stdout
    check("fluxjac-jacobian" in info and "complex step" in info, "fluxjac info reads it and names its variant")

    def fails(adiag, aoff, what, reference=reference):
        outcome = common.check_against(pattern, adiag, aoff, reference)
        check(not outcome["passed"], f"the check fails for {what} (Adiag {outcome['adiag_error']}, "
                                     f"Aoff {outcome['aoff_error']}, pattern: {outcome['pattern_message'] or 'same'})")
        return outcome

    fails(adiag, scale_largest(aoff, np.float32(1.0 + 1e-5)), "the largest Aoff entry off by 1e-5")
    fails(scale_largest(adiag, 1.0 + 1e-11), aoff, "the largest Adiag entry off by 1e-11")
    fails(*assembled(JL, -JR), "the off-diagonal blocks of the right node with the wrong sign")
    fails(adiag.transpose(0, 2, 1).copy(), aoff.transpose(0, 2, 1).copy(), "transposed blocks")
    transposed = pattern.slot_rl, pattern.slot_lr
    fails(*common.assemble(common.NUMPY_OPS, mesh.n_nodes, pattern.col_idx.size, L, R, *transposed, JL, JR),
          "Aoff[L,R] and Aoff[R,L] swapped")
    outcome = fails(adiag, aoff, "another mesh's Jacobian", reference=other_reference)
    check(not outcome["same_pattern"] and "differ" in outcome["pattern_message"],
          f"... and says the patterns differ: {outcome['pattern_message']}")
    changed = aoff.copy()
    changed[0, 0, 0] = np.nan
    outcome = fails(adiag, changed, "a NaN in Aoff")
    check(outcome["aoff_error"] == float("inf"), "... with an infinite Aoff error")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} BUILD/fluxjac")
    check_fortran_vectors()
    check_assembly(sys.argv[1])
    finish()
