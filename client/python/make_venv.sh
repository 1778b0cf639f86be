#!/bin/sh
# make_venv.sh VENV_DIR GEN_DIR: builds the Python virtual environment of shardplan's
# client and JAX corpus (Debian's python3-venv, /usr/bin/python3 = 3.11) from PyPI, from
# scratch each time its inputs change (so the venv is exactly the pinned set):
#   requirements.txt         installed the normal way (pip resolves the pinned closure);
#   requirements-nodeps.txt  installed with --no-deps (packages whose dependencies drag in
#                            TensorFlow), each left-out dependency named in that file;
#   check_venv.py            `pip check` accepts only those omissions, and the venv holds
#                            exactly the pinned packages.
# Then points the venv at the client package and GEN_DIR, where the CMake target `pyvenv`
# generates the gRPC stubs (gen_stubs.py, a step of its own: a proto change regenerates the
# stubs without rebuilding the venv). Prints how long it took (the CI budget counts it).
set -eu
venv=$1; gen=$2
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)

rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
py="$venv/bin/python"
# PyPI only: no local wheel folders from the environment.
pipi() { PIP_FIND_LINKS= PIP_NO_INDEX= "$py" -m pip install --quiet --disable-pip-version-check "$@"; }
pipi -r "$here/requirements.txt"
pipi --no-deps -r "$here/requirements-nodeps.txt"
"$py" "$here/check_venv.py" "$here/requirements.txt" "$here/requirements-nodeps.txt"

site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n%s\n' "$here" "$gen" > "$site/shardplan-dev.pth"
echo "pyvenv: packages installed and checked in $(( $(date +%s) - start )) s"
