#!/usr/bin/env bash
# build.sh: run by `make build` before its go build, to say what a first
# build does (downloading modules, compiling a few hundred packages), so a
# cold `make run` is never minutes of silence. Warm builds print nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export CGO_ENABLED=0

# Modules: those go.mod requires that the module cache does not hold yet
# (paths escaped as the cache stores them: an upper-case letter is !lower).
cache=$("$GO" env GOMODCACHE)
missing=0
while read -r mod ver; do
  esc=$(printf '%s' "$mod" | sed -E 's/([A-Z])/!\L\1/g')
  [ -f "$cache/cache/download/$esc/@v/$ver.mod" ] || missing=$((missing + 1))
done < <(awk '/^require \(/{r=1; next} r && /^\)/{r=0} r && NF >= 2 {print $1, $2} /^require [^(]/{print $2, $3}' go.mod)
if [ "$missing" -gt 0 ]; then
  echo "build: downloading modules ($missing not in the module cache yet; about a minute, once)…"
  start=$SECONDS
  "$GO" mod download
  echo "build: modules downloaded in $((SECONDS - start)) s"
fi

# Packages: how many the build cache does not hold compiled.
stale=$("$GO" list -deps -f '{{if .Stale}}x{{end}}' ./cmd/boxoffice | grep -c x || true)
if [ "$stale" -gt 50 ]; then
  echo "build: compiling $stale packages: the first build takes 1½–3½ minutes on 2 cores (later builds take seconds)…"
fi
