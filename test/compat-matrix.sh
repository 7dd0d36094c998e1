#!/usr/bin/env bash
# compat-matrix.sh builds the root module and runs its tests against each Kubernetes minor's
# newest k8s.io/apimachinery (and k8s.io/api, which its tests use) in the supported range, with
# the klog, utils and x/time versions each of them requires. The root go.mod holds the range's
# lowest versions (`make test` runs against those); this checks the newest of every minor.
# It works on temporary copies of go.mod/go.sum (-modfile), so the tree is left as it was.
#
# Usage: test/compat-matrix.sh [VERSION ...]   (default: $COMPAT_VERSIONS, else the list below)
set -euo pipefail

cd "$(dirname "$0")/.."
versions=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
	read -r -a versions <<<"${COMPAT_VERSIONS:-v0.34.13 v0.35.10 v0.36.6 v0.37.2}"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=()
for v in "${versions[@]}"; do
	echo "== k8s.io/apimachinery $v"
	cp go.mod "$tmp/go.mod"
	cp go.sum "$tmp/go.sum"
	start=$SECONDS
	if go get -modfile="$tmp/go.mod" "k8s.io/apimachinery@$v" "k8s.io/api@$v" &&
		go mod tidy -modfile="$tmp/go.mod" &&
		grep -E '^\s+(k8s\.io/(apimachinery|api|klog/v2|utils)|golang\.org/x/time) ' "$tmp/go.mod" &&
		go vet -modfile="$tmp/go.mod" ./... &&
		go test -modfile="$tmp/go.mod" -count=1 ./...; then
		echo "== $v: ok in $((SECONDS - start))s"
	else
		echo "== $v: FAILED"
		failed+=("$v")
	fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "compat-matrix: failed for ${failed[*]}" >&2
	exit 1
fi
echo "compat-matrix: ok for ${versions[*]}"
