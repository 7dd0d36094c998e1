#!/usr/bin/env bash
# run.sh builds (or reuses) etcd and kube-apiserver, then runs the integration tests against
# them under the race detector. Arguments are passed to `go test` (e.g. -run TestInitialSync -v).
# $INTEGRATION_TIMEOUT bounds the test run (default 15m).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
bin="$("$here/build-servers.sh")"
export KCACHE_INTEGRATION_BIN="$bin"
cd "$here"
start=$SECONDS
go test -race -count=1 -timeout "${INTEGRATION_TIMEOUT:-15m}" "$@" ./...
echo "integration: tests ran in $((SECONDS - start))s" >&2
