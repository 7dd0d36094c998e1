#!/usr/bin/env bash
# variant.sh builds the bench binary with a third implementation, "variant": the library as it
# is in another checkout (a worktree holding, say, kcache with one mechanism switched off),
# under a module path of its own so that both versions link into one process. Then
#
#   bench/variant.sh /path/to/other/checkout /tmp/bench-variant
#   /tmp/bench-variant -impl variant,kcache -run 'controller/' -rounds 5
#
# runs the workloads interleaved and prints variant/kcache ratios, as make bench-compare does
# for kcache/client-go. Only the root module of the other checkout is used.
set -euo pipefail

src=$(cd "$1" && pwd)
out=${2:-/tmp/bench-variant}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The library, without the modules nested in it, under github.com/kcache/variant.
mkdir -p "$tmp/lib"
(cd "$src" && git ls-files -co --exclude-standard) | while read -r f; do
	case "$f" in bench/* | clientgo/* | sharding/* | prometheus/* | test/* | examples/*) continue ;; esac
	[ -f "$src/$f" ] || continue
	mkdir -p "$tmp/lib/$(dirname "$f")"
	cp "$src/$f" "$tmp/lib/$f"
done
find "$tmp/lib" -name '*.go' -o -name go.mod | xargs sed -i 's#github.com/kcache/cache#github.com/kcache/variant#g'

# This bench, with the kcache adapter copied as the variant's.
mkdir -p "$tmp/bench"
cp "$here"/*.go "$here"/go.mod "$here"/go.sum "$tmp/bench/"
sed -e 's#github.com/kcache/cache#github.com/kcache/variant#' \
	-e 's/kcache\(Impl\|FIFO\|Informer\|Metrics\|Indexers\)/variant\1/g' \
	-e 's/stallMaxPending/variantStallMaxPending/g' \
	-e 's/Name: "kcache"/Name: "variant"/' \
	"$here/impl_kcache.go" >"$tmp/bench/impl_variant.go"
cat >>"$tmp/bench/impl_variant.go" <<'EOF'

func init() { allImpls = append(allImpls, variantImpl) }
EOF
cd "$tmp/bench"
go mod edit -require github.com/kcache/variant@v0.0.0-00010101000000-000000000000 \
	-replace github.com/kcache/cache=$(cd "$here/.." && pwd) \
	-replace github.com/kcache/cache/clientgo=$(cd "$here/../clientgo" && pwd) \
	-replace github.com/kcache/cache/prometheus=$(cd "$here/../prometheus" && pwd) -replace github.com/kcache/variant=../lib
go build -mod=mod -o "$out" .
echo "built $out (variant: $src)"
