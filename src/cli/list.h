/* list: -l [PATTERN] */
#ifndef GT_LIST_H
#define GT_LIST_H

#include <stdbool.h>

/* Prints the probes PATTERN matches (NULL: all); TARGET may be NULL. Returns 0 or a
 * negative errno after a message. */
int list_probes(const char *pattern, const char *target, bool verbose);
/* -l with a program: the probes of TEXT's clauses; PATH is the script's (NULL: -e). */
int list_program(const char *text, const char *path, const char *target, bool verbose);
/* list_go.c: the Go functions of TARGET matching PAT, with their signatures where DWARF
 * has them; VERBOSE adds where each parameter is and the layout of struct types. */
int list_go(const char *pat, const char *target, bool verbose);
/* list_kfunc.c: PROV:MODULE:FUNC (kfunc or kretfunc) for the kernel functions with BTF
 * PAT ("PROV:[MODULE:]FUNC") matches, or, PROV NULL, whose kfunc:MODULE:FUNC matches all of
 * PAT (nothing then where the kernel refuses fentry); VERBOSE adds their parameters. */
int list_kfuncs(const char *pat, const char *prov, bool verbose);

#endif
