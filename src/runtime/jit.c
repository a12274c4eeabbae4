/* -d jit: the machine code the kernel's JIT made of each loaded program, disassembled
 * with capstone, so a reader sees what a probe hit really executes. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/util.h"
#include "runtime/rt_priv.h"

static int dump_prog(FILE *out, const char *name, int fd)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	uint32_t n = info.jited_prog_len;
	if (!n) {
		fprintf(out, "%s: not JIT-compiled (net.core.bpf_jit_enable is 0?)\n", name);
		return 0;
	}
	uint8_t *code = xmalloc(n);
	memset(&info, 0, sizeof(info));
	info.jited_prog_len = n;
	info.jited_prog_insns = (uint64_t)(uintptr_t)code;
	len = sizeof(info);
	int err = 0;
	csh cs;
	cs_insn *insn = NULL;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		err = -EINVAL;
		goto out;
	}
	size_t count = cs_disasm(cs, code, n, 0, 0, &insn);
	fprintf(out, "%s: %u bytes of x86-64\n", name, n);
	for (size_t i = 0; i < count; i++)
		fprintf(out, "  %4llx: %-8s %s\n", (unsigned long long)insn[i].address,
			insn[i].mnemonic, insn[i].op_str);
	cs_free(insn, count);
	cs_close(&cs);
out:
	free(code);
	return err;
}

int rt_session__dump_jit(struct rt_session *s, FILE *out)
{
	for (int i = 0; i < s->plan->nprogs; i++) {
		int err = dump_prog(out, s->plan->progs[i].fn_name, bpf_program__fd(s->progs[i]));
		if (err) {
			diag_print(DIAG_WARNING, "-d jit: %s: %s", s->plan->progs[i].fn_name,
				   strerror(-err));
			return err;
		}
	}
	fflush(out);
	return 0;
}
