#!/usr/bin/env bash
# compat-matrix.sh builds each published module and runs its tests (without the race detector)
# against the newest patch of every Kubernetes minor the module supports. A module supports the
# minors from the one its go.mod requires of k8s.io/apimachinery (its lowest, which `make test`
# runs against) up to the newest in the version list. For each version it sets the Kubernetes
# libraries the module requires (k8s.io/apimachinery, and k8s.io/api and k8s.io/client-go when
# required) to that version, with whatever klog, utils and x/time they require in turn.
# It works on temporary copies of go.mod/go.sum (-modfile), so the tree is left as it was.
#
# Usage: test/compat-matrix.sh [MODULE_DIR ...]
#   versions: $COMPAT_VERSIONS (the newest patch of each supported minor, default below)
#   modules:  the arguments, else $COMPAT_MODULES, else the root module
set -euo pipefail

cd "$(dirname "$0")/.."
root="$PWD"
read -r -a versions <<<"${COMPAT_VERSIONS:-v0.34.13 v0.35.10 v0.36.6 v0.37.2}"
modules=("$@")
if [[ ${#modules[@]} -eq 0 ]]; then
	read -r -a modules <<<"${COMPAT_MODULES:-.}"
fi

# minor v0.34.13 -> 34
minor() { local v="${1#v0.}"; echo "${v%%.*}"; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=()
for m in "${modules[@]}"; do
	cd "$root/$m"
	floor="$(go list -m -f '{{.Version}}' k8s.io/apimachinery)"
	libs=()
	for lib in k8s.io/apimachinery k8s.io/api k8s.io/client-go; do
		if grep -qE "^\s*$lib v" go.mod; then libs+=("$lib"); fi
	done
	for v in "${versions[@]}"; do
		if (($(minor "$v") < $(minor "$floor"))); then
			continue
		fi
		echo "== $m: ${libs[*]} $v (go.mod: $floor)"
		cp go.mod "$tmp/go.mod"
		cp go.sum "$tmp/go.sum"
		start=$SECONDS
		if go get -modfile="$tmp/go.mod" "${libs[@]/%/@$v}" &&
			go mod tidy -modfile="$tmp/go.mod" &&
			grep -E '^\s+(k8s\.io/(apimachinery|api|client-go|klog/v2|utils)|golang\.org/x/time) ' "$tmp/go.mod" &&
			go vet -modfile="$tmp/go.mod" ./... &&
			go test -modfile="$tmp/go.mod" -count=1 ./...; then
			echo "== $m $v: ok in $((SECONDS - start))s"
		else
			echo "== $m $v: FAILED"
			failed+=("$m@$v")
		fi
	done
done
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "compat-matrix: failed for ${failed[*]}" >&2
	exit 1
fi
echo "compat-matrix: ok for ${modules[*]} on ${versions[*]} (each from its go.mod's minor)"
