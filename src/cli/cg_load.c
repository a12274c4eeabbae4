/* cg_load: the code generator is a module (gotrace-cg.so, which links LLVM) loaded only
 * when a program is compiled, so that a run the cache serves never maps libLLVM. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/cg.h"
#include "common/diag.h"

#ifdef __SANITIZE_ADDRESS__
/* LeakSanitizer's exit check walks each thread's dynamic TLS, and on this glibc it reads
 * a bogus block for the dlopen'd LLVM's thread_locals and crashes ("Tracer caught signal
 * 11", "DTLS ... at 0x3cf"). The ASan build does not intercept __tls_get_addr. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "intercept_tls_get_addr=0";
}
#endif

typedef int (*cg_generate_fn)(const struct diag_src *, struct sema_result *, struct gt_plan *,
			      const struct cg_options *);

/* The module's path: GT_CODEGEN, else beside the executable, else ../lib/gotrace. */
void cg_load_module_path(char *out, size_t len)
{
	const char *env = getenv("GT_CODEGEN");
	char exe[PATH_MAX];
	if (env && env[0]) {
		snprintf(out, len, "%s", env);
		return;
	}
	if (!realpath("/proc/self/exe", exe)) {
		snprintf(out, len, "gotrace-cg.so");
		return;
	}
	*strrchr(exe, '/') = 0;
	snprintf(out, len, "%s/gotrace-cg.so", exe);
	if (access(out, R_OK))
		snprintf(out, len, "%s/../lib/gotrace/gotrace-cg.so", exe);
}

int cg_load_generate(const struct diag_src *src, struct sema_result *sr, struct gt_plan *plan,
		     const struct cg_options *opts)
{
	static cg_generate_fn fn;
	if (!fn) {
		char path[PATH_MAX + 32];
		cg_load_module_path(path, sizeof(path));
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		fn = h ? (cg_generate_fn)dlsym(h, "cg_generate") : NULL;
		if (!fn) {
			diag_fatal("cannot load the code generator %s: %s", path, dlerror());
			return -ENOENT;
		}
	}
	return fn(src, sr, plan, opts);
}
