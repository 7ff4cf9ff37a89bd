#!/usr/bin/env bash
# Builds a full Temporal server (all services in one process, SQL persistence) and temporal-sql-tool for
# the test:scale suites and bench:scale into .tools/temporal-server/, with `go install` at a tagged
# release (v1.29.x has no replace directives; the PostgreSQL driver is pure Go, so no cgo). Nothing is
# downloaded from release pages.
#
# Cold: about 12 minutes on 2 busy cores (sql tool ~6, server ~6; ~700 MB of module cache, ~2 GB of
# build cache). The schemas are embedded in temporal-sql-tool (`--schema-name postgresql/v12/...`). A stamp file
# records what was built; when both binaries are present and the stamp matches, the script exits at once.
# Pass --force to rebuild anyway.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${TANDEM_TEMPORAL_SERVER_TOOLS:-$root/.tools/temporal-server}"
TEMPORAL_VERSION=v1.29.7

go_bin="$(command -v go || true)"
if [ -z "$go_bin" ] && [ -x /usr/local/go/bin/go ]; then go_bin=/usr/local/go/bin/go; fi
if [ -z "$go_bin" ]; then
  echo "temporal-server: Go is not installed; install Go 1.24+ (https://go.dev/doc/install) to build the server" >&2
  exit 1
fi

stamp="temporal-server=$TEMPORAL_VERSION go=$("$go_bin" env GOVERSION)"
stamp_file="$out/VERSIONS"
force=0
[ "${1:-}" = "--force" ] && force=1
if [ "$force" = 0 ] && [ -x "$out/temporal-server" ] && [ -x "$out/temporal-sql-tool" ] \
  && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
  echo "temporal-server: up to date in $out ($stamp)"
  exit 0
fi

mkdir -p "$out"
rm -f "$stamp_file"
start_all=$(date +%s)
# `go install pkg@version` builds from the module's own go.mod; the binaries are named after their
# directories (server, sql), so they are renamed to the names Temporal's docs use.
build() { # <package> <binary name>
  local t0; t0=$(date +%s)
  local tmp; tmp="$(mktemp -d "$out/.gobin.XXXXXX")"
  echo "temporal-server: building $2 ($1@$TEMPORAL_VERSION)…"
  (cd "$out" && CGO_ENABLED=0 GOBIN="$tmp" "$go_bin" install -trimpath -ldflags "-s -w" "$1@$TEMPORAL_VERSION")
  mv -f "$tmp/$(basename "$1")" "$out/$2"
  rmdir "$tmp"
  echo "temporal-server: built $out/$2 in $(( $(date +%s) - t0 )) s"
}
build go.temporal.io/server/cmd/tools/sql temporal-sql-tool
build go.temporal.io/server/cmd/server temporal-server
echo "$stamp" > "$stamp_file"
echo "temporal-server: all binaries in $out ($(( $(date +%s) - start_all )) s)"
