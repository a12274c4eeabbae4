#!/bin/sh
# Builds the bundled example Go program and traces it with gotrace.
set -eu
cd "$(dirname "$0")/.."
export GOCACHE=${GOCACHE:-/tmp/gotrace-gocache}
GO=$(scripts/find-go.sh)
(cd examples/demo && CGO_ENABLED=0 GOTOOLCHAIN=local "$GO" build -o ../../build/demo main.go)
set -x
build/gotrace -c 'build/demo 3' -e 'go:main.add*:entry { printf("%-10s a=%d b=%d tid=%d\n", func, arg0, arg1, tid); }'
