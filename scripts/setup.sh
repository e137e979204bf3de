#!/usr/bin/env bash
# Idempotent set-up of everything the landscape and the tests need beyond npm packages:
# the pinned emulator in a project-local virtual environment, Debian's etcd and dnsmasq, and what the test
# seed's real node runs on (containerd, runc, the CNI plugins, iptables, socat, debootstrap for its images).
set -euo pipefail
cd "$(dirname "$0")/.."

MINISTACK_VERSION="$(node -p "require('./package.json').config.ministackVersion")"
VENV=.venv

# Each step that does something says what and, when done, how long it took (a first run on a fresh
# machine builds and installs for several minutes; a later one does nothing and takes about a second).
SETUP_STARTED=$SECONDS
took() { echo "setup: $1 took $(( SECONDS - $2 )) s"; }

if [ ! -x "$VENV/bin/ministack" ] || [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("ministack"))' 2>/dev/null)" != "$MINISTACK_VERSION" ]; then
  echo "setup: installing the emulator, ministack==$MINISTACK_VERSION, into $VENV"
  t=$SECONDS
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "ministack==$MINISTACK_VERSION"
  took "the emulator" $t
fi
# The API fuzzer the test suite runs against the deployed stack's OpenAPI document (test/integration/schemathesis).
SCHEMATHESIS_VERSION="$(node -p "require('./package.json').config.schemathesisVersion")"
if [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" != "$SCHEMATHESIS_VERSION" ]; then
  echo "setup: installing the API fuzzer, schemathesis==$SCHEMATHESIS_VERSION, into $VENV"
  t=$SECONDS
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
  took "the API fuzzer" $t
fi
# Node Lambda error types, as AWS reports them (see the script for why).
"$VENV/bin/python" scripts/patch-emulator.py "$("$VENV/bin/python" -c 'import ministack, os; print(os.path.dirname(ministack.__file__))')"

missing=()
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
command -v dnsmasq >/dev/null 2>&1 || missing+=(dnsmasq-base)
# The test seed's real node (local/kube/node-cluster.ts) and its images (local/kube/images.ts).
command -v containerd >/dev/null 2>&1 || missing+=(containerd)
command -v runc >/dev/null 2>&1 || missing+=(runc)
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
command -v socat >/dev/null 2>&1 || missing+=(socat)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  t=$SECONDS
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts etcd (and containerd) as a service on installation; the project runs its own, on its own
  # ports and sockets. A containerd that was there before (Docker's, say) is left alone.
  if command -v systemctl >/dev/null 2>&1; then
    $SUDO systemctl disable --now etcd >/dev/null 2>&1 || true
    if [[ " ${missing[*]} " == *" containerd "* ]]; then $SUDO systemctl disable --now containerd >/dev/null 2>&1 || true; fi
  fi
  took "the Debian packages" $t
fi
# The linearizability checker (Porcupine, tools/linearizability), rebuilt only when its sources change.
CHECKER_SRC=tools/linearizability
CHECKER_BIN=.tools/bin/linearizability
ROOT="$PWD"
checker_sources="$(cd "$CHECKER_SRC" && ls go.mod go.sum *.go | grep -v '_test\.go$')"
checker_hash="$(cd "$CHECKER_SRC" && cat $checker_sources | sha256sum | cut -d' ' -f1)"
if [ ! -x "$CHECKER_BIN" ] || [ "$(cat "$CHECKER_BIN.sha256" 2>/dev/null)" != "$checker_hash" ]; then
  GO="$(command -v go || echo /usr/local/go/bin/go)"
  if [ ! -x "$GO" ]; then echo "setup: the Go toolchain (go) is needed to build $CHECKER_SRC" >&2; exit 1; fi
  echo "setup: building the linearizability checker into $CHECKER_BIN"
  t=$SECONDS
  mkdir -p "$(dirname "$CHECKER_BIN")"
  (cd "$CHECKER_SRC" && "$GO" build -trimpath -buildvcs=false -o "$ROOT/$CHECKER_BIN" .)
  echo "$checker_hash" > "$CHECKER_BIN.sha256"
  took "the linearizability checker" $t
fi
# The test seed (kube-apiserver, kube-controller-manager, kube-scheduler, kwok, the real node's kubelet and
# kube-proxy) and helm: built once per version into .tools/ (a no-op when present; cold, about 12 minutes
# of two cores). `npm test` sets GARDENLESS_KUBE_BUILD=background: a missing build then runs behind the
# tests at the lowest CPU priority (it takes what they leave idle), followed by the node's images that do
# not depend on the working tree (scripts/build-images.ts --prepare: the Debian base, the production
# node_modules, pause and the kube components), and the suites that need them run last and wait for them
# (local/kube/tools.ts ensureKubeTools, the images' locks, test/harness/kube/sequencer.ts). Otherwise the
# binaries are built here and the images when a real node first starts.
if [ "${GARDENLESS_KUBE_BUILD:-}" = background ]; then
  mkdir -p .tools
  nohup nice -n 19 bash -c 'bash scripts/build-kube.sh && node_modules/.bin/tsx scripts/build-images.ts --prepare' > .tools/build-kube.log 2>&1 &
  echo "setup: building the test seed and its images in the background at nice 19 (log .tools/build-kube.log)"
else
  bash scripts/build-kube.sh
fi
echo "setup: ok in $(( SECONDS - SETUP_STARTED )) s (ministack $MINISTACK_VERSION, schemathesis $SCHEMATHESIS_VERSION, $(etcd --version 2>/dev/null | head -1), kubernetes $(node -p "require('./package.json').config.kubernetesVersion"), $CHECKER_BIN)"
