# Sourced by the install scripts: `apt_install_quietly <label> <package>…` installs Debian packages with
# root or sudo, without letting their post-install scripts start system-wide daemons (there may be no
# init system at all in a container, and the tests run their own private servers): a temporary
# policy-rc.d refuses every service start, and is removed again afterwards.
apt_install_quietly() {
  local label="$1"; shift
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "$label: not installed, and installing it needs root or sudo (apt-get install $*)" >&2
      return 1
    fi
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  local created_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
    $sudo chmod +x /usr/sbin/policy-rc.d
    created_policy=1
  fi
  local rc=0
  { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null; } || rc=$?
  if [ "$created_policy" = 1 ]; then $sudo rm -f /usr/sbin/policy-rc.d; fi
  return "$rc"
}
