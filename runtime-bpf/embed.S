/* Embeds the runtime-bpf bitcode (built by CMake) into the gotrace binary. */
	.section .rodata
	.global gt_runtime_bc
	.global gt_runtime_bc_end
	.balign 16
gt_runtime_bc:
	.incbin GT_RT_BC_PATH
gt_runtime_bc_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
