/* rt_priv: what the parts of the runtime share. One rt_session lives for one rt_run();
 * every resource in it starts "absent" (NULL / -1 / 0) so the one cleanup path can
 * release whatever was acquired, in any state. */
#ifndef GT_RT_PRIV_H
#define GT_RT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/plan.h"
#include "runtime/rt.h"
#include "runtime/rt_maps.h"
#include "runtime/rt_value.h"

/* BPF_TRACE_UPROBE_MULTI: Debian 12's UAPI headers (6.1) predate it (kernel 6.6). */
#define RT_ATTACH_UPROBE_MULTI 48

struct bpf_object;
struct bpf_program;
struct ring_buffer;
struct rt_output;
struct strbuf;

struct rt_session {
	struct gt_plan *plan;
	const struct rt_options *opts;

	/* load.c */
	struct bpf_object *obj;
	struct bpf_program **progs; /* [plan->nprogs], by fn_name */
	char **log_bufs;            /* [plan->nprogs] verifier logs, while loading */
	int events_fd, lost_fd, config_fd; /* map fds owned by obj, -1 when absent */
	bool lost_percpu;

	/* attach.c */
	int *links; /* uprobe_multi link fds, closed on detach */
	int nlinks;
	int nattached_sites;

	/* child.c: -c child and -p target */
	pid_t pid;          /* effective pid filter, 0 = any process */
	pid_t child;        /* -c child until reaped, else 0 */
	int gate_fd;        /* write end of the pipe the child waits on before execve */
	int exec_err_fd;    /* read end: the child's errno if execve fails, EOF on success */
	int pidfd;          /* pidfd of the traced process (-c or -p), -1 if none */
	bool child_exited;  /* reaped; child_status holds the wait status */
	int child_status;

	/* output.c + run.c */
	FILE *out;
	bool out_owned;
	struct rt_output *output;
	struct rt_maps *maps; /* @maps: print(@m), clear, zero, the dump at the end */
	struct ring_buffer *rb;
	uint64_t lost_reported;
};

/* load.c */
int rt_session__load(struct rt_session *s);
void rt_session__unload(struct rt_session *s);
void rt_libbpf_print_init(bool verbose);
void rt_libbpf_print_restore(void);

/* jit.c */
int rt_session__dump_jit(struct rt_session *s, FILE *out);

/* attach.c */
/* A raw BPF_LINK_CREATE of type uprobe_multi (libbpf 1.1 has no wrapper): the link fd, or
 * a negative errno. */
int rt_uprobe_multi_link_create(int prog_fd, const char *path, const uint64_t *offsets,
				const uint64_t *cookies, uint32_t cnt, pid_t pid, bool ret);
int rt_session__attach(struct rt_session *s);
void rt_session__detach(struct rt_session *s);

/* child.c */
int rt_child__spawn(struct rt_session *s);
int rt_child__release(struct rt_session *s);
int rt_target__open(struct rt_session *s, pid_t pid);
bool rt_target__gone(struct rt_session *s);
void rt_child__stop(struct rt_session *s, bool terminate);

/* output.c */
struct rt_output *rt_output__new(const struct gt_plan *plan, FILE *f, bool json, int *err);
void rt_output__free(struct rt_output *o);
int rt_output__handle(void *ctx, void *data, size_t size); /* ring_buffer_sample_fn */
bool rt_output__exit_seen(const struct rt_output *o);
/* The script, for the located warnings of -k. */
void rt_output__set_src(struct rt_output *o, const struct diag_src *src);
/* While discarding (after exit()), records are consumed and not printed. */
void rt_output__set_discard(struct rt_output *o, bool discard);
/* Who gets the call-graph records (NULL: they are dropped); its finish() is called by
 * rt_output__free, before the output is closed. */
void rt_output__set_consumer(struct rt_output *o, const struct rt_consumer *c);
/* The maps print(@m) / clear(@m) / zero(@m) events act on (NULL: none). */
void rt_output__set_maps(struct rt_output *o, struct rt_maps *maps);
void rt_output__lost(struct rt_output *o, uint64_t n);
uint64_t rt_output__records(const struct rt_output *o);

#endif
