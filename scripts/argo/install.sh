#!/usr/bin/env bash
# Installs bubblewrap (Debian's `bubblewrap` package): the local Argo target runs every pod in a bwrap
# sandbox (activities/argo/sandbox.ts). Idempotent: a machine that already has bwrap is left untouched.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1; then
  echo "bubblewrap: already installed ($(bwrap --version 2>/dev/null || echo bwrap))"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "bubblewrap: not installed, and installing it needs root or sudo (apt-get install bubblewrap)" >&2
    exit 1
  fi
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
echo "bubblewrap: installed ($(bwrap --version))"
