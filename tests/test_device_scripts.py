# ctest-label: cli
"""The GPU machines' many-rank runs, run on the CPU with mpirun so that a device call never finds them broken:
`scripts/gpu.sh largest` (the largest mesh the GPUs hold: weak scaling of a spec generated in parts; here with the
CPU reference on a tiny box) and `scripts/gpu.sh scaling` (generation and partition per rank at fixed edges per
rank). Each must exit 0, write its result files and summary, and record for every rank count the generation's steps
with times and peak memory per rank. Skips (77) without mpirun or without an MPI build.

    python3 tests/test_device_scripts.py FLUXJAC_EXECUTABLE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED:", message)


def run_gpu_script(subcommand, env, out):
    environment = dict(os.environ, OUT=out, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **env)
    result = subprocess.run(["bash", os.path.join(ROOT, "scripts", "gpu.sh"), subcommand], env=environment, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
    if result.returncode != 0:
        print(result.stdout[-4000:])
    return result


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: test_device_scripts.py FLUXJAC_EXECUTABLE")
    fluxjac = os.path.abspath(sys.argv[1])
    if shutil.which("mpirun") is None:
        print("SKIPPED: mpirun not found (Debian: openmpi-bin)")
        return 77
    work = tempfile.mkdtemp()
    try:
        probe = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", fluxjac, "mesh", "gen", "--kind", "tet",
                                "--n", "3", "-q", "-o", os.path.join(work, "probe.h5")], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
        if probe.returncode != 0 or "2 parts" not in probe.stdout:
            print(f"SKIPPED: this build does not generate in parts under mpirun ({probe.stdout.strip()[-300:]})")
            return 77
        # gpu.sh largest: the smoke run, then weak scaling 1 -> 2 ranks of a tiny spec, every count in parts.
        out = os.path.join(work, "largest")
        result = run_gpu_script("largest", {"RANKS": "2", "N1": "10", "VARIANTS": "reference", "REPS": "2",
                                            "SKIP_BUILD": "1", "FLUXJAC": fluxjac, "STEPS": "weak",
                                            "OMPI_MCA_rmaps_base_oversubscribe": "1"}, out)
        check(result.returncode == 0, f"gpu.sh largest exited {result.returncode}")
        check("2 cases: 2 ran" in result.stdout, "gpu.sh largest's smoke run did not run its two cases")
        if os.path.exists(os.path.join(out, "weak.json")):
            runs = json.load(open(os.path.join(out, "weak.json")))["runs"]
            check([r["ranks"] for r in runs] == [1, 2], f"weak.json's rank counts: {[r['ranks'] for r in runs]}")
            check([r["mesh"] for r in runs] == ["mixed:10:rcm", "mixed:13:rcm"], "weak scaling did not grow the mesh")
            for r in runs:
                steps = (r["parallel"] or {}).get("partition", {}) or {}
                names = [s["step"] for s in steps.get("steps", [])]
                check(names == ["nodes and cells", "dual metrics", "ordering", "state", "part"],
                      f"{r['ranks']} rank(s): generation steps {names}")
                check(all(s["peak_bytes"]["max"] > 0 for s in steps.get("steps", [])), "a step without peak memory")
        else:
            check(False, "gpu.sh largest wrote no weak.json")
        summary = os.path.join(out, "summary.txt")
        check(os.path.exists(summary) and "weak scaling, mixed:10:rcm" in open(summary).read(),
              "gpu.sh largest's summary lacks the weak-scaling table")

        # gpu.sh scaling: generation per rank for 1 and 2 ranks, the partition of a file by 2.
        out = os.path.join(work, "setup")
        result = run_gpu_script("scaling", {"RANKS": "1 2", "GEN_N1": "10", "PART_N1": "10", "FLUXJAC": fluxjac,
                                            "OMPI_MCA_rmaps_base_oversubscribe": "1"}, out)
        check(result.returncode == 0, f"gpu.sh scaling exited {result.returncode}")
        text = result.stdout
        check("1 rank(s)  mixed:10:rcm" in text and "2 rank(s)  mixed:13:rcm" in text,
              "gpu.sh scaling's summary lacks a generation line per rank count")
        check("2 ranks" in text.split("PT-Scotch partition")[-1], "gpu.sh scaling's summary lacks the partition line")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("device scripts: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
