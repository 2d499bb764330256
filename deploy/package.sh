#!/usr/bin/env bash
# The Debian package: built with cargo-deb, then checked the way an operator would meet it.
#
#   deploy/package.sh build   build target/debian/boxoffice_<version>-1_<arch>.deb
#   deploy/package.sh test    build it, check its contents and units, install it, run the
#                             server from it once as its unit does (migrate, then serve,
#                             as the boxoffice user with /etc/boxoffice/boxoffice.env),
#                             upgrade it and check the edited environment file survived,
#                             then purge it
#
# `test` needs root (dpkg) and Postgres at 127.0.0.1:5432 with trust auth for postgres;
# it uses a database of its own (boxoffice_package), dropped at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. bench/lib.sh

log() { printf '== package: %s\n' "$*"; }
fail() { printf 'package: %s\n' "$*" >&2; exit 1; }

# The cargo-deb this project's packaging is written for.
CARGO_DEB_VERSION=3.8.0

build() {
  if ! cargo deb --version 2>/dev/null | grep -q "$CARGO_DEB_VERSION"; then
    # To stderr: build's stdout is the package's path.
    log "installing cargo-deb $CARGO_DEB_VERSION" >&2
    cargo install cargo-deb --locked --version "$CARGO_DEB_VERSION" --quiet
  fi
  cargo deb --quiet "$@" >/dev/null
  ls -t target/debian/boxoffice_*.deb | head -n 1
}

[[ ${1:-} == build ]] && { build; exit 0; }
[[ ${1:-} == test ]] || { sed -n '2,13p' "$0"; exit 2; }
[[ $(id -u) == 0 ]] || fail "test installs the package: run it as root"

deb=$(build)
log "built $deb"

log "contents"
listing=$(dpkg-deb -c "$deb" | awk '{print $6}')
for path in ./usr/bin/boxoffice \
  ./usr/lib/systemd/system/boxoffice.service ./usr/lib/systemd/system/boxoffice-relay.service \
  ./etc/boxoffice/boxoffice.env ./etc/boxoffice/relay.env \
  ./usr/share/doc/boxoffice/operations.md ./usr/share/doc/boxoffice/README.md \
  ./usr/share/boxoffice/prometheus/boxoffice.rules.yml ./usr/share/boxoffice/grafana/boxoffice.json; do
  # cargo-deb puts units under /lib or /usr/lib depending on its version.
  alt=${path/.\/usr\/lib\/systemd/.\/lib\/systemd}
  grep -qxF "$path" <<<"$listing" || grep -qxF "$alt" <<<"$listing" || fail "the package lacks $path"
done
control=$(mktemp -d)
trap 'rm -rf "$control"' EXIT
dpkg-deb -e "$deb" "$control"
for conf in /etc/boxoffice/boxoffice.env /etc/boxoffice/relay.env; do
  grep -qxF "$conf" "$control/conffiles" || fail "$conf is not a conffile"
done
grep -q '^Depends:.*adduser' "$control/control" || fail "the package does not depend on adduser"
grep -q 'adduser --system' "$control/postinst" || fail "postinst creates no system user"

log "install"
dpkg --purge boxoffice >/dev/null 2>&1 || true
dpkg -i "$deb" >/dev/null
getent passwd boxoffice >/dev/null || fail "no boxoffice user after install"
[[ $(stat -c '%U:%G %a' /etc/boxoffice/boxoffice.env) == "root:boxoffice 640" ]] ||
  fail "boxoffice.env is $(stat -c '%U:%G %a' /etc/boxoffice/boxoffice.env), not root:boxoffice 640"
unit_dir=/usr/lib/systemd/system
[[ -f $unit_dir/boxoffice.service ]] || unit_dir=/lib/systemd/system
for unit in boxoffice boxoffice-relay; do
  out=$(systemd-analyze verify "$unit_dir/$unit.service" 2>&1) || fail "systemd-analyze verify $unit: $out"
  for setting in User=boxoffice NoNewPrivileges=yes ProtectSystem=strict Restart=on-failure LimitNOFILE= \
    'ExecStartPre=/usr/bin/boxoffice migrate'; do
    grep -q "^$setting" "$unit_dir/$unit.service" || fail "$unit.service lacks $setting"
  done
done

log "run the server from the package, as its unit does"
db=boxoffice_package
psql -h 127.0.0.1 -U postgres -qc "drop database if exists $db with (force)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
env_file=/etc/boxoffice/boxoffice.env
sed -i "s#^DATABASE_URL=.*#DATABASE_URL=postgres://postgres@127.0.0.1:5432/$db#; s#^BOXOFFICE_BIND=.*#BOXOFFICE_BIND=127.0.0.1:$port#" "$env_file"
printf '# edited by the operator\nBOXOFFICE_ADMIN_TOKEN=package-test-admin\nBOXOFFICE_JWT_SECRET=package-test-jwt\n' >>"$env_file"
# What systemd does: the environment file's assignments, as the unit's user.
mapfile -t assignments < <(grep -E '^[A-Z_]+=' "$env_file")
# setpriv execs the command itself (no process in between to take the signals).
as_unit() { setpriv --reuid boxoffice --regid boxoffice --init-groups -- env -i PATH=/usr/bin:/bin "${assignments[@]}" "$@"; }
as_unit /usr/bin/boxoffice migrate
as_unit /usr/bin/boxoffice doctor || fail "doctor found something wrong with the installed server's settings"
log_file=$(mktemp)
setpriv --reuid boxoffice --regid boxoffice --init-groups -- \
  env -i PATH=/usr/bin:/bin "${assignments[@]}" /usr/bin/boxoffice serve >"$log_file" 2>&1 &
server=$!
wait_for "the installed server to be ready" curl -fsS "http://127.0.0.1:$port/readyz" ||
  { cat "$log_file" >&2; fail "the installed server never became ready"; }
curl -fsS -H 'authorization: Bearer package-test-admin' "http://127.0.0.1:$port/v1/venues" -o /dev/null -w '%{http_code}\n' |
  grep -q '^200$' || fail "the admin token from boxoffice.env is not the server's"
kill -TERM "$server"
wait "$server" || { status=$?; cat "$log_file" >&2; fail "the server did not stop cleanly on SIGTERM (exit $status)"; }
# JSON logs: every line that is not the stdout banner is one JSON object.
grep -v '^Boxoffice listening\|^admin token' "$log_file" | jq -e -s 'length > 0 and all(.[]; .level != null)' >/dev/null ||
  { cat "$log_file" >&2; fail "the logs are not JSON lines"; }
rm -f "$log_file"

log "upgrade: the operator's environment file stays"
next=$(build --no-build --deb-revision 2)
dpkg -i "$next" >/dev/null
grep -qxF 'BOXOFFICE_ADMIN_TOKEN=package-test-admin' "$env_file" || fail "the upgrade replaced the edited boxoffice.env"
[[ $(dpkg-query -W -f '${Version}' boxoffice) == *-2 ]] || fail "the upgrade did not install"
rm -f "$next"

log "purge"
dpkg --purge boxoffice >/dev/null
[[ ! -e /usr/bin/boxoffice && ! -e $env_file ]] || fail "purge left files behind"
psql -h 127.0.0.1 -U postgres -qc "drop database if exists $db with (force)"
log "ok"
