/* arch/aarch64_self: code in gotrace itself that gotrace probes (arch.h): the guard's
 * calibration targets and a frame push as Go's code has it. Written in assembly: the C
 * compiler may choose other instructions. Built on arm64 only. */
#if defined(__aarch64__)
__asm__(".pushsection .text\n"
	".p2align 4\n"
	".globl arch_trap_push\n"
	".type arch_trap_push, %function\n"
	"arch_trap_push:\n"
	/* RET: simulated by the kernel, one trap a hit */
	"\tret\n"
	".size arch_trap_push, .-arch_trap_push\n"
	".p2align 4\n"
	".globl arch_trap_step\n"
	".type arch_trap_step, %function\n"
	"arch_trap_step:\n"
	/* an ordinary instruction: single-stepped out of line, a second trap */
	"\tadd x9, sp, #0\n"
	"\tret\n"
	".size arch_trap_step, .-arch_trap_step\n"
	/* the outer function has a frame of its own (C's) and calls the leaf, which sets
	 * one up as Go's code does where go: entry probes sit */
	".p2align 4\n"
	".globl arch_frame_outer\n"
	".type arch_frame_outer, %function\n"
	"arch_frame_outer:\n"
	"\tstp x29, x30, [sp, #-16]!\n"
	"\tmov x29, sp\n"
	"\tbl arch_frame_leaf\n"
	".globl arch_frame_ret\n"
	"arch_frame_ret:\n"
	"\tldp x29, x30, [sp], #16\n"
	"\tret\n"
	".size arch_frame_outer, .-arch_frame_outer\n"
	".p2align 4\n"
	".globl arch_frame_leaf\n"
	".type arch_frame_leaf, %function\n"
	"arch_frame_leaf:\n"
	"\tstr x30, [sp, #-16]!\n"
	"\tstur x29, [sp, #-8]\n"
	"\tsub x29, sp, #8\n"
	"\tldur x29, [sp, #-8]\n"
	"\tldr x30, [sp], #16\n"
	"\tret\n"
	".size arch_frame_leaf, .-arch_frame_leaf\n"
	".popsection\n");
#endif
