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
# shellcheck source=../lib/apt-install.sh
source "$(dirname "$0")/../lib/apt-install.sh"
apt_install_quietly slurm slurmctld slurmd slurm-client munge slurmrestd
echo "slurm: installed ($(dpkg-query -W -f='${Version}' slurmctld))"
