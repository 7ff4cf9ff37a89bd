#!/usr/bin/env bash
# Builds a real Argo Workflows v3.7.9 `workflow-controller` and `argoexec` for the real-Argo suites
# (test/argo-real/*.cp.test.ts) into .tools/argo/, from the wrapper Go module in ./module (its go.sum
# is committed, so the checksum database is never asked). Nothing is downloaded from release pages.
#
# Two things stop a plain build: `go install …@v3.7.9` refuses Argo's module (its go.mod has a replace,
# which ./module/go.mod repeats), and the module zip lacks workflow/executor/osspecific/signal_linux.go,
# which in git is a symlink to signal_darwin.go (module zips drop symlinks), so argoexec does not compile
# (`undefined: Setpgid`). The script copies the verified module source out of the module cache into
# .tools/argo/src, restores that one file as a copy of signal_darwin.go, and builds with a go.mod that adds
# a directory replace onto that copy (-modfile; the committed go.mod stays as verified).
#
# Cold: about 450 CPU-seconds (≈ 4 minutes on 2 idle cores), 1.8 GB of RAM, +2 GB of build cache.
# A stamp file records what was built; when both binaries are present and the stamp matches, the script
# exits at once. Pass --force to rebuild anyway.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
module="$here/module"
out="$root/.tools/argo"
ARGO_VERSION=v3.7.9
# The commit v3.7.9 was tagged from (what the release binaries report as gitCommit).
ARGO_COMMIT=156b4f817914bbb2e1e3b93b499d1d50331e6af6
ARGO_MODULE=github.com/argoproj/argo-workflows/v3
bins=(workflow-controller argoexec)

go_bin="$(command -v go || true)"
if [ -z "$go_bin" ] && [ -x /usr/local/go/bin/go ]; then go_bin=/usr/local/go/bin/go; fi
if [ -z "$go_bin" ]; then
  echo "argo: Go is not installed; install Go 1.24.10+ (https://go.dev/doc/install) to build Argo" >&2
  exit 1
fi

# The stamp names the version and hashes the inputs, so an edit to the wrapper or this script rebuilds.
inputs_hash="$(cat "$module/go.mod" "$module/go.sum" "$0" | sha256sum | cut -c1-16)"
stamp="argo=$ARGO_VERSION go=$("$go_bin" env GOVERSION) inputs=$inputs_hash"
stamp_file="$out/VERSIONS"

force=0
[ "${1:-}" = "--force" ] && force=1
present=1
for b in "${bins[@]}"; do [ -x "$out/$b" ] || present=0; done
if [ "$force" = 0 ] && [ "$present" = 1 ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
  echo "argo: up to date in $out ($stamp)"
  exit 0
fi

mkdir -p "$out"
rm -f "$stamp_file"
start_all=$(date +%s)

# The module as go.sum pins it (go mod download verifies the zip's hash).
(cd "$module" && "$go_bin" mod download "$ARGO_MODULE")
cached="$(cd "$module" && "$go_bin" list -m -f '{{.Dir}}' "$ARGO_MODULE")"
[ -d "$cached" ] || { echo "argo: $ARGO_MODULE $ARGO_VERSION is not in the module cache ($cached)" >&2; exit 1; }

# A writable copy (without the SDKs and docs, which nothing here builds) plus the missing Linux file.
src="$out/src"
rm -rf "$src"
mkdir -p "$src"
(cd "$cached" && tar --exclude=./sdks --exclude=./docs -cf - .) | (cd "$src" && tar -xf -)
chmod -R u+w "$src"
osspecific="$src/workflow/executor/osspecific"
[ -f "$osspecific/signal_darwin.go" ] || { echo "argo: $osspecific/signal_darwin.go is missing" >&2; exit 1; }
[ -e "$osspecific/signal_linux.go" ] || cp "$osspecific/signal_darwin.go" "$osspecific/signal_linux.go"

# go.mod/go.sum for the build: the committed ones plus the directory replace onto the copy.
work="$out/modfile"
mkdir -p "$work"
cp "$module/go.mod" "$work/go.mod"
cp "$module/go.sum" "$work/go.sum"
printf '\nreplace %s => %s\n' "$ARGO_MODULE" "$src" >> "$work/go.mod"

v="$ARGO_MODULE"
ldflags="-s -w -X $v.version=$ARGO_VERSION -X $v.gitTag=$ARGO_VERSION -X $v.gitCommit=$ARGO_COMMIT -X $v.gitTreeState=clean"
for b in "${bins[@]}"; do
  t0=$(date +%s)
  echo "argo: building $b ($ARGO_VERSION)…"
  (cd "$module" && "$go_bin" build -modfile="$work/go.mod" -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "$ARGO_MODULE/cmd/$b")
  mv -f "$out/$b.tmp" "$out/$b"
  echo "argo: built $out/$b in $(( $(date +%s) - t0 )) s"
done
echo "$stamp" > "$stamp_file"
echo "argo: both binaries in $out ($(( $(date +%s) - start_all )) s)"
