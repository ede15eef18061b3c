#!/usr/bin/env bash
# The admin panel's browser test drives Debian's chromium through playwright-core (no browser download from
# npm). Installs it with apt-get when /usr/bin/chromium is missing; does nothing when it is there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
echo "chromium is missing: installing Debian's chromium package"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version
