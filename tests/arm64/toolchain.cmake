# CMake toolchain: gotrace for linux/arm64, built on another host by clang-16 against the
# arm64 root of tests/arm64/root.sh (its path in GT_ARM64_ROOT), linked by lld.
# Programs of the root that the build runs (LLVM's llvm-config) run through qemu-user.
#   GT_ARM64_ROOT=$(tests/arm64/root.sh) cmake -B build-arm64 \
#       -DCMAKE_TOOLCHAIN_FILE=tests/arm64/toolchain.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(NOT DEFINED ENV{GT_ARM64_ROOT})
    message(FATAL_ERROR "GT_ARM64_ROOT: the arm64 root (tests/arm64/root.sh prints it)")
endif()
set(CMAKE_SYSROOT $ENV{GT_ARM64_ROOT})
set(CMAKE_C_COMPILER clang-16)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_ASM_COMPILER clang-16)
set(CMAKE_ASM_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
foreach(kind EXE SHARED MODULE)
    set(CMAKE_${kind}_LINKER_FLAGS_INIT -fuse-ld=lld)
endforeach()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${CMAKE_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
    ${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${CMAKE_SYSROOT}/usr/share/pkgconfig)
# the root's own programs run here (llvm-config at configure time): qemu-user finds their
# dynamic loader and libraries in the root
set(ENV{QEMU_LD_PREFIX} ${CMAKE_SYSROOT})
