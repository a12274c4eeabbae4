/* runtime-bpf/gt_arch: the processor's registers on the BPF side, the build's
 * (-DGT_ARCH_x86_64 from CMake, as src/arch/ on the tool's side). */
#ifndef GT_ARCH_H_BPF
#define GT_ARCH_H_BPF

#if defined(GT_ARCH_x86_64)
#include "arch_x86_64.h"
#elif defined(GT_ARCH_aarch64)
#include "arch_aarch64.h"
#else
#error "runtime-bpf: no arch_NAME.h for this processor (CMake's GT_ARCH)"
#endif

#endif
