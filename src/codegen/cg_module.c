/* cg_module: the LLVM module around the programs: target, debug info (BTF comes from
 * it), BTF-defined maps, the runtime-bpf bitcode, the O2 pipeline and emission. */
#include "codegen/cg_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "common/util.h"

extern const char gt_runtime_bc[];
extern const char gt_runtime_bc_end[];

static void on_llvm_diag(LLVMDiagnosticInfoRef di, void *opaque)
{
	struct cg *g = opaque;
	LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
	if (sev != LLVMDSError)
		return;
	char *msg = LLVMGetDiagInfoDescription(di);
	if (!g->llvm_error)
		g->llvm_error = xstrdup(msg);
	LLVMDisposeMessage(msg);
}

LLVMValueRef cg_const(struct cg *g, uint64_t v)
{
	return LLVMConstInt(g->i64, v, false);
}

void cg_set_loc(struct cg *g, struct gt_loc loc)
{
	LLVMMetadataRef l = LLVMDIBuilderCreateDebugLocation(
		g->ctx, (unsigned)(loc.line > 0 ? loc.line : 1),
		(unsigned)(loc.col > 0 ? loc.col : 1), g->di_sp, NULL);
	LLVMSetCurrentDebugLocation2(g->b, l);
}

LLVMValueRef cg_helper(struct cg *g, enum bpf_func_id id, LLVMTypeRef ret, LLVMValueRef *args,
		       int nargs)
{
	LLVMTypeRef params[8];
	for (int i = 0; i < nargs; i++)
		params[i] = LLVMTypeOf(args[i]);
	LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)nargs, false);
	LLVMValueRef fp = LLVMConstIntToPtr(cg_const(g, (uint64_t)id), g->ptr);
	return LLVMBuildCall2(g->b, fty, fp, args, (unsigned)nargs, "");
}

LLVMValueRef cg_runtime_call(struct cg *g, const char *name, LLVMValueRef *args, int nargs)
{
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
	if (!fn) {
		diag_fatal("internal error: runtime-bpf has no %s", name);
		abort();
	}
	return LLVMBuildCall2(g->b, LLVMGlobalGetValueType(fn), fn, args, (unsigned)nargs, "");
}

_Noreturn void cg_internal_error(struct cg *g, const struct ast_node *n, const char *what)
{
	diag_error(g->src, n->loc, "internal error: code generation met %s (%s)", what,
		   ast_kind_name(n->kind));
	abort();
}

/* Where the builder was before an excursion into the entry block. */
struct cg_spot {
	LLVMBasicBlockRef bb;
	LLVMMetadataRef loc;
};

/* Puts the builder before AT of the entry block (NULL: at its end). Positioning before
 * an instruction also takes its debug location, which would stick to the statement's
 * code after the return (its lines lost from -d bpf and the BTF line info). */
static struct cg_spot to_entry(struct cg *g, LLVMValueRef at)
{
	struct cg_spot sp = {LLVMGetInsertBlock(g->b), LLVMGetCurrentDebugLocation2(g->b)};
	if (at)
		LLVMPositionBuilderBefore(g->b, at);
	else
		LLVMPositionBuilderAtEnd(g->b, g->alloca_bb);
	return sp;
}

static void back_from_entry(struct cg *g, struct cg_spot sp)
{
	LLVMPositionBuilderAtEnd(g->b, sp.bb);
	LLVMSetCurrentDebugLocation2(g->b, sp.loc);
}

/* Allocas go in the entry block so that mem2reg/SROA see them. */
LLVMValueRef cg_alloca(struct cg *g, LLVMTypeRef ty, const char *name)
{
	struct cg_spot sp = to_entry(g, LLVMGetFirstInstruction(g->alloca_bb));
	LLVMValueRef a = LLVMBuildAlloca(g->b, ty, name);
	back_from_entry(g, sp);
	return a;
}

/* Values of the program's start, made on first use at the top of the entry block:
 * a probe that needs neither pays for neither helper call. */
static LLVMValueRef at_entry(struct cg *g, enum bpf_func_id helper, bool with_ctx)
{
	struct cg_spot sp = to_entry(g, LLVMGetFirstInstruction(g->alloca_bb));
	LLVMValueRef a = g->ctx_arg;
	LLVMValueRef v = cg_helper(g, helper, g->i64, with_ctx ? &a : NULL, with_ctx ? 1 : 0);
	back_from_entry(g, sp);
	return v;
}

/* A uprobe program's site: gt_site_cookie() reads the link's cookie, or looks the site
 * up by address when one tracefs event holds many sites (GT_LINK_BY_IP). */
LLVMValueRef cg_cookie(struct cg *g)
{
	if (g->cookie)
		return g->cookie;
	if (g->pp->kind != PLAN_PROG_UPROBE) {
		g->cookie = at_entry(g, BPF_FUNC_get_attach_cookie, true);
		return g->cookie;
	}
	/* after the allocas already made (cg_alloca puts new ones first): the call is
	 * inlined, which splits the block, and an alloca past the split is dynamic */
	LLVMValueRef at = LLVMGetFirstInstruction(g->alloca_bb);
	while (at && LLVMIsAAllocaInst(at))
		at = LLVMGetNextInstruction(at);
	struct cg_spot sp = to_entry(g, at);
	g->cookie = cg_runtime_call(g, "gt_site_cookie", &g->ctx_arg, 1);
	back_from_entry(g, sp);
	return g->cookie;
}

LLVMValueRef cg_now(struct cg *g)
{
	if (!g->now)
		g->now = at_entry(g, BPF_FUNC_ktime_get_ns, false);
	return g->now;
}

LLVMValueRef cg_buf_alloca(struct cg *g, int size)
{
	if (cg_scratch_wants(g, size))
		return cg_scratch_buf(g, size);
	LLVMValueRef a = cg_alloca(g, LLVMArrayType(g->i8, (unsigned)size), "str");
	LLVMSetAlignment(a, 8);
	return a;
}

/* llvm.lifetime.start/end(i64 size, ptr) */
static void lifetime(struct cg *g, bool start, LLVMValueRef buf, int size)
{
	static const char *const names[] = {"llvm.lifetime.end", "llvm.lifetime.start"};
	unsigned id = LLVMLookupIntrinsicID(names[start], strlen(names[start]));
	LLVMTypeRef ptr = g->ptr;
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, &ptr, 1);
	LLVMTypeRef fty = LLVMIntrinsicGetType(g->ctx, id, &ptr, 1);
	LLVMValueRef args[2] = {cg_const(g, (uint64_t)size), buf};
	LLVMBuildCall2(g->b, fty, fn, args, 2, "");
}

LLVMValueRef cg_str_alloca(struct cg *g, int size)
{
	return cg_scratch_wants(g, size) ? cg_scratch_buf(g, size) : cg_stack_temp(g, size);
}

LLVMValueRef cg_stack_temp(struct cg *g, int size)
{
	LLVMValueRef a = cg_alloca(g, LLVMArrayType(g->i8, (unsigned)size), "str");
	LLVMSetAlignment(a, 8);
	lifetime(g, true, a, size);
	if (g->ntemps == g->captemps) {
		g->captemps = g->captemps ? 2 * g->captemps : 16;
		g->temps = xrealloc(g->temps, (size_t)g->captemps * sizeof(*g->temps));
	}
	g->temps[g->ntemps++] = (struct cg_temp){a, size};
	return a;
}

void cg_temps_end(struct cg *g, int mark)
{
	if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(g->b)))
		for (int i = mark; i < g->ntemps; i++)
			lifetime(g, false, g->temps[i].buf, g->temps[i].size);
	g->ntemps = mark;
}

/* int (*name)[N] : how BTF-defined maps encode a number in a type. */
static LLVMMetadataRef di_num(struct cg *g, unsigned n)
{
	LLVMMetadataRef sub = LLVMDIBuilderGetOrCreateSubrange(g->dib, 0, n);
	LLVMMetadataRef arr = LLVMDIBuilderCreateArrayType(g->dib, (uint64_t)n * 32, 32,
							   g->di_int, &sub, 1);
	return LLVMDIBuilderCreatePointerType(g->dib, arr, 64, 64, 0, NULL, 0);
}

static LLVMMetadataRef di_member(struct cg *g, const char *name, LLVMMetadataRef ty, int idx)
{
	return LLVMDIBuilderCreateMemberType(g->dib, g->di_file, name, strlen(name), g->di_file, 0,
					     64, 64, (uint64_t)idx * 64, 0, ty);
}

/* The global of a BTF-defined map: a struct of N pointer members in section .maps,
 * described to BTF by MEMBERS. */
static LLVMValueRef map_global(struct cg *g, const char *name, LLVMMetadataRef *members, int n)
{
	LLVMMetadataRef st = LLVMDIBuilderCreateStructType(g->dib, g->di_file, "", 0, g->di_file, 0,
							   (uint64_t)n * 64, 64, 0, NULL, members,
							   (unsigned)n, 0, NULL, "", 0);
	LLVMTypeRef fields[4] = {g->ptr, g->ptr, g->ptr, g->ptr};
	LLVMTypeRef lt = LLVMStructTypeInContext(g->ctx, fields, (unsigned)n, false);
	LLVMValueRef gv = LLVMAddGlobal(g->mod, lt, name);
	LLVMSetInitializer(gv, LLVMConstNull(lt));
	LLVMSetSection(gv, ".maps");
	LLVMSetAlignment(gv, 8);
	LLVMMetadataRef expr = LLVMDIBuilderCreateExpression(g->dib, NULL, 0);
	LLVMMetadataRef gve = LLVMDIBuilderCreateGlobalVariableExpression(
		g->dib, g->di_cu, name, strlen(name), name, strlen(name), g->di_file, 0, st, false,
		expr, NULL, 0);
	LLVMGlobalSetMetadata(gv, LLVMGetMDKindIDInContext(g->ctx, "dbg", 3), gve);
	return gv;
}

/* A map in section .maps: struct { type; max_entries; [key; value;] } name. */
static LLVMValueRef define_map(struct cg *g, const char *name, unsigned type, unsigned max,
			       LLVMMetadataRef key, LLVMMetadataRef value)
{
	LLVMMetadataRef members[4];
	int n = 0;
	members[n] = di_member(g, "type", di_num(g, type), n);
	n++;
	members[n] = di_member(g, "max_entries", di_num(g, max), n);
	n++;
	if (key) {
		members[n] = di_member(g, "key",
				       LLVMDIBuilderCreatePointerType(g->dib, key, 64, 64, 0, NULL, 0),
				       n);
		n++;
		members[n] = di_member(
			g, "value", LLVMDIBuilderCreatePointerType(g->dib, value, 64, 64, 0, NULL, 0),
			n);
		n++;
	}
	return map_global(g, name, members, n);
}

/* A map whose key and value are plain byte strings: struct { type; max_entries;
 * key_size; value_size; } as BTF-defined maps allow. */
LLVMValueRef cg_define_map_sized(struct cg *g, const char *name, unsigned type, unsigned max,
				 unsigned key_size, unsigned value_size)
{
	LLVMMetadataRef members[4] = {
		di_member(g, "type", di_num(g, type), 0),
		di_member(g, "max_entries", di_num(g, max), 1),
		di_member(g, "key_size", di_num(g, key_size), 2),
		di_member(g, "value_size", di_num(g, value_size), 3),
	};
	return map_global(g, name, members, 4);
}

static void define_globals(struct cg *g)
{
	LLVMValueRef lic = LLVMAddGlobal(g->mod, LLVMArrayType(g->i8, 4), "_license");
	LLVMSetInitializer(lic, LLVMConstStringInContext(g->ctx, "GPL", 3, false));
	LLVMSetSection(lic, "license");

	LLVMMetadataRef cfg_members[3 + PLAN_MAX_PIDS - 1 + 1] = {
		di_member(g, "start_ns", g->di_u64, 0),
		di_member(g, "filter_pid", g->di_u64, 1),
		di_member(g, "ncpus", g->di_u64, 2),
	};
	cfg_members[PLAN_CONFIG_GATE] = di_member(g, "gate", g->di_u64, PLAN_CONFIG_GATE);
	for (int i = 0; i < PLAN_MAX_PIDS - 1; i++) {
		static const char *const names[] = {"more_pid0", "more_pid1", "more_pid2", "more_pid3",
						    "more_pid4", "more_pid5", "more_pid6"};
		_Static_assert(PLAN_MAX_PIDS - 1 == 7, "more_pid names");
		cfg_members[PLAN_CONFIG_MORE_PIDS + i] =
		    di_member(g, names[i], g->di_u64, PLAN_CONFIG_MORE_PIDS + i);
	}
	LLVMMetadataRef cfg = LLVMDIBuilderCreateStructType(
		g->dib, g->di_file, "plan_config", 11, g->di_file, 0, 64 * ARRAY_SIZE(cfg_members), 64,
		0, NULL, cfg_members, ARRAY_SIZE(cfg_members), 0, NULL, "", 0);
	g->map_events = define_map(g, PLAN_MAP_EVENTS, BPF_MAP_TYPE_RINGBUF, PLAN_RINGBUF_SIZE, NULL,
				   NULL);
	g->map_lost = define_map(g, PLAN_MAP_LOST, BPF_MAP_TYPE_ARRAY, 1, g->di_u32, g->di_u64);
	g->map_config = define_map(g, PLAN_MAP_CONFIG, BPF_MAP_TYPE_ARRAY, 1, g->di_u32, cfg);
	cg_define_script_maps(g);
}

/* Globals with a section are maps (".maps") and the license: runtime-bpf's own are
 * only maps, and so is everything export_maps() turns global again. */
static bool has_section(LLVMValueRef v)
{
	const char *sec = LLVMGetSection(v);
	return sec && *sec;
}

/* Links runtime-bpf and makes its functions internal + always_inline. */
static int link_runtime(struct cg *g)
{
	size_t len = (size_t)(gt_runtime_bc_end - gt_runtime_bc);
	LLVMMemoryBufferRef buf =
		LLVMCreateMemoryBufferWithMemoryRange(gt_runtime_bc, len, "runtime-bpf", false);
	LLVMModuleRef rt = NULL;
	if (LLVMParseBitcodeInContext2(g->ctx, buf, &rt)) {
		LLVMDisposeMemoryBuffer(buf);
		diag_fatal("internal error: cannot read the runtime-bpf bitcode");
		return -EINVAL;
	}
	LLVMDisposeMemoryBuffer(buf);
	if (LLVMLinkModules2(g->mod, rt)) {
		diag_fatal("internal error: cannot link runtime-bpf");
		return -EINVAL;
	}
	/* Runtime maps become internal too, so that O2 drops the ones no program uses;
	 * SEC() marked them used, which would keep them. libbpf wants global maps:
	 * export_maps() turns the survivors global again after optimisation. */
	LLVMValueRef used = LLVMGetNamedGlobal(g->mod, "llvm.compiler.used");
	if (used)
		LLVMDeleteGlobal(used);
	for (LLVMValueRef v = LLVMGetFirstGlobal(g->mod); v; v = LLVMGetNextGlobal(v))
		if (!LLVMIsDeclaration(v) && has_section(v))
			LLVMSetLinkage(v, LLVMInternalLinkage);
	unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
	unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
	for (LLVMValueRef f = LLVMGetFirstFunction(g->mod); f; f = LLVMGetNextFunction(f)) {
		if (LLVMIsDeclaration(f))
			continue;
		LLVMSetLinkage(f, LLVMInternalLinkage);
		LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, noinline);
		LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
					LLVMCreateEnumAttribute(g->ctx, always, 0));
	}
	return 0;
}

/* Comments, directives and local labels of LLVM's assembly: not instructions. */
static bool asm_is_directive(const char *p, size_t len)
{
	return p[0] == '#' || (len > 1 && p[0] == '\t' && p[1] == '.') ||
	       (len > 1 && p[0] == '.' && p[1] == 'L');
}

/* -d bpf: the BPF assembly LLVM emits, each `.loc` of the script turned into the
 * script line it stands for, of runtime-bpf into its FILE:LINE, so every instruction
 * is read under its source (as -d jit does from the kernel's line info). */
static void dump_bpf(struct cg *g, const struct diag_src *src)
{
	LLVMModuleRef copy = LLVMCloneModule(g->mod);
	LLVMMemoryBufferRef asm_buf = NULL;
	char *msg = NULL;
	if (LLVMTargetMachineEmitToMemoryBuffer(g->tm, copy, LLVMAssemblyFile, &msg, &asm_buf)) {
		diag_print(DIAG_WARNING, "-d bpf: %s", msg ? msg : "cannot emit assembly");
		LLVMDisposeMessage(msg);
		LLVMDisposeModule(copy);
		return;
	}
	const char *p = LLVMGetBufferStart(asm_buf), *end = p + LLVMGetBufferSize(asm_buf);
	unsigned last_file = 0, last_line = 0;
	uint64_t script_files = 0; /* bit N: .file N is the script */
	char *names[64] = {0};     /* runtime-bpf's files, by number */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		unsigned file, line;
		char dir[256], name[256];
		if (sscanf(p, " .file %u \"%255[^\"]\" \"%255[^\"]\"", &file, dir, name) == 3) {
			/* the script is the file in directory "." or /dev/null (setup()); runtime-bpf's
			 * sources carry the directory they were built in, named here from
			 * the project's folder */
			if (file < 64 && (!strcmp(dir, ".") || !strcmp(dir, "/dev/null"))) {
				script_files |= 1ull << file;
			} else if (file < 64 && !names[file]) {
				char *path = xasprintf("%s/%s", dir, name);
				const char *rt = strstr(path, "runtime-bpf/");
				names[file] = xstrdup(rt ? rt : path);
				free(path);
			}
		} else if (sscanf(p, " .loc %u %u", &file, &line) == 2) {
			/* line 0: the compiler's own code, of no line */
			if (file >= 64 || !line || (file == last_file && line == last_line)) {
				p += len + 1;
				continue;
			}
			if (script_files >> file & 1) {
				const char *l = src && src->text ? src->text : NULL;
				for (unsigned i = 1; i < line && l; i++) {
					l = strchr(l, '\n');
					l = l ? l + 1 : NULL;
				}
				if (l) {
					const char *le = strchr(l, '\n');
					printf("; %u: %.*s\n", line, le ? (int)(le - l) : (int)strlen(l), l);
				}
			} else if (names[file]) {
				printf("; %s:%u\n", names[file], line);
			}
			last_file = file;
			last_line = line;
		} else if (len && !asm_is_directive(p, len)) {
			printf("%.*s\n", (int)len, p);
		}
		p += len + 1;
	}
	for (int i = 0; i < 64; i++)
		free(names[i]);
	LLVMDisposeMemoryBuffer(asm_buf);
	LLVMDisposeModule(copy);
}

static void export_maps(struct cg *g)
{
	for (LLVMValueRef v = LLVMGetFirstGlobal(g->mod); v; v = LLVMGetNextGlobal(v))
		if (has_section(v))
			LLVMSetLinkage(v, LLVMExternalLinkage);
}

static int setup(struct cg *g)
{
	LLVMInitializeBPFTargetInfo();
	LLVMInitializeBPFTarget();
	LLVMInitializeBPFTargetMC();
	LLVMInitializeBPFAsmPrinter();
	LLVMInitializeBPFAsmParser(); /* the ctx loads are inline asm (cg_load_ctx) */

	g->ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(g->ctx, on_llvm_diag, g);
	g->mod = LLVMModuleCreateWithNameInContext("gotrace", g->ctx);
	LLVMSetTarget(g->mod, "bpf");
	LLVMSetDataLayout(g->mod, "e-m:e-p:64:64-i64:64-i128:128-n32:64-S128");
	g->b = LLVMCreateBuilderInContext(g->ctx);
	g->i1 = LLVMInt1TypeInContext(g->ctx);
	g->i8 = LLVMInt8TypeInContext(g->ctx);
	g->i32 = LLVMInt32TypeInContext(g->ctx);
	g->i64 = LLVMInt64TypeInContext(g->ctx);
	g->ptr = LLVMPointerTypeInContext(g->ctx, 0);

	char *err = NULL;
	LLVMTargetRef target;
	if (LLVMGetTargetFromTriple("bpfel", &target, &err)) {
		diag_fatal("internal error: LLVM has no BPF target: %s", err);
		LLVMDisposeMessage(err);
		return -ENOENT;
	}
	g->tm = LLVMCreateTargetMachine(target, "bpfel", "v3", "", LLVMCodeGenLevelDefault,
					LLVMRelocDefault, LLVMCodeModelDefault);

	int e = link_runtime(g);
	if (e)
		return e;

	g->dib = LLVMCreateDIBuilder(g->mod);
	const char *fname = g->src && g->src->name ? g->src->name : "gotrace";
	/* LLVM's BTF writer opens DIRECTORY/NAME for each line's text. A script of no file
	 * (-e, stdin, --funcgraph) gets /dev/null, where nothing can be: not ./stdin, which
	 * anyone could have made (a FIFO there hung the run) */
	bool no_file = !g->src || !g->src->name || g->src->origin != DIAG_SRC_FILE;
	const char *dir = no_file ? "/dev/null" : ".";
	g->di_file = LLVMDIBuilderCreateFile(g->dib, fname, strlen(fname), dir, strlen(dir));
	g->di_cu = LLVMDIBuilderCreateCompileUnit(g->dib, LLVMDWARFSourceLanguageC, g->di_file,
						  "gotrace", 7, true, "", 0, 0, "", 0,
						  LLVMDWARFEmissionFull, 0, false, false, "", 0,
						  "", 0);
	g->di_int = LLVMDIBuilderCreateBasicType(g->dib, "int", 3, 32, 5 /* DW_ATE_signed */, 0);
	g->di_u32 = LLVMDIBuilderCreateBasicType(g->dib, "unsigned int", 12, 32,
						 8 /* DW_ATE_unsigned */, 0);
	g->di_u64 = LLVMDIBuilderCreateBasicType(g->dib, "unsigned long long", 18, 64, 8, 0);
	g->di_u8 = LLVMDIBuilderCreateBasicType(g->dib, "unsigned char", 13, 8,
						8 /* DW_ATE_unsigned_char */, 0);
	g->di_ptr = LLVMDIBuilderCreatePointerType(g->dib, NULL, 64, 64, 0, NULL, 0);
	/* runtime-bpf's bitcode usually brought these already */
	if (!LLVMGetModuleFlag(g->mod, "Debug Info Version", 18))
		LLVMAddModuleFlag(g->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
				  LLVMValueAsMetadata(
					  LLVMConstInt(g->i32, LLVMDebugMetadataVersion(), 0)));
	if (!LLVMGetModuleFlag(g->mod, "Dwarf Version", 13))
		LLVMAddModuleFlag(g->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
				  LLVMValueAsMetadata(LLVMConstInt(g->i32, 4, 0)));
	define_globals(g);
	return 0;
}

static void teardown(struct cg *g)
{
	if (g->dib)
		LLVMDisposeDIBuilder(g->dib);
	if (g->b)
		LLVMDisposeBuilder(g->b);
	if (g->mod)
		LLVMDisposeModule(g->mod);
	if (g->tm)
		LLVMDisposeTargetMachine(g->tm);
	if (g->ctx)
		LLVMContextDispose(g->ctx);
	free(g->llvm_error);
	free(g->maps);
	free(g->aggfns);
	free(g->stackmaps);
	free(g->uwmaps);
	free(g->temps);
}

int cg_generate(const struct diag_src *src, struct sema_result *sr, struct gt_plan *plan,
		const struct cg_options *opts)
{
	struct cg g = {.src = src, .plan = plan, .opts = opts};
	for (int i = 0; i < plan->nevents; i++)
		g.funcgraph |= plan->events[i].kind == PLAN_EV_FG_ENTRY;
	int err = setup(&g);
	if (err)
		goto out;
	for (int i = 0; i < sr->nprogs; i++)
		cg_program(&g, &sr->progs[i]);
	err = cg_scratch_define(&g);
	if (err)
		goto out;
	LLVMDIBuilderFinalize(g.dib);

	char *msg = NULL;
	if (LLVMVerifyModule(g.mod, LLVMReturnStatusAction, &msg)) {
		diag_fatal("internal error: generated LLVM IR is invalid:\n%s", msg);
		LLVMDisposeMessage(msg);
		err = -EINVAL;
		goto out;
	}
	LLVMDisposeMessage(msg);

	LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
	LLVMErrorRef perr = LLVMRunPasses(g.mod, "globaldce,default<O2>", g.tm, pbo);
	LLVMDisposePassBuilderOptions(pbo);
	if (perr) {
		char *m = LLVMGetErrorMessage(perr);
		diag_fatal("internal error: LLVM passes failed: %s", m);
		LLVMDisposeErrorMessage(m);
		err = -EINVAL;
		goto out;
	}
	export_maps(&g);
	if (opts->dump_bpf)
		dump_bpf(&g, src);
	if (opts->dump_ir) {
		char *ir = LLVMPrintModuleToString(g.mod);
		fputs(ir, stdout);
		LLVMDisposeMessage(ir);
	}

	LLVMMemoryBufferRef obj = NULL;
	msg = NULL;
	if (LLVMTargetMachineEmitToMemoryBuffer(g.tm, g.mod, LLVMObjectFile, &msg, &obj) ||
	    g.llvm_error) {
		diag_fatal("cannot compile to BPF: %s", g.llvm_error ? g.llvm_error : msg);
		LLVMDisposeMessage(msg);
		if (obj)
			LLVMDisposeMemoryBuffer(obj);
		err = -EINVAL;
		goto out;
	}
	plan->obj_size = LLVMGetBufferSize(obj);
	plan->obj = xmalloc(plan->obj_size);
	memcpy(plan->obj, LLVMGetBufferStart(obj), plan->obj_size);
	LLVMDisposeMemoryBuffer(obj);
out:
	teardown(&g);
	return err;
}
