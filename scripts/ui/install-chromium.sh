#!/usr/bin/env bash
# Installs Debian's `chromium` package for the web view's browser test (test/ui.test.ts renders the
# pages in headless Chromium). Idempotent: a machine that already has chromium is left untouched.
set -euo pipefail
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "chromium: already installed ($("$b" --version 2>/dev/null | head -1))"
    exit 0
  fi
done
# shellcheck source=../lib/apt-install.sh
source "$(dirname "$0")/../lib/apt-install.sh"
apt_install_quietly chromium chromium fonts-dejavu-core
echo "chromium: installed ($(chromium --version 2>/dev/null | head -1))"
