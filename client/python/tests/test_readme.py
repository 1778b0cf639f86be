"""The README's "From JAX" example, run as written (against the daemon when it is built, else
through LocalPlanner, which has the same API)."""
from __future__ import annotations

import os
import re

import numpy as np

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "README.md")
BIN = os.environ.get("SP_BIN_DIR", "")


def _example() -> str:
    text = open(README).read()
    sec = text[text.index("## From JAX"):]
    m = re.search(r"```python\n(.*?)```", sec, re.S)
    assert m, "no python block in the README's From JAX section"
    return m.group(1)


def test_from_jax_example_runs_and_matches_the_unsharded_function(request):
    code = _example()
    lines = [l for l in code.splitlines() if l.strip() and not l.startswith(("import", "from",
                                                                              "#"))]
    assert sum("shardplan" in l for l in lines) >= 2
    if os.access(os.path.join(BIN, "shardpland"), os.X_OK):
        d = request.getfixturevalue("daemon")
        code = code.replace('"127.0.0.1:50051"', repr(d.address))
    else:
        code = code.replace('shardplan.Client("127.0.0.1:50051")', "shardplan.LocalPlanner()")
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    y, f, x, w = ns["y"], ns["f"], ns["x"], ns["w"]
    np.testing.assert_allclose(np.asarray(y), np.asarray(f(x, w)), rtol=1e-5, atol=1e-5)
    assert ns["plan"].args, "the plan names no argument"
