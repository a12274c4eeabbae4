#!/bin/sh
# The arm64 Debian root gotrace is built against (clang's sysroot) and whose userland
# its arm64 guests run: debootstrap --foreign on this host, then the second stage and
# apt-get under qemu-user-static (binfmt_misc with the F flag, registered here when
# missing). Made once into ${GT_ARM64_CACHE:-~/.cache/gotrace-tests/arm64}/root and
# kept while its package list is unchanged (root/.gt-stamp holds its checksum); its apt
# sources are the host's, brought up to date on every call (Debian's newer kernels come
# from bookworm-updates and -security).
#   tests/arm64/root.sh      prints the root's path (exit 0), or why not (exit 125)
# ~4 min and ~900 MB the first time (LLVM's static archives are most of it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${GT_ARM64_CACHE:-${HOME:-/root}/.cache/gotrace-tests/arm64}
root=$cache/root
die() {
    echo "arm64/root.sh: $*" >&2
    exit 125
}
# what gotrace links (its -dev packages, LLVM's archives and the C++ runtime they need)
# and what the guests run (bpftrace 0.17: the oracle; python3: the test runner;
# busybox-static: the initramfs)
pkgs="libc6-dev libgcc-12-dev libstdc++-12-dev libbpf-dev libelf-dev zlib1g-dev libzstd-dev \
libdwarf-dev libcapstone-dev libcurl4-openssl-dev llvm-16-dev libffi-dev libncurses-dev \
libxml2-dev bpftrace python3 busybox-static"
stamp=$(echo "$pkgs" | cksum | cut -d' ' -f1)
# the host's apt sources (deb822 or one-line), for the root's apt
sources() {
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        cp /etc/apt/sources.list.d/debian.sources "$1/etc/apt/sources.list.d/debian.sources"
        : >"$1/etc/apt/sources.list"
    elif [ -s /etc/apt/sources.list ]; then
        cp /etc/apt/sources.list "$1/etc/apt/sources.list"
    fi
}
if [ -f "$root/.gt-stamp" ] && [ "$(cat "$root/.gt-stamp")" = "$stamp" ]; then
    if ! cmp -s /etc/apt/sources.list.d/debian.sources \
            "$root/etc/apt/sources.list.d/debian.sources" 2>/dev/null &&
       [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sources "$root"
        rm -f "$root"/var/lib/apt/lists/*Packages* # stale: vm.sh updates them
    fi
    echo "$root"
    exit 0
fi
for t in debootstrap qemu-aarch64-static chroot; do
    command -v $t >/dev/null || die "$t is missing: run scripts/install-deps.sh"
done
# binfmt_misc, for the root's programs to run here (F: the interpreter is opened now,
# so it need not exist inside the root)
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || die "cannot mount binfmt_misc"
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    conf=/usr/lib/binfmt.d/qemu-aarch64.conf
    [ -f $conf ] || die "no $conf (qemu-user-static)"
    cat $conf >/proc/sys/fs/binfmt_misc/register || die "cannot register $conf"
fi
# the mirror apt already uses
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
rm -rf "$root.tmp"
mkdir -p "$cache"
echo "arm64/root.sh: debootstrap bookworm arm64 from $mirror" >&2
debootstrap --arch=arm64 --foreign --variant=minbase bookworm "$root.tmp" "$mirror" >&2 ||
    die "debootstrap (first stage) failed"
chroot "$root.tmp" /debootstrap/debootstrap --second-stage >&2 ||
    die "debootstrap --second-stage failed"
echo "deb $mirror bookworm main" >"$root.tmp/etc/apt/sources.list"
sources "$root.tmp"
cp /etc/resolv.conf "$root.tmp/etc/resolv.conf" 2>/dev/null || true
chroot "$root.tmp" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends $pkgs && apt-get clean" >&2 ||
    die "apt-get install in the root failed"
echo "$stamp" >"$root.tmp/.gt-stamp"
rm -rf "$root"
mv "$root.tmp" "$root"
echo "$root"
