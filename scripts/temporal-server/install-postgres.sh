#!/usr/bin/env bash
# Installs Debian's PostgreSQL packages (15 on bookworm) for the test:scale suites and bench:scale: the
# full Temporal server keeps its history and visibility there. Idempotent: a machine that already has
# initdb and postgres is left untouched. The packages' own cluster and service are not used: the
# harness (scripts/temporal-server/cluster.sh) runs a private cluster in a temporary directory.
set -euo pipefail
found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -n "$found" ] && [ -x "$found/initdb" ] && [ -x "$found/postgres" ]; then
  echo "postgresql: already installed ($found)"
  exit 0
fi
# shellcheck source=../lib/apt-install.sh
source "$(dirname "$0")/../lib/apt-install.sh"
apt_install_quietly postgresql postgresql openssl
echo "postgresql: installed ($(dpkg-query -W -f='${Version}' postgresql))"
