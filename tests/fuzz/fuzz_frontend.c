/* libFuzzer target over the front end: lexer, parser and sema.
 *
 * Each input is a script text. It is parsed (and dumped with -d ast); when that
 * succeeds, sema checks it as `gotrace -b TARGET -e TEXT 42 str` would (with -d sites
 * and -d types), TARGET being a small Go program; then everything is freed. Messages
 * go to /dev/null. No codegen, no BPF: see docs/reliability.md.
 *
 * The target is $GT_FUZZ_TARGET, else the one the build made (GT_FUZZ_TARGET_DEFAULT).
 * It is opened once and handed to sema (sema_options.default_bi); GT_FUZZ_REOPEN=1
 * makes sema open it for every input instead, as gotrace does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfo/binfo.h"
#include "common/arena.h"
#include "common/diag.h"
#include "common/plan.h"
#include "common/util.h"
#include "parser/ast.h"
#include "sema/sema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *target;
static struct binfo *target_bi; /* NULL under GT_FUZZ_REOPEN=1 */
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	target = getenv("GT_FUZZ_TARGET");
	if (!target || !*target)
		target = GT_FUZZ_TARGET_DEFAULT;
	if (binfo__open(target, &target_bi) < 0) {
		fprintf(stderr, "fuzz_frontend: cannot open the Go target %s "
				"(set GT_FUZZ_TARGET)\n", target);
		exit(1);
	}
	const char *reopen = getenv("GT_FUZZ_REOPEN");
	if (reopen && !strcmp(reopen, "1")) {
		binfo__close(target_bi);
		target_bi = NULL;
	}
	devnull = fopen("/dev/null", "w");
	if (!devnull) {
		perror("fuzz_frontend: /dev/null");
		exit(1);
	}
	diag_set_stream(devnull);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* gotrace reads a C string: the text ends at the first NUL, as with -e */
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	struct diag_src src = {.name = "stdin", .text = text};
	struct arena *arena = arena__new();

	struct ast_node *prog = parse_program(arena, &src);
	gt_config_reset(); /* the last input's values were in its arena */
	if (prog && !sema_config_apply(arena, &src, prog)) {
		ast_dump(devnull, prog);
		static char arg1[] = "42", arg2[] = "str";
		char *posargs[] = {arg1, arg2};
		struct sema_options so = {
			.default_target = target,
			.default_bi = target_bi,
			.posargs = posargs,
			.nposargs = 2,
			.str_len = 64,
			.no_cpp = true, /* #include would run clang-16 on any path, even /dev/zero */
		};
		struct gt_plan plan = {0};
		struct sema_result sr = {0};
		if (sema_check(arena, &src, prog, &so, &plan, &sr) == 0) {
			sema_dump_sites(devnull, &plan);
			sema_dump_types(devnull, prog);
		}
		sema_result_free(&sr);
	}
	arena__free(arena);
	free(text);
	return 0;
}
