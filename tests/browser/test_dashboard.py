#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium against a real daemon.

Starts shardpland on free loopback ports with a fresh data folder, plans two examples through
the CLI (a module with a propagation conflict, and the MLP with the cost search), then loads
each page in headless Chromium (--dump-dom: the DOM after the browser parsed and laid it out)
and checks that it shows what it must: plan rows, factor-table cells with a highlighted
conflict, conflict rows, shardings, the cost chart and a provenance path. Screenshots go to
OUT/screenshots/ (`make screenshots` copies them into docs/).

usage: test_dashboard.py --bin BUILD/bin --src SOURCE_DIR --out BUILD_DIR
Exit 0 when every check passes, 1 otherwise, 77 when Chromium is not installed.
"""
import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]


class Dom(html.parser.HTMLParser):
    """Collects elements with their classes and text, enough for the checks below."""

    def __init__(self):
        super().__init__()
        self.stack, self.elements = [], []

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(el)
        if tag not in ("br", "input", "meta", "link", "img", "rect", "line"):
            self.stack.append(el)

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for el in self.stack:
            el["text"] += data

    def find(self, tag=None, cls=None):
        out = []
        for el in self.elements:
            if tag and el["tag"] != tag:
                continue
            if cls and cls not in (el["attrs"].get("class") or "").split():
                continue
            out.append(el)
        return out


class Run:
    def __init__(self, args):
        self.args, self.failures, self.checks = args, 0, 0
        self.tmp = tempfile.mkdtemp(prefix="sp_browser_")
        self.shots = os.path.join(args.out, "screenshots")
        os.makedirs(self.shots, exist_ok=True)

    def check(self, cond, what):
        self.checks += 1
        print(("ok    " if cond else "FAIL  ") + what, flush=True)
        if not cond:
            self.failures += 1

    def start_daemon(self):
        data = os.path.join(self.tmp, "data")
        self.daemon = subprocess.Popen(
            [os.path.join(self.args.bin, "shardpland"), "--grpc-listen", "127.0.0.1:0",
             "--http-listen", "127.0.0.1:0", "--data-dir", data, "--max-searches", "1"],
            stdout=subprocess.PIPE, stderr=open(os.path.join(self.tmp, "daemon.log"), "w"), text=True)
        self.grpc = self.http = None
        deadline = time.time() + 30
        while time.time() < deadline:
            line = self.daemon.stdout.readline()
            if not line:
                break
            m = re.search(r"grpc listening on (\S+)", line)
            if m:
                self.grpc = m.group(1)
            m = re.search(r"dashboard (http://\S+?)/?(\s|$)", line)
            if m:
                self.http = m.group(1)
            if "ready" in line:
                break
        if not self.grpc or not self.http:
            raise SystemExit("daemon did not start: see " + os.path.join(self.tmp, "daemon.log"))

    def plan(self, *argv):
        out = subprocess.run([os.path.join(self.args.bin, "shardplan"), "--server", self.grpc,
                              "plan", *argv], capture_output=True, text=True, timeout=120)
        m = re.search(r"\b([0-9a-f]{64})\b", out.stdout)
        if out.returncode != 0 or not m:
            raise SystemExit("shardplan plan failed (%d): %s %s" % (out.returncode, out.stdout, out.stderr))
        return m.group(1)

    def api(self, path):
        with urllib.request.urlopen(self.http + path, timeout=10) as r:
            return json.loads(r.read())

    def browse(self, path, shot=None, size="1280,1000"):
        profile = tempfile.mkdtemp(dir=self.tmp)
        url = self.http + path
        dom = subprocess.run(["chromium", *CHROMIUM_FLAGS, "--user-data-dir=" + profile,
                              "--dump-dom", url], capture_output=True, text=True, timeout=90).stdout
        if shot:
            subprocess.run(["chromium", *CHROMIUM_FLAGS, "--user-data-dir=" + profile,
                            "--window-size=" + size, "--screenshot=" + os.path.join(self.shots, shot), url],
                           capture_output=True, timeout=90)
        parser = Dom()
        parser.feed(dom)
        return parser, dom

    def stop(self):
        self.daemon.terminate()
        try:
            self.daemon.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not shutil.which("chromium"):
        print("SKIP: chromium is not installed (deploy/install-deps.sh installs it)")
        return 77
    run = Run(args)
    try:
        run.start_daemon()
        conflict = run.plan(os.path.join(args.src, "examples", "conflict.mlir"))
        mlp = run.plan(os.path.join(args.src, "examples", "mlp.mlir"), "--search")

        dom, text = run.browse("/", "plans.png", "1280,600")
        rows = dom.find("tr")
        run.check(len(rows) >= 3, "plan list: a header row and both plans (%d rows)" % len(rows))
        run.check(any(conflict[:12] in el["text"] for el in dom.find("a", "key")),
                  "plan list: links the conflict plan by key")
        run.check("hit rate" in text, "plan list: shows the cache hit rate")

        dom, text = run.browse("/plans/" + mlp, "plan.png", "1280,1800")
        run.check(len(dom.find("svg", "chart")) >= 2, "plan page: cost and memory charts (inline SVG)")
        run.check(len(dom.find("rect", "k-comm")) + len(dom.find("rect", "k-reshard")) >= 1,
                  "plan page: the chart has communication bars")
        shard_rows = [r for r in dom.find("tr") if "PartitionSpec(" in r["text"]]
        run.check(len(shard_rows) >= 3, "plan page: shardings table with PartitionSpecs (%d)" % len(shard_rows))
        run.check("Solver" in text and "Rank mapping" in text, "plan page: solver statistics and rank mapping")

        conflicts = run.api("/api/plans/%s/conflicts" % conflict)
        run.check(conflicts["total"] >= 1, "api: the conflict plan has conflicts (%d)" % conflicts["total"])
        op = conflicts["rows"][0]["data"]["op"] if conflicts["rows"] else 0
        dom, text = run.browse("/plans/%s/ops/%d" % (conflict, op), "factor_table.png", "1280,900")
        cells = dom.find("td", "cell")
        run.check(len(cells) >= 4, "op page: factor-table cells holding axes (%d)" % len(cells))
        run.check(len(dom.find("td", "conflict")) >= 1, "op page: a conflicting cell is highlighted")
        run.check("Before propagation" in text and "After propagation" in text,
                  "op page: before and after side by side")
        run.check(any(h["text"].startswith("F0") for h in dom.find("th")), "op page: factor columns F0...")

        dom, text = run.browse("/plans/%s/conflicts" % conflict, "conflicts.png", "1280,700")
        conf_rows = [r for r in dom.find("tr") if "incompatible" in r["text"] or "aggressive" in r["text"]]
        run.check(len(conf_rows) >= 1, "conflicts page: conflict rows with cause and resolution")

        values = run.api("/api/plans/%s/values" % mlp)["rows"]
        def path_len(v):
            return max([len(o.get("path") or []) for o in v["data"].get("origins") or []] or [0])
        traced = [v for v in values if path_len(v) > 0]
        best = max(traced, key=path_len) if traced else (values[-1] if values else {"index": 0})
        dom, text = run.browse("/plans/%s/values/%d" % (mlp, best["index"]), "provenance.png", "1280,900")
        run.check("Provenance" in text and "user annotation on" in text,
                  "value page: an axis traced to a user annotation")
        steps = [li for li in dom.find("li") if "via" in li["text"]]
        run.check(len(dom.find("ol", "path")) >= 1 and len(steps) >= 1,
                  "value page: a provenance path through ops (%d steps, %d traced values)"
                  % (len(steps), len(traced)))

        evil, _ = run.browse("/plans/%s?q=%%3Cscript%%3Ealert(1)%%3C/script%%3E" % mlp)
        run.check(not evil.find("script"), "plan page: a script in the filter is text, not an element")

        # A graph whose names carry markup: the module's and the mesh axis's names are shown as
        # text on every page, never as elements.
        hostile = os.path.join(run.tmp, "hostile.mlir")
        with open(hostile, "w") as f:
            f.write('module @"<script>alert(1)</script>" {\n'
                    'sdy.mesh @mesh = <["<b>x</b>"=2]>\n'
                    'func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = '
                    '#sdy.sharding<@mesh, [{"<b>x</b>"}, {}]>}) -> tensor<8x8xf32> {\n'
                    '  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>\n'
                    '  return %0 : tensor<8x8xf32>\n}\n}\n')
        bad = run.plan(hostile)
        for path in ("/", "/plans/" + bad, "/plans/%s/values/0" % bad):
            dom, text = run.browse(path)
            run.check(not dom.find("script") and not [b for b in dom.find("b") if b["text"] == "x"],
                      "%s: markup in graph names is not turned into elements" % path)
        dom, text = run.browse("/")
        run.check("<script>alert(1)</script>" in text.replace("&lt;", "<").replace("&gt;", ">"),
                  "plan list: the module's name is shown as text")

        # /metrics moves with the requests made.
        def metric(text, series):
            for line in text.splitlines():
                if line.startswith(series + " "):
                    return float(line.split()[-1])
            return 0.0
        with urllib.request.urlopen(run.http + "/metrics", timeout=10) as r:
            before = r.read().decode()
        run.plan(os.path.join(args.src, "examples", "conflict.mlir"))   # a hit
        with urllib.request.urlopen(run.http + "/metrics", timeout=10) as r:
            after = r.read().decode()
        run.check(metric(before, "shardplan_solver_seconds_total") > 0,
                  "metrics: the searches' time is counted (%.4f s)" % metric(before, "shardplan_solver_seconds_total"))
        hits = "shardplan_cache_hits_total"
        run.check(metric(after, hits) == metric(before, hits) + 1, "metrics: a cache hit is counted")
        plans = 'shardplan_rpc_requests_total{method="PlanStream",code="OK"}'
        plans_unary = 'shardplan_rpc_requests_total{method="Plan",code="OK"}'
        run.check(metric(after, plans) + metric(after, plans_unary) ==
                  metric(before, plans) + metric(before, plans_unary) + 1,
                  "metrics: the Plan call is counted by method and status")
    finally:
        run.stop()
    print("%d passed, %d failed" % (run.checks - run.failures, run.failures))
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
