#include "gt_runtime.h"

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

long gt_read_gostr(char *dst, __u32 size, __u64 addr)
{
	struct {
		__u64 ptr;
		__s64 len;
	} hdr;
	__u64 len;
	long err;

	__builtin_memset(dst, 0, size);
	err = bpf_probe_read_user(&hdr, sizeof(hdr), (const void *)addr);
	if (err < 0)
		return err;
	if (hdr.len <= 0)
		return 0;
	len = (__u64)hdr.len;
	if (len > size - 1)
		len = size - 1;
	/* The verifier needs the bound it can see, not the one LLVM proved. */
	asm volatile("" : "+r"(len));
	if (len > 255)
		return -1;
	err = bpf_probe_read_user(dst, len, (const void *)hdr.ptr);
	return err < 0 ? err : (long)len;
}

long gt_read_bytes(char *dst, __u32 size, __u64 addr, __s64 n)
{
	__u64 len;
	__builtin_memset(dst, 0, size);
	if (n <= 0)
		return 0;
	len = (__u64)n;
	if (len > size - 1)
		len = size - 1;
	asm volatile("" : "+r"(len));
	if (len > 1024)
		return -1;
	return bpf_probe_read_user(dst, len, (const void *)addr);
}

__s64 gt_read_gotext(char *dst, __u32 size, __u64 addr, __s64 n)
{
	if (gt_read_bytes(dst, size, addr, n) == 0)
		return n;
	gt_stat_inc(GT_STAT_UNREAD_TEXT);
	return 0;
}

void gt_read_buf(char *dst, __u32 size, __u64 addr, __s64 n)
{
	__u64 len = n > 0 ? (__u64)n : 0;
	__builtin_memset(dst, 0, size);
	if (len > size - 8)
		len = size - 8;
	asm volatile("" : "+r"(len));
	if (len > 1024 || bpf_probe_read_user(dst + 8, len, (const void *)addr))
		len = 0;
	*(__u64 *)dst = len;
}

void gt_read_chars(char *dst, __u32 size, __u64 addr, __u32 user)
{
	__builtin_memset(dst, 0, size);
	if (size < 2)
		return;
	if (user)
		bpf_probe_read_user(dst, size - 1, (const void *)addr);
	else
		bpf_probe_read_kernel(dst, size - 1, (const void *)addr);
}

void gt_read_raw(char *dst, __u32 n, __u64 addr, __u32 user)
{
	if (user)
		bpf_probe_read_user(dst, n, (const void *)addr);
	else
		bpf_probe_read_kernel(dst, n, (const void *)addr);
}

void gt_join(char *dst, __u32 slots, __u32 slot_size, __u64 argv)
{
	/* an empty first byte is an empty slot (a large memset does not lower to BPF) */
	for (__u32 i = 0; i < slots && i < 32; i++)
		dst[i * slot_size] = 0;
	for (__u32 i = 0; i < slots && i < 32; i++) {
		__u64 p = 0;
		if (bpf_probe_read_user(&p, sizeof(p), (const void *)(argv + 8 * i)) || !p)
			return;
		bpf_probe_read_user_str(dst + i * slot_size, slot_size, (const void *)p);
	}
}

long gt_read_cstr(char *dst, __u32 size, __u64 addr)
{
	return bpf_probe_read_user_str(dst, size, (const void *)addr);
}

__u64 gt_read_kuint(__u64 addr, __u32 size)
{
	__u64 v = 0;
	if (size > 8)
		size = 8;
	if (bpf_probe_read_kernel(&v, size, (const void *)addr))
		return 0;
	return v;
}

__u64 gt_read_uint(__u64 addr, __u32 size)
{
	__u64 v = 0;
	bpf_probe_read_user(&v, size, (const void *)addr);
	return v;
}
