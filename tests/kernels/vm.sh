#!/bin/sh
# Runs CMD on one of Debian's kernels under qemu (TCG), in the host's own tree:
#   tests/kernels/vm.sh [--arch arm64] [--kernel 6.1] [--timeout SEC] [--mem MIB] [--dbg] -- CMD...
#   tests/kernels/vm.sh [--arch arm64] [--kernel 6.1] [--dbg] --fetch-only
# The newest linux-image-X.Y.*-amd64-unsigned Debian offers is downloaded (apt-get
# download) into ${GT_KERNEL_CACHE:-~/.cache/gotrace-tests/kernels}, with a busybox
# initramfs that mounts the host's root read-only over 9p under a tmpfs overlay (see
# tests/kernels/init). CMD runs as root in the current directory with this environment
# and GT_VM=tcg; its output comes to stdout, its exit status is vm.sh's. The guest's
# console goes to a log that is shown when the guest dies or the timeout (default 900 s)
# kills qemu. --dbg also fetches the kernel's linux-image-*-dbg once (858 MB for 6.1),
# keeps only its vmlinux with DWARF (633 MB, ~20 s of xz) next to the kernel, and hands
# it to CMD as GT_VMLINUX (kernel source lines, src/symbols/klines.c).
# --fetch-only: the downloads, the vmlinux and the initramfs into the cache, and no guest
# (scripts/test.sh runs it early, beside the plain pass, where one CPU is mostly idle).
# --arch arm64: Debian's linux-image-X.Y.*-arm64-unsigned under qemu-system-aarch64 (virt,
# TCG), fetched by the apt of the arm64 root (tests/arm64/root.sh), which is the guest's
# root instead of the host's; the current directory comes in over 9p at its own path
# (read-only, under a tmpfs overlay too), CMD's output through a file of the scratch dir
# (virt has one serial port: the console's), shown when the guest is done.
# Exit status: CMD's, or 125 when the guest could not run it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kver=6.1
arch=amd64
timeout=900
mem=2048
dbg=0
fetch=0
while [ $# -gt 0 ]; do
    case $1 in
    --kernel) kver=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --mem) mem=$2; shift 2 ;;
    --dbg) dbg=1; shift ;;
    --fetch-only) fetch=1; shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [--kernel X.Y] [--timeout SEC] [--mem MIB] [--dbg] -- CMD... | --fetch-only" >&2
       exit 125 ;;
    esac
done
if [ $# -eq 0 ] && [ $fetch = 0 ]; then
    echo "vm.sh: no command (usage: $0 [--kernel X.Y] -- CMD...)" >&2
    exit 125
fi
die() {
    echo "vm.sh: $*" >&2
    exit 125
}
case $arch in
amd64) qemu=qemu-system-x86_64 ;;
arm64) qemu=qemu-system-aarch64 ;;
*) die "--arch takes amd64 or arm64, not '$arch'" ;;
esac
for t in $qemu busybox apt-get dpkg-deb; do
    command -v $t >/dev/null || die "$t is missing: run scripts/install-deps.sh"
done
# apt: the host's for its own kernels; the arm64 root's (run there through qemu-user) for
# arm64's, downloading into its /tmp
sysroot=""
inroot() { "$@"; }
if [ "$arch" = arm64 ]; then
    sysroot=$(sh "$here/../arm64/root.sh") || die "no arm64 root (tests/arm64/root.sh)"
    inroot() { chroot "$sysroot" "$@"; }
    # its package lists, at most a day old (old kernel ABIs leave the mirror)
    if [ -z "$(find "$sysroot/var/lib/apt/lists" -maxdepth 1 -name '*Packages' -mmin -1440 \
                2>/dev/null | head -n 1)" ]; then
        inroot apt-get update -qq >&2 || echo "vm.sh: apt-get update in the arm64 root failed" >&2
    fi
fi
case $kver in
*[!0-9.]* | "") die "--kernel takes a version such as 6.1, not '$kver'" ;;
esac
cache=${GT_KERNEL_CACHE:-${HOME:-/root}/.cache/gotrace-tests/kernels}
mkdir -p "$cache"

# 1. The kernel package: the newest Debian offers, else the newest already cached.
# 6.1 is named linux-image-6.1.0-56-amd64-unsigned, 6.12 linux-image-6.12.117+deb12-...
re="^linux-image-$(echo "$kver" | sed 's/\./\\./g')\\.[0-9]+(-[0-9]+|\\+deb[0-9]+)-$arch-unsigned\$"
pkg=$(inroot apt-cache search --names-only "$re" 2>/dev/null | cut -d' ' -f1 | sort -V | tail -n 1)
if [ -n "$pkg" ]; then
    pver=$(inroot apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
    deb="$cache/${pkg}_$(echo "$pver" | sed 's/^[0-9]*://')_$arch.deb"
    if [ ! -f "$deb" ]; then
        echo "vm.sh: downloading $pkg $pver" >&2
        # root's apt hands downloads to _apt, which cannot write a root-owned cache
        if [ -n "$sysroot" ]; then
            rm -rf "$sysroot/tmp/gt-dl" && mkdir -p "$sysroot/tmp/gt-dl"
            (inroot sh -c "cd /tmp/gt-dl && apt-get download -q -o APT::Sandbox::User=root $pkg" >&2 &&
             mv "$sysroot"/tmp/gt-dl/*.deb "$deb") || die "apt-get download $pkg failed"
        else
            (cd "$cache" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) ||
                die "apt-get download $pkg failed"
        fi
    fi
else
    deb=$(ls "$cache"/linux-image-"$kver".[0-9]*-$arch-unsigned_*.deb 2>/dev/null | sort -V |
          tail -n 1 || true)
    [ -n "$deb" ] || die "Debian offers no linux-image-$kver.*-$arch-unsigned (apt-get update?)"
fi
kdir=${deb%.deb}
if [ ! -f "$kdir/ok" ]; then
    rm -rf "$kdir" "$kdir.tmp"
    mkdir -p "$kdir.tmp"
    dpkg-deb -x "$deb" "$kdir.tmp/pkg" || die "dpkg-deb -x $deb failed"
    mv "$kdir.tmp" "$kdir"
    touch "$kdir/ok"
fi
kernel=$(ls "$kdir"/pkg/boot/vmlinuz-* | head -n 1)
mods=$(ls -d "$kdir"/pkg/lib/modules/* | head -n 1)

# 1b. --dbg: the same release's vmlinux with DWARF, from its -dbg package (the .deb is
# dropped once the vmlinux is out: only that is read).
vmlinux=""
[ "$dbg" = 0 ] || [ "$arch" = amd64 ] || die "--dbg is for amd64's kernels only (yet)"
if [ "$dbg" = 1 ]; then
    vmlinux="$kdir/vmlinux-$(basename "$mods")"
    if [ ! -s "$vmlinux" ]; then
        dpkg=$(basename "$deb" | sed 's/-unsigned_/-dbg_/')
        dname=${dpkg%%_*}
        dver=$(echo "$dpkg" | cut -d_ -f2)
        if [ ! -f "$cache/$dpkg" ]; then
            echo "vm.sh: downloading $dname $dver" >&2
            (cd "$cache" && apt-get download -q -o APT::Sandbox::User=root "$dname=$dver" >&2) ||
                die "apt-get download $dname=$dver failed"
        fi
        # the vmlinux is the archive's 11th member: tar stops there (--occurrence), and
        # the rest of its 5.6 GB is never decompressed (17 s instead of ~100 s of xz);
        # dpkg-deb then dies of the closed pipe, which is not an error here
        dpkg-deb --fsys-tarfile "$cache/$dpkg" 2>/dev/null |
            tar -xO --occurrence=1 --wildcards './usr/lib/debug/boot/vmlinux-*' \
                >"$vmlinux.tmp" || die "no vmlinux in $dpkg"
        rm -f "$cache/$dpkg"
        [ "$(head -c 4 "$vmlinux.tmp" | od -An -c | tr -d ' ')" = 177ELF ] ||
            die "no vmlinux in $dpkg"
        mv "$vmlinux.tmp" "$vmlinux"
    fi
fi

# 2. The initramfs: busybox, the modules 9p and the overlay need (with what they depend
# on, read from each module's depends= field: the package has no modules.dep), /init.
initrd="$kdir/initramfs.cpio.gz"
if [ ! -f "$initrd" ] || [ "$here/init" -nt "$initrd" ] || [ "$0" -nt "$initrd" ]; then
    root=$(mktemp -d "$kdir/initramfs.XXXXXX")
    mkdir -p "$root/bin" "$root/lib/modules" "$root/proc" "$root/sys" "$root/dev"
    # the guest's processor's busybox (an arm64 one runs here through qemu-user)
    bb=$(command -v busybox)
    [ -z "$sysroot" ] || bb=$sysroot/bin/busybox
    cp "$bb" "$root/bin/busybox"
    for a in $("$root/bin/busybox" --list); do
        [ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
    done
    cp "$here/init" "$root/init"
    chmod 755 "$root/init"
    order=""
    add() { # add MODULE after what it depends on (6.12's come xz-compressed)
        case " $order " in *" $1 "*) return 0 ;; esac
        f=$(find "$mods/kernel" -name "$1.ko" -o -name "$1.ko.xz" | head -n 1)
        if [ -z "$f" ]; then
            # built into the kernel (6.12's virtio_pci)
            grep -q "/$1\.ko\$" "$mods/modules.builtin" 2>/dev/null && return 0
            die "module $1 is not in $(basename "$deb")"
        fi
        case $f in
        *.xz) xz -dc "$f" >"$root/lib/modules/$1.ko" ;;
        *) cp "$f" "$root/lib/modules/$1.ko" ;;
        esac
        for d in $(tr '\0' '\n' <"$root/lib/modules/$1.ko" | sed -n 's/^depends=//p' |
                   tr ',' ' '); do
            add "$d"
        done
        order="$order $1"
    }
    for m in virtio_pci 9pnet_virtio 9p overlay; do
        add $m
    done
    for m in $order; do echo "$m"; done >"$root/modules.order"
    (cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$initrd.tmp" ||
        die "building the initramfs failed"
    mv "$initrd.tmp" "$initrd"
    rm -rf "$root"
fi
if [ $fetch = 1 ]; then
    echo "vm.sh: $(basename "$kernel")${vmlinux:+ and its vmlinux} ready in $cache" >&2
    exit 0
fi

# 3. The run: CMD and its environment in a scratch dir the guest writes back to.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gotrace-vm.XXXXXX")
qpid=""
cleanup() {
    # timeout(1) passes the TERM on to qemu
    [ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 125' INT TERM
echo "GT_VM_SCRATCH='$scratch'" >"$scratch/vm.conf"
# arm64: the guest's root is the arm64 root; the current directory comes in at its path
[ -z "$sysroot" ] || echo "GT_VM_WORKDIR='$(pwd)'" >>"$scratch/vm.conf"
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
    export -p | grep -Ev '^(export )?(PWD|OLDPWD|SHLVL|_|GT_VM)='
    # tests/runtime/gtlib.py widens its timing windows under emulation
    echo "export GT_VM=tcg"
    [ -z "$vmlinux" ] || printf 'export GT_VMLINUX=%s\n' "$(quote "$vmlinux")"
    printf 'cd %s || exit 125\n' "$(quote "$(pwd)")"
    printf 'exec'
    for a in "$@"; do printf ' %s' "$(quote "$a")"; done
    printf '\n'
} >"$scratch/cmd.sh"

start=$(date +%s)
# TCG: this machine's KVM guests hang early in boot (issue 26). One host thread for both
# vCPUs: under multi-threaded TCG, Go programs with uprobes crashed at wild PCs in the
# uprobes XOL page (test_goruntime's churn case, 2 of 2 runs; 0 of 2 with one thread):
# qemu's cross-vCPU handling of the rewritten XOL slots, it seems, not the kernel's.
# tsc=reliable: the guest kernel would find the two vCPUs' TSCs "unsynchronized" (they take
# turns on one host thread) and fall back to hpet, and a task's CPU time to a per-CPU clock
# clamped to the tick's window, which moves milliseconds of one task's time to another
# when a vCPU waits its turn (docs/reliability.md, cold22): a thread clock that disagrees
# with the monotonic one is no oracle. Both vCPUs read one host counter (qemu's ticks).
# GT_VM_ACCEL and GT_VM_CPU override the defaults. The guest has no network.
if [ "$arch" = amd64 ]; then
    timeout -s KILL "$timeout" qemu-system-x86_64 -accel "${GT_VM_ACCEL:-tcg,thread=single}" -cpu "${GT_VM_CPU:-max}" -m "$mem" -smp 2 -nodefaults -no-user-config \
        -display none -monitor none -no-reboot \
        -kernel "$kernel" -initrd "$initrd" \
        -append "console=ttyS0 loglevel=4 panic=-1 mitigations=off tsc=reliable rdinit=/init" \
        -serial "file:$scratch/console.log" \
        -chardev stdio,id=out,signal=off -serial chardev:out \
        -virtfs local,path=/,mount_tag=gtroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs local,path="$scratch",mount_tag=gtscratch,security_model=none \
        </dev/null &
else
    # arm64 (ARCHITECTURE.md): pauth-impdef, or pointer authentication's emulation makes
    # the guest 3-4 times slower; one vCPU (TCG's cross-vCPU XOL trouble, above)
    timeout -s KILL "$timeout" qemu-system-aarch64 -M virt -accel tcg \
        -cpu "${GT_VM_CPU:-max,pauth-impdef=on}" -m "$mem" -smp 1 -nodefaults -no-user-config \
        -display none -monitor none -no-reboot \
        -kernel "$kernel" -initrd "$initrd" \
        -append "console=ttyAMA0 loglevel=4 panic=-1 rdinit=/init" \
        -serial "file:$scratch/console.log" \
        -virtfs local,path="$sysroot",mount_tag=gtroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs local,path="$scratch",mount_tag=gtscratch,security_model=none \
        -virtfs local,path="$(pwd)",mount_tag=gtwork,security_model=none,readonly=on,multidevs=remap \
        </dev/null &
fi
qpid=$!
rc=0
wait $qpid || rc=$?
qpid=""
[ $rc -ne 137 ] || echo "vm.sh: timeout: qemu killed after $timeout s" >&2
echo "vm.sh: $(basename "$kernel"), $(($(date +%s) - start)) s in the guest" >&2
# arm64: CMD's output came through a file
[ ! -f "$scratch/out" ] || cat "$scratch/out"
if [ ! -s "$scratch/status" ]; then
    echo "vm.sh: the guest did not run CMD to its end; its console:" >&2
    tail -n 40 "$scratch/console.log" >&2
    exit 125
fi
exit "$(cat "$scratch/status")"
