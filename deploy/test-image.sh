#!/usr/bin/env bash
# Builds deploy/Dockerfile with Podman and runs the image the way an operator would, on a machine
# with no Docker engine and no image registry (CTest test `image`, labels heavy;image).
#   deploy/test-image.sh [BUILD_DIR]       (default: build; needs BUILD_DIR/bin/shardplan)
# Steps, each timed:
#   1. base images: Debian bookworm and bookworm-slim equivalents made with debootstrap and tagged
#      with the names the Dockerfile uses (docker.io/library/debian:bookworm[-slim]); cached in
#      the store, rebuilt when their recipe (the functions below, the mirror) changes;
#   2. podman build --format docker of deploy/Dockerfile, unchanged (OCI would drop HEALTHCHECK);
#   3. the image's metadata (health check, non-root user, volume, ports) and sizes;
#   4. in a private network namespace: the container on a fresh named volume, read-only root,
#      all capabilities dropped, ports published on 127.0.0.1; `podman healthcheck run`; the
#      example planned with the host's CLI; the dashboard fetched with curl; SIGTERM stop, timed,
#      with exit status 0; a second container on the same volume answers the earlier plan by key;
#      a third one with TLS and a token (the README's recipe for other hosts) answers it to the
#      CLI given the CA and the token, and refuses it without the token; then deploy/compose.yaml
#      through docker-compose and `podman system service`.
# Figures go to stdout and BUILD_DIR/image-test/report.txt.
#
# Podman here: rootful; runc (Debian's crun cannot run containers on cgroup v1 hybrid hosts);
# explicit ulimits (root may lack CAP_SYS_RESOURCE, and then runc cannot raise them). Every
# setting goes into scratch config files named by CONTAINERS_CONF, CONTAINERS_STORAGE_CONF and
# CONTAINERS_REGISTRIES_CONF, never the system's; the image store lives in
# BUILD_DIR/image-test/store (kept between runs as the cache), Podman's run-time state in a
# folder removed at exit; what Podman keeps in fixed places goes to tmpfs mounts. The script
# runs in a private mount namespace and the containers in a private network namespace, so no
# mount, bridge, firewall rule or state file outlives it.
# Environment: SHARDPLAN_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# SHARDPLAN_DEBIAN_SECURITY_MIRROR (default http://deb.debian.org/debian-security),
# SHARDPLAN_IMAGE_REBUILD_BASE=1 to rebuild the base images.
# Exit status: 0 passed, 1 failed (the failing step is named), 77 skipped (not root).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
run_phase_only=0
if [ "${1:-}" = "--run-phase" ]; then run_phase_only=1; shift; fi
build=$(realpath -m "${1:-$repo/build}")
work="$build/image-test"
image="localhost/shardplan:test"
volume="shardplan-test-data"

# Podman's run-time state: one fixed folder per store (its database records the path), emptied
# at start and at exit so that Podman sees a fresh boot and forgets a killed run's containers.
runroot="/tmp/shardplan-image-test-$(printf '%s' "$work" | sha256sum | cut -c1-12)"

log() { printf 'image-test: %s\n' "$*"; }
fail() { printf 'image-test: FAILED: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
report() { log "$*"; printf '%s\n' "$*" >> "$work/report.txt"; }

# ---- the run phase, re-entered inside a private network namespace (step 4) ----
run_phase() {
  trap 'podman rm --all --force --time 0 >/dev/null 2>&1; podman network prune --force >/dev/null 2>&1 || true' EXIT
  ip link set lo up
  cli="$build/bin/shardplan"
  grpc="127.0.0.1:50051" http="127.0.0.1:8080"
  # As the README runs it, but stricter than Docker's --read-only: no tmpfs at all.
  run_flags=(--detach --volume "$volume:/var/lib/shardplan"
             --publish "$grpc:50051" --publish "$http:8080"
             --read-only --read-only-tmpfs=false --cap-drop=all
             --security-opt=no-new-privileges)
  podman volume create "$volume" >/dev/null

  local t0; t0=$(now)
  podman run "${run_flags[@]}" --name shardplan-test-a "$image" >/dev/null 2>>"$work/podman.log"
  wait_healthy shardplan-test-a
  report "container start to healthy: $(since "$t0") s"
  [ "$(podman inspect --format '{{.State.Health.Status}}' shardplan-test-a)" = healthy ] ||
    fail "podman inspect does not report the container healthy"

  # The example, planned through the published port by the host's CLI.
  local out key
  out=$("$cli" --server "$grpc" plan "$repo/examples/mlp.mlir" --search 2>&1) ||
    { podman logs shardplan-test-a >&2; fail "shardplan plan through the container: $out"; }
  printf '%s\n' "$out" | sed 's/^/  plan: /'
  key=$(awk '/^key:/ { print $2; exit }' <<<"$out")
  [ -n "$key" ] || fail "shardplan plan printed no 'key:' line"
  grep -q '^cache: miss' <<<"$out" || fail "a first plan on a fresh volume was not a miss"
  "$cli" --server "$grpc" get "$key" >/dev/null || fail "shardplan get $key"
  # The plan's bytes (get's text also shows the server's time for the call).
  local first; first=$("$cli" --server "$grpc" export "$key" --format json) ||
    fail "shardplan export $key --format json"

  # The dashboard, through the published port.
  local page
  page=$(curl -fsS --max-time 10 "http://$http/") ||
    fail "the dashboard at http://$http/ did not answer"
  grep -q "$key" <<<"$page" || fail "the dashboard's plan list does not show $key"
  curl -fsS --max-time 10 "http://$http/plans/$key" >/dev/null ||
    fail "the dashboard's page of plan $key (http://$http/plans/$key)"
  curl -fsS --max-time 10 "http://$http/healthz" >/dev/null || fail "http://$http/healthz"
  log "dashboard answered at http://$http/, lists the plan and shows its page"

  # SIGTERM (the image's STOPSIGNAL): a clean exit, well before podman's SIGKILL at 30 s.
  t0=$(now)
  podman stop --time 30 shardplan-test-a >/dev/null 2>>"$work/podman.log"
  local stop_s; stop_s=$(since "$t0")
  local code; code=$(podman inspect --format '{{.State.ExitCode}}' shardplan-test-a)
  report "stop on SIGTERM: $stop_s s, exit status $code"
  [ "$code" = 0 ] || { podman logs shardplan-test-a >&2; fail "the daemon exited with $code on SIGTERM (0 expected)"; }
  awk -v s="$stop_s" 'BEGIN { exit !(s < 10) }' || fail "stopping took $stop_s s"

  # A new container on the same volume answers the earlier plan by key.
  podman run "${run_flags[@]}" --name shardplan-test-b "$image" >/dev/null 2>>"$work/podman.log"
  wait_healthy shardplan-test-b
  local again; again=$("$cli" --server "$grpc" export "$key" --format json) ||
    fail "shardplan export $key after a restart"
  [ "$again" = "$first" ] || fail "the plan fetched after a restart differs from the first one"
  log "a new container on the same volume answered plan $key unchanged"
  podman stop --time 30 shardplan-test-b >/dev/null 2>>"$work/podman.log"

  tls_phase "$key" "$first"
  compose_phase
}

# The README's recipe for jobs on other hosts: TLS and a bearer token, files mounted read-only
# under /run/secrets. The image's health check passes over TLS; the host's CLI fetches the plan
# with the CA and the token, and is refused without the token and without TLS.
tls_phase() {
  local key=$1 first=$2 secrets="$work/secrets" name=planner.example.test
  rm -rf "$secrets"; mkdir -p "$secrets"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$name" \
    -addext "subjectAltName=DNS:$name,DNS:localhost" \
    -keyout "$secrets/tls.key" -out "$secrets/tls.crt" 2>/dev/null || fail "openssl req"
  openssl rand -hex 32 > "$secrets/token"
  chown 10001:10001 "$secrets/tls.key" "$secrets/token"
  chmod 0400 "$secrets/tls.key" "$secrets/token"
  local t0; t0=$(now)
  podman run "${run_flags[@]}" --name shardplan-test-tls -v "$secrets:/run/secrets:ro" \
    -e SHARDPLAN_TLS_CERT=/run/secrets/tls.crt -e SHARDPLAN_TLS_KEY=/run/secrets/tls.key \
    -e SHARDPLAN_TOKEN_FILE=/run/secrets/token "$image" >/dev/null 2>>"$work/podman.log"
  wait_healthy shardplan-test-tls
  local tls=(--server "$grpc" --tls-ca "$secrets/tls.crt" --tls-server-name "$name")
  local again code
  again=$("$cli" "${tls[@]}" --token-file "$secrets/token" export "$key" --format json) ||
    fail "shardplan export over TLS with the token"
  [ "$again" = "$first" ] || fail "the plan fetched over TLS differs from the first one"
  code=0; "$cli" "${tls[@]}" get "$key" >/dev/null 2>&1 || code=$?
  [ "$code" = 8 ] || fail "get over TLS without the token exited $code (8, auth, expected)"
  code=0; SHARDPLAN_TOKEN_FILE= "$cli" --server "$grpc" --token-file "$secrets/token" get "$key" \
    >/dev/null 2>&1 || code=$?
  [ "$code" != 0 ] || fail "a plaintext call reached the TLS daemon"
  podman stop --time 30 shardplan-test-tls >/dev/null 2>>"$work/podman.log"
  report "TLS and token: healthy over TLS, plan fetched with the token, refused without it ($(since "$t0") s)"
}

# deploy/compose.yaml through docker-compose and Podman's Docker API (podman system service):
# up, healthy, reachable on 127.0.0.1 from the host, read-only and without capabilities as the
# file says; down stops it with SIGTERM and exit status 0.
compose_phase() {
  local sock="$runroot/podman.sock" project=shardplan-test
  podman tag "$image" docker.io/library/shardplan:latest
  podman system service --time=0 "unix://$sock" > "$work/podman-service.log" 2>&1 &
  local svc=$! i
  for i in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.1; done
  [ -S "$sock" ] || fail "podman system service did not open $sock (log: $work/podman-service.log)"
  local compose=(docker-compose --project-name "$project" -f "$repo/deploy/compose.yaml")
  local t0; t0=$(now)
  DOCKER_HOST="unix://$sock" "${compose[@]}" up -d --no-build > "$work/compose.log" 2>&1 ||
    { cat "$work/compose.log" >&2; fail "docker-compose up (deploy/compose.yaml)"; }
  local id; id=$(DOCKER_HOST="unix://$sock" "${compose[@]}" ps -q shardplan)
  [ -n "$id" ] || fail "docker-compose up started no shardplan container"
  wait_healthy "$id"
  report "compose up to healthy: $(since "$t0") s"
  [ "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$id")" = true ] ||
    fail "compose.yaml's container has a writable root file system"
  [ "$(podman inspect --format '{{.HostConfig.RestartPolicy.Name}}' "$id")" = unless-stopped ] ||
    fail "compose.yaml's container has no unless-stopped restart policy"
  "$build/bin/shardplan" --server 127.0.0.1:50051 health >/dev/null ||
    fail "shardplan health from the host against the compose service on 127.0.0.1:50051"
  curl -fsS --max-time 10 http://127.0.0.1:8080/healthz >/dev/null ||
    fail "the compose service's dashboard on 127.0.0.1:8080"
  t0=$(now)
  DOCKER_HOST="unix://$sock" "${compose[@]}" stop >> "$work/compose.log" 2>&1 ||
    fail "docker-compose stop"
  local code; code=$(podman inspect --format '{{.State.ExitCode}}' "$id")
  [ "$code" = 0 ] || fail "the compose service exited with $code on docker-compose stop (0 expected)"
  DOCKER_HOST="unix://$sock" "${compose[@]}" down --volumes >> "$work/compose.log" 2>&1 ||
    fail "docker-compose down"
  report "compose stop (SIGTERM) and down: $(since "$t0") s, exit status $code"
  kill "$svc" 2>/dev/null || true
  wait "$svc" 2>/dev/null || true
}

# Polls `podman healthcheck run` (the image's HEALTHCHECK, i.e. `shardplan health` inside the
# container) until it passes, for at most 30 s.
wait_healthy() {
  local name=$1 i
  for i in $(seq 1 60); do
    if podman healthcheck run "$name" >/dev/null 2>&1; then return 0; fi
    if [ "$(podman inspect --format '{{.State.Running}}' "$name")" != true ]; then
      podman logs "$name" >&2 || true
      fail "container $name exited before it was healthy"
    fi
    sleep 0.5
  done
  podman logs "$name" >&2 || true
  fail "container $name not healthy after 30 s"
}

# ---- step 1: base images ----
# bookworm: debootstrap's minbase (what the official image is made from) with the official
# image's apt settings; caches, package lists and logs removed.
bootstrap_rootfs() {
  local rootfs=$1
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap bookworm from $mirror (log: $work/debootstrap.log)"; }
  rm -f "$rootfs/etc/apt/sources.list"
  cat > "$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # As debuerreotype-minimizing-config: no daemons started by package scripts, no recommends,
  # no package caches, no translations.
  printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
  chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
  echo 'force-unsafe-io' > "$rootfs/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' > "$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
  cat > "$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::GzipIndexes "true";' > "$rootfs/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Acquire::Languages "none";' > "$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/apt/* \
         "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/lib/dpkg/*-old
  find "$rootfs/var/log" -type f -exec truncate -s 0 {} +
  : > "$rootfs/etc/machine-id"
}

# bookworm-slim: what debuerreotype-slimify removes from the official slim image (documentation
# but copyrights, man and info pages, locales but the alias file, lintian overrides), and the
# dpkg path excludes that keep later packages from installing them.
slimify_rootfs() {
  local rootfs=$1
  cat > "$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
# This is the "slim" variant of the Debian base image.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/man/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/groff/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/linda/* \
         "$rootfs"/usr/share/lintian/overrides/* "$rootfs"/usr/share/man/*
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
}

import_rootfs() {
  local rootfs=$1 name=$2
  tar -C "$rootfs" --numeric-owner -cf - . |
    podman import --quiet --change 'CMD ["bash"]' --change "LABEL org.shardplan.base-recipe=$recipe" \
      - "$name" >/dev/null
}

base_images() {
  local current
  for name in docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim; do
    current=$(podman image inspect --format '{{index .Labels "org.shardplan.base-recipe"}}' \
              "$name" 2>/dev/null || true)
    if [ "$current" != "$recipe" ] || [ "${SHARDPLAN_IMAGE_REBUILD_BASE:-0}" = 1 ]; then
      current=""; break
    fi
  done
  if [ -n "$current" ]; then
    report "base images: cached (recipe $recipe)"
    return
  fi
  local t0; t0=$(now)
  local rootfs="$work/rootfs"
  rm -rf "$rootfs"
  bootstrap_rootfs "$rootfs"
  import_rootfs "$rootfs" docker.io/library/debian:bookworm
  slimify_rootfs "$rootfs"
  import_rootfs "$rootfs" docker.io/library/debian:bookworm-slim
  rm -rf "$rootfs"
  podman image prune --force >/dev/null   # the images these names pointed to before
  report "base images: debootstrap + import in $(since "$t0") s (recipe $recipe)"
}

size_mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

# ---- main ----
if [ "$run_phase_only" = 1 ]; then
  run_phase
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: deploy/test-image.sh runs Podman rootful and needs root"
  exit 77
fi
for tool in podman runc debootstrap docker-compose unshare ip curl openssl tar; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (deploy/install-deps.sh installs it)"
done
[ -x "$build/bin/shardplan" ] || fail "$build/bin/shardplan is missing: build the project first"

# Enter a private mount namespace once: overlay mounts vanish with the script.
if [ -z "${SHARDPLAN_IMAGE_TEST_NS:-}" ]; then
  export SHARDPLAN_IMAGE_TEST_NS=1
  exec unshare --mount --propagation private -- "$0" "$build"
fi

start=$(now)
# State Podman keeps in fixed places whatever the configuration says (netavark's IPAM database
# and aardvark-dns folder under /run/containers, the blob-info cache under
# /var/lib/containers/cache): scratch tmpfs mounts, visible in this mount namespace only.
for dir in /run/containers /var/lib/containers/cache; do
  mkdir -p "$dir"
  mount -t tmpfs -o mode=0700 shardplan-image-test "$dir"
done
mkdir -p "$work/conf"
: > "$work/report.txt"; : > "$work/podman.log"
rm -rf "$runroot"
cleanup() {
  podman rm --all --force --time 0 >/dev/null 2>&1 || true
  podman volume rm --all --force >/dev/null 2>&1 || true
  podman network prune --force >/dev/null 2>&1 || true
  rm -rf "$runroot"
}
trap cleanup EXIT

# nofile may not exceed the hard limit podman runs under (runc cannot raise it without
# CAP_SYS_RESOURCE); nproc 4096 is plenty for the daemon and its pool.
nofile=$(ulimit -Hn)
if [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ]; then nofile=65536; fi
cat > "$work/conf/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$runroot/libpod"

[network]
network_config_dir = "$work/conf/networks"
EOF
cat > "$work/conf/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$work/store"
runroot = "$runroot/storage"
EOF
# Short names resolve as Docker resolves them (docker.io/library/...), and are only ever found
# locally: every podman call below that could pull says --pull=never.
cat > "$work/conf/registries.conf" <<EOF
unqualified-search-registries = ["docker.io"]
short-name-mode = "permissive"
EOF
export CONTAINERS_CONF="$work/conf/containers.conf"
export CONTAINERS_STORAGE_CONF="$work/conf/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$work/conf/registries.conf"
cleanup   # containers or volumes left by a run that was killed
mkdir -p "$runroot"

mirror=${SHARDPLAN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${SHARDPLAN_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
recipe=$({ declare -f bootstrap_rootfs slimify_rootfs import_rootfs; echo "$mirror $security_mirror"; } |
         sha256sum | cut -c1-16)

log "podman $(podman version --format '{{.Client.Version}}'), runc $(runc --version | awk 'NR==1 { print $3 }'), store $work/store"
base_images

t0=$(now)
podman build --format docker --pull=never --network=host --layers \
  -f "$repo/deploy/Dockerfile" -t "$image" "$repo" > "$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log" >&2; fail "podman build of deploy/Dockerfile (log: $work/build.log)"; }
# Tag the build stage too (every step cached, a second or two) so that pruning the images older
# runs left untagged keeps this run's build cache.
podman build --format docker --pull=never --network=host --layers --target build \
  -f "$repo/deploy/Dockerfile" -t localhost/shardplan-build:test "$repo" >> "$work/build.log" 2>&1 ||
  fail "podman build --target build (log: $work/build.log)"
podman image prune --force >/dev/null
grep '^runtime packages:' "$work/build.log" | tail -n 1 | sed 's/^/  /' || true
report "podman build --format docker: $(since "$t0") s"

# The image as built: Docker format metadata survived, non-root, the volume and the ports.
[ -n "$(podman image inspect --format '{{json .Config.Healthcheck}}' "$image" | grep -v '^null$')" ] ||
  fail "the image has no HEALTHCHECK (built in OCI format?)"
user=$(podman image inspect --format '{{.Config.User}}' "$image")
case "$user" in ''|0|0:*|root|root:*) fail "the image runs as root (USER '$user')";; esac
grep -q '"/var/lib/shardplan"' <<<"$(podman image inspect --format '{{json .Config.Volumes}}' "$image")" ||
  fail "the image declares no /var/lib/shardplan volume"
for port in 50051/tcp 8080/tcp; do
  grep -q "\"$port\"" <<<"$(podman image inspect --format '{{json .Config.ExposedPorts}}' "$image")" ||
    fail "the image does not expose $port"
done

slim=$(podman image inspect --format '{{.Size}}' docker.io/library/debian:bookworm-slim)
full=$(podman image inspect --format '{{.Size}}' docker.io/library/debian:bookworm)
total=$(podman image inspect --format '{{.Size}}' "$image")
report "sizes: bookworm (build stage base) $(size_mb "$full"); bookworm-slim (runtime base) $(size_mb "$slim"); image $(size_mb "$total") = base + $(size_mb $((total - slim))) added by the runtime stage"
[ "$total" -lt 150000000 ] || fail "the image is $(size_mb "$total"), over the 150 MB target"

t0=$(now)
unshare --net -- "$0" --run-phase "$build" ||
  fail "running the image (see above)"
report "run, health, plan, dashboard, stop, restart, TLS, compose: $(since "$t0") s"
report "total: $(since "$start") s"
log "PASSED"
