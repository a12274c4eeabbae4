#!/bin/sh
# Installs gotrace's build and test dependencies from Debian 12 when any is missing.
# qemu-system-x86, busybox-static and xz-utils: tests/kernels/vm.sh boots Debian's kernels
# (TCG, 9p; 6.12's modules are xz-compressed). debootstrap, qemu-user-static,
# qemu-system-arm and lld-16: the arm64 root, build and guests (tests/arm64/, docs/arm64.md).
# Safe to re-run: does nothing (and needs no network) when everything is present.
set -eu
pkgs="build-essential cmake pkg-config flex bison libbpf-dev libelf-dev zlib1g-dev \
libzstd-dev libdwarf-dev libcapstone-dev libcurl4-openssl-dev llvm-16-dev clang-16 \
libclang-rt-16-dev golang-go \
bpftool bpftrace python3 groff-base gdb qemu-system-x86 busybox-static xz-utils \
debootstrap qemu-user-static qemu-system-arm lld-16"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "install-deps: installing$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
