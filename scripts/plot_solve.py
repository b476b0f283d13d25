#!/usr/bin/python3
"""The convergence chart of `fluxjac solve` (the JSON of `fluxjac solve --json`, schema fluxjac-solve).

    /usr/bin/python3 scripts/plot_solve.py SOLVE.json [MORE.json ...] [--out DIR] [--force] [--name NAME.png]

Writes DIR/NAME (default: plots/convergence.png): FGMRES's relative residual |b - M x| / |b| after each iteration
(the `history` of each file, as FGMRES estimates it) against the iteration, one line per solve, labelled by its CFL,
preconditioner and Aoff precision with its iterations, solve time and true relative residual; one panel per mesh
and where it was solved. The footer names the fluxjac revision of each file. A chart that exists in DIR is refused
unless --force, and replaced atomically (plot_bench.py's rule). Needs Debian's python3-matplotlib.
"""

import argparse
import json
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_bench import edges_text, plt, write_charts  # noqa: E402  (the same chart rules as the bench charts)


def load(paths):
    solves = []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as error:
            sys.exit(f"plot_solve.py: {path}: {error}")
        if doc.get("schema") != "fluxjac-solve" or "history" not in doc:
            sys.exit(f"plot_solve.py: {path}: not the JSON of 'fluxjac solve --json' (docs/formats.md, \"Solve output\")")
        solves.append(doc)
    return solves


def label(solve):
    pc = solve["preconditioner"] + (f", {solve['sweeps']} sweeps" if solve["preconditioner"] == "mcgs" else "")
    outcome = "" if solve["converged"] else ", not converged"
    return (f"CFL {solve['cfl']:g}, {pc}, Aoff {solve['aoff_precision']}: {solve['iterations']} iterations, "
            f"{solve['solve_ms']:.0f} ms, true {solve['relative_residual']:.1e}{outcome}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("solves", nargs="+", help="JSON files of 'fluxjac solve --json'")
    parser.add_argument("--out", default="plots", help="folder for the chart (default: plots)")
    parser.add_argument("--name", default="convergence.png", help="the chart's file name (default: convergence.png)")
    parser.add_argument("--force", action="store_true", help="replace the chart if it exists in --out (else refused)")
    args = parser.parse_args()
    panels = defaultdict(list)  # (mesh, edges, variant, solved on) -> solves
    for solve in load(args.solves):
        panels[(solve["mesh"], solve["n_edges"], solve["variant"], solve["solved_on"])].append(solve)
    fig, axes = plt.subplots(1, len(panels), figsize=(8 * len(panels), 5.5), squeeze=False)
    for ax, (key, solves) in zip(axes[0], sorted(panels.items())):
        mesh, n_edges, variant, solved_on = key
        for solve in sorted(solves, key=lambda s: (s["cfl"], s["preconditioner"], s["aoff_precision"])):
            ax.semilogy(range(1, len(solve["history"]) + 1), solve["history"], label=label(solve), linewidth=1.2)
            ax.axhline(solve["tolerance"], color="0.6", linestyle=":", linewidth=0.8)
        ax.set_xlabel("FGMRES iteration")
        ax.set_ylabel("relative residual |b - M x| / |b| (FGMRES's estimate)")
        ax.set_title(f"mesh {os.path.basename(mesh)} ({edges_text(n_edges)} edges), assembled by {variant}, "
                     f"solved on the {solved_on.upper()}", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
        ax.grid(True, which="both", linewidth=0.3)
    fig.suptitle("Convergence of fluxjac solve: FGMRES(m) on M dQ = -R (dotted: the tolerance)", fontsize=10)
    revisions = sorted({f"fluxjac {s['fluxjac']['version']} {s['fluxjac']['git_revision']}"
                        for group in panels.values() for s in group})
    fig.text(0.5, 0.0, "Data: " + "; ".join(revisions) + f" ({sum(len(g) for g in panels.values())} solves).",
             ha="center", va="top", fontsize=7, color="0.25")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, args.name)
    write_charts([(path, fig)], args.force)
    print(path)


if __name__ == "__main__":
    main()
