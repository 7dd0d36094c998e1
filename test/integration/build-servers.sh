#!/usr/bin/env bash
# build-servers.sh builds etcd and kube-apiserver from Go modules (see servers/), or reuses an
# earlier build, and prints the directory that holds both binaries.
#
# Builds are cached in ${KCACHE_INTEGRATION_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcache-integration},
# one directory per server versions, platform and content of servers/, so a later run on the
# same machine reuses them and any change to servers/ rebuilds. Progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
src="$here/servers"
cache="${KCACHE_INTEGRATION_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcache-integration}"

k8s="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$src/go.mod")"
etcd="$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' "$src/go.mod")"
sum="$(cd "$src" && cat go.mod go.sum etcd/main.go kube-apiserver/main.go | sha256sum | cut -c1-12)"
dir="$cache/kube-apiserver-$k8s-etcd-$etcd-$(go env GOOS)-$(go env GOARCH)-$sum"

if [[ -x "$dir/etcd" && -x "$dir/kube-apiserver" ]]; then
	echo "build-servers: reusing $dir" >&2
	echo "$dir"
	exit 0
fi

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cd "$src"
for bin in etcd kube-apiserver; do
	start=$SECONDS
	echo "build-servers: building $bin (kube-apiserver: ~8 min on 2 idle cores from empty caches) ..." >&2
	go build -trimpath -buildvcs=false -ldflags='-s -w' -o "$tmp/$bin" "./$bin" >&2
	echo "build-servers: built $bin in $((SECONDS - start))s" >&2
done
# Publish in one step; if a concurrent build got there first, keep its result.
mv -T "$tmp" "$dir" 2>/dev/null || true
echo "$dir"
