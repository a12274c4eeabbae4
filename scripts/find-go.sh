#!/bin/sh
# Prints the path of the go command the tests and examples build with: $GT_GO when set,
# else the newest of the go commands found (PATH, /usr/local/go, Debian's /usr/lib/go*),
# so that Debian's golang-go 1.19 earlier on PATH does not win over the machine's Go.
set -eu
if [ -n "${GT_GO:-}" ]; then
    [ -x "$GT_GO" ] || { echo "find-go: GT_GO=$GT_GO is not an executable" >&2; exit 1; }
    echo "$GT_GO"
    exit 0
fi
best="" bestv=""
for g in $(command -v go 2>/dev/null) /usr/local/go/bin/go /usr/lib/go/bin/go /usr/lib/go-*/bin/go; do
    [ -x "$g" ] || continue
    # go1.26.8 -> 0001 0026 0008, compared as text
    v=$(GOTOOLCHAIN=local "$g" env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9]*\)\.\([0-9]*\)\.\{0,1\}\([0-9]*\).*/\1 \2 \3/p' |
        awk '{ printf "%04d%04d%04d", $1, $2, ($3 == "" ? 0 : $3) }')
    [ -n "$v" ] || continue
    if [ -z "$bestv" ] || [ "$v" \> "$bestv" ]; then best=$g bestv=$v; fi
done
[ -n "$best" ] || { echo "find-go: no go command found (install golang-go or set GT_GO)" >&2; exit 1; }
echo "$best"
