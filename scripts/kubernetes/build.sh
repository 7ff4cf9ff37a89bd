#!/usr/bin/env bash
# Builds a real Kubernetes control plane for the *.cp.test.ts suites into .tools/kubernetes/:
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler (from this wrapper Go module, because
# `go install` refuses k8s.io/kubernetes/cmd/... — its go.mod has replace directives) and kwok
# (simulated nodes and pod lifecycles, via `go install`). Nothing is downloaded from release pages.
#
# Cold: about 10 minutes and 2 GB of RAM on 2 cores (kube-apiserver alone is ~6 minutes), ~1 GB of
# module cache and ~3.5 GB of build cache. A stamp file records what was built; when every binary is
# present and the stamp matches, the script exits at once. Pass --force to rebuild anyway.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/.tools/kubernetes"
K8S_VERSION=v1.33.13
ETCD_VERSION=v3.5.21
KWOK_VERSION=v0.7.0
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler)

go_bin="$(command -v go || true)"
if [ -z "$go_bin" ] && [ -x /usr/local/go/bin/go ]; then go_bin=/usr/local/go/bin/go; fi
if [ -z "$go_bin" ]; then
  echo "kubernetes: Go is not installed; install Go 1.24+ (https://go.dev/doc/install) to build the control plane" >&2
  exit 1
fi

# Without these -X flags the binaries report v0.0.0-master, which clients and kwok treat as unknown.
major="${K8S_VERSION#v}"; major="${major%%.*}"
minor="${K8S_VERSION#v*.}"; minor="${minor%%.*}"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor"

# The stamp names the versions and hashes the inputs, so an edit to go.mod or a main package rebuilds.
inputs_hash="$(cd "$here" && cat go.mod go.sum cmd/*/main.go | sha256sum | cut -c1-16)"
stamp="kubernetes=$K8S_VERSION etcd=$ETCD_VERSION kwok=$KWOK_VERSION go=$("$go_bin" env GOVERSION) inputs=$inputs_hash"
stamp_file="$out/VERSIONS"

force=0
[ "${1:-}" = "--force" ] && force=1
present=1
for b in "${bins[@]}" kwok; do [ -x "$out/$b" ] || present=0; done
if [ "$force" = 0 ] && [ "$present" = 1 ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
  echo "kubernetes: up to date in $out ($stamp)"
  exit 0
fi

mkdir -p "$out"
rm -f "$stamp_file"
start_all=$(date +%s)
for b in "${bins[@]}"; do
  t0=$(date +%s)
  echo "kubernetes: building $b ($([ "$b" = etcd ] && echo "$ETCD_VERSION" || echo "$K8S_VERSION"))…"
  (cd "$here" && "$go_bin" build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "./cmd/$b")
  mv -f "$out/$b.tmp" "$out/$b"
  echo "kubernetes: built $out/$b in $(( $(date +%s) - t0 )) s"
done
t0=$(date +%s)
echo "kubernetes: building kwok ($KWOK_VERSION)…"
# `go install module@version` resolves kwok's dependencies from kwok's own go.mod (k8s 0.33 libraries).
(cd "$out" && GOBIN="$out" "$go_bin" install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION")
echo "kubernetes: built $out/kwok in $(( $(date +%s) - t0 )) s"
echo "$stamp" > "$stamp_file"
echo "kubernetes: all binaries in $out ($(( $(date +%s) - start_all )) s)"
