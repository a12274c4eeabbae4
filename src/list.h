/* list: -l [PATTERN] */
#ifndef GT_LIST_H
#define GT_LIST_H

#include <stdbool.h>

/* Prints the probes PATTERN matches (NULL: all); TARGET may be NULL. Returns 0 or a
 * negative errno after a message. */
int list_probes(const char *pattern, const char *target, bool verbose);

#endif
