#!/usr/bin/env bash
# System packages the test suite needs beyond the Python ones: a headless Chromium for the
# HTML report tests. Idempotent: does nothing when Chromium is already installed.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-test-deps: need root (or sudo) to install chromium" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
if [ ! -x /usr/bin/chromium ]; then
  echo "install-test-deps: chromium did not install to /usr/bin/chromium" >&2
  exit 1
fi
