#!/bin/sh
# Checks deploy/shardplan.service offline (CTest test deploy-systemd-unit):
#   deploy/test-systemd-unit.sh UNIT DAEMON
# 1. `systemd-analyze verify` in a scratch root holding the unit, the built daemon at the
#    unit's ExecStart path and the system's own units: no error and no warning at all;
# 2. the same check rejects a copy of the unit with an unknown key and one whose ExecStart does
#    not exist (so step 1 cannot pass by checking nothing);
# 3. the sandbox the issue asks for is there (a dynamic or dedicated user, ProtectSystem=strict,
#    StateDirectory) and `systemd-analyze security --offline` rates its exposure at most 2.0.
# Exit status: 0 passed, 1 failed, 77 skipped (the daemon is not built).
set -eu

unit=${1:?usage: $0 UNIT DAEMON}
daemon=${2:?usage: $0 UNIT DAEMON}
fail() { echo "test-systemd-unit: FAILED: $*" >&2; exit 1; }

[ -f "$unit" ] || fail "$unit: no such file"
if [ ! -x "$daemon" ]; then
  echo "SKIP: $daemon is not built"
  exit 77
fi
command -v systemd-analyze >/dev/null ||
  fail "systemd-analyze is not installed (package systemd; deploy/install-deps.sh installs it)"
units=/usr/lib/systemd/system
[ -d "$units" ] || units=/lib/systemd/system
[ -d "$units" ] || fail "no system unit folder (/usr/lib/systemd/system) to verify against"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root="$tmp/root"
exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit" | head -n 1)
[ -n "$exec_start" ] || fail "$unit has no ExecStart="
mkdir -p "$root$(dirname "$exec_start")" "$root/etc/systemd/system" "$root/usr/lib/systemd"
cp "$daemon" "$root$exec_start"
cp -a "$units" "$root/usr/lib/systemd/system"
name=$(basename "$unit")

# verify UNIT_TEXT_FILE: prints systemd-analyze's output; status 0 only when it printed nothing.
verify() {
  cp "$1" "$root/etc/systemd/system/$name"
  out=$(systemd-analyze verify --root="$root" "$name" 2>&1) && [ -z "$out" ]
  status=$?
  printf '%s' "$out"
  return $status
}

out=$(verify "$unit") || fail "systemd-analyze verify $unit:
$out"
echo "systemd-analyze verify $name: clean"

sed 's/^\[Service\]$/[Service]\nNoSuchSetting=1/' "$unit" > "$tmp/unknown-key"
if verify "$tmp/unknown-key" >/dev/null; then
  fail "systemd-analyze verify did not notice an unknown key (the check would pass anything)"
fi
sed "s|^ExecStart=$exec_start|ExecStart=/nonexistent/shardpland|" "$unit" > "$tmp/bad-exec"
if verify "$tmp/bad-exec" >/dev/null; then
  fail "systemd-analyze verify did not notice a missing ExecStart program"
fi
cp "$unit" "$root/etc/systemd/system/$name"

grep -Eq '^(DynamicUser=yes|User=[a-z_][a-z0-9_-]*)$' "$unit" ||
  fail "$unit runs as root (neither DynamicUser=yes nor User=)"
grep -q '^ProtectSystem=strict$' "$unit" || fail "$unit lacks ProtectSystem=strict"
grep -q '^StateDirectory=' "$unit" || fail "$unit lacks StateDirectory="

out=$(systemd-analyze security --offline=yes --root="$root" --threshold=20 "$name" 2>&1) ||
  fail "systemd-analyze security rates $name over 2.0:
$(printf '%s\n' "$out" | grep -E '^✗|Overall')"
printf '%s\n' "$out" | grep 'Overall exposure level'
