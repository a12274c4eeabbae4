/* check: what the C unit tests share: a failure counter, CHECK(), and run() for shell
 * commands (go build, strip ...). Each test defines `failures` through this header. */
#ifndef GT_TEST_CHECK_H
#define GT_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			fprintf(stdout, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stdout, __VA_ARGS__);                                              \
			fputc('\n', stdout);                                                       \
		}                                                                                  \
	} while (0)

/* Runs a printf-formatted shell command; says which one failed. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	if (rc != 0)
		printf("command failed (%d): %s\n", rc, cmd);
	return rc;
}

#endif
