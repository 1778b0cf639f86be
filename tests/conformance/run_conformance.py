#!/usr/bin/env python3
"""Runs Shardy's own lit tests (every folder of ../shared/conformance) against shardplan-opt.

Each file is read in place (never copied). Every RUN line of a file is executed with
shardplan-opt standing in for sdy_opt and LLVM's real FileCheck, and cases are counted the one
way ../shared/conformance/README.md gives:

  - a RUN line that splits its input (`-split-input-file`): each `// -----` chunk is a case,
    run on its own (chunks keep their line numbers) and checked against its own CHECK lines;
  - otherwise, with FileCheck: each CHECK-LABEL section is a case, checked against the whole
    output as in a whole-file run: the CHECK lines before the first label, the labels of every
    earlier section (FileCheck matches the labels in order, each one searching forward from the
    previous one's match, and checks each section only between its label's match and the next
    one's; so `@foo` is not found in an earlier `@foo_bar`), and the next section's label go
    with it; an earlier label that is not in the output at all is dropped from the case (it is
    that earlier case's failure); a file without labels is one case;
  - otherwise (diagnostics only): the file is one case;
  - FileCheck's `--check-prefix(es)` of the RUN line are used; a file with two RUN lines gives
    two sets of cases.

A case passes when shardplan-opt exits 0 (under -verify-diagnostics it matches the
`expected-error`/`expected-warning` annotations itself: every one produced at its line and no
other) and FileCheck, when the RUN line pipes into it, accepts the output (pipefail, as lit).

Prints one table per folder (file, passed, total, percent) and the folder's rate; in `shardy/`
the figure without the two debugging files is printed too. With --floor FILE (lines
`<folder> <percent>`), exits 1 when a folder's rate is below its floor. Exits 77 (skipped) when
the conformance root or FileCheck is absent.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

DEBUG_FILES = {"edge_shardings.mlir", "sharding_origins.mlir"}
CASE_TIMEOUT_S = 60
SPLIT_RE = re.compile(r"^// -----\s*$", re.M)
SPLIT_FLAGS = {"-split-input-file", "--split-input-file"}
CHECK_SUFFIX = r"(?:-LABEL|-NEXT|-SAME|-NOT|-DAG|-EMPTY|-COUNT-\d+)?(?:\{LITERAL\})?:"


class RunLine:
    """One RUN line: shardplan-opt's arguments, FileCheck's prefixes, stderr merged or not."""

    def __init__(self, text):
        pipe = text.split("|")
        cmd = shlex.split(pipe[0])
        self.merge = "2>&1" in cmd
        cmd = [a for a in cmd if a != "2>&1"]
        if not cmd or cmd[0] != "sdy_opt":
            raise ValueError("RUN line does not start with sdy_opt: " + text)
        self.args = [a for a in cmd[1:] if a != "%s"]
        self.split = any(a in SPLIT_FLAGS for a in self.args)
        self.case_args = [a for a in self.args if a not in SPLIT_FLAGS]
        self.filecheck = len(pipe) > 1 and "FileCheck" in pipe[1]
        self.prefixes = ["CHECK"]
        self.fc_args = []
        if self.filecheck:
            fc = shlex.split(pipe[1])
            fc = fc[fc.index("FileCheck") + 1:] if "FileCheck" in fc else []
            for i, a in enumerate(fc):
                value = None
                for opt in ("--check-prefixes", "--check-prefix", "-check-prefixes",
                            "-check-prefix"):
                    if a.startswith(opt + "="):
                        value = a.split("=", 1)[1]
                    elif a == opt and i + 1 < len(fc):
                        value = fc[i + 1]
                if value:
                    self.prefixes = value.split(",")
                    self.fc_args = ["--check-prefixes=" + value]


def parse_run_lines(text):
    """The file's RUN lines (a line ending in a backslash continues on the next RUN line)."""
    runs, cur = [], None
    for line in text.splitlines():
        if "RUN:" not in line or not line.lstrip().startswith("//"):
            continue
        part = line.split("RUN:", 1)[1].strip()
        cont = part.endswith("\\")
        part = part[:-1].strip() if cont else part
        cur = part if cur is None else cur + " " + part
        if not cont:
            runs.append(RunLine(cur))
            cur = None
    if cur is not None:
        runs.append(RunLine(cur))
    if not runs:
        raise ValueError("no RUN line")
    return runs


def split_chunks(text):
    """Chunks of a -split-input-file input, padded with blank lines so that every chunk keeps
    its line numbers from the original file."""
    chunks, start = [], 0
    for m in SPLIT_RE.finditer(text):
        chunks.append((start, text[start:m.start()]))
        start = m.end()
    chunks.append((start, text[start:]))
    return ["\n" * text.count("\n", 0, offset) + body for offset, body in chunks]


def label_sections(text, prefixes):
    """The CHECK-LABEL sections of a file for the given prefixes: [(label, preamble, earlier
    sections' labels, check lines)]. As in a whole-file run: the CHECK
    lines before the first label (meshes, globals) go with every section; the labels of the
    earlier sections come before a section's own lines, so that its label is searched forward
    from the previous label's match (FileCheck splits its input at the labels' matches, found
    in order); the next section's label bounds a trailing CHECK-NOT."""
    alt = "|".join(re.escape(p) for p in prefixes)
    check_re = re.compile(r"//\s*(?:%s)%s" % (alt, CHECK_SUFFIX))
    label_re = re.compile(r"//\s*(?:%s)-LABEL(?:\{LITERAL\})?:\s*(.*)$" % alt)
    preamble, sections = [], []
    for line in text.splitlines():
        m = label_re.search(line)
        if m:
            name = re.search(r"@([\w.$-]+)", m.group(1))
            sections.append((name.group(1) if name else m.group(1).strip(), [line]))
        elif check_re.search(line):
            (sections[-1][1] if sections else preamble).append(line)
    for i in range(len(sections) - 1):
        sections[i][1].append(sections[i + 1][1][0])
    labels = [lines[0] for _, lines in sections]
    return [(name, preamble, labels[:i], lines) for i, (name, lines) in enumerate(sections)]


def run_opt(opt, args, path, merge):
    """Runs shardplan-opt; returns (exit code or None on timeout, what FileCheck reads, stderr).
    With `2>&1` in the RUN line, stderr is part of what FileCheck reads."""
    try:
        p = subprocess.run([opt, path] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT if merge else subprocess.PIPE,
                           timeout=CASE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"
    return p.returncode, p.stdout, (p.stdout if merge else p.stderr)


def check_section(fc, fc_args, check_path, preamble, earlier, lines, output):
    """FileCheck on one CHECK-LABEL section preceded by the earlier sections' labels. An
    earlier label that FileCheck reports as not found is dropped and the section checked
    again: that label's absence is its own case's failure, not this one's."""
    earlier = list(earlier)
    while True:
        with open(check_path, "w") as f:
            f.write("\n".join(preamble + earlier + lines) + "\n")
        ok, msg = filecheck(fc, fc_args, check_path, output)
        if ok or not earlier:
            return ok, msg
        m = re.search(re.escape(check_path) + r":(\d+):\d+: error: ", msg)
        line = (int(m.group(1)) if m else 0) - len(preamble)
        if not 1 <= line <= len(earlier):
            return ok, msg
        del earlier[line - 1]


def filecheck(fc, fc_args, check_path, output):
    """FileCheck on one case's check lines. A case holds only part of the file, so a prefix
    that the whole file uses (as lit runs it) may have no line in this case: unused prefixes
    are allowed here."""
    if len(fc_args):
        fc_args = fc_args + ["--allow-unused-prefixes"]
    try:
        p = subprocess.run([fc, check_path] + fc_args, input=output, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=CASE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "FileCheck timeout"
    return p.returncode == 0, p.stdout.decode("utf-8", "replace")


def opt_failure(rc, err):
    if rc is None:
        return "shardplan-opt timed out"
    return "shardplan-opt exited %d: %s" % (rc, err[-400:].decode("utf-8", "replace"))


def run_chunk(opt, fc, run, text, tmpdir, tag):
    path = os.path.join(tmpdir, tag + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    rc, out, err = run_opt(opt, run.case_args, path, run.merge)
    if rc != 0:
        return False, opt_failure(rc, err)
    if not run.filecheck:
        return True, ""
    ok, msg = filecheck(fc, run.fc_args, path, out)
    return ok, msg[:400]


def run_sections(opt, fc, run, path, text, tmpdir, tag):
    """A non-split RUN line: one shardplan-opt run, one FileCheck per CHECK-LABEL section."""
    rc, out, err = run_opt(opt, run.case_args, path, run.merge)
    sections = label_sections(text, run.prefixes) if run.filecheck else []
    if not sections:
        if rc != 0:
            return [("file", False, opt_failure(rc, err))]
        if not run.filecheck:
            return [("file", True, "")]
        ok, msg = filecheck(fc, run.fc_args, path, out)
        return [("file", ok, msg[:400])]
    results = []
    for i, (label, preamble, earlier, lines) in enumerate(sections):
        if rc != 0:
            results.append((label, False, opt_failure(rc, err)))
            continue
        cpath = os.path.join(tmpdir, "%s.%d.check" % (tag, i))
        ok, msg = check_section(fc, run.fc_args, cpath, preamble, earlier, lines, out)
        results.append((label, ok, msg[:400]))
    return results


def run_file(opt, fc, path, tmpdir, pool):
    """All cases of one file: [(case name, passed, message)]."""
    name = os.path.basename(path)
    text = open(path).read()
    try:
        runs = parse_run_lines(text)
    except ValueError as e:
        return [("file", False, str(e))]
    jobs = []  # (case name, future of (passed, message)) or (prefix, future of [cases])
    for r, run in enumerate(runs):
        prefix = "run %d " % (r + 1) if len(runs) > 1 else ""
        tag = "%s.%d" % (name, r)
        if run.split:
            for i, chunk in enumerate(split_chunks(text)):
                jobs.append((True, prefix + "chunk %d" % i,
                             pool.submit(run_chunk, opt, fc, run, chunk, tmpdir,
                                         "%s.%d" % (tag, i))))
        else:
            jobs.append((False, prefix,
                         pool.submit(run_sections, opt, fc, run, path, text, tmpdir, tag)))
    results = []
    for one_case, name_or_prefix, fut in jobs:
        if one_case:
            results.append((name_or_prefix,) + tuple(fut.result()))
        else:
            results.extend((name_or_prefix + c, ok, m) for c, ok, m in fut.result())
    return results


def read_floors(path):
    floors = {}
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if len(line) >= 2:
            floors[line[0]] = float(line[1])
    return floors


def pct(p, t):
    return 100.0 * p / t if t else 0.0


def run_folder(a, folder, pool, tmp):
    """Runs one folder; prints its table; returns (passed, total, per-case report)."""
    d = os.path.join(a.root, folder)
    files = sorted(f for f in os.listdir(d) if f.endswith(".mlir"))
    if a.files:
        files = [f for f in files if f in a.files]
    table, report = [], {}
    for f in files:
        results = run_file(a.opt, a.filecheck, os.path.join(d, f), tmp, pool)
        table.append((f, sum(1 for _, ok, _ in results if ok), len(results)))
        report[f] = [{"case": c, "passed": ok, "message": m} for c, ok, m in results]
        if a.verbose:
            for c, ok, m in results:
                if not ok:
                    first = m.strip().splitlines()[0] if m.strip() else ""
                    print("FAIL %s/%s %s: %s" % (folder, f, c, first))
    print("== %s ==" % folder)
    print("%-60s %7s %6s %8s" % ("file", "passed", "total", "percent"))
    for name, p, t in table:
        print("%-60s %7d %6d %7.1f%%" % (name, p, t, pct(p, t)))
    passed, total = sum(p for _, p, _ in table), sum(t for _, _, t in table)
    print("%-60s %7d %6d %7.1f%%" % ("TOTAL " + folder, passed, total, pct(passed, total)))
    if any(n in DEBUG_FILES for n, _, _ in table):
        mp = sum(p for n, p, _ in table if n not in DEBUG_FILES)
        mt = sum(t for n, _, t in table if n not in DEBUG_FILES)
        print("%-60s %7d %6d %7.1f%%" % ("  without the debugging files", mp, mt, pct(mp, mt)))
    print()
    return passed, total, report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--opt", required=True, help="path to shardplan-opt")
    ap.add_argument("--root", required=True, help="the conformance root (../shared/conformance)")
    ap.add_argument("--folder", action="append",
                    help="run only this folder (repeatable; default: every folder)")
    ap.add_argument("--filecheck", default="/usr/lib/llvm-14/bin/FileCheck")
    ap.add_argument("--floor", help="file of `<folder> <minimum percent>` lines")
    ap.add_argument("--json", help="write per-case results here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--verbose", action="store_true", help="print each failing case")
    ap.add_argument("files", nargs="*", help="only these files (base names)")
    a = ap.parse_args()

    if not os.path.isdir(a.root):
        print("SKIP: conformance folder %s is absent" % a.root)
        return 77
    if not os.access(a.filecheck, os.X_OK):
        print("SKIP: FileCheck not found at %s (install llvm-14-tools)" % a.filecheck)
        return 77
    if not os.access(a.opt, os.X_OK):
        print("error: %s is not an executable" % a.opt, file=sys.stderr)
        return 2
    folders = a.folder or sorted(
        f for f in os.listdir(a.root)
        if os.path.isdir(os.path.join(a.root, f))
        and any(n.endswith(".mlir") for n in os.listdir(os.path.join(a.root, f))))
    for f in folders:
        if not os.path.isdir(os.path.join(a.root, f)):
            print("SKIP: conformance folder %s is absent" % os.path.join(a.root, f))
            return 77
    floors = read_floors(a.floor) if a.floor else {}

    rates, report = {}, {}
    with tempfile.TemporaryDirectory(prefix="sp-conformance-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for folder in folders:
            p, t, rep = run_folder(a, folder, pool, tmp)
            rates[folder] = pct(p, t)
            report[folder] = rep
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)

    failed = False
    for folder in folders:
        if a.files or folder not in floors:
            continue
        if rates[folder] + 1e-9 < floors[folder]:
            print("FAIL: %s %.1f%% is below its floor %.1f%% (%s)" %
                  (folder, rates[folder], floors[folder], a.floor))
            failed = True
        else:
            print("%s %.1f%% >= floor %.1f%%" % (folder, rates[folder], floors[folder]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
