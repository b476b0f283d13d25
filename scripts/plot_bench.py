#!/usr/bin/python3
"""Charts of fluxjac benchmark results (the JSON of `fluxjac bench --json`, layout in docs/bench-json.md).

    /usr/bin/python3 scripts/plot_bench.py RESULTS.json [MORE.json ...] [--out DIR] [--force]

Writes into DIR (default: plots/) one PNG per chart that the results hold data for (a chart that exists there is
refused unless --force, and then replaced atomically):

  time-vs-paper.png        assembly time per variant beside the paper's V100 (Zubair et al., HiPC 2023, Table II),
                           times scaled per edge to the paper's 5.97M-edge mesh
  table4-split.png         the Table IV split: full, compute only, scatter only
  roofline.png             achieved model FP64 instruction rate against intensity (model FP64 instructions / model
                           bytes) under the measured copy bandwidth and FP64 instruction rate (half the FMA flop rate);
                           flops against the flop rate for files written before the model counted instructions
  ns-per-edge-vs-size.png  ns per edge against mesh size
  orderings.png            ns per edge for natural, random and RCM node orderings of one mesh
  edges-per-block.png      ns per edge against the block-size tuning parameter
  weak-scaling.png         `bench --scaling weak`: ns per edge per GPU and parallel efficiency against the GPU count
                           (target 95%), with the halo exchange stacked on the assembly time where it was timed
  strong-scaling.png       `bench --scaling strong`: assembly time against the GPU count beside the ideal t1/P, and
                           parallel efficiency (target 85%), with the halo exchange as in weak-scaling.png
  halo.png                 runs on several GPUs outside a scaling sweep: halo exchange time stacked on assembly time
                           per GPU count
                           (the last three count MPI ranks, i.e. processes, instead of GPUs where any run drawn is of
                           the CPU reference)

The first six draw plain one-process runs only (`ranks` 1, outside a scaling sweep; files without `ranks` ran on
one); the last three draw the runs on several ranks (`ranks`, `parallel`): GPUs, or processes where the runs are of
the CPU reference.
Several files (devices, builds) are drawn side by side; every chart names its device(s), mesh(es) and units, and
its footer the data it was drawn from: per device, the fluxjac version and git revision (`fluxjac.git_revision`),
the date of the run and the meshes. A device measured with several revisions is drawn as one series per revision.
Needs Debian's python3-matplotlib and python3-numpy (use /usr/bin/python3, which sees them).
"""
import argparse
import json
import os
import sys
import tempfile
import textwrap
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

# The paper's Table II: V100 times in ms on its 5.97M-edge wing-body mesh.
PAPER_EDGES = 5.97e6
PAPER_V100_MS = OrderedDict([("hd", 8.1), ("dn_10", 13.16), ("dn_5", 8.99), ("dn_2", 12.18), ("dn5_2", 7.80),
                             ("edn_5", 10.32), ("edn5_2", 8.87)])
VARIANT_ORDER = list(PAPER_V100_MS) + ["reference"]
MODES = ["full", "compute-only", "scatter-only"]
ORDERINGS = ["natural", "random", "rcm"]
MARKERS = {"node": "o", "edge": "s", None: "^"}


def load(paths):
    """All runs of all files, each with its file's device and build attached."""
    runs = []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as error:
            sys.exit(f"plot_bench.py: {path}: {error}")
        if doc.get("schema", "fluxjac-bench") != "fluxjac-bench" or "runs" not in doc:
            sys.exit(f"plot_bench.py: {path}: not a fluxjac result file (docs/bench-json.md)")
        device = doc.get("device") or {}
        build = doc.get("fluxjac") or {}
        created = (doc.get("host") or {}).get("created_utc") or ""
        for run in doc["runs"]:
            if run.get("solve"):  # a solve case (bench --solve): its assembly is drawn by the assembly cases
                continue
            run = dict(run)
            run["_device"] = device.get("name", "CPU only")
            run["_ceilings"] = device
            run["_version"] = build.get("version", "?")
            run["_revision"] = build.get("git_revision", "?")
            run["_date"] = created[:10] or "date unknown"
            runs.append(run)
    # One device measured with several builds, among the runs that the same charts draw (one-process runs, or the
    # runs on several ranks): one series per build, named by its revision.
    revisions = defaultdict(set)
    for run in runs:
        revisions[(run["_device"], ran_on_one(run))].add(run["_revision"])
    for run in runs:
        if len(revisions[(run["_device"], ran_on_one(run))]) > 1:
            run["_device"] = f"{run['_device']} ({run['_revision']})"
    return runs


def ran(run):
    return run.get("status", "ok") == "ok" and run.get("assembly_ms") and run.get("ns_per_edge")


def rank_count(run):
    """MPI ranks of a run (one GPU each for GPU variants); files from before `ranks` existed ran on one."""
    return int(run.get("ranks") or 1)


def parallel_of(run):
    return run.get("parallel") or {}


def ran_on_one(run):
    """A plain run of one process assembling A: what the one-GPU charts compare (the scaling charts draw the others,
    and the one-rank points of a scaling sweep; the adjoint orientation's figures are performance.md's tables)."""
    return (ran(run) and rank_count(run) == 1 and not parallel_of(run).get("scaling")
            and run.get("orientation", "A") == "A")


def newest_build_per_gpu(runs):
    """The runs of each GPU model's newest run date: one series per GPU where a chart sets it beside the paper."""
    def model(run):
        return run["_ceilings"].get("name", run["_device"])
    newest = {}
    for run in runs:
        newest[model(run)] = max(newest.get(model(run), ""), run["_date"])
    return [run for run in runs if run["_date"] == newest[model(run)]]


def median_ms(run):
    return run["assembly_ms"]["median"]


def variant_rank(name):
    return VARIANT_ORDER.index(name) if name in VARIANT_ORDER else len(VARIANT_ORDER)


def devices_of(runs):
    return ", ".join(sorted({r["_device"] for r in runs}))


def series_name(device, assembly):
    return f"{device}, {assembly} assembly" if assembly else device


def gpu_full_default(runs):
    """Mode-full GPU runs at the default block size: what the headline charts compare."""
    return [r for r in runs if ran_on_one(r) and r.get("backend") == "cuda" and r.get("mode") == "full"
            and not r.get("edges_per_block_requested")]


def paper_size_mesh(runs):
    """The mesh closest in size to the paper's, preferring RCM ordering among equals."""
    meshes = {(r["mesh"], r["n_edges"], r.get("mesh_order") or "") for r in runs}
    if not meshes:
        return None
    return min(meshes, key=lambda m: (abs(np.log(m[1] / PAPER_EDGES)), m[2] != "rcm", m[0]))[0]


def mesh_name(mesh):
    """A mesh file by its name alone (a run's temporary folder says nothing), a generator spec as is."""
    return os.path.basename(mesh)


def mesh_caption(runs, mesh):
    r = next(r for r in runs if r["mesh"] == mesh)
    return f"mesh {mesh_name(mesh)}: {edges_text(r['n_edges'])} edges, {edges_text(r['n_nodes'])} nodes"


def provenance(runs):
    """The footer of a chart: per device the build (version, git revision) and the dates of the runs drawn, then
    the meshes with their sizes."""
    builds = defaultdict(lambda: defaultdict(set))  # device -> "fluxjac version revision" -> dates
    for r in runs:
        builds[r["_device"]][f"fluxjac {r['_version']} {r['_revision']}"].add(r["_date"])
    sources = []
    for device in sorted(builds):
        for build, dates in sorted(builds[device].items()):
            sources.append(f"{device}: {build}, run {', '.join(sorted(dates))}")
    meshes = sorted({(r["n_edges"], mesh_name(r["mesh"])) for r in runs})
    mesh_text = ", ".join(f"{name} ({edges_text(n)} edges)" for n, name in meshes)
    lines = textwrap.wrap("Data: " + "; ".join(sources) + ".", 150)
    lines += textwrap.wrap(f"Mesh{'es' if len(meshes) > 1 else ''}: {mesh_text}.", 150)
    return "\n".join(lines)


def save(fig, out, name, written, runs):
    """Adds the chart, with the provenance of `runs` (the runs it draws) as its footer, to those to write: `written`
    holds (path, figure) until write_charts writes them all."""
    fig.text(0.5, 0.0, provenance(runs), ha="center", va="top", fontsize=7, color="0.25")
    written.append((os.path.join(out, name), fig))


def write_charts(charts, force):
    """Writes every chart, each atomically (a temporary file in its folder, then renamed), after refusing the lot if
    any of them exists and `force` is not set, so that nothing is replaced silently and nothing half written."""
    existing = [path for path, _ in charts if os.path.lexists(path)]
    if existing and not force:
        more = f" (and {len(existing) - 1} more charts)" if len(existing) > 1 else ""
        sys.exit(f"{os.path.basename(sys.argv[0])}: {existing[0]} exists{more}; pass --force to replace the charts, or "
                 "choose another --out")
    for path, fig in charts:
        handle, temporary = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp-", suffix=".png",
                                             dir=os.path.dirname(path) or ".")
        os.close(handle)
        try:
            fig.savefig(temporary, dpi=120, bbox_inches="tight")
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
        plt.close(fig)


def skip(name, why):
    print(f"plot_bench.py: {name}: skipped ({why})", file=sys.stderr)


def label_bars(ax, bars, fmt="{:.2f}"):
    for bar in bars:
        height = bar.get_height()
        if np.isfinite(height) and height > 0:
            ax.annotate(fmt.format(height), (bar.get_x() + bar.get_width() / 2, height), ha="center", va="bottom",
                        fontsize=6, rotation=90, xytext=(0, 2), textcoords="offset points")


# ---- charts -------------------------------------------------------------------------------------------------


def chart_time_vs_paper(runs, out, written):
    name = "time-vs-paper.png"
    # Meshes of the paper's size (within a factor of two), the newest build of each GPU.
    full = newest_build_per_gpu([r for r in gpu_full_default(runs) if 0.5 <= r["n_edges"] / PAPER_EDGES <= 2.0])
    series = OrderedDict()  # (device, assembly) -> {variant: ms scaled to the paper's mesh}
    meshes = []
    drawn = []
    for device in sorted({r["_device"] for r in full}):
        of_device = [r for r in full if r["_device"] == device]
        mesh = paper_size_mesh(of_device)
        meshes.append(f"{device}: {mesh_caption(of_device, mesh)}")
        for r in of_device:
            if r["mesh"] == mesh:
                series.setdefault((device, r.get("assembly")), {})[r["variant"]] = r["ns_per_edge"] * PAPER_EDGES * 1e-6
                drawn.append(r)
    if not series:
        return skip(name, "no mode-full GPU runs at the default block size")
    variants = [v for v in PAPER_V100_MS if any(v in s for s in series.values())]
    fig, ax = plt.subplots(figsize=(11, 5.5))
    width = 0.8 / (len(series) + 1)
    x = np.arange(len(variants))
    bars = ax.bar(x - 0.4 + width / 2, [PAPER_V100_MS[v] for v in variants], width, color="0.6",
                  label="V100, paper Table II (5.97M edges)")
    label_bars(ax, bars)
    for i, ((device, assembly), times) in enumerate(series.items(), start=1):
        bars = ax.bar(x - 0.4 + width * (i + 0.5), [times.get(v, np.nan) for v in variants], width,
                      label=series_name(device, assembly))
        label_bars(ax, bars)
    ax.set_xticks(x, variants)
    ax.set_ylim(0, 1.25 * max(PAPER_V100_MS[v] for v in variants))
    ax.set_xlabel("variant")
    ax.set_ylabel("assembly time scaled to 5.97M edges [ms]")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Jacobian assembly time vs. the paper's V100 (Table II) — {devices_of(full)}\n"
                 + "\n".join(meshes) + "; measured ns/edge x 5.97M edges", fontsize=9)
    save(fig, out, name, written, drawn)


def chart_table4_split(runs, out, written):
    name = "table4-split.png"
    gpu = [r for r in runs
           if ran_on_one(r) and r.get("backend") == "cuda" and not r.get("edges_per_block_requested")]
    panels = OrderedDict()  # (device, assembly) -> {(variant, mode): ms}
    captions = {}
    drawn = []
    for device in sorted({r["_device"] for r in gpu}):
        of_device = [r for r in gpu if r["_device"] == device]
        # The paper-size mesh among those measured in more than one mode.
        split = [r for r in of_device if r["mode"] != "full"]
        mesh = paper_size_mesh([r for r in of_device if r["mesh"] in {s["mesh"] for s in split}])
        if mesh is None:
            continue
        for r in of_device:
            if r["mesh"] == mesh:
                panels.setdefault((device, r.get("assembly")), {})[(r["variant"], r["mode"])] = median_ms(r)
                captions[(device, r.get("assembly"))] = mesh_caption(of_device, mesh)
                drawn.append(r)
    if not panels:
        return skip(name, "no GPU runs in mode compute-only or scatter-only")
    many = len({d for d, _ in panels}) > 1
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 3.6 * len(panels)), squeeze=False)
    for ax, (key, times) in zip(axes[:, 0], panels.items()):
        variants = sorted({v for v, _ in times}, key=variant_rank)
        x = np.arange(len(variants))
        width = 0.8 / len(MODES)
        for i, mode in enumerate(MODES):
            bars = ax.bar(x - 0.4 + width * (i + 0.5), [times.get((v, mode), np.nan) for v in variants], width,
                          label=mode)
            label_bars(ax, bars)
        ax.set_xticks(x, variants)
        ax.set_ylabel("median assembly time [ms]")
        ax.set_ylim(0, 1.45 * max(times.values()))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, title="timed region", ncol=len(MODES), loc="upper center")
        ax.set_title(f"{series_name(key[0], key[1])} — {captions[key]}", fontsize=9)
    axes[-1, 0].set_xlabel("variant")
    fig.suptitle(f"Table IV split: full assembly, compute only (scatter off), scatter only (flux off) — "
                 f"{devices_of(gpu) if many else next(iter(panels))[0]}", fontsize=10)
    fig.tight_layout()
    save(fig, out, name, written, drawn)


def chart_roofline(runs, out, written):
    name = "roofline.png"
    full = [r for r in runs if ran_on_one(r) and r.get("mode") == "full" and r.get("backend") == "cuda"]
    if not full:
        return skip(name, "no mode-full GPU runs")
    devices = sorted({r["_device"] for r in full})
    fig, axes = plt.subplots(1, len(devices), figsize=(9.5 * len(devices), 5.5), squeeze=False)
    colors = {v: f"C{i}" for i, v in enumerate(VARIANT_ORDER)}
    for ax, device in zip(axes[0], devices):
        of_device = [r for r in full if r["_device"] == device]
        ceilings = of_device[0]["_ceilings"]
        intensity = np.logspace(-1, 3, 200)
        # The floor counts FP64 instructions (docs/performance.md, "The floor of a variant"); older files have flops.
        work_key, unit = ("model_fp64_instructions", "instr") if all(
            r.get("model_fp64_instructions") for r in of_device) else ("model_flops", "flop")
        bandwidth, fp64 = ceilings.get("copy_bandwidth_gbs"), ceilings.get("fp64_gflops")
        if fp64 and unit == "instr":
            fp64 = fp64 / 2  # one instruction per FMA, which the FMA flop rate counts as two
        if bandwidth and fp64:
            ax.plot(intensity, np.minimum(fp64, intensity * bandwidth), "k-", lw=1.5,
                    label=f"measured ceilings: copy {bandwidth:.0f} GB/s, FP64 {fp64 / 1e3:.1f} T{unit}/s")
            ax.axvline(fp64 / bandwidth, color="k", ls=":", lw=0.8)
            ax.annotate(f"ridge {fp64 / bandwidth:.1f} {unit}/B", (fp64 / bandwidth * 1.05, 150), fontsize=7)
        seen = set()
        keys = sorted({(r["variant"], r.get("assembly") or "") for r in of_device},
                      key=lambda k: (variant_rank(k[0]), k[1]))
        for r in sorted(of_device, key=lambda r: variant_rank(r["variant"])):
            # Variants with similar intensity would overlap: spread them slightly sideways to tell them apart.
            dodge = 1.0 + 0.035 * (keys.index((r["variant"], r.get("assembly") or "")) - (len(keys) - 1) / 2)
            ai = r[work_key] / r["model_bytes"] * dodge
            rate = r[work_key] / (median_ms(r) * 1e-3) / 1e9
            key = (r["variant"], r.get("assembly"))
            ax.scatter(ai, rate, color=colors.get(r["variant"], "0.3"), marker=MARKERS.get(r.get("assembly"), "^"),
                       s=18 + 8 * np.log10(r["n_edges"]), alpha=0.75, edgecolor="k", linewidth=0.3,
                       label=f"{r['variant']} ({r.get('assembly')})" if key not in seen else None)
            seen.add(key)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(1, 100)
        ax.set_ylim(100, 1e5)
        ax.set_xlabel(f"arithmetic intensity: model FP64 {unit}s / model bytes [{unit}/byte]")
        ax.set_ylabel(f"achieved model FP64 rate [G{unit}/s]")
        ax.grid(which="both", alpha=0.25)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.set_title(f"{device}: mode full, every mesh (larger markers: larger meshes; spread slightly sideways).\n"
                     f"Each variant's own work model: its counted FP64 {unit}s and its strategy's bytes (fluxjac list)",
                     fontsize=8)
    fig.suptitle(f"Roofline of the Jacobian assembly — {devices_of(full)}", fontsize=10)
    fig.tight_layout()
    save(fig, out, name, written, full)


def chart_size(runs, out, written):
    name = "ns-per-edge-vs-size.png"
    full = [r for r in runs if ran_on_one(r) and r.get("mode") == "full" and not r.get("edges_per_block_requested")]
    orders = [r.get("mesh_order") or "" for r in full]
    if not full:
        return skip(name, "no mode-full runs")
    order = max(set(orders), key=orders.count)  # the ordering most meshes share
    full = [r for r in full if (r.get("mesh_order") or "") == order]
    lines = defaultdict(dict)
    for r in full:
        lines[(r["_device"], r["variant"], r.get("assembly"))][r["n_edges"]] = r["ns_per_edge"]
    lines = {key: points for key, points in lines.items() if len(points) > 1}
    if not lines:
        return skip(name, "no variant ran on meshes of two sizes")
    devices = sorted({d for d, _, _ in lines})
    many = len(devices) > 1
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for i, ((device, variant, assembly), points) in enumerate(
            sorted(lines.items(), key=lambda kv: (kv[0][0], variant_rank(kv[0][1]), kv[0][2] or ""))):
        sizes = sorted(points)
        label = f"{variant}" + (f" ({assembly})" if assembly else "") + (f", {device}" if many else "")
        # Line style by device where there are several (as the scaling charts), otherwise by assembly strategy.
        style = DEVICE_LINES[devices.index(device) % len(DEVICE_LINES)] if many else "-" if assembly != "edge" else "--"
        ax.plot(sizes, [points[s] for s in sizes], marker=MARKERS.get(assembly, "^"), ls=style,
                color=f"C{variant_rank(variant) % 10}", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = matplotlib.ticker.FormatStrFormatter("%.3g")  # 0.26, not 2.6 x 10^-1
    ax.yaxis.set_major_formatter(plain)
    values = [v for points in lines.values() for v in points.values()]
    # Within a decade the minor ticks are the only ones: label them too. Over several, they would crowd the axis.
    ax.yaxis.set_minor_formatter(plain if max(values) < 10 * min(values) else matplotlib.ticker.NullFormatter())
    ax.set_xlabel("mesh size [edges]")
    ax.set_ylabel("median assembly time per edge [ns]")
    ax.grid(which="both", alpha=0.25)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(f"Scaling with mesh size — {devices_of(full)}\nmode full, default block size, "
                 f"{order or 'unknown'} node ordering", fontsize=9)
    drawn = [r for r in full if (r["_device"], r["variant"], r.get("assembly")) in lines]
    save(fig, out, name, written, drawn)


def chart_orderings(runs, out, written):
    name = "orderings.png"
    full = [r for r in runs if ran_on_one(r) and r.get("mode") == "full" and not r.get("edges_per_block_requested")
            and r.get("mesh_order")]
    # Meshes that differ only in ordering have the same node and edge counts.
    groups = defaultdict(set)
    for r in full:
        groups[(r["_device"], r["n_nodes"], r["n_edges"])].add(r["mesh_order"])
    candidates = [k for k, orders in groups.items() if len(orders) > 1]
    if not candidates:
        return skip(name, "no mesh measured in two node orderings")
    panels = OrderedDict()
    for device in sorted({k[0] for k in candidates}):
        key = max((k for k in candidates if k[0] == device), key=lambda k: (len(groups[k]), k[2]))
        chosen = [r for r in full if (r["_device"], r["n_nodes"], r["n_edges"]) == key]
        for assembly in sorted({r.get("assembly") or "" for r in chosen}):
            panels[(device, assembly)] = [r for r in chosen if (r.get("assembly") or "") == assembly]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 3.6 * len(panels)), squeeze=False)
    for ax, ((device, assembly), chosen) in zip(axes[:, 0], panels.items()):
        variants = sorted({r["variant"] for r in chosen}, key=variant_rank)
        orders = [o for o in ORDERINGS if any(r["mesh_order"] == o for r in chosen)]
        orders += sorted({r["mesh_order"] for r in chosen} - set(orders))
        x = np.arange(len(variants))
        width = 0.8 / len(orders)
        for i, order in enumerate(orders):
            of_order = {r["variant"]: r for r in chosen if r["mesh_order"] == order}
            bandwidth = next(iter(of_order.values()))["ordering_bandwidth"]
            bars = ax.bar(x - 0.4 + width * (i + 0.5), [of_order[v]["ns_per_edge"] if v in of_order else np.nan
                                                         for v in variants], width,
                          label=f"{order} (bandwidth {bandwidth:,})")
            label_bars(ax, bars, "{:.3f}")
        ax.set_xticks(x, variants)
        ax.set_ylabel("median time per edge [ns]")
        ax.set_ylim(0, 1.45 * max(r["ns_per_edge"] for r in chosen))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, title="node ordering", ncol=len(orders), loc="upper center")
        r = chosen[0]
        ax.set_title(f"{series_name(device, assembly)} — {edges_text(r['n_edges'])} edges, "
                     f"{edges_text(r['n_nodes'])} nodes, mode full", fontsize=9)
    axes[-1, 0].set_xlabel("variant")
    fig.suptitle(f"Effect of the node ordering — {devices_of(full)}", fontsize=10)
    fig.tight_layout()
    save(fig, out, name, written, [r for chosen in panels.values() for r in chosen])


def chart_edges_per_block(runs, out, written):
    name = "edges-per-block.png"
    gpu_full = [r for r in runs if ran_on_one(r) and r.get("mode") == "full" and r.get("backend") == "cuda"
                and r.get("edges_per_block")]
    swept = [r for r in gpu_full if r.get("edges_per_block_requested")]
    groups = defaultdict(set)
    for r in swept:
        groups[(r["_device"], r["mesh"], r.get("assembly"))].add(r["edges_per_block"])
    panels = [k for k, values in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][2] or "")) if len(values) > 2]
    if not panels:
        return skip(name, "no variant measured at three or more block sizes")
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        device, mesh, assembly = panel
        in_panel = [r for r in gpu_full if (r["_device"], r["mesh"], r.get("assembly")) == panel]
        chosen = [r for r in in_panel if r.get("edges_per_block_requested")]
        for variant in sorted({r["variant"] for r in chosen}, key=variant_rank):
            color = f"C{variant_rank(variant) % 10}"
            points = sorted((r["edges_per_block"], r["ns_per_edge"]) for r in chosen if r["variant"] == variant)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", color=color, label=variant)
            for r in in_panel:  # the variant's default block size, where the results have it
                if r["variant"] == variant and not r.get("edges_per_block_requested"):
                    ax.scatter(r["edges_per_block"], r["ns_per_edge"], marker="*", s=160, facecolor="none",
                               edgecolor=color, zorder=3)
        ax.scatter([], [], marker="*", s=160, facecolor="none", edgecolor="k", label="default block size")
        skipped = sorted({(r["variant"], r.get("edges_per_block_requested")) for r in runs
                          if r.get("status") == "skipped" and (r["_device"], r["mesh"], r.get("assembly")) == panel})
        ax.set_xscale("log", base=2)
        ax.set_xlabel(("edges" if assembly == "edge" else "nodes") + " per thread block")
        ax.set_ylabel("median assembly time per edge [ns]")
        ax.grid(which="both", alpha=0.25)
        ax.legend(fontsize=8)
        note = f"\nskipped (kernel limits): {', '.join(f'{v} at {e}' for v, e in skipped)}" if skipped else ""
        ax.set_title(f"{device}, {assembly} assembly — {mesh_caption(chosen, mesh)}{note}", fontsize=8)
    fig.suptitle(f"Block-size tuning (mode full) — {devices_of(swept)}", fontsize=10)
    fig.tight_layout()
    save(fig, out, name, written, [r for r in gpu_full if (r["_device"], r["mesh"], r.get("assembly")) in panels])


# ---- many GPUs: scaling sweeps and halo exchange ---------------------------------------------------------------

WEAK_TARGET_PERCENT = 95.0  # the targets for parallel efficiency
STRONG_TARGET_PERCENT = 85.0


def halo_median(run):
    halo = parallel_of(run).get("halo_ms")
    return halo["median"] if halo and halo.get("median") is not None else None


def per_gpu_ns(run):
    value = parallel_of(run).get("ns_per_edge_per_gpu")
    return value if value is not None else run["ns_per_edge"] * rank_count(run)


def edges_text(n_edges):
    return f"{n_edges / 1e6:.3g}M" if n_edges >= 1e6 else f"{n_edges / 1e3:.3g}k"


def rank_unit(runs):
    """What one rank is in these runs: a GPU where every run is of a GPU variant (one rank per GPU), otherwise a
    process (the CPU reference runs one process per rank, whatever the machine has)."""
    return "GPU" if runs and all(r.get("backend") == "cuda" for r in runs) else "rank"


def units_text(count, unit):
    return f"{count} {unit}" + ("" if count == 1 else "s")


def mesh_family(mesh):
    """A weak-scaling sweep grows a spec kind:n:order[:seed] with the rank count: the spec with n left out."""
    parts = mesh.split(":")
    return ":".join(parts[:1] + ["n"] + parts[2:]) if len(parts) >= 3 and parts[1].isdigit() else mesh


def case_sort_key(key):
    device, mesh, variant, assembly, mode, per_block = key
    return (device, mesh, variant_rank(variant), assembly or "", MODES.index(mode) if mode in MODES else len(MODES),
            per_block)


def case_labels(keys):
    """Legend labels of (device, mesh, variant, assembly, mode, edges per block) keys: what tells them apart."""
    many = [len({k[i] for k in keys}) > 1 for i in range(6)]
    labels = {}
    for key in keys:
        device, mesh, variant, assembly, mode, per_block = key
        label = variant + (f" ({assembly})" if assembly else "")
        if mode != "full" or many[4]:
            label += f", {mode}"
        if per_block:
            label += f", {per_block} per block"
        if many[1]:
            label += f", {mesh}"
        if many[0]:
            label += f", {device}"
        labels[key] = label
    return labels


def scaling_cases(runs, scaling):
    """Runs of a `bench --scaling` sweep as {(device, mesh, variant, assembly, mode, edges per block): {ranks: run}};
    a weak sweep's meshes are matched by their spec without n (mesh_family)."""
    cases = defaultdict(dict)
    for r in runs:
        if ran(r) and parallel_of(r).get("scaling") == scaling:
            mesh = mesh_family(r["mesh"]) if scaling == "weak" else r["mesh"]
            key = (r["_device"], mesh, r["variant"], r.get("assembly"), r.get("mode"),
                   r.get("edges_per_block_requested") or 0)
            cases[key][rank_count(r)] = r
    return OrderedDict(sorted(cases.items(), key=lambda kv: case_sort_key(kv[0])))


def rank_axis(ax, counts, unit, labels=None):
    """Log2 axis of rank counts (GPUs, or processes for the CPU reference), ticked at the counts measured."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, labels or [str(c) for c in counts])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlim(counts[0] / 1.25, counts[-1] * 1.25)
    ax.set_xlabel("GPUs (MPI ranks, one per GPU)" if unit == "GPU" else "MPI ranks (processes)")


DEVICE_LINES = ["-", "-.", (0, (6, 2, 1, 2, 1, 2)), (0, (1, 1))]


def case_style(key, devices):
    """Colour by variant, marker by assembly (as the other charts), line style by device where there are several."""
    return dict(color=f"C{variant_rank(key[2]) % 10}", marker=MARKERS.get(key[3], "^"),
                ls=DEVICE_LINES[devices.index(key[0]) % len(DEVICE_LINES)])


def plot_efficiency(ax, cases, labels, target, target_name):
    devices = sorted({key[0] for key in cases})
    values = []
    for key, points in cases.items():
        counts = sorted(p for p in points if parallel_of(points[p]).get("efficiency") is not None)
        percent = [100 * parallel_of(points[p])["efficiency"] for p in counts]
        values += percent
        ax.plot(counts, percent, label=labels[key], **case_style(key, devices))
    ax.axhline(100, color="k", ls="--", lw=1, label="ideal (100%)")
    ax.axhline(target, color="k", ls=":", lw=1.2, label=f"{target_name} ({target:.0f}%)")
    low = min(values + [target]) if values else target
    ax.set_ylim(max(0, 5 * np.floor((low - 3) / 5)), max(105, max(values + [100]) + 5))
    ax.set_ylabel("parallel efficiency [%]")
    ax.grid(which="both", alpha=0.25)


def halo_transports(runs):
    return ", ".join(sorted({parallel_of(r).get("halo_transport") for r in runs} - {None, ""}))


def plot_halo_bars(ax, cases, labels, unit):
    """Per case, one bar per rank count (GPUs, or processes): median assembly time with the median halo exchange
    (ghost states, before each assembly, outside its timing) stacked on top, labelled with its share of the two."""
    counts = sorted({p for points in cases.values() for p in points})
    colors = {p: plt.cm.viridis(0.15 + 0.7 * i / max(1, len(counts) - 1)) for i, p in enumerate(counts)}
    x = np.arange(len(cases))
    width = 0.8 / len(counts)
    top = 0.0
    for i, count in enumerate(counts):
        pos = x - 0.4 + width * (i + 0.5)
        assembly = np.array([median_ms(points[count]) if count in points else np.nan for points in cases.values()])
        halo = np.array([(halo_median(points[count]) or 0.0) if count in points else np.nan
                         for points in cases.values()])
        ax.bar(pos, assembly, width, color=colors[count], edgecolor="k", linewidth=0.3, label=units_text(count, unit))
        ax.bar(pos, halo, width, bottom=assembly, color=colors[count], alpha=0.35, hatch="///", edgecolor="k",
               linewidth=0.3)
        for p, a, h in zip(pos, assembly, halo):
            if np.isfinite(h) and h > 0:
                ax.annotate(f"{100 * h / (a + h):.0f}%", (p, a + h), ha="center", va="bottom", fontsize=6,
                            xytext=(0, 2), textcoords="offset points")
        top = max(top, np.nanmax(np.append(assembly + halo, 0.0)))
    ax.set_xticks(x, [labels[key] for key in cases], rotation=20 if len(cases) > 4 else 0,
                  ha="right" if len(cases) > 4 else "center")
    ax.set_ylim(0, 1.3 * top)
    ax.set_ylabel("median time per repetition [ms]")
    ax.grid(axis="y", alpha=0.3)
    ax.bar([np.nan], [np.nan], color="0.85", hatch="///", edgecolor="k", linewidth=0.3,
           label="halo exchange, % of the bar")
    ax.legend(fontsize=7, ncol=len(counts) + 1, loc="upper left", title="assembly (solid) + halo exchange (hatched)",
              title_fontsize=7)


def has_halo(runs):
    return any(rank_count(r) > 1 and halo_median(r) is not None for r in runs)


def scaling_figure(with_halo):
    """Two panels side by side; a full-width halo panel below them when the runs timed the exchange."""
    if not with_halo:
        fig, axes = plt.subplots(1, 2, figsize=(14, 5.5))
        return fig, axes[0], axes[1], None
    fig = plt.figure(figsize=(14, 10.5))
    grid = fig.add_gridspec(2, 2, height_ratios=[1, 0.85])
    return fig, fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), fig.add_subplot(grid[1, :])


def scaling_sweep(runs, kind):
    """The cases of a weak or strong sweep and what both charts draw them with: (cases, their runs, labels,
    devices, rank counts); None when the results hold no such sweep."""
    cases = scaling_cases(runs, kind)
    if not cases:
        return None
    chosen = [r for points in cases.values() for r in points.values()]
    return (cases, chosen, case_labels(list(cases)), sorted({key[0] for key in cases}),
            sorted({rank_count(r) for r in chosen}))


def chart_weak_scaling(runs, out, written):
    name = "weak-scaling.png"
    sweep = scaling_sweep(runs, "weak")
    if sweep is None:
        return skip(name, "no weak-scaling runs: fluxjac bench --ranks 1,2,4 --scaling weak")
    cases, chosen, labels, devices, counts = sweep
    unit = rank_unit(chosen)
    # Each mesh spec's size at one rank: the work per rank the sweep holds constant.
    sizes = OrderedDict()
    for (device, family, *_), points in cases.items():
        if 1 in points:
            sizes.setdefault(family, (points[1]["mesh"], points[1]["n_edges"]))
    tick_labels = None
    if len(sizes) == 1:  # one mesh grown with the ranks: its whole size under each count
        edges = {rank_count(r): r["n_edges"] for r in chosen}
        tick_labels = [f"{c}\n{edges_text(edges[c])} edges" for c in counts]
    halo = has_halo(chosen)
    fig, left, right, bottom = scaling_figure(halo)
    top = 0.0
    for key, points in cases.items():
        ranks = sorted(points)
        values = [per_gpu_ns(points[p]) for p in ranks]
        top = max(top, max(values))
        left.plot(ranks, values, label=labels[key], **case_style(key, devices))
    rank_axis(left, counts, unit, tick_labels)
    left.set_ylim(0, 1.15 * top)
    left.set_ylabel(f"median assembly time per edge x {unit}s [ns]\n(ns per edge per {unit}; flat = ideal)")
    left.grid(which="both", alpha=0.25)
    left.set_title(f"time per edge per {unit} (the slowest rank's assembly)", fontsize=9)
    plot_efficiency(right, cases, labels, WEAK_TARGET_PERCENT, "target")
    rank_axis(right, counts, unit, tick_labels)
    right.set_title(f"weak-scaling efficiency: ns per edge per {unit} at 1 {unit} / at P {unit}s", fontsize=9)
    right.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if bottom is not None:
        plot_halo_bars(bottom, cases, labels, unit)
        bottom.set_title(f"assembly and halo exchange per repetition (slowest rank of each; "
                         f"{halo_transports(chosen) or 'transport unknown'})", fontsize=9)
    per_rank = "; ".join(f"{mesh}: {edges_text(n)} edges per {unit}" for mesh, n in sizes.values())
    fig.suptitle(f"Weak scaling of the Jacobian assembly — {devices_of(chosen)}\n"
                 f"{per_rank or f'no 1-{unit} run'} (the mesh at 1 {unit}), grown with the {unit} count", fontsize=10)
    fig.tight_layout()
    save(fig, out, name, written, chosen)


def chart_strong_scaling(runs, out, written):
    name = "strong-scaling.png"
    sweep = scaling_sweep(runs, "strong")
    if sweep is None:
        return skip(name, "no strong-scaling runs: fluxjac bench --ranks 1,2,4 --scaling strong")
    cases, chosen, labels, devices, counts = sweep
    unit = rank_unit(chosen)
    halo = has_halo(chosen)
    fig, left, right, bottom = scaling_figure(halo)
    for key, points in cases.items():
        ranks = sorted(points)
        style = case_style(key, devices)
        left.plot(ranks, [median_ms(points[p]) for p in ranks], label=labels[key], **style)
        if 1 in points:
            ideal = np.array(counts, dtype=float)
            left.plot(ideal, median_ms(points[1]) / ideal, color=style["color"], ls="--", lw=0.9, alpha=0.7)
    left.plot([], [], color="k", ls="--", lw=0.9, label="ideal t1 / P (per case, same colour)")
    left.set_yscale("log")
    for axis in (left.yaxis.set_major_formatter, left.yaxis.set_minor_formatter):
        axis(matplotlib.ticker.FormatStrFormatter("%g"))
    rank_axis(left, counts, unit)
    left.set_ylabel("median assembly time [ms] (the slowest rank's)")
    left.grid(which="both", alpha=0.25)
    left.set_title("assembly time of the whole mesh", fontsize=9)
    plot_efficiency(right, cases, labels, STRONG_TARGET_PERCENT, "target")
    rank_axis(right, counts, unit)
    right.set_title("strong-scaling efficiency: t1 / (P x tP)", fontsize=9)
    # One legend for both panels: the cases, the ideal line and the efficiency references.
    handles, names = left.get_legend_handles_labels()
    more = [(h, n) for h, n in zip(*right.get_legend_handles_labels()) if n not in names]
    right.legend(handles + [h for h, _ in more], names + [n for _, n in more], fontsize=7, loc="upper left",
                 bbox_to_anchor=(1.01, 1.0))
    if bottom is not None:
        plot_halo_bars(bottom, cases, labels, unit)
        bottom.set_title(f"assembly and halo exchange per repetition (slowest rank of each; "
                         f"{halo_transports(chosen) or 'transport unknown'})", fontsize=9)
    meshes = sorted({k[1] for k in cases})
    fig.suptitle(f"Strong scaling of the Jacobian assembly — {devices_of(chosen)}\n"
                 + "; ".join(mesh_caption(chosen, m) for m in meshes) + f", divided among the {unit}s", fontsize=10)
    fig.tight_layout()
    save(fig, out, name, written, chosen)


def chart_halo(runs, out, written):
    name = "halo.png"
    swept = [r for r in runs if ran(r) and parallel_of(r).get("scaling") in ("weak", "strong")]
    in_sweep = {id(r) for r in swept}
    many = [r for r in runs if ran(r) and id(r) not in in_sweep and rank_count(r) > 1 and halo_median(r) is not None]
    if not many:
        if has_halo(swept):
            return skip(name, "the halo exchange is drawn in the scaling charts")
        return skip(name, "no runs on several ranks with a timed halo exchange")
    # Per device and mesh, every case measured on several ranks, with its one-rank run where the results have it.
    keys = {(r["_device"], r["mesh"], r["variant"], r.get("assembly"), r.get("mode"),
             r.get("edges_per_block_requested") or 0) for r in many}
    panels = OrderedDict()
    for r in runs:
        key = (r["_device"], r["mesh"], r["variant"], r.get("assembly"), r.get("mode"),
               r.get("edges_per_block_requested") or 0)
        if ran(r) and id(r) not in in_sweep and key in keys:
            panels.setdefault(key[:2], {}).setdefault(key, {})[rank_count(r)] = r
    panels = OrderedDict(sorted(panels.items()))
    drawn = [r for cases in panels.values() for points in cases.values() for r in points.values()]
    unit = rank_unit(drawn)
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 4.5 * len(panels)), squeeze=False)
    for ax, ((device, mesh), cases) in zip(axes[:, 0], panels.items()):
        cases = OrderedDict(sorted(cases.items(), key=lambda kv: case_sort_key(kv[0])))
        of_panel = [r for points in cases.values() for r in points.values()]
        plot_halo_bars(ax, cases, case_labels(list(cases)), unit)
        ax.set_title(f"{device} — {mesh_caption(of_panel, mesh)}; halo over "
                     f"{halo_transports(of_panel) or 'unknown transport'}", fontsize=9)
    fig.suptitle(f"Halo exchange beside the assembly (slowest rank of each, per repetition) — {devices_of(many)}",
                 fontsize=10)
    fig.tight_layout()
    save(fig, out, name, written, drawn)


CHARTS = [chart_time_vs_paper, chart_table4_split, chart_roofline, chart_size, chart_orderings,
          chart_edges_per_block, chart_weak_scaling, chart_strong_scaling, chart_halo]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("results", nargs="+", help="result JSON files of 'fluxjac bench --json'")
    parser.add_argument("--out", default="plots", help="folder for the PNG files (default: plots)")
    parser.add_argument("--force", action="store_true", help="replace charts that exist in --out (else refused)")
    args = parser.parse_args()
    runs = load(args.results)
    charts = []
    for chart in CHARTS:
        chart(runs, args.out, charts)
    if not charts:
        sys.exit("plot_bench.py: the results hold data for no chart")
    os.makedirs(args.out, exist_ok=True)
    write_charts(charts, args.force)
    for path, _ in charts:
        print(path)


if __name__ == "__main__":
    main()
