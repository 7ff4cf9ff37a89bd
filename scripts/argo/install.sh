#!/usr/bin/env bash
# Installs bubblewrap (Debian's `bubblewrap` package): the local Argo target runs every pod in a bwrap
# sandbox (activities/argo/sandbox.ts). Idempotent: a machine that already has bwrap is left untouched.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1; then
  echo "bubblewrap: already installed ($(bwrap --version 2>/dev/null || echo bwrap))"
  exit 0
fi
# shellcheck source=../lib/apt-install.sh
source "$(dirname "$0")/../lib/apt-install.sh"
apt_install_quietly bubblewrap bubblewrap
echo "bubblewrap: installed ($(bwrap --version))"
