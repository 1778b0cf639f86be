#!/usr/bin/env python3
"""Runs Shardy's own propagation lit tests against shardplan-opt, case by case.

For each file in the conformance folder (read in place from ../shared, never copied), its RUN
line is executed with shardplan-opt standing in for sdy_opt and LLVM's real FileCheck. A case
is a `// -----` chunk when the RUN line splits the input; in op_sharding_rule_registry.mlir each
function is a case (the CHECK lines between one CHECK-LABEL and the next); any other file is one
case. A case passes when shardplan-opt exits 0 (it checks `expected-error`/`expected-warning`
itself under -verify-diagnostics) and FileCheck accepts the output, as lit runs it (pipefail).

Prints a table (file, passed, total, percent) and the overall rate with the two debugging
files (edge_shardings, sharding_origins) counted apart. With --floor FILE, exits 1 when the
overall rate is below the percentage in FILE. Exits 77 (skipped) when the conformance folder
or FileCheck is absent.
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
PER_FUNCTION_FILES = {"op_sharding_rule_registry.mlir"}
CASE_TIMEOUT_S = 60
SPLIT_RE = re.compile(r"^// -----\s*$", re.M)


def parse_run_line(text):
    """Returns (opt_args, uses_filecheck, merge_stderr) from the file's RUN line."""
    lines = [l.split("RUN:", 1)[1].strip() for l in text.splitlines() if "// RUN:" in l]
    if not lines:
        raise ValueError("no RUN line")
    run = " ".join(lines)
    pipe = run.split("|")
    cmd = shlex.split(pipe[0])
    merge = False
    if "2>&1" in cmd:
        cmd.remove("2>&1")
        merge = True
    if not cmd or cmd[0] != "sdy_opt":
        raise ValueError("RUN line does not start with sdy_opt: " + run)
    args = [a for a in cmd[1:] if a != "%s"]
    uses_filecheck = len(pipe) > 1 and "FileCheck" in pipe[1]
    return args, uses_filecheck, merge


def split_chunks(text):
    """Chunks of a -split-input-file input, padded with blank lines so that every chunk keeps
    its line numbers from the original file."""
    chunks, start = [], 0
    for m in SPLIT_RE.finditer(text):
        chunks.append((start, text[start:m.start()]))
        start = m.end()
    chunks.append((start, text[start:]))
    out = []
    for offset, body in chunks:
        line = text.count("\n", 0, offset)
        out.append("\n" * line + body)
    return out


def function_check_blocks(text):
    """For per-function files: the CHECK lines of each function, keyed by its label."""
    blocks, cur, name = [], [], None
    for line in text.splitlines():
        m = re.search(r"CHECK-LABEL:\s*(?:func\s+)?@?([\w.$-]+)", line)
        if m:
            if name is not None:
                blocks.append((name, cur))
            name, cur = m.group(1), [line]
        elif name is not None and re.search(r"//\s*CHECK", line):
            cur.append(line)
    if name is not None:
        blocks.append((name, cur))
    # As in the whole-file run, the next function's CHECK-LABEL bounds a trailing CHECK-NOT.
    for i in range(len(blocks) - 1):
        blocks[i][1].append(blocks[i + 1][1][0])
    return blocks


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


def filecheck(fc, check_path, output):
    try:
        p = subprocess.run([fc, check_path], input=output, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=CASE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "FileCheck timeout"
    return p.returncode == 0, p.stdout.decode("utf-8", "replace")


def run_case(opt, fc, args, uses_fc, merge, text, tmpdir, tag):
    path = os.path.join(tmpdir, tag + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    rc, out, err = run_opt(opt, args, path, merge)
    if rc is None:
        return False, "shardplan-opt timed out"
    if rc != 0:
        return False, "shardplan-opt exited %d: %s" % (rc, err[-400:].decode("utf-8", "replace"))
    if not uses_fc:
        return True, ""
    ok, msg = filecheck(fc, path, out)
    return ok, msg[:400]


def run_file(opt, fc, path, tmpdir, pool):
    name = os.path.basename(path)
    text = open(path).read()
    args, uses_fc, merge = parse_run_line(text)
    results = []
    if name in PER_FUNCTION_FILES:
        rc, out, _ = run_opt(opt, [a for a in args if a != "-split-input-file"], path, merge)
        for fname, checks in function_check_blocks(text):
            if rc != 0:
                results.append((fname, False, "shardplan-opt exited %s" % rc))
                continue
            cpath = os.path.join(tmpdir, "%s.%s.check" % (name, fname))
            with open(cpath, "w") as f:
                f.write("\n".join(checks) + "\n")
            ok, msg = filecheck(fc, cpath, out)
            results.append((fname, ok, msg[:400]))
        return name, results
    split = "-split-input-file" in args
    case_args = [a for a in args if a != "-split-input-file"]
    chunks = split_chunks(text) if split else [text]
    futures = [pool.submit(run_case, opt, fc, case_args, uses_fc, merge, chunk, tmpdir,
                           "%s.%d" % (name, i)) for i, chunk in enumerate(chunks)]
    for i, fut in enumerate(futures):
        ok, msg = fut.result()
        results.append(("chunk %d" % i, ok, msg))
    return name, results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--opt", required=True, help="path to shardplan-opt")
    ap.add_argument("--dir", required=True, help="the conformance folder")
    ap.add_argument("--filecheck", default="/usr/lib/llvm-14/bin/FileCheck")
    ap.add_argument("--floor", help="file holding the minimum overall pass percentage")
    ap.add_argument("--json", help="write per-case results here")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--verbose", action="store_true", help="print each failing case")
    ap.add_argument("files", nargs="*", help="only these files (base names)")
    a = ap.parse_args()

    if not os.path.isdir(a.dir):
        print("SKIP: conformance folder %s is absent" % a.dir)
        return 77
    if not os.access(a.filecheck, os.X_OK):
        print("SKIP: FileCheck not found at %s (install llvm-14-tools)" % a.filecheck)
        return 77
    if not os.access(a.opt, os.X_OK):
        print("error: %s is not an executable" % a.opt, file=sys.stderr)
        return 2

    files = sorted(f for f in os.listdir(a.dir) if f.endswith(".mlir"))
    if a.files:
        files = [f for f in files if f in a.files]
    table, report = [], {}
    with tempfile.TemporaryDirectory(prefix="sp-conformance-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for f in files:
            name, results = run_file(a.opt, a.filecheck, os.path.join(a.dir, f), tmp, pool)
            passed = sum(1 for _, ok, _ in results if ok)
            table.append((name, passed, len(results)))
            report[name] = [{"case": c, "passed": ok, "message": m} for c, ok, m in results]
            if a.verbose:
                for c, ok, m in results:
                    if not ok:
                        print("FAIL %s %s: %s" % (name, c, m.strip().splitlines()[0] if m.strip() else ""))

    def pct(p, t):
        return 100.0 * p / t if t else 0.0

    print("%-45s %7s %6s %8s" % ("file", "passed", "total", "percent"))
    for name, p, t in table:
        if name not in DEBUG_FILES:
            print("%-45s %7d %6d %7.1f%%" % (name, p, t, pct(p, t)))
    main_p = sum(p for n, p, t in table if n not in DEBUG_FILES)
    main_t = sum(t for n, p, t in table if n not in DEBUG_FILES)
    print("%-45s %7d %6d %7.1f%%" % ("OVERALL (debugging files apart)", main_p, main_t,
                                      pct(main_p, main_t)))
    print("debugging files (not in the overall figure):")
    for name, p, t in table:
        if name in DEBUG_FILES:
            print("%-45s %7d %6d %7.1f%%" % (name, p, t, pct(p, t)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)

    overall = pct(main_p, main_t)
    if a.floor:
        floor = float(open(a.floor).read().split()[0])
        if overall + 1e-9 < floor:
            print("FAIL: overall %.1f%% is below the floor %.1f%% (%s)" % (overall, floor, a.floor))
            return 1
        print("overall %.1f%% >= floor %.1f%%" % (overall, floor))
    return 0


if __name__ == "__main__":
    sys.exit(main())
