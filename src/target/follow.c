/* follow: the programs a -c command runs in its descendants (go test, go run, a shell
 * or env wrapper).
 *
 * Two tracepoint programs, written here as BPF instructions (a dozen each, nothing for
 * LLVM to do), keep the command's process tree and stop each exec in it:
 *   sched_process_fork: the child of a process in `tree` joins it (threads too: a
 *     thread may fork or exec; the LRU map forgets the long dead);
 *   sched_process_exec: a process of `tree` that just exec'd stops itself
 *     (bpf_send_signal(SIGSTOP), delivered before the new program's first
 *     instruction) and its tgid goes to user space on a ring buffer.
 * User space decides for each exec: the first program the caller's test accepts stays
 * stopped while it is traced like a -p process (probes attached, BEGIN run), then it
 * is continued; every other one is continued at once. A SIGCONT that comes before the
 * stop is delivered discards it, so the order cannot leave a process stopped. */
#include "target/follow.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/spawn.h"
#include "common/stopsig.h"
#include "common/util.h"
#include "sema/tracepoint.h"

#define FOLLOW_TREE_MAX 16384
#define FOLLOW_RB_BYTES (256 * 1024)
#define FOLLOW_SEEN_MAX 64

struct seen {
	dev_t dev;
	ino_t ino;
	bool match;
};

struct follow {
	struct spawn sp;
	const char *name; /* argv[0], for messages */
	int tree_fd, rb_fd;
	int prog_fd[2], perf_fd[2];
	struct ring_buffer *rb;
	/* the exec events not yet decided */
	VEC(pid_t) pending;
	/* decisions by file: the go command runs its compiler once per package */
	struct seen seen[FOLLOW_SEEN_MAX];
	int nseen;
	pid_t traced; /* the program found and traced; 0 before */
	dev_t traced_dev;
	ino_t traced_ino;
	bool noted_again;
	bool verbose;
	uint64_t held_at; /* when the traced program's exec was seen (CLOCK_MONOTONIC ns) */
	int root_status;
	bool root_exited;
};

/* ---- the BPF side ---------------------------------------------------------------- */

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define RSH_IMM(d, i) INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define STX_W(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define ST_W(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define LDX_W(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define LD_MAP(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INSN(0, 0, 0, 0, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* Is the current process in the tree (its tgid stored at r10-4)? If not, jump SKIP. */
#define IN_TREE(fd, skip)                                                              \
	CALL(BPF_FUNC_get_current_pid_tgid), RSH_IMM(BPF_REG_0, 32),                   \
	    STX_W(BPF_REG_10, BPF_REG_0, -4), LD_MAP(BPF_REG_1, fd),                    \
	    MOV_REG(BPF_REG_2, BPF_REG_10), ADD_IMM(BPF_REG_2, -4),                     \
	    CALL(BPF_FUNC_map_lookup_elem), JEQ_IMM(BPF_REG_0, 0, skip)

static int load_prog(const char *name, const struct bpf_insn *insns, size_t n)
{
	char log[4096] = "";
	LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log, .log_size = sizeof(log), .log_level = 0);
	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, name, "GPL", insns, n, &o);
	if (fd < 0) {
		/* once more with the log: the message should say why */
		o.log_level = 1;
		fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, name, "GPL", insns, n, &o);
		int e = fd < 0 ? -fd : 0;
		if (fd < 0)
			diag_fatal("-c: cannot load the watcher of the command's programs (%s): %s%s%s",
				   name, strerror(e), *log ? "\n" : "", log);
		return fd < 0 ? -e : fd;
	}
	return fd;
}

/* The tracepoint's perf event with PROG on it. */
static int attach_tp(const char *name, int prog)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/events/sched/%s/id", tp_tracefs(), name);
	FILE *f = fopen(path, "r");
	int id = -1;
	if (!f || fscanf(f, "%d", &id) != 1) {
		if (f)
			fclose(f);
		diag_fatal("-c: cannot read %s", path);
		return -ENOENT;
	}
	fclose(f);
	struct perf_event_attr a = {.type = PERF_TYPE_TRACEPOINT,
				    .size = sizeof(a),
				    .config = (uint64_t)id,
				    .sample_period = 1,
				    .wakeup_events = 1};
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		diag_fatal("-c: cannot attach to sched/%s: %s", name, strerror(e));
		return -e;
	}
	return fd;
}

static int field_offset(const char *tp, const char *field)
{
	struct tp_format fmt;
	if (tp_format_read("sched", tp, &fmt)) {
		diag_fatal("-c: cannot read the format of tracepoint sched/%s", tp);
		return -ENOENT;
	}
	const struct tp_field *f = tp_field_find(&fmt, field);
	int off = f && f->size == 4 ? f->offset : -ENOENT;
	tp_format_free(&fmt);
	if (off < 0)
		diag_fatal("-c: tracepoint sched/%s has no 4-byte field %s", tp, field);
	return off;
}

static int load_watcher(struct follow *f)
{
	int child_off = field_offset("sched_process_fork", "child_pid");
	if (child_off < 0)
		return child_off;
	f->tree_fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "gt_follow_tree", 4, 4,
				    FOLLOW_TREE_MAX, NULL);
	f->rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "gt_follow_exec", 0, 0, FOLLOW_RB_BYTES,
				  NULL);
	if (f->tree_fd < 0 || f->rb_fd < 0) {
		int e = f->tree_fd < 0 ? f->tree_fd : f->rb_fd;
		diag_fatal("-c: cannot create the maps of the exec watcher: %s", strerror(-e));
		return e;
	}
	const struct bpf_insn fork[] = {
		MOV_REG(BPF_REG_6, BPF_REG_1),
		IN_TREE(f->tree_fd, 11),
		LDX_W(BPF_REG_1, BPF_REG_6, (short)child_off),
		STX_W(BPF_REG_10, BPF_REG_1, -8),
		ST_W(BPF_REG_10, -12, 1),
		LD_MAP(BPF_REG_1, f->tree_fd),
		MOV_REG(BPF_REG_2, BPF_REG_10),
		ADD_IMM(BPF_REG_2, -8),
		MOV_REG(BPF_REG_3, BPF_REG_10),
		ADD_IMM(BPF_REG_3, -12),
		MOV_IMM(BPF_REG_4, BPF_ANY),
		CALL(BPF_FUNC_map_update_elem),
		MOV_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	/* SIGSTOP before the event: user space may only continue a stop it was told of */
	const struct bpf_insn exec[] = {
		IN_TREE(f->tree_fd, 9),
		MOV_IMM(BPF_REG_1, SIGSTOP),
		CALL(BPF_FUNC_send_signal),
		LD_MAP(BPF_REG_1, f->rb_fd),
		MOV_REG(BPF_REG_2, BPF_REG_10),
		ADD_IMM(BPF_REG_2, -4),
		MOV_IMM(BPF_REG_3, 4),
		MOV_IMM(BPF_REG_4, 0),
		CALL(BPF_FUNC_ringbuf_output),
		MOV_IMM(BPF_REG_0, 0),
		EXIT(),
	};
	f->prog_fd[0] = load_prog("gt_follow_fork", fork, sizeof(fork) / sizeof(fork[0]));
	if (f->prog_fd[0] < 0)
		return f->prog_fd[0];
	f->prog_fd[1] = load_prog("gt_follow_exec", exec, sizeof(exec) / sizeof(exec[0]));
	if (f->prog_fd[1] < 0)
		return f->prog_fd[1];
	f->perf_fd[0] = attach_tp("sched_process_fork", f->prog_fd[0]);
	if (f->perf_fd[0] < 0)
		return f->perf_fd[0];
	f->perf_fd[1] = attach_tp("sched_process_exec", f->prog_fd[1]);
	return f->perf_fd[1] < 0 ? f->perf_fd[1] : 0;
}

/* ---- user space ------------------------------------------------------------------- */

static int on_exec(void *ctx, void *data, size_t size)
{
	struct follow *f = ctx;
	if (size >= sizeof(uint32_t))
		vec_push(&f->pending, (pid_t) * (uint32_t *)data);
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int follow__start(struct follow **out, char **argv, bool verbose)
{
	struct follow *f = xcalloc(1, sizeof(*f));
	f->verbose = verbose;
	f->tree_fd = f->rb_fd = -1;
	f->prog_fd[0] = f->prog_fd[1] = f->perf_fd[0] = f->perf_fd[1] = -1;
	f->sp.gate_fd = f->sp.exec_err_fd = -1;
	f->name = argv[0];
	int err = load_watcher(f);
	if (err)
		goto fail;
	f->rb = ring_buffer__new(f->rb_fd, on_exec, f, NULL);
	if (!f->rb) {
		err = -errno;
		diag_fatal("-c: cannot map the exec watcher's ring buffer: %s", strerror(-err));
		goto fail;
	}
	err = spawn_gated(argv, &f->sp);
	if (err)
		goto fail;
	uint32_t k = (uint32_t)f->sp.pid, v = 1;
	if (bpf_map_update_elem(f->tree_fd, &k, &v, BPF_ANY)) {
		err = -errno;
		diag_fatal("-c: cannot follow %s: %s", argv[0], strerror(-err));
		goto fail;
	}
	err = spawn_release(&f->sp, argv[0]);
	if (err)
		goto fail;
	*out = f;
	return 0;
fail:
	follow__free(f);
	return err;
}

pid_t follow__root(const struct follow *f)
{
	return f->sp.pid;
}

static struct seen *seen_of(struct follow *f, const struct stat *st)
{
	for (int i = 0; i < f->nseen; i++)
		if (f->seen[i].dev == st->st_dev && f->seen[i].ino == st->st_ino)
			return &f->seen[i];
	return NULL;
}

/* Decides one stopped exec: true when PID is the program to trace (left stopped). */
static bool decide(struct follow *f, pid_t pid, follow_match_fn match, void *ctx)
{
	char exe[64];
	struct stat st;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (stat(exe, &st))
		return false; /* gone already */
	if (f->traced) {
		if (st.st_dev == f->traced_dev && st.st_ino == f->traced_ino && !f->noted_again) {
			f->noted_again = true;
			diag_print(DIAG_WARNING, "pid %d runs the traced program again: only pid %d "
				   "is traced", (int)pid, (int)f->traced);
		}
		return false;
	}
	struct seen *s = seen_of(f, &st);
	bool yes = s ? s->match : match(ctx, exe);
	if (f->verbose) {
		char link[256] = "";
		ssize_t n = readlink(exe, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = 0;
		diag_print(DIAG_INFO, "-c: pid %d execs %s: %s", (int)pid, link,
			   yes ? "traced" : "not traced");
	}
	if (!s && f->nseen < FOLLOW_SEEN_MAX)
		f->seen[f->nseen++] = (struct seen){st.st_dev, st.st_ino, yes};
	if (yes) {
		f->held_at = now_ns();
		f->traced = pid;
		f->traced_dev = st.st_dev;
		f->traced_ino = st.st_ino;
	}
	return yes;
}

/* Decides the pending execs; the first match is returned, the others continued. */
static pid_t decide_pending(struct follow *f, follow_match_fn match, void *ctx)
{
	pid_t found = 0;
	for (int i = 0; i < f->pending.n; i++) {
		pid_t p = f->pending.v[i];
		if (!found && match && decide(f, p, match, ctx))
			found = p;
		else {
			if (f->traced && !match)
				decide(f, p, NULL, NULL);
			kill(p, SIGCONT);
		}
	}
	f->pending.n = 0;
	return found;
}

static bool root_gone(struct follow *f)
{
	if (f->root_exited)
		return true;
	int status;
	pid_t r = waitpid(f->sp.pid, &status, WNOHANG);
	if (r == f->sp.pid) {
		f->root_exited = true;
		f->root_status = status;
	}
	return f->root_exited;
}

int follow__wait(struct follow *f, follow_match_fn match, void *ctx, pid_t *pid)
{
	*pid = 0;
	while (!stopsig_pending()) {
		int n = ring_buffer__poll(f->rb, 50);
		if (n < 0 && n != -EINTR) {
			diag_fatal("-c: cannot read the exec watcher: %s", strerror(-n));
			return n;
		}
		pid_t p = decide_pending(f, match, ctx);
		if (p) {
			*pid = p;
			return 0;
		}
		/* the last execs may come just before the end: read them first */
		if (root_gone(f) && ring_buffer__consume(f->rb) <= 0 && !f->pending.n)
			return -ECHILD;
	}
	return -EINTR;
}

void follow__poll(struct follow *f)
{
	ring_buffer__consume(f->rb);
	decide_pending(f, NULL, NULL);
}

void follow__resume(struct follow *f)
{
	if (!f->traced)
		return;
	kill(f->traced, SIGCONT);
	/* what following costs the program: bench/run.sh reads this line */
	if (f->verbose)
		diag_print(DIAG_INFO, "-c: pid %d held %.1f ms, exec to attached", (int)f->traced,
			   (double)(now_ns() - f->held_at) / 1e6);
}

bool follow__root_status(const struct follow *f, int *status)
{
	*status = f->root_status;
	return f->root_exited;
}

void follow__free(struct follow *f)
{
	if (!f)
		return;
	/* the watcher first: no new stop may come after the continues below */
	for (int i = 0; i < 2; i++) {
		close_fd(&f->perf_fd[i]);
		close_fd(&f->prog_fd[i]);
	}
	if (f->rb) {
		ring_buffer__consume(f->rb);
		ring_buffer__free(f->rb);
	}
	for (int i = 0; i < f->pending.n; i++)
		kill(f->pending.v[i], SIGCONT);
	if (f->traced)
		kill(f->traced, SIGCONT);
	vec_free(&f->pending);
	close_fd(&f->tree_fd);
	close_fd(&f->rb_fd);
	close_fd(&f->sp.gate_fd);
	close_fd(&f->sp.exec_err_fd);
	free(f);
}
