/* follow_cmd: which program -c traces.
 *
 * A -c command that is a Go program (not the go command) is traced itself, as always:
 * a misspelt function is an error at the start, with its suggestions. Anything else is
 * followed (target/follow.c): the go command (go test, go run), a shell or env wrapper,
 * or a command whose program the script does not fit, and likewise a -b program that
 * is not the command's. Each program the command then execs in its descendants is held
 * at its first instruction until it is known: the first that the script fits (or that
 * is the -b file) is traced; the go command's own tools (GOROOT/pkg/tool: compile,
 * link, vet) and the go command itself never are. */
#include "follow_cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binfo/binfo.h"
#include "common/diag.h"
#include "common/util.h"

struct matcher {
	const struct fcmd_fit *fit;
	struct stat bin; /* -b */
	bool have_bin;
};

/* The go command: its run and test subcommands are in it. */
static bool is_go_command(struct binfo *bi)
{
	return binfo_find_func(bi, "cmd/go/internal/run.runRun") ||
	       binfo_find_func(bi, "cmd/go/internal/test.runTest");
}

static bool go_program(const char *path, bool *go_command)
{
	struct binfo *bi = NULL;
	*go_command = false;
	if (binfo__open_quiet(path, &bi))
		return false;
	bool go = binfo_is_go(bi);
	*go_command = go && is_go_command(bi);
	binfo__close(bi);
	return go;
}

static bool matches(void *ctx, const char *exe)
{
	struct matcher *m = ctx;
	if (m->have_bin) {
		struct stat st;
		return !stat(exe, &st) && st.st_dev == m->bin.st_dev && st.st_ino == m->bin.st_ino;
	}
	char link[PATH_MAX];
	ssize_t n = readlink(exe, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = 0;
		if (strstr(link, "/pkg/tool/"))
			return false; /* compile, link, vet, asm, cgo of a Go toolchain */
	}
	bool go_command;
	if (go_program(exe, &go_command) && go_command)
		return false;
	return m->fit->fits(m->fit->ctx, exe);
}

bool fcmd_should_follow(const char *cmd, const char *bin, const struct fcmd_fit *fit)
{
	struct stat a, b;
	if (access(cmd, X_OK))
		return false; /* the plain path says what is wrong with it */
	if (bin)
		return stat(cmd, &a) || stat(bin, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino;
	bool go_command;
	bool go = go_program(cmd, &go_command);
	if (go_command)
		return true;
	return !go && !fit->fits(fit->ctx, cmd);
}

int fcmd_find(char **argv, const char *bin, const struct fcmd_fit *fit, bool verbose,
	      struct follow **out, pid_t *pid, int *status)
{
	struct matcher m = {.fit = fit};
	*status = 0;
	if (bin) {
		if (stat(bin, &m.bin)) {
			diag_fatal("%s: %s", bin, strerror(errno));
			return -errno;
		}
		m.have_bin = true;
	}
	/* go test and go run link without DWARF (-s -w) unless asked, and go run compiles
	 * the main package without it (-dwarf=false, Go 1.26): the script's names and
	 * arguments need both halves. A -ldflags or -gcflags of the command itself
	 * replaces GOFLAGS' one. */
	bool go_command = false;
	go_program(argv[0], &go_command);
	const char *goflags = getenv("GOFLAGS");
	if (go_command) {
		struct strbuf v = {0};
		strbuf_puts(&v, goflags ? goflags : "");
		if (!(goflags && strstr(goflags, "-ldflags")))
			strbuf_printf(&v, "%s-ldflags=-w=false", v.len ? " " : "");
		if (!(goflags && strstr(goflags, "-gcflags")))
			strbuf_printf(&v, "%s-gcflags=-dwarf=true", v.len ? " " : "");
		setenv("GOFLAGS", v.buf ? v.buf : "", 1);
		free(v.buf);
	}
	struct follow *f = NULL;
	int err = follow__start(&f, argv, verbose);
	if (err)
		return err;
	err = follow__wait(f, matches, &m, pid);
	if (err == -ECHILD) {
		int st = 0;
		follow__root_status(f, &st);
		diag_fatal("%s ran no program %s%s", argv[0],
			   bin ? "from the -b file" : "that has the functions the script names",
			   go_command ? " (with DWARF: go test and go run leave it out, and an "
					"-ldflags or -gcflags of the command replaces gotrace's GOFLAGS "
					"-ldflags=-w=false -gcflags=-dwarf=true; add them to it)" : "");
		*status = WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st)
			  : WIFSIGNALED(st)                ? 128 + WTERMSIG(st)
							   : 1;
	}
	if (err) {
		follow__free(f);
		return err;
	}
	*out = f;
	return 0;
}
