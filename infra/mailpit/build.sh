#!/usr/bin/env bash
# Builds Mailpit, the SMTP server and web inbox that receives the email of
# `make dev` and of the tests, once, and prints the binary's path.
#
#   infra/mailpit/build.sh
#
# `go install module@version` builds it with Mailpit's own go.mod and go.sum
# (checked against the Go checksum database), apart from this module: its
# fifty dependencies neither enter nor move this module's. The first build
# takes a minute or two; later ones find the binary.
set -euo pipefail
version=v1.33.1
root=$(cd "$(dirname "$0")/../.." && pwd)
dir="$root/.data/bin"
bin="$dir/mailpit-$version"

if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  # Test binaries started together wait for one build rather than each
  # making its own.
  exec 9>"$bin.lock"
  if command -v flock >/dev/null; then flock 9; fi
  if [ ! -x "$bin" ]; then
    tmp=$(mktemp -d "$dir/mailpit-build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    GOBIN="$tmp" "${GO:-go}" install "github.com/axllent/mailpit@$version" >&2
    mv "$tmp/mailpit" "$bin"
  fi
fi
echo "$bin"
