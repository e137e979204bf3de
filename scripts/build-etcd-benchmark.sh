#!/usr/bin/env bash
# Builds etcd's own benchmark tool (tools/benchmark of go.etcd.io/etcd/v3) from the Go module proxy, once
# per version: .tools/etcd-benchmark-v<E>/bin/benchmark. It drives etcd's v3 gRPC API straight, as
# kube-apiserver does, and that API is the same on the machine's etcd 3.4 server. A directory that exists
# is complete (renamed into place only after a successful build), so a rerun does nothing. Go's module and
# build caches stay in their default user locations.
#
# Not part of scripts/setup.sh: a cold build takes about a minute of two cores, for one benchmark only.
# `npm run bench:gate` runs it on first use.
#
# Version: package.json config.etcdBenchmarkVersion (a v3.6 release: its client speaks to etcd 3.4).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="$(node -p "require('./package.json').config.etcdBenchmarkVersion")"
DIR=".tools/etcd-benchmark-v${VERSION}"

# --check: exit 0 when it is built, 1 when not; builds nothing. --path: print the binary's path.
case "${1:-}" in
  --check) [ -x "$DIR/bin/benchmark" ]; exit ;;
  --path) echo "$DIR/bin/benchmark"; exit ;;
esac
[ -x "$DIR/bin/benchmark" ] && exit 0

GO="$(command -v go || echo /usr/local/go/bin/go)"
if [ ! -x "$GO" ]; then
  echo "build-etcd-benchmark: Go is needed to build etcd's benchmark tool (go.dev/doc/install)" >&2
  exit 1
fi
mkdir -p .tools
# Two benchmark runs at once build once: the second waits here and finds it built.
exec 9>.tools/.build-etcd-benchmark.lock
flock 9
[ -x "$DIR/bin/benchmark" ] && exit 0

started=$SECONDS
work="$(mktemp -d .tools/.etcd-benchmark-build.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "build-etcd-benchmark: building etcd's benchmark tool v${VERSION} (cold: about a minute)"
# go.etcd.io/etcd/v3 replaces its sibling modules with local paths, so `go install pkg@version` refuses it;
# a module of our own requires it and replaces each sibling with its published release of the same version.
{
  echo "module gardenless.local/etcd-benchmark"
  echo
  echo "go 1.24.0"
  echo
  echo "require go.etcd.io/etcd/v3 v${VERSION}"
  echo
  for module in api/v3 client/pkg/v3 client/v3 etcdctl/v3 etcdutl/v3 pkg/v3 server/v3 tests/v3; do
    echo "replace go.etcd.io/etcd/${module} => go.etcd.io/etcd/${module} v${VERSION}"
  done
} > "$work/go.mod"
cat > "$work/tools.go" <<'EOF'
//go:build tools

package tools

import _ "go.etcd.io/etcd/v3/tools/benchmark"
EOF
(
  cd "$work"
  GOFLAGS=-mod=mod "$GO" mod tidy >/dev/null
  CGO_ENABLED=0 GOFLAGS=-mod=mod "$GO" build -trimpath -buildvcs=false -ldflags "-s -w" -o bin/benchmark \
    go.etcd.io/etcd/v3/tools/benchmark
)
rm -rf "$DIR"
mkdir -p "$DIR"
mv "$work/bin" "$DIR/bin"
echo "build-etcd-benchmark: v${VERSION} built in $((SECONDS - started)) s ($DIR/bin/benchmark)"
