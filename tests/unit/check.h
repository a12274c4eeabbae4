/* check: what the C unit tests share: a failure counter, CHECK(), and run() for shell
 * commands (go build, strip ...). Each test defines `failures` through this header. */
#ifndef GT_TEST_CHECK_H
#define GT_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CHECK_SHARED_FAILURES /* a test of several files: one of them defines it */
extern int failures;
#else
static int failures;
#endif

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

/* Puts the go command of scripts/find-go.sh ($GT_GO, else the newest go found) first on
 * PATH, so that every `go` these tests run (builds, go tool nm/addr2line/pprof) is the
 * one the rest of the suite builds with; GOTOOLCHAIN=local keeps it from switching
 * releases. Returns 0, or -1 when there is no go (the test then skips). */
static int use_test_go(const char *src_dir) __attribute__((unused));
static int use_test_go(const char *src_dir)
{
	char cmd[4352], go[4096];
	snprintf(cmd, sizeof(cmd), "%s/scripts/find-go.sh", src_dir);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	char *got = fgets(go, sizeof(go), p);
	if (pclose(p) != 0 || !got)
		return -1;
	go[strcspn(go, "\n")] = 0;
	char *slash = strrchr(go, '/');
	if (!slash)
		return -1;
	*slash = 0;
	const char *path = getenv("PATH");
	snprintf(cmd, sizeof(cmd), "%s:%s", go, path ? path : "/usr/bin:/bin");
	setenv("PATH", cmd, 1);
	setenv("GOTOOLCHAIN", "local", 1);
	return 0;
}

#endif
