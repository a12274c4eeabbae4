/* execmaps: the mappings a -c child's execve makes, as the kernel records them.
 *
 * A PIE's stacks are named with its load bias, read from /proc/PID/maps while the
 * process runs. A command that runs for a few ms can be gone before gotrace is scheduled
 * to read them (seen under load: test_gomatrix's PIE builds printed bare addresses). So,
 * as perf does, a dummy software event on the child, enabled by its execve, has the
 * kernel write a PERF_RECORD_MMAP2 for each executable mapping into a ring buffer; the
 * records outlive the process and are read whenever gotrace gets to them. */
#include "runtime/session/execmaps_int.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

/* 8 data pages: an exec maps a handful of executable ranges (the binary, the vDSO, the
 * dynamic loader and libc for cgo); later ones are not needed, and a full buffer only
 * drops those. */
#define EXECMAPS_DATA_PAGES 8

struct rt_execmaps {
	int fd;
	void *base;  /* the control page, then the data pages */
	size_t size; /* of the data pages */
	size_t page;
};

struct mmap2_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct rt_execmaps *rt_execmaps__open(pid_t pid)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.enable_on_exec = 1, /* the exec's own mappings, not the forked gotrace's */
		.mmap = 1,
		.mmap2 = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	long fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = page * EXECMAPS_DATA_PAGES;
	void *base = mmap(NULL, page + size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (base == MAP_FAILED) {
		close((int)fd);
		return NULL;
	}
	struct rt_execmaps *em = xcalloc(1, sizeof(*em));
	*em = (struct rt_execmaps){.fd = (int)fd, .base = base, .size = size, .page = page};
	return em;
}

int rt_execmaps__drain(struct rt_execmaps *em, rt_execmaps_fn fn, void *ctx)
{
	if (!em)
		return 0;
	struct perf_event_mmap_page *ctl = em->base;
	const uint8_t *data = (const uint8_t *)em->base + em->page;
	uint64_t head = __atomic_load_n(&ctl->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ctl->data_tail;
	int n = 0;
	/* a record may wrap around the end of the buffer: each is copied out whole */
	union {
		struct mmap2_rec r;
		uint8_t b[sizeof(struct mmap2_rec) + 4096 + 8];
	} buf;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(tail + i) % em->size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (h.type == PERF_RECORD_MMAP2 && h.size <= sizeof(buf) &&
		    h.size > sizeof(struct mmap2_rec)) {
			for (size_t i = 0; i < h.size; i++)
				buf.b[i] = data[(tail + i) % em->size];
			buf.b[h.size - 1] = 0; /* the name is NUL-padded to 8 bytes */
			const struct mmap2_rec *r = &buf.r;
			struct rt_mapping m = {.pid = (int)r->pid, .start = r->addr,
					       .pgoff = r->pgoff, .maj = r->maj, .min = r->min,
					       .ino = r->ino, .path = r->filename};
			fn(ctx, &m);
			n++;
		}
		tail += h.size;
	}
	__atomic_store_n(&ctl->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

void rt_execmaps__close(struct rt_execmaps *em)
{
	if (!em)
		return;
	munmap(em->base, em->page + em->size);
	close(em->fd);
	free(em);
}
