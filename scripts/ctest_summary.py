#!/usr/bin/python3
"""The closing summary of scripts/test.sh: counts of a ctest run, the skipped tests grouped by label and reason,
and the failed tests by name.

    /usr/bin/python3 scripts/ctest_summary.py BUILD_DIR RESULTS.xml [--log CTEST.log]

RESULTS.xml is what `ctest --output-junit` wrote; the labels come from `ctest --show-only=json-v1` in BUILD_DIR.
A skipped test's reason is the message it printed: GoogleTest's GTEST_SKIP() text, or for a test that exits with
its SKIP_RETURN_CODE, the line of its output that mentions skipping (else its last line). Standard library only.
Exit codes: 0 (whatever the tests did: the caller keeps ctest's exit status), 2 when the results cannot be read.
"""

import argparse
import collections
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

# ctest's result word per test, from its progress lines: "12/574 Test  #12: Name ....***Timeout   300.01 sec".
RESULT_LINE = re.compile(r"^\s*\d+/\d+ Test +#\d+: (\S+) \.*\s*(?:\*\*\*)?(.+?)\s+[\d.]+ sec$")
# Prefixes that repeat what the summary already says.
REDUNDANT = re.compile(r"^(SKIPPED:\s*|GPU test skipped:\s*|GPU test\s+)", re.IGNORECASE)


def labels_by_test(build_dir):
    """{test name: its first label} from ctest's JSON description of the tests."""
    result = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"], capture_output=True, text=True,
                            check=True)
    labels = {}
    for test in json.loads(result.stdout)["tests"]:
        values = [p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"]
        labels[test["name"]] = values[0][0] if values and values[0] else "-"
    return labels


def skip_reason(output):
    """The one line a skipped test gave as its reason."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Skipped"):  # GoogleTest: "file:line: Skipped", then the message
            for message in lines[i + 1:]:
                if message.strip() and not message.startswith("[  SKIPPED ]"):
                    return REDUNDANT.sub("", message.strip())
            break
    text = [line.strip() for line in lines if line.strip()]
    mentions = [line for line in text if "skip" in line.lower() or "not checked" in line.lower()]
    reason = (mentions or text or ["(no message)"])[0]
    return REDUNDANT.sub("", reason)


def result_words(log_path):
    """{test name: ctest's result word (Passed, Failed, Timeout, Exception: ..., Skipped, Not Run)}."""
    words = {}
    if log_path:
        with open(log_path, errors="replace") as log:
            for line in log:
                match = RESULT_LINE.match(line.rstrip("\n"))
                if match:
                    words[match.group(1)] = match.group(2)
    return words


def summarize(build_dir, junit_path, log_path):
    labels = labels_by_test(build_dir)
    words = result_words(log_path)
    passed, failed, disabled = [], [], []
    skipped = collections.Counter()
    for case in ElementTree.parse(junit_path).getroot().iter("testcase"):
        name, status = case.get("name"), case.get("status")
        label = labels.get(name, "-")
        if status == "run":
            passed.append(name)
        elif status == "disabled":
            disabled.append(name)
        elif status == "notrun" and case.find("skipped") is not None:
            skipped[(label, skip_reason(case.findtext("system-out") or ""))] += 1
        else:  # "fail", or "notrun" without a skip: the command could not start
            failed.append((label, name, words.get(name, "Failed" if status == "fail" else "Not Run")))

    total = len(passed) + len(failed) + sum(skipped.values())  # as ctest counts: disabled tests apart
    lines = []
    if failed:
        lines.append(f"FAILED ({len(failed)}; their output is above, and in full in the log):")
        lines += [f"  {label:<5} {name}  ({word})" for label, name, word in sorted(failed)]
    counts = f"{total} tests: {len(passed)} passed, {len(failed)} failed, {sum(skipped.values())} skipped"
    if disabled:
        counts += f" (and {len(disabled)} disabled: {', '.join(sorted(disabled))})"
    lines.append(counts)
    by_label = collections.Counter()
    for (label, _), count in skipped.items():
        by_label[label] += count
    for (label, reason), count in sorted(skipped.items(), key=lambda item: (-by_label[item[0][0]], item[0][0],
                                                                              -item[1], item[0][1])):
        lines.append(f"  skipped  {label:<5} {count:>4}  {reason}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir", help="the build folder ctest ran in")
    parser.add_argument("junit", help="the file of ctest --output-junit")
    parser.add_argument("--log", help="ctest's console output, for the kind of each failure (Timeout, ...)")
    args = parser.parse_args(argv)
    try:
        lines = summarize(args.build_dir, args.junit, args.log)
    except (OSError, ElementTree.ParseError, subprocess.CalledProcessError, json.JSONDecodeError, KeyError) as error:
        print(f"ctest_summary: cannot read the results ({error})", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
