#!/usr/bin/env bash
# Installs the Debian packages named that are not installed yet (with sudo unless root).
# Usage: scripts/install_missing.sh PACKAGE...
set -euo pipefail
need=()
for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
[ ${#need[@]} -gt 0 ] || exit 0
echo "installing: ${need[*]}"
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
