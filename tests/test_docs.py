# ctest-label: cli
"""The documents against the tool: every figure the documents quote from `fluxjac list --json`, every config file
against the command that reads it, and no development history in the users' documents.

    /usr/bin/python3 tests/test_docs.py BUILD/fluxjac        (ctest runs it in a folder of the build tree)

- docs/performance.md: every table with a column named by a `fluxjac list --json` key (`fp64_per_edge`,
  `fp64_instructions_per_edge`, `fp64_per_edge_as_written`, `strategies`: the preferred strategy's count with its
  assembly arithmetic) is checked row by row against the tool, and so are the per-edge table's operations by kind
  (add / sub, mul, 1/x, sqrt, compare, fused: `fp64_ops`); the per-edge table lists every variant once. Its bytes
  table and the CPU reference's bytes per edge, and design.md's bytes of each strategy, against `bytes_per_edge` and
  the `strategies` byte terms.
- Every table of the users' documents with a register cap, node tile, node threads, node batch, edges per block or
  threads per edge column, against the variant's `tuning` (and `threads_per_edge`).
- configs/*.toml: each key is a long option of the command the file's first comment names (`fluxjac run --help`,
  `fluxjac bench --help`); `fluxjac bench --config FILE --dry-run` accepts the file (with `--variant reference`, so
  that it needs no GPU, and `--ranks 1`, so that it needs no mpirun); variant names are registered ones; every mesh
  spec a comment names is one of the file's meshes (or, for weak scaling, one of them grown for a rank count of the
  file: src/bench/sweep.cpp, scale_mesh_spec); a file of generator specs run on several ranks says that they are
  generated in box slabs and names no partitioner, and a file without ranks names no partitioning.
- docs/results/README.md: each file's entry names the revision the file records (`fluxjac.git_revision`).
- Every citation of a document by file and heading (design.md, "Many GPUs") in the documents and configs names a
  heading (or a bold paragraph label) of that document.
- README.md, docs/performance.md, docs/design.md, docs/formats.md and docs/results/README.md contain no development
  history: device calls and their time limits, sessions, targets met or missed, plans ("not yet", "the next thing to
  try"), first-person asides, hand-corrected revisions ("recorded as `...`", a `-dirty` revision no result file
  records). Each hit is reported as file:line.

A failure names the document and line, the table row and column, and both values. Standard library only; about a
second.
"""

import json
import math
import pathlib
import re
import subprocess
import sys
import tempfile
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
USERS_DOCUMENTS = ["README.md", "docs/performance.md", "docs/design.md", "docs/formats.md", "docs/results/README.md"]

failures = []


def check(condition, message):
    if not condition:
        print("FAILED " + message)
        failures.append(message)
    return condition


def run(*args, expect=0):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=60)
    if expect is not None and result.returncode != expect:
        print(result.stdout, result.stderr)
        raise SystemExit(f"{' '.join(map(str, args))}: exit code {result.returncode}, expected {expect}")
    return result


def relative(path):
    return path.relative_to(ROOT).as_posix()


# ---- Markdown tables --------------------------------------------------------------------------------------------


class Table:
    """A Markdown table: its header cells, its rows (cells, line number) and the text just above it."""

    def __init__(self, path, caption, header, rows):
        self.path, self.caption, self.header, self.rows = path, caption, header, rows


def cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def tables_of(path):
    lines = path.read_text().splitlines()
    tables, i = [], 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"\s*\|[-| :]+\|\s*$", lines[i + 1]):
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            paragraph = []
            while k >= 0 and lines[k].strip() and not lines[k].lstrip().startswith(("|", "#")):
                paragraph.insert(0, lines[k].strip())
                k -= 1
            caption = " ".join(paragraph)
            header = cells(lines[i])
            rows, k = [], i + 2
            while k < len(lines) and lines[k].lstrip().startswith("|"):
                rows.append((cells(lines[k]), k + 1))
                k += 1
            tables.append(Table(path, caption[:90], header, rows))
            i = k
        else:
            i += 1
    return tables


def number(text):
    """The first number of a table cell or phrase ("2,648 (its `Adiag` sums)" is 2648), None if it has none."""
    found = re.search(r"-?\d[\d,]*(?:\.\d+)?", text)
    return float(found.group().replace(",", "")) if found else None


def variants_of(cell, names):
    """The variant names a row's first cell lists ("dn_10, dn_5", "reference (CPU)"), None if it is not such a list."""
    listed = [re.sub(r"\(.*?\)", "", part).replace("`", "").strip() for part in cell.split(",")]
    return listed if listed and all(name in names for name in listed) else None


def where(table, line):
    return f"{relative(table.path)}:{line}"


# ---- the work model: performance.md against list --json ---------------------------------------------------------


def strategy_count(variant):
    strategies = variant["strategies"]
    name = variant["preferred_assembly"] or next(iter(strategies))
    return strategies[name]["fp64_per_edge"], f"strategies.{name}.fp64_per_edge"


WORK_KEYS = {
    "fp64_per_edge": lambda v: (v["fp64_per_edge"], "fp64_per_edge"),
    "fp64_instructions_per_edge": lambda v: (v["fp64_instructions_per_edge"], "fp64_instructions_per_edge"),
    "fp64_per_edge_as_written": lambda v: (v["fp64_per_edge_as_written"], "fp64_per_edge_as_written"),
    "strategies": strategy_count,
}
OPERATION_COLUMNS = {"add / sub": "add", "mul": "mul", "div": "div", "1/x": "reciprocal", "sqrt": "sqrt",
                     "compare": "compare", "fused": "fused"}


def work_columns(header):
    """Column index -> getter for the columns of a table that quote list --json's work figures."""
    columns = {}
    for index, title in enumerate(header):
        keys = [key for key in re.findall(r"`([a-z0-9_]+)`", title) if key in WORK_KEYS]
        if keys:
            columns[index] = WORK_KEYS[keys[0]]
    if columns:  # a work table: its operation columns are fp64_ops by kind
        for index, title in enumerate(header):
            if title.lower() in OPERATION_COLUMNS:
                kind = OPERATION_COLUMNS[title.lower()]
                columns[index] = lambda v, kind=kind: (v["fp64_ops"][kind], f"fp64_ops.{kind}")
    return columns


def check_work_tables(variants):
    path = DOCS / "performance.md"
    names = {v["name"]: v for v in variants}
    per_edge_tables = 0
    for table in tables_of(path):
        columns = work_columns(table.header)
        if not columns:
            continue
        listed = []
        for row, line in table.rows:
            rows_variants = variants_of(row[0], names)
            if not check(rows_variants is not None,
                         f"{where(table, line)}: row \"{row[0]}\" of the table after \"{table.caption}\" names no "
                         f"variant of `fluxjac list --json` ({', '.join(names)})"):
                continue
            listed += rows_variants
            for index, getter in columns.items():
                quoted = number(row[index]) if index < len(row) else None
                for name in rows_variants:
                    value, key = getter(names[name])
                    check(quoted is not None and round(value) == quoted,
                          f"{where(table, line)}: row \"{row[0]}\", column \"{table.header[index]}\": the document "
                          f"says {row[index] if index < len(row) else 'nothing'}, `fluxjac list --json` gives "
                          f"{name}'s {key} = {value:g}")
        if table.caption.startswith("Per edge (`fluxjac list --json`"):
            per_edge_tables += 1
            for name in names:
                check(listed.count(name) == 1,
                      f"{relative(path)}: the per-edge work table after \"{table.caption}\" lists {name} "
                      f"{listed.count(name)} times (once: every variant of `fluxjac list --json`)")
    check(per_edge_tables == 1, f"{relative(path)}: one table after \"Per edge (`fluxjac list --json` ...\" "
          f"(section \"Work model\"), found {per_edge_tables}")


# ---- bytes ------------------------------------------------------------------------------------------------------


def bytes_in(cell):
    """The bytes a bytes-table cell states: its last "N B" (0 for "-" or "none")."""
    found = re.findall(r"(\d[\d,]*(?:\.\d+)?) B\b", cell.replace("*", ""))
    if found:
        return float(found[-1].replace(",", ""))
    return 0.0 if cell.strip() in ("-", "none") else None


def check_bytes(variants):
    gpu = [v for v in variants if v["backend"] == "cuda"]
    reference = next(v for v in variants if v["name"] == "reference")
    for v in gpu[1:]:
        check(v["strategies"]["edge"]["bytes_per_block"] == gpu[0]["strategies"]["edge"]["bytes_per_block"] and
              v["bytes_per_edge"] == gpu[0]["bytes_per_edge"],
              f"`fluxjac list --json`: {v['name']}'s bytes differ from {gpu[0]['name']}'s; the documents quote one "
              f"figure per strategy")
    model = gpu[0]
    path = DOCS / "performance.md"
    text = path.read_text()
    sizes = re.search(r"([\d,]+) nodes, ([\d,]+) edges \(", text)
    nodes, edges = (float(sizes.group(k).replace(",", "")) for k in (1, 2))
    check(math.isclose(nodes / edges, model["nodes_per_edge"], rel_tol=1e-12),
          f"{relative(path)}: the paper-size mesh's {sizes.group(1)} nodes and {sizes.group(2)} edges are not the "
          f"`nodes_per_edge` of `fluxjac list --json` ({model['nodes_per_edge']})")
    table = next((t for t in tables_of(path) if t.header[:3] == ["term", "edge strategy", "node strategy"]), None)
    if not check(table is not None, f"{relative(path)}: no bytes table (| term | edge strategy | node strategy |)"):
        return
    terms = [("per edge at", None), ("per edge", "bytes_per_edge"), ("per off-diagonal block", "bytes_per_block"),
             ("per node", "bytes_per_node"), ("zeroing", "zeroing_bytes_per_node"), ("paper-size mesh", "GB")]
    for row, line in table.rows:
        term = next(((prefix, key) for prefix, key in terms if row[0].startswith(prefix)), None)
        if not check(term is not None, f"{where(table, line)}: bytes row \"{row[0]}\" is not a term of the model"):
            continue
        prefix, key = term
        for index, strategy in ((1, "edge"), (2, "node")):
            if key is None:  # per edge at the paper mesh's nodes per edge
                quoted, value = bytes_in(row[index]), round(model["bytes_per_edge"][strategy])
                check(f"{model['nodes_per_edge']:.4f}" in row[0],
                      f"{where(table, line)}: row \"{row[0]}\": `fluxjac list --json` gives nodes_per_edge "
                      f"{model['nodes_per_edge']:.4f}")
                name = f"bytes_per_edge.{strategy}"
            elif key == "GB":
                quoted = number(row[index])
                value = round(model["bytes_per_edge"][strategy] * edges / 1e9, 3)
                name = f"bytes_per_edge.{strategy} x {edges:,.0f} edges, GB"
            else:
                quoted, value = bytes_in(row[index]), model["strategies"][strategy][key]
                name = f"strategies.{strategy}.{key}"
            check(quoted == value, f"{where(table, line)}: row \"{row[0]}\", column \"{table.header[index]}\": the "
                  f"document says {row[index]}, `fluxjac list --json` gives {name} = {value:g}")
    cpu = re.search(r"CPU reference has the edge strategy's arrays[^.]*?: (\d+) B per edge", text)
    if check(cpu is not None, f"{relative(path)}: no sentence giving the CPU reference's bytes per edge"):
        line = text[:cpu.start()].count("\n") + 1
        value = round(reference["bytes_per_edge"]["cpu"])
        check(int(cpu.group(1)) == value, f"{relative(path)}:{line}: the CPU reference's {cpu.group(1)} B per edge; "
              f"`fluxjac list --json` gives reference's bytes_per_edge.cpu = {value}")

    path = DOCS / "design.md"
    text = path.read_text()
    for strategy, label in (("edge", "**Edge strategy.**"), ("node", "**Node strategy.**")):
        start = text.find(label)
        if not check(start >= 0, f"{relative(path)}: no \"{label}\" bullet in \"Timing and the work model\""):
            continue
        bullet = text[start:text.find("\n  - ", start + 1)]
        line = text[:start].count("\n") + 1
        terms = model["strategies"][strategy]
        stated = [int(n) for n in re.findall(r"That is (\d+) B", bullet)]
        expected = [round(terms["bytes_per_edge"] + 2 * terms["bytes_per_block"]), round(terms["bytes_per_node"])]
        check(stated == expected, f"{relative(path)}:{line}: {label} says per edge and per node {stated} B, "
              f"`fluxjac list --json` gives strategies.{strategy}: bytes_per_edge + 2 bytes_per_block, "
              f"bytes_per_node = {expected} B")
        zeroing = re.search(r"Zeroing `Adiag` \((\d+) B per node\)", bullet)
        if strategy == "edge" and check(zeroing is not None, f"{relative(path)}:{line}: {label} gives no zeroing"):
            check(int(zeroing.group(1)) == terms["zeroing_bytes_per_node"],
                  f"{relative(path)}:{line}: zeroing {zeroing.group(1)} B per node, `fluxjac list --json` gives "
                  f"strategies.edge.zeroing_bytes_per_node = {terms['zeroing_bytes_per_node']:g}")


# ---- tunings ----------------------------------------------------------------------------------------------------


def tuning_columns(header):
    columns = {}
    for index, title in enumerate(header):
        t = title.lower().replace("`", "")
        if t.startswith("register cap"):
            columns[index] = ("max_registers", "cap")
        elif t == "registers (cap)":
            columns[index] = ("max_registers", "bracketed cap")
        elif t in ("tile", "node tile"):
            columns[index] = ("node_tile_entries", "number")
        elif t in ("threads", "node threads"):
            columns[index] = ("node_block_threads", "number")
        elif t in ("batch", "node batch"):
            columns[index] = ("node_batch", "number")
        elif t in ("edges/block", "edges per block"):
            columns[index] = ("edges_per_block", "number")
        elif t.startswith("threads per edge"):
            columns[index] = ("threads_per_edge", "number")
    return columns


def quoted_tuning(cell, kind):
    """A tuning figure as a cell states it; a register cap of "none" is 255, the most a thread can have."""
    if kind == "bracketed cap":
        found = re.search(r"\(([^)]*)\)", cell)
        cell = found.group(1) if found else ""
    if kind in ("cap", "bracketed cap") and cell.strip().lower() == "none":
        return 255
    found = re.match(r"\s*(\d+)", cell.replace("`", ""))
    return int(found.group(1)) if found else None


def check_tunings(variants):
    names = {v["name"]: v for v in variants}
    for document in USERS_DOCUMENTS:
        for table in tables_of(ROOT / document):
            columns = tuning_columns(table.header)
            if not columns:
                continue
            for row, line in table.rows:
                rows_variants = variants_of(row[0], names)
                if rows_variants is None:
                    continue
                for index, (key, kind) in columns.items():
                    cell = row[index] if index < len(row) else ""
                    quoted = quoted_tuning(cell, kind)
                    for name in rows_variants:
                        v = names[name]
                        source = v if key == "threads_per_edge" else v["tuning"]
                        if source is None or (key == "threads_per_edge" and v["backend"] != "cuda"):
                            check(quoted is None, f"{where(table, line)}: row \"{row[0]}\", column "
                                  f"\"{table.header[index]}\": the document says {cell}, `fluxjac list --json` "
                                  f"gives {name} no tuning")
                            continue
                        value = source[key]
                        check(quoted == value, f"{where(table, line)}: row \"{row[0]}\", column "
                              f"\"{table.header[index]}\": the document says {cell}, `fluxjac list --json` gives "
                              f"{name}'s {'' if key == 'threads_per_edge' else 'tuning.'}{key} = {value}")


# ---- configs ----------------------------------------------------------------------------------------------------


def long_options(fluxjac, command):
    return set(re.findall(r"--([a-z][a-z0-9-]*)", run(fluxjac, command, "--help").stdout)) - {"help", "config"}


SPEC = re.compile(r"\b(tet|prism|mixed):(\d+)(?::(natural|random|rcm))?\b")


def grown(n, ranks):
    """scale_mesh_spec (src/bench/sweep.cpp): weak scaling grows n by the cube root of the rank count."""
    return math.floor(n * ranks ** (1.0 / 3.0) + 0.5)


def check_configs(fluxjac, names):
    options = {command: long_options(fluxjac, command) for command in ("run", "bench")}
    with tempfile.TemporaryDirectory() as cache:
        for path in sorted((ROOT / "configs").glob("*.toml")):
            text = path.read_text()
            lines = text.splitlines()
            where_ = relative(path)
            try:
                values = tomllib.loads(text)
            except tomllib.TOMLDecodeError as error:
                check(False, f"{where_}: not TOML: {error}")
                continue
            first = lines[0] if lines else ""
            command = "run" if "fluxjac run" in first else "bench" if "fluxjac bench" in first else None
            if not check(command is not None, f"{where_}:1: its first comment names neither 'fluxjac run' nor "
                         f"'fluxjac bench', the command that reads it"):
                continue
            keys = {key.replace("_", "-") for key in values}
            for key in sorted(keys - options[command]):
                line = next(i + 1 for i, text_line in enumerate(lines)
                            if re.match(rf"\s*{re.escape(key)}\s*=", text_line.replace("_", "-")))
                check(False, f"{where_}:{line}: key '{key}' is no long option of 'fluxjac {command} --help'")
            if keys <= options["bench"]:
                extra = ["--variant", "reference"] + (["--ranks", "1"] if "ranks" in keys else [])
                result = run(fluxjac, "bench", "--config", path, "--dry-run", "--cache", cache, *extra, expect=None)
                check(result.returncode == 0, f"{where_}: 'fluxjac bench --config {where_} --dry-run "
                      f"{' '.join(extra)}' exits {result.returncode}: {result.stderr.strip()}")
            listed = values.get("variants", values.get("variant", []))
            for name in [listed] if isinstance(listed, str) else listed:
                check(name.startswith("all") or name in names, f"{where_}: variant '{name}' is not registered "
                      f"(`fluxjac list --json`: {', '.join(sorted(names))})")

            meshes = values.get("meshes", values.get("mesh", []))
            meshes = [meshes] if isinstance(meshes, str) else meshes
            specs = [m.groups() for m in (SPEC.fullmatch(mesh) for mesh in meshes) if m]
            ranks = values.get("ranks", [])
            allowed = set()
            for kind, n, order in specs:
                allowed.add((kind, int(n), order))
                if values.get("scaling") == "weak":
                    allowed |= {(kind, grown(int(n), p), order) for p in ranks}
            comments = [(i + 1, l[l.index("#"):]) for i, l in enumerate(lines) if "#" in l]
            for line, comment in comments:
                for kind, n, order in SPEC.findall(comment):
                    ok = any(k == kind and m == int(n) and (not order or order == o) for k, m, o in allowed)
                    shown = ", ".join(meshes) + (f"; ranks {ranks}, {values['scaling']} scaling" if ranks else "")
                    check(ok, f"{where_}:{line}: the comment names {kind}:{n}{':' + order if order else ''}, the "
                          f"config's meshes are {shown}")
            comment_text = " ".join(c for _, c in comments)
            partitioners = [p for p in ("METIS", "PT-Scotch") if p in comment_text]
            if ranks and meshes and len(specs) == len(meshes):
                check("slab" in comment_text and not partitioners,
                      f"{where_}: generator specs on {ranks} ranks are generated in parts, box slabs along z "
                      f"(src/part/distributed_generator.hpp); the comment says "
                      f"{'nothing of slabs' if 'slab' not in comment_text else ''}"
                      f"{' and ' if 'slab' not in comment_text and partitioners else ''}"
                      f"{' and '.join(partitioners) + ' partitions them' if partitioners else ''}")
            elif not ranks:
                check(not partitioners and "slab" not in comment_text,
                      f"{where_}: a run of one process has no parts, the comment names "
                      f"{', '.join(partitioners) or 'slabs'}")


# ---- result files -----------------------------------------------------------------------------------------------


def recorded_revisions():
    revisions = {}
    results = DOCS / "results"
    for path in sorted(results.glob("*.json")) + sorted(results.glob("*/*.json")):
        found = re.search(r'"git_revision":\s*"([^"]*)"', path.read_text())
        revisions[path.relative_to(results).as_posix()] = found.group(1) if found else None
    return revisions


def entry_files(heading, revisions):
    """The result files an entry's heading names: full names, a folder ("h200-2026-11-29-check/") for every file in it,
    and "-cfl100.json" or "-mcgs-" after a full name for the files of the same prefix."""
    tokens = re.findall(r"`([^`]+)`", heading)
    named, prefix = [], None
    for token in tokens:
        if token.endswith("/"):  # a folder: every result file in it
            named += [n for n in revisions if n.startswith(token)]
        elif token in revisions:
            named.append(token)
            prefix = token[:token.rfind("-")]
        elif token.startswith("-") and prefix:
            named += [n for n in revisions if n == prefix + token or (n.startswith(prefix) and token in n[len(prefix):]
                                                                        and not token.endswith(".json"))]
    return named


def check_result_revisions(revisions):
    path = DOCS / "results" / "README.md"
    text = path.read_text()
    lines = text.splitlines()
    entry = []
    for line_number, line in enumerate(lines, 1):
        if line.startswith("## "):
            entry = entry_files(line, revisions)
        stated = re.search(r"\*\*Revision:\*\* `([^`]+)`", line)
        if stated and check(entry, f"{relative(path)}:{line_number}: a revision outside a result file's entry"):
            for name in entry:
                check(stated.group(1) == revisions[name], f"{relative(path)}:{line_number}: the entry of {name} says "
                      f"revision {stated.group(1)}, the file records `fluxjac.git_revision` = {revisions[name]}")
    mentioned = set(re.findall(r"`([^`]+)`", text))
    for line in lines:
        if line.startswith("## "):
            mentioned |= set(entry_files(line, revisions))
    for name in revisions:
        check(name in mentioned, f"{relative(path)}: no entry for docs/results/{name}")


# ---- history in the users' documents ----------------------------------------------------------------------------

HISTORY = [
    ("a device call's time limit", r"\btime limit|\b\d+-minute\b"),
    ("a device call", r"\bdevice calls?\b|\bcalls? \d+\b|\bthe call's\b|\bcalls? of (one|the) machine\b"),
    ("the device tool's folder", r"(?<![\w/])\.device\b"),
    ("a session", r"\bsessions?\b"),
    ("a target met or missed", r"\btargets? \d|\btargets?[^.|]{0,40}\b(met|missed)\b|\bthe aim is\b|\bto beat\b"),
    ("a plan", r"\bnot yet\b|\byet(?=[.;,)])|\bnext thing to try\b|\bnext to try\b|\bfixed since\b"),
    ("a first-person aside", r"\b(we|our|ours)\b"),
    ("a hand-corrected revision", r"\brecorded as `"),
]


def check_history(revisions):
    recorded = {r for r in revisions.values() if r}
    patterns = [(label, re.compile(pattern, re.IGNORECASE)) for label, pattern in HISTORY]
    for document in USERS_DOCUMENTS:
        for line_number, line in enumerate((ROOT / document).read_text().splitlines(), 1):
            for label, pattern in patterns:
                for hit in pattern.finditer(line):
                    check(False, f"{document}:{line_number}: {label}: \"{hit.group()}\" in: {line.strip()}")
            for dirty in re.findall(r"`?([0-9a-f]{7,40}-dirty)\b", line):
                check(dirty in recorded, f"{document}:{line_number}: a hand-corrected revision: \"{dirty}\" is no "
                      f"result file's `fluxjac.git_revision`")


# ---- citations between the documents ----------------------------------------------------------------------------

CITED = ["docs/performance.md", "docs/design.md", "docs/tuning.md", "docs/formats.md", "docs/bench-json.md"]


def anchors(path):
    """What a citation may name in a document: a heading (also without its bracketed tail or its backticks), or the
    label of a bold paragraph ("**Residual.**")."""
    text = path.read_text()
    found = set()
    for heading in re.findall(r"^#+ (.*)$", text, re.M):
        heading = heading.strip()
        found |= {heading, re.sub(r"\s*\(.*$", "", heading), heading.replace("`", "")}
    found |= {label.strip().rstrip(".") for label in re.findall(r"\*\*([^*]+?)\*\*", text)}
    return found


def check_citations():
    targets = {pathlib.PurePath(doc).name: anchors(ROOT / doc) for doc in CITED}
    citation = re.compile(r"\b(performance|design|tuning|formats|bench-json)\.md\b,?\s*(?:section\s*)?\"([^\"]+)\"")
    sources = USERS_DOCUMENTS + ["docs/tuning.md", "docs/bench-json.md", "CHANGELOG.md"]
    sources += [relative(path) for path in sorted((ROOT / "configs").glob("*.toml"))]
    for source in sources:
        text = (ROOT / source).read_text()
        for hit in citation.finditer(text):
            name = hit.group(1) + ".md"
            cited = re.sub(r"\s*\n\s*#?\s*", " ", hit.group(2)).strip()
            line = text[:hit.start()].count("\n") + 1
            check(cited in targets[name], f"{source}:{line}: cites {name}, \"{cited}\": no such heading there")


def main():
    fluxjac = pathlib.Path(sys.argv[1]).resolve()
    variants = json.loads(run(fluxjac, "list", "--json").stdout)
    names = {v["name"] for v in variants}
    revisions = recorded_revisions()
    for name, step in (("work model", lambda: check_work_tables(variants)), ("bytes", lambda: check_bytes(variants)),
                       ("tunings", lambda: check_tunings(variants)),
                       ("configs", lambda: check_configs(fluxjac, names)),
                       ("result revisions", lambda: check_result_revisions(revisions)),
                       ("citations", check_citations),
                       ("history", lambda: check_history(revisions))):
        before = len(failures)
        step()
        print(("ok     " if len(failures) == before else "FAILED ") + name)
    if failures:
        print(f"{len(failures)} check(s) failed: the documents drifted from the tool (fix the document, or the tool)")
        sys.exit(1)


main()
