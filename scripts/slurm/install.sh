#!/usr/bin/env bash
# Installs Debian's Slurm 22.05 packages (controller, node daemon, client tools, munge, slurmrestd) for
# the [slurm] test suites. Idempotent: a machine that already has every binary is left untouched.
# The packages' own systemd units are not used: tests start private clusters (scripts/slurm/cluster.sh).
set -euo pipefail
need=(slurmctld slurmd sbatch munged mungekey slurmrestd)
missing=0
for b in "${need[@]}"; do
  command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || missing=1
done
if [ "$missing" = 0 ]; then
  echo "slurm: already installed ($(dpkg-query -W -f='${Version}' slurmctld 2>/dev/null || echo from elsewhere))"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# policy-rc.d keeps the packages' post-install scripts from starting system-wide daemons (there may be no
# init system at all in a container, and the tests run their own clusters on private ports).
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  created_policy=1
fi
cleanup() { if [ "$created_policy" = 1 ]; then $SUDO rm -f /usr/sbin/policy-rc.d; fi; }
trap cleanup EXIT
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge slurmrestd >/dev/null
echo "slurm: installed ($(dpkg-query -W -f='${Version}' slurmctld))"
