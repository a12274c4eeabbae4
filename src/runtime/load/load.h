/* load: the plan's BPF object opened, each program given its type and run through the
 * verifier, a rejection turned into one line naming the probe's script line (load.c);
 * -d jit, the JIT's machine code of each loaded program with its source lines (jit.c,
 * proglines.c). Above attach/ (a program is loaded with the attach type attach/ will
 * give it); run/ loads and unloads. */
#ifndef GT_RT_LOAD_H
#define GT_RT_LOAD_H

#include <stdbool.h>
#include <stdio.h>

#include "runtime/session/session.h"

/* load.c */
int rt_session__load(struct rt_session *s);
void rt_session__unload(struct rt_session *s);
void rt_libbpf_print_init(bool verbose);
void rt_libbpf_print_restore(void);

/* jit.c */
int rt_session__dump_jit(struct rt_session *s, FILE *out);

#endif
