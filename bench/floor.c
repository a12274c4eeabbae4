/* floor: the least any tracer must do for a one-liner on a Go function under -c, the
 * bench's "floor" column: open the binary, load a four-instruction BPF program that
 * counts its hits, attach it to one function with one uprobe_multi link filtered on
 * the child's pid, let the child exec, wait for it, read the count, detach.
 *
 *   floor BINARY SYMBOL CMD [ARG...]      (gcc -O2 -o floor floor.c -lelf)
 *
 * Prints hits=, attach_ms=, detach_ms= after the command's own output (stdout); exit
 * status 0 when the probe fired and the command succeeded.
 * Raw bpf(2): Debian 12's libbpf 1.1 predates uprobe_multi (Linux 6.6). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <libelf.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { TRACE_UPROBE_MULTI = 48 }; /* BPF_TRACE_UPROBE_MULTI, newer than these headers */

/* BPF_LINK_CREATE's uprobe_multi arm (linux/bpf.h of 6.6). */
struct um_link_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, um_flags, pid;
};

static double ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int bpf(int cmd, void *attr, size_t size)
{
	return (int)syscall(__NR_bpf, cmd, attr, size);
}

/* File offset of SYM's first byte: its address through the PT_LOAD holding it. */
static int sym_offset(const char *path, const char *sym, uint64_t *off)
{
	int fd = open(path, O_RDONLY), rc = -ENOENT;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t addr = 0;
	size_t nph;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL)))
		goto out;
	while (!addr && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			    (name = elf_strptr(e, sh.sh_link, s.st_name)) && !strcmp(name, sym)) {
				addr = s.st_value;
				break;
			}
		}
	}
	if (!addr || elf_getphdrnum(e, &nph))
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr < ph.p_vaddr + ph.p_filesz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			rc = 0;
			break;
		}
	}
out:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: floor BINARY SYMBOL CMD [ARG...]\n");
		return 2;
	}
	char *path = realpath(argv[1], NULL);
	uint64_t off;
	if (!path || sym_offset(path, argv[2], &off)) {
		fprintf(stderr, "floor: no function %s in %s\n", argv[2], argv[1]);
		return 2;
	}

	union bpf_attr ma = {.map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8,
			     .max_entries = 1};
	int map = bpf(BPF_MAP_CREATE, &ma, sizeof(ma));
	/* r0 = &hits (the array's value address, direct); *(u64 *)r0 += 1; return 0 */
	struct bpf_insn prog[] = {
		{.code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 0, .src_reg = BPF_PSEUDO_MAP_VALUE,
		 .imm = map},
		{.imm = 0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 1, .imm = 1},
		{.code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = 0, .src_reg = 1, .imm = BPF_ADD},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr pa = {.prog_type = BPF_PROG_TYPE_KPROBE,
			     .expected_attach_type = TRACE_UPROBE_MULTI,
			     .insns = (uintptr_t)prog,
			     .insn_cnt = sizeof(prog) / sizeof(prog[0]),
			     .license = (uintptr_t)"GPL"};
	int pfd = map < 0 ? -1 : bpf(BPF_PROG_LOAD, &pa, sizeof(pa));
	if (pfd < 0) {
		perror("floor: bpf");
		return 1;
	}

	/* The child waits for the probe before it execs, as gotrace's -c does. */
	int go[2];
	if (pipe2(go, O_CLOEXEC))
		return 1;
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execvp(argv[3], argv + 3);
		_exit(127);
	}
	close(go[0]);
	struct um_link_attr la = {.prog_fd = (uint32_t)pfd, .attach_type = TRACE_UPROBE_MULTI,
				  .path = (uintptr_t)path, .offsets = (uintptr_t)&off, .cnt = 1,
				  .pid = (uint32_t)child};
	double t0 = ms();
	int link = bpf(BPF_LINK_CREATE, &la, sizeof(la));
	double t1 = ms();
	if (link < 0) {
		perror("floor: uprobe_multi link");
		kill(child, SIGKILL);
		return 1;
	}
	if (write(go[1], "x", 1) != 1)
		return 1;
	close(go[1]);
	int st;
	waitpid(child, &st, 0);

	uint32_t key = 0;
	uint64_t hits = 0;
	union bpf_attr lk = {.map_fd = (uint32_t)map, .key = (uintptr_t)&key,
			     .value = (uintptr_t)&hits};
	bpf(BPF_MAP_LOOKUP_ELEM, &lk, sizeof(lk));
	double t2 = ms();
	close(link);
	double t3 = ms();
	printf("hits=%llu\nattach_ms=%.3f\ndetach_ms=%.3f\n", (unsigned long long)hits, t1 - t0,
	       t3 - t2);
	return hits && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}
