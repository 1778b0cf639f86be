"""check_venv.py REQUIREMENTS NODEPS: checks a venv built by make_venv.sh (run with its python).

1. `pip check`: every broken requirement it reports must be one requirements-nodeps.txt
   names on an "# omit: PACKAGE DEPENDENCY  why" line (a dependency deliberately left out of a
   package installed with --no-deps); any other is an error, and so is an omit line pip no
   longer reports (a stale exception).
2. `pip freeze --all` must be exactly the pins of the two files: nothing unpinned came in
   through the normal install's resolution, nothing is missing. pip itself (Debian's
   python3-venv bundles it) is not pinned.
Prints what it accepted; exits 1 naming every problem.
"""
from __future__ import annotations

import re
import subprocess
import sys


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: str) -> dict:
    out = {}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            if not version:
                raise SystemExit(f"{path}: {line!r} is not pinned with ==")
            out[canon(name)] = version.strip()
    return out


def omissions(path: str) -> dict:
    out = {}
    for line in open(path):
        m = re.match(r"#\s*omit:\s*(\S+)\s+(\S+)\s+(.*)$", line.strip())
        if m:
            out[(canon(m.group(1)), canon(m.group(2)))] = m.group(3).strip()
    return out


def pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True)


def main(req: str, nodeps: str) -> int:
    problems = []
    allowed = omissions(nodeps)
    seen = set()
    chk = pip("check")
    for line in chk.stdout.splitlines():
        if not line.strip() or line.startswith("No broken requirements"):
            continue
        m = re.match(r"(\S+) \S+ requires (\S+?),? which is not installed\.$", line)
        key = (canon(m.group(1)), canon(m.group(2))) if m else None
        if key in allowed:
            seen.add(key)
            print(f"pip check: accepted: {line} ({allowed[key]})")
        else:
            problems.append(f"pip check: {line}")
    for key in set(allowed) - seen:
        problems.append(f"{nodeps}: '# omit: {key[0]} {key[1]}' but pip check no longer reports it")

    want = {**pins(req), **pins(nodeps)}
    frz = pip("freeze", "--all")
    have = {}
    for line in frz.stdout.splitlines():
        name, _, version = line.partition("==")
        if version and canon(name) != "pip":
            have[canon(name)] = version
    for n in sorted(set(have) | set(want)):
        if n not in want:
            problems.append(f"installed but not pinned: {n}=={have[n]}")
        elif n not in have:
            problems.append(f"pinned but not installed: {n}=={want[n]}")
        elif have[n] != want[n]:
            problems.append(f"{n}: installed {have[n]}, pinned {want[n]}")
    for p in problems:
        print(f"check_venv: {p}", file=sys.stderr)
    if not problems:
        print(f"check_venv: {len(have)} packages, exactly the pins; pip check: "
              f"{len(seen)} accepted omissions, nothing else")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: check_venv.py REQUIREMENTS NODEPS")
    sys.exit(main(sys.argv[1], sys.argv[2]))
