#!/bin/sh
# Checks that the deployment files name the daemon's settings as the daemon does (CTest test
# deploy-env-file):  deploy/test-env-file.sh DAEMON ENV_FILE DOCKERFILE
# - every SHARDPLAN_* variable `shardpland --help` lists is in the example env file;
# - every SHARDPLAN_* variable the env file or the Dockerfile's ENV sets is one the daemon reads,
#   or one the image's health check reads (SHARDPLAN_HEALTH_*, deploy/healthcheck.sh).
set -eu
daemon=${1:?usage: $0 DAEMON ENV_FILE DOCKERFILE}
env_file=${2:?usage: $0 DAEMON ENV_FILE DOCKERFILE}
dockerfile=${3:?usage: $0 DAEMON ENV_FILE DOCKERFILE}
fail() { echo "test-env-file: FAILED: $*" >&2; exit 1; }

[ -x "$daemon" ] || fail "$daemon is not built"
help=$("$daemon" --help 2>&1) || fail "$daemon --help failed"
daemon_vars=$(printf '%s\n' "$help" | grep -o 'SHARDPLAN_[A-Z0-9_]*' | sort -u)
[ -n "$daemon_vars" ] || fail "$daemon --help names no SHARDPLAN_* variable"
file_vars=$(sed -n 's/^#\{0,1\}\(SHARDPLAN_[A-Z0-9_]*\)=.*/\1/p' "$env_file" | sort -u)
image_vars=$(sed -n 's/^\(ENV \)\{0,1\} *\(SHARDPLAN_[A-Z0-9_]*\)=.*/\2/p' "$dockerfile" | sort -u)
[ -n "$image_vars" ] || fail "$dockerfile sets no SHARDPLAN_* variable"

for v in $daemon_vars; do
  printf '%s\n' "$file_vars" | grep -qx "$v" || fail "$env_file does not list $v (shardpland reads it)"
done
for v in $file_vars $image_vars; do
  case "$v" in SHARDPLAN_HEALTH_*) continue ;; esac
  printf '%s\n' "$daemon_vars" | grep -qx "$v" ||
    fail "$v (in $env_file or $dockerfile) is not a variable shardpland reads"
done
echo "deploy files: the $(printf '%s\n' "$daemon_vars" | wc -l) SHARDPLAN_* variables of shardpland" \
     "listed; the image sets" $image_vars
