/* info: --info */
#ifndef GT_INFO_H
#define GT_INFO_H

#include <stdio.h>

void info_report(FILE *out, const char *version);

#endif
