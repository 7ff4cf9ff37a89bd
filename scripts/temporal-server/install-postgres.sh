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
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# policy-rc.d keeps the post-install scripts from starting the system-wide cluster (there may be no
# init system at all in a container).
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  created_policy=1
fi
cleanup() { if [ "$created_policy" = 1 ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi; }
trap cleanup EXIT
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends postgresql openssl >/dev/null
echo "postgresql: installed ($(dpkg-query -W -f='${Version}' postgresql))"
