/* parser: the gotrace grammar (bison, pure, with locations).
 *
 * The lexer does the context-dependent work (probe tokens at top level, the end of a
 * predicate, the '>' that closes a `< >` block, fetch rules), so the grammar below is
 * plain LALR(1) with no conflicts. Every node gets the source range of its rule.
 * The first syntax error ends the parse: there are no error-recovery rules. */

%define api.pure full
%define api.location.type {struct gt_loc}
%define parse.error custom
/* Lookahead correction: the "expecting ..." lists name only tokens that really fit. */
%define parse.lac full
%locations
%expect 0

%lex-param {void *scanner}
%parse-param {void *scanner} {struct parse_ctx *pc}

%code requires {
#include "common/diag.h"
#include "common/util.h"
#include "parser/ast.h"

/* Which construct the lexer's CODE state is inside; decides what closes it. */
enum lex_mode {
	LEX_PRED,  /* /pred/: a '/' at paren/bracket depth 0 */
	LEX_BRACE, /* { ... }: the '}' at brace depth 0 */
	LEX_ANGLE, /* < ... >: a token starting with '>' at depth 0 */
	LEX_MACRO, /* macro NAME( ... ): until the '{' of its body, then LEX_BRACE */
	LEX_DECL,  /* let @m = TYPE(N);: the ';' at depth 0 */
};

/* Shared by parser and lexer (the lexer's extra data). */
struct parse_ctx {
	struct arena *arena;
	const struct diag_src *src;
	bool header;              /* an imported .h: C definitions only (import.c) */
	struct ast_node *program; /* the result */
	/* lexer state */
	int line, col;        /* position of the next character */
	struct gt_loc last;   /* last token returned; end of input is reported after it */
	int last_tok;         /* and its kind: an `if` after an operator is an expression */
	enum lex_mode mode;
	int paren, bracket, brace; /* nesting inside the current predicate or block */
	int fetch_depth;           /* parentheses open inside arg( ... ) */
	/* a C definition being collected (lexer state IN_CDEF) */
	struct strbuf cdef;
	struct gt_loc cdef_start, cdef_end;
	int cdef_depth; /* also the parentheses of an __attribute__ after it (IN_ATTR) */
};

/* A plain struct: bison may copy it freely and starts the first rule at 1:1. */
#define YYLTYPE_IS_TRIVIAL 1

/* A location spanning the first to the last symbol of a rule; an empty rule gets an
 * empty range at the end of the previous symbol. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                                        \
	do {                                                                               \
		if (N) {                                                                   \
			(Cur).line = YYRHSLOC(Rhs, 1).line;                                \
			(Cur).col = YYRHSLOC(Rhs, 1).col;                                  \
			(Cur).end_line = YYRHSLOC(Rhs, N).end_line;                        \
			(Cur).end_col = YYRHSLOC(Rhs, N).end_col;                          \
			(Cur).src = YYRHSLOC(Rhs, 1).src;                                  \
		} else {                                                                   \
			(Cur).line = (Cur).end_line = YYRHSLOC(Rhs, 0).end_line;           \
			(Cur).col = (Cur).end_col = YYRHSLOC(Rhs, 0).end_col;              \
			(Cur).src = YYRHSLOC(Rhs, 0).src;                                  \
		}                                                                          \
	} while (0)
}

%code {
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

int yylex(YYSTYPE *lval, YYLTYPE *lloc, void *scanner);
static void yyerror(YYLTYPE *loc, void *scanner, struct parse_ctx *pc, const char *msg);

/* From the start of a to the end of b. */
static struct gt_loc span(struct gt_loc a, struct gt_loc b)
{
	return (struct gt_loc){a.line, a.col, b.end_line, b.end_col, a.src};
}

static struct ast_node *mk(struct parse_ctx *pc, enum ast_kind kind, struct gt_loc loc)
{
	return ast_new(pc->arena, kind, loc);
}

/* As in bpftrace: imports come before what they may add to (probes, macros, maps). */
static bool import_may_come(struct parse_ctx *pc, const struct ast_node *program,
			    struct gt_loc at)
{
	bool decl = false;
	for (int i = 0; i < program->u.program.cdefs.n; i++)
		decl |= program->u.program.cdefs.v[i]->kind == AST_MAPDECL;
	if (program->u.program.clauses.n || program->u.program.macros.n || decl) {
		diag_error(pc->src, at, "import must come before the probes, macros and map "
			   "declarations");
		return false;
	}
	return true;
}

static struct ast_node *mk_binary(struct parse_ctx *pc, struct gt_loc loc, enum ast_op op,
				  struct ast_node *lhs, struct ast_node *rhs)
{
	struct ast_node *n = mk(pc, AST_BINARY, loc);
	n->u.binary.op = op;
	n->u.binary.lhs = lhs;
	n->u.binary.rhs = rhs;
	return n;
}

static struct ast_node *mk_unary(struct parse_ctx *pc, struct gt_loc loc, enum ast_op op,
				 struct ast_node *operand)
{
	struct ast_node *n = mk(pc, AST_UNARY, loc);
	n->u.unary.op = op;
	n->u.unary.operand = operand;
	return n;
}

static struct ast_node *mk_incdec(struct parse_ctx *pc, struct gt_loc loc, bool inc, bool prefix,
				  struct ast_node *operand)
{
	struct ast_node *n = mk(pc, AST_INCDEC, loc);
	n->u.incdec.inc = inc;
	n->u.incdec.prefix = prefix;
	n->u.incdec.operand = operand;
	return n;
}

static void push(struct parse_ctx *pc, struct ast_list *l, struct ast_node *n);

static struct ast_node *mk_assign(struct parse_ctx *pc, struct gt_loc loc, struct ast_node *lhs,
				  enum ast_op op, struct ast_node *rhs)
{
	struct ast_node *n = mk(pc, AST_ASSIGN, loc);
	n->u.assign.lhs = lhs;
	n->u.assign.op = op;
	n->u.assign.rhs = rhs;
	if (lhs->kind == AST_MAP && rhs && rhs->kind == AST_BLOCK_EXPR && rhs->u.blockexpr.value &&
	    rhs->u.blockexpr.value->kind == AST_CALL) {
		/* @m = { ...; avg($a) } is { ...; @m = avg($a) }: the same order of effects,
		 * and an aggregation is then stored by its map's assignment, as it must be */
		struct ast_node *blk = rhs->u.blockexpr.block;
		n->u.assign.rhs = rhs->u.blockexpr.value;
		push(pc, &blk->u.block.stmts, n);
		blk->u.block.open_tail = false;
		return blk;
	}
	return n;
}

static struct ast_node *mk_loop(struct parse_ctx *pc, enum ast_kind kind, struct gt_loc loc,
				struct ast_node *expr, struct ast_node *body)
{
	struct ast_node *n = mk(pc, kind, loc);
	n->u.loop.expr = expr;
	n->u.loop.body = body;
	return n;
}

static struct ast_node *mk_for(struct parse_ctx *pc, struct gt_loc loc, const char *var,
			       struct gt_loc var_loc, struct ast_node *iter, struct ast_node *end,
			       struct ast_node *body)
{
	struct ast_node *n = mk(pc, AST_FOR, loc);
	n->u.for_.var = mk(pc, AST_VAR, var_loc);
	n->u.for_.var->u.name = var;
	n->u.for_.iter = iter;
	n->u.for_.end = end;
	n->u.for_.body = body;
	return n;
}

static struct ast_node *mk_if(struct parse_ctx *pc, struct gt_loc loc, struct ast_node *cond,
			      struct ast_node *then, struct ast_node *els)
{
	struct ast_node *n = mk(pc, AST_IF, loc);
	n->u.if_.cond = cond;
	n->u.if_.then = then;
	n->u.if_.els = els;
	return n;
}

static struct ast_node *mk_var(struct parse_ctx *pc, struct gt_loc loc, const char *name)
{
	struct ast_node *n = mk(pc, AST_VAR, loc);
	n->u.name = name;
	return n;
}

/* `let $x: TYPE = EXPR`: (TYPE)EXPR; without EXPR the type's zero ("" for a string) */
/* Whether BLK ends in a value: an expression without ';', or an if/else whose branches
 * do (current bpftrace's if as an expression). */
static bool has_value(const struct ast_node *blk)
{
	const struct ast_list *l = &blk->u.block.stmts;
	if (!l->n)
		return false;
	const struct ast_node *last = l->v[l->n - 1];
	if (blk->u.block.open_tail && last->kind == AST_EXPR_STMT)
		return true;
	while (last->kind == AST_IF && last->u.if_.els && has_value(last->u.if_.then)) {
		if (last->u.if_.els->kind != AST_IF)
			return has_value(last->u.if_.els);
		last = last->u.if_.els;
	}
	return false;
}

static struct ast_node *if_value(struct parse_ctx *pc, struct ast_node *n);

/* { stmts; value } from the block BLK: AST_BLOCK_EXPR, its value taken off the block */
static struct ast_node *block_value(struct parse_ctx *pc, struct ast_node *blk)
{
	struct ast_node *e = mk(pc, AST_BLOCK_EXPR, blk->loc);
	struct ast_list *l = &blk->u.block.stmts;
	if (has_value(blk)) {
		struct ast_node *last = l->v[--l->n];
		e->u.blockexpr.value = last->kind == AST_IF ? if_value(pc, last)
							    : last->u.expr_stmt.expr;
	}
	e->u.blockexpr.block = blk;
	return e;
}

/* if (c) { ...; a } else { ...; b } as a value: c ? { ...; a } : { ...; b } (a branch
 * without a value gives a block expression of none, which sema reports) */
static struct ast_node *if_value(struct parse_ctx *pc, struct ast_node *n)
{
	struct ast_node *t = mk(pc, AST_TERNARY, n->loc);
	t->u.ternary.cond = n->u.if_.cond;
	t->u.ternary.then = block_value(pc, n->u.if_.then);
	t->u.ternary.els = n->u.if_.els->kind == AST_IF ? if_value(pc, n->u.if_.els)
							 : block_value(pc, n->u.if_.els);
	return t;
}

static struct ast_node *mk_cast(struct parse_ctx *pc, struct gt_loc loc, struct type_name type,
				struct ast_node *expr)
{
	if (!expr && !type.ptr_depth && !strcmp(type.name, "string")) {
		expr = mk(pc, AST_STR, loc);
		expr->u.str.bytes = "";
		return expr;
	}
	if (!expr) {
		expr = mk(pc, AST_INT, loc);
		expr->u.int_.value = 0;
	}
	struct ast_node *n = mk(pc, AST_CAST, loc);
	n->u.cast.type = type;
	n->u.cast.expr = expr;
	return n;
}

static struct fetch_rule *mk_rule(struct parse_ctx *pc, enum fetch_kind kind, struct gt_loc loc)
{
	struct fetch_rule *r = arena_alloc(pc->arena, sizeof(*r));
	r->kind = kind;
	r->loc = loc;
	return r;
}

static struct ast_node *mk_probe(struct parse_ctx *pc, struct gt_loc loc, const char *raw)
{
	struct ast_node *n = mk(pc, AST_PROBE, loc);
	n->u.probe.raw = raw;
	ast_probe_split(pc->arena, n);
	return n;
}

static void push(struct parse_ctx *pc, struct ast_list *l, struct ast_node *n)
{
	ast_list_push(pc->arena, l, n);
}
}

%union {
	const char *str;
	uint64_t num;
	struct {
		const char *bytes;
		int len;
	} strlit;
	struct ast_node *node;
	struct ast_list list;
	struct fetch_rule *rule;
	struct type_name type;
	enum ast_op op;
}

%token YYEOF 0 "end of input"
/* declared first so that "expecting" lists read naturally: ';' or '}', '{' or '<' */
%token ';' '}' '{' '<' '/' ','
%token <str> PROBE "probe"
%token <str> CDEF "C definition"
%token <str> DIRECTIVE "#define or #include"
%token <str> IDENT "identifier"
%token <str> TYPENAME "type name"
%token <str> VAR "variable"
%token <str> MAP "map"
%token <str> REG "register"
%token <num> INT "integer"
%token <num> BOOL "boolean"
%token <num> POSPARAM "positional parameter"
%token <strlit> STRING "string"
%token IF "'if'" ELSE "'else'" UNROLL "'unroll'" WHILE "'while'" RETURN "'return'"
%token TYPEOF "'typeof'"
%token IF_EXPR "'if' (an expression)"
%token FOR "'for'" BREAK "'break'" CONTINUE "'continue'" DOTDOT "'..'" LET "'let'"
%token FETCH_ARG "'arg('"
%token CONFIG "'config ='"
%token IMPORT "'import'"
%token <str> MACRO "'macro'"
%token PRED_CLOSE "'/'"  /* the '/' that ends a predicate */
%token ANGLE_CLOSE "'>'" /* the '>' that ends a < > block */
/* OR .. SHR_ASSIGN are the operators that continue an expression: keep them together
 * (continues_expr). */
%token OR "'||'" AND "'&&'" EQ "'=='" NE "'!='" LE "'<='" GE "'>='" SHL "'<<'" SHR "'>>'"
%token INC "'++'" DEC "'--'" ARROW "'->'"
%token ADD_ASSIGN "'+='" SUB_ASSIGN "'-='" MUL_ASSIGN "'*='" DIV_ASSIGN "'/='"
%token MOD_ASSIGN "'%='" AND_ASSIGN "'&='" OR_ASSIGN "'|='" XOR_ASSIGN "'^='"
%token SHL_ASSIGN "'<<='" SHR_ASSIGN "'>>='"

%type <node> probe clauses clause cdef predicate block body stmts stmt simple_stmt compound_stmt if_stmt
%type <node> lvalue map expr unary postfix primary
%type <list> probes exprs config_items macro_params
%type <node> record_items
%type <node> macro_param
%type <str> config_value
%type <rule> fetch_rule
%type <type> type cast_type
%type <str> field_name fetch_type
%type <op> assign_op

/* C precedence, lowest first. MAP_NO_KEYS < '[' makes `@m[k]` a keyed map, not an
 * index into the scalar @m. */
%precedence MAP_NO_KEYS
%right '?' ':'
%left OR
%left AND
%left '|'
%left '^'
%left '&'
%left EQ NE
%left '<' '>' LE GE
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%precedence '['

%%

program
	: clauses { pc->program = $1; }
	;

clauses
	: %empty { $$ = mk(pc, AST_PROGRAM, @$); }
	| clauses clause { $$ = $1; $$->loc = @$; push(pc, &$$->u.program.clauses, $2); }
	| clauses cdef { $$ = $1; push(pc, &$$->u.program.cdefs, $2); }
	| clauses cdef ';' { $$ = $1; push(pc, &$$->u.program.cdefs, $2); }
	| clauses CONFIG '{' config_items '}' {
		/* current bpftrace's config = { NAME = VALUE; ... }, before any probe */
		if ($1->u.program.clauses.n) {
			diag_error(pc->src, @2, "the config block must come before the probes");
			YYABORT;
		}
		$$ = $1;
		for (int i = 0; i < $4.n; i++)
			push(pc, &$$->u.program.cdefs, $4.v[i]);
	}
	| clauses MACRO '(' ')' '{' body '}' {
		$$ = $1;
		struct ast_node *m = mk(pc, AST_MACRO, span(@2, @7));
		m->u.macro.name = $2;
		m->u.macro.body = $6;
		$6->loc = span(@5, @7);
		push(pc, &$$->u.program.macros, m);
	}
	| clauses MACRO '(' macro_params ')' '{' body '}' {
		$$ = $1;
		struct ast_node *m = mk(pc, AST_MACRO, span(@2, @8));
		m->u.macro.name = $2;
		m->u.macro.params = $4;
		m->u.macro.body = $7;
		$7->loc = span(@6, @8);
		push(pc, &$$->u.program.macros, m);
	}
	/* current bpftrace's map declarations: let @m = hash(N); (sema_maps.c) */
	| clauses LET MAP '=' IDENT '(' INT ')' ';' {
		$$ = $1;
		struct ast_node *d = mk(pc, AST_MAPDECL, span(@2, @8));
		d->u.mapdecl.name = $3;
		d->u.mapdecl.type = $5;
		d->u.mapdecl.entries = $7;
		push(pc, &$$->u.program.cdefs, d);
	}
	/* current bpftrace's import "PATH";, read and merged by import.c */
	| clauses IMPORT STRING ';' {
		if (!import_may_come(pc, $1, @2))
			YYABORT;
		$$ = $1;
		struct ast_node *d = mk(pc, AST_IMPORT, span(@2, @3));
		d->u.str.bytes = $3.bytes;
		d->u.str.len = $3.len;
		push(pc, &$$->u.program.imports, d);
	}
	| clauses DIRECTIVE {
		$$ = $1;
		struct ast_node *d = mk(pc, AST_DIRECTIVE, @2);
		d->u.name = $2;
		push(pc, &$$->u.program.cdefs, d);
	}
	;

/* a record, current bpftrace's named tuple: (name = expr, ...) */
record_items
	: IDENT '=' expr {
		$$ = mk(pc, AST_TUPLE, @$);
		$$->u.tuple.names = arena_alloc(pc->arena, sizeof(char *));
		$$->u.tuple.names[0] = $1;
		push(pc, &$$->u.tuple.items, $3);
	}
	| record_items ',' IDENT '=' expr {
		$$ = $1;
		int n = $$->u.tuple.items.n;
		const char **names = arena_alloc(pc->arena, sizeof(char *) * (size_t)(n + 1));
		memcpy(names, $$->u.tuple.names, sizeof(char *) * (size_t)n);
		names[n] = $3;
		$$->u.tuple.names = names;
		push(pc, &$$->u.tuple.items, $5);
	}
	;

/* $x (a variable, by reference), @m (a map) or x (an expression) */
macro_params
	: macro_param { $$ = (struct ast_list){0}; push(pc, &$$, $1); }
	| macro_params ',' macro_param { $$ = $1; push(pc, &$$, $3); }
	;

macro_param
	: VAR { $$ = mk_var(pc, @1, $1); }
	| MAP { $$ = mk(pc, AST_MAP, @1); $$->u.map.name = $1; }
	| IDENT { $$ = mk(pc, AST_IDENT, @1); $$->u.name = $1; }
	;

config_items
	: %empty { $$ = (struct ast_list){0}; }
	| config_items ';' { $$ = $1; }
	| config_items IDENT '=' config_value {
		$$ = $1;
		struct ast_node *c = mk(pc, AST_CONFIG, span(@2, @4));
		c->u.config.name = $2;
		c->u.config.value = $4;
		push(pc, &$$, c);
	}
	;

config_value
	: IDENT
	| TYPENAME
	| INT { $$ = arena_printf(pc->arena, "%" PRIu64, $1); }
	| BOOL { $$ = $1 ? "true" : "false"; }
	| STRING { $$ = $1.bytes; }
	;

/* struct NAME { ... }: C definitions, read by sema (sema_ctypes.c) */
cdef
	: CDEF {
		$$ = mk(pc, AST_CDEF, @$);
		$$->u.name = $1;
	}
	;

/* probe[, probe ...] [/pred/] { stmts }   or the one-liner form with < stmts > */
clause
	: probes predicate '{' body '}' {
		$$ = mk(pc, AST_CLAUSE, @$);
		$$->u.clause.probes = $1;
		$$->u.clause.pred = $2;
		$$->u.clause.body = $4;
		$4->loc = span(@3, @5);
	}
	| probes predicate '<' body ANGLE_CLOSE {
		$$ = mk(pc, AST_CLAUSE, @$);
		$$->u.clause.probes = $1;
		$$->u.clause.pred = $2;
		$$->u.clause.body = $4;
		$$->u.clause.angle = true;
		$4->loc = span(@3, @5);
	}
	;

probes
	: probe { $$ = (struct ast_list){0}; push(pc, &$$, $1); }
	| probes ',' probe { $$ = $1; push(pc, &$$, $3); }
	;

/* a whole probe may be a positional parameter ($1 { }, current bpftrace's): its text
 * comes with the arguments (ast_probe_params) */
probe
	: PROBE { $$ = mk_probe(pc, @1, $1); }
	| POSPARAM {
		if ((int64_t)$1 < 0) {
			diag_error(pc->src, @1, "$# cannot name a probe");
			YYABORT;
		}
		$$ = mk_probe(pc, @1, arena_printf(pc->arena, "$%d", (int)(int64_t)$1));
	}
	;

predicate
	: %empty { $$ = NULL; }
	| '/' expr PRED_CLOSE { $$ = $2; }
	;

/* Statements are separated by ';'; the last one may omit it, and if/while/unroll need
 * none. `body` is the AST_BLOCK; its caller sets the range to cover the braces. */
block
	: '{' body '}' { $$ = $2; $$->loc = @$; }
	;

body
	: stmts
	| stmts simple_stmt {
		$$ = $1;
		push(pc, &$$->u.block.stmts, $2);
		$$->u.block.open_tail = true;
	}
	;

stmts
	: %empty { $$ = mk(pc, AST_BLOCK, @$); }
	| stmts ';' { $$ = $1; }
	| stmts stmt { $$ = $1; push(pc, &$$->u.block.stmts, $2); }
	;

stmt
	: simple_stmt ';' { $$ = $1; }
	| compound_stmt
	;

simple_stmt
	: expr {
		$$ = mk(pc, AST_EXPR_STMT, @$);
		$$->u.expr_stmt.expr = $1;
	}
	| lvalue assign_op expr { $$ = mk_assign(pc, @$, $1, $2, $3); }
	/* current bpftrace's declarations: `let $x = e` assigns, `let $x: type [= e]` casts
	 * (a type alone: its zero), `let $x` alone makes it zero, typed by its first
	 * assignment (an assignment without a value, u.assign.rhs NULL) */
	| LET VAR { $$ = mk_assign(pc, @$, mk_var(pc, @2, $2), OP_NONE, NULL); }
	| LET VAR '=' expr { $$ = mk_assign(pc, @$, mk_var(pc, @2, $2), OP_NONE, $4); }
	| LET VAR ':' type { $$ = mk_assign(pc, @$, mk_var(pc, @2, $2), OP_NONE,
					     mk_cast(pc, @4, $4, NULL)); }
	| LET VAR ':' type '=' expr {
		$$ = mk_assign(pc, @$, mk_var(pc, @2, $2), OP_NONE, mk_cast(pc, @4, $4, $6));
	}
	| RETURN { $$ = mk(pc, AST_RETURN, @$); }
	/* current bpftrace's `return e` in a probe: e is evaluated, then the probe ends
	 * (a probe's value goes nowhere here) */
	| RETURN expr {
		$$ = mk(pc, AST_BLOCK, @$);
		struct ast_node *es = mk(pc, AST_EXPR_STMT, @2);
		es->u.expr_stmt.expr = $2;
		push(pc, &$$->u.block.stmts, es);
		push(pc, &$$->u.block.stmts, mk(pc, AST_RETURN, @1));
	}
	/* current bpftrace's `_ = e`: e evaluated for its effects, its value dropped */
	| IDENT '=' expr {
		if (strcmp($1, "_")) {
			diag_error(pc->src, @2, "syntax error, unexpected '=': only $variables, "
				   "@maps and _ are assigned to");
			YYABORT;
		}
		$$ = mk(pc, AST_EXPR_STMT, @$);
		$$->u.expr_stmt.expr = $3;
	}
	| BREAK { $$ = mk(pc, AST_BREAK, @$); }
	| CONTINUE { $$ = mk(pc, AST_CONTINUE, @$); }
	;

lvalue
	: VAR {
		$$ = mk(pc, AST_VAR, @$);
		$$->u.name = $1;
	}
	| map
	;

assign_op
	: '=' { $$ = OP_NONE; }
	| ADD_ASSIGN { $$ = OP_ADD; }
	| SUB_ASSIGN { $$ = OP_SUB; }
	| MUL_ASSIGN { $$ = OP_MUL; }
	| DIV_ASSIGN { $$ = OP_DIV; }
	| MOD_ASSIGN { $$ = OP_MOD; }
	| AND_ASSIGN { $$ = OP_BAND; }
	| OR_ASSIGN { $$ = OP_BOR; }
	| XOR_ASSIGN { $$ = OP_BXOR; }
	| SHL_ASSIGN { $$ = OP_SHL; }
	| SHR_ASSIGN { $$ = OP_SHR; }
	;

compound_stmt
	: if_stmt
	| UNROLL '(' expr ')' block { $$ = mk_loop(pc, AST_UNROLL, @$, $3, $5); }
	/* `while (c)` and current bpftrace's `while c`: a parenthesised expression is one */
	| WHILE expr block { $$ = mk_loop(pc, AST_WHILE, @$, $2, $3); }
	/* for ($kv : @map) and for ($i : a..b): sema checks that the first is a map */
	| FOR '(' VAR ':' expr ')' block { $$ = mk_for(pc, @$, $3, @3, $5, NULL, $7); }
	| FOR '(' VAR ':' expr DOTDOT expr ')' block { $$ = mk_for(pc, @$, $3, @3, $5, $7, $9); }
	/* current bpftrace's for $kv : @m { } and for $i : a..b { } */
	| FOR VAR ':' expr block { $$ = mk_for(pc, @$, $2, @2, $4, NULL, $5); }
	| FOR VAR ':' expr DOTDOT expr block { $$ = mk_for(pc, @$, $2, @2, $4, $6, $7); }
	;

/* No dangling else: bodies are always braced. */
if_stmt
	: IF expr block { $$ = mk_if(pc, @$, $2, $3, NULL); }
	| IF expr block ELSE block { $$ = mk_if(pc, @$, $2, $3, $5); }
	| IF expr block ELSE if_stmt { $$ = mk_if(pc, @$, $2, $3, $5); }
	;

expr
	: unary
	| expr '?' expr ':' expr {
		$$ = mk(pc, AST_TERNARY, @$);
		$$->u.ternary.cond = $1;
		$$->u.ternary.then = $3;
		$$->u.ternary.els = $5;
	}
	/* current bpftrace's a ?: b: a when it is nonzero, else b (a evaluated once) */
	| expr '?' ':' expr {
		$$ = mk(pc, AST_TERNARY, @$);
		$$->u.ternary.cond = $1;
		$$->u.ternary.els = $4;
	}
	| expr OR expr { $$ = mk_binary(pc, @$, OP_LOR, $1, $3); }
	| expr AND expr { $$ = mk_binary(pc, @$, OP_LAND, $1, $3); }
	| expr '|' expr { $$ = mk_binary(pc, @$, OP_BOR, $1, $3); }
	| expr '^' expr { $$ = mk_binary(pc, @$, OP_BXOR, $1, $3); }
	| expr '&' expr { $$ = mk_binary(pc, @$, OP_BAND, $1, $3); }
	| expr EQ expr { $$ = mk_binary(pc, @$, OP_EQ, $1, $3); }
	| expr NE expr { $$ = mk_binary(pc, @$, OP_NE, $1, $3); }
	| expr '<' expr { $$ = mk_binary(pc, @$, OP_LT, $1, $3); }
	| expr '>' expr { $$ = mk_binary(pc, @$, OP_GT, $1, $3); }
	| expr LE expr { $$ = mk_binary(pc, @$, OP_LE, $1, $3); }
	| expr GE expr { $$ = mk_binary(pc, @$, OP_GE, $1, $3); }
	| expr SHL expr { $$ = mk_binary(pc, @$, OP_SHL, $1, $3); }
	| expr SHR expr { $$ = mk_binary(pc, @$, OP_SHR, $1, $3); }
	| expr '+' expr { $$ = mk_binary(pc, @$, OP_ADD, $1, $3); }
	| expr '-' expr { $$ = mk_binary(pc, @$, OP_SUB, $1, $3); }
	| expr '*' expr { $$ = mk_binary(pc, @$, OP_MUL, $1, $3); }
	| expr '/' expr { $$ = mk_binary(pc, @$, OP_DIV, $1, $3); }
	| expr '%' expr { $$ = mk_binary(pc, @$, OP_MOD, $1, $3); }
	;

/* Prefix operators and casts bind tighter than any binary operator, looser than postfix. */
unary
	: postfix
	| '-' unary { $$ = mk_unary(pc, @$, OP_NEG, $2); }
	| '!' unary { $$ = mk_unary(pc, @$, OP_LNOT, $2); }
	| '~' unary { $$ = mk_unary(pc, @$, OP_BNOT, $2); }
	| '*' unary { $$ = mk_unary(pc, @$, OP_DEREF, $2); }
	| '&' unary { $$ = mk_unary(pc, @$, OP_ADDR, $2); }
	| INC unary { $$ = mk_incdec(pc, @$, true, true, $2); }
	| DEC unary { $$ = mk_incdec(pc, @$, false, true, $2); }
	| '(' cast_type ')' unary {
		$$ = mk(pc, AST_CAST, @$);
		$$->u.cast.type = $2;
		$$->u.cast.expr = $4;
	}
	;

/* current bpftrace's casts to integer arrays: (int8[8])x, (int8[])"s" */
cast_type
	: type
	| type '[' INT ']' { $$ = $1; $$.is_array = true; $$.count = (int64_t)$3; $$.loc = @$; }
	| type '[' ']' { $$ = $1; $$.is_array = true; $$.loc = @$; }
	;

/* (uint64 *) has ptr_depth 1 */
type
	: TYPENAME { $$ = (struct type_name){.name = $1, .loc = @$}; }
	/* C's words: unsigned long long (sema_int_type_named reads them) */
	| type TYPENAME {
		$$ = $1;
		$$.name = arena_printf(pc->arena, "%s %s", $1.name, $2);
		$$.loc = @$;
	}
	| type '*' { $$ = $1; $$.ptr_depth++; $$.loc = @$; }
	/* current bpftrace's typeof(e) and typeof(T): e's type (sema), or T */
	| TYPEOF '(' expr ')' { $$ = (struct type_name){.name = "typeof", .of = $3, .loc = @$}; }
	| TYPEOF '(' type ')' { $$ = $3; $$.loc = @$; }
	;

postfix
	: primary
	| postfix '.' field_name {
		$$ = mk(pc, AST_FIELD, @$);
		$$->u.field.expr = $1;
		$$->u.field.name = $3;
	}
	| postfix ARROW field_name {
		$$ = mk(pc, AST_FIELD, @$);
		$$->u.field.expr = $1;
		$$->u.field.name = $3;
		$$->u.field.arrow = true;
	}
	| postfix '[' expr ']' {
		$$ = mk(pc, AST_INDEX, @$);
		$$->u.index.expr = $1;
		$$->u.index.index = $3;
	}
	| postfix INC { $$ = mk_incdec(pc, @$, true, false, $1); }
	| postfix DEC { $$ = mk_incdec(pc, @$, false, false, $1); }
	;

/* Go parameters may be named like our cast types (args.string); $t.0 is a tuple field. */
field_name
	: IDENT
	| TYPENAME
	| INT { $$ = arena_printf(pc->arena, "%" PRIu64, $1); }
	;

primary
	: INT {
		$$ = mk(pc, AST_INT, @$);
		$$->u.int_.value = $1;
		$$->u.int_.is_unsigned = $1 > INT64_MAX;
	}
	| BOOL {
		$$ = mk(pc, AST_INT, @$);
		$$->u.int_.value = $1;
		$$->u.int_.is_bool = true;
	}
	| STRING {
		$$ = mk(pc, AST_STR, @$);
		$$->u.str.bytes = $1.bytes;
		$$->u.str.len = $1.len;
	}
	| VAR {
		$$ = mk(pc, AST_VAR, @$);
		$$->u.name = $1;
	}
	| POSPARAM {
		$$ = mk(pc, AST_POSPARAM, @$);
		$$->u.posparam.n = (int)(int64_t)$1;
	}
	| IDENT {
		$$ = mk(pc, AST_IDENT, @$);
		$$->u.name = $1;
	}
	| map
	/* a block expression: its last statement, left without ';', is its value */
	| '{' body '}' { $2->loc = @$; $$ = block_value(pc, $2); }
	/* current bpftrace's if as an expression: c ? { a } : { b } */
	| IF_EXPR expr block ELSE block { $$ = if_value(pc, mk_if(pc, @$, $2, $3, $5)); }
	| IF_EXPR expr block ELSE if_stmt {
		const struct ast_node *last = $5;
		while (last->u.if_.els && last->u.if_.els->kind == AST_IF)
			last = last->u.if_.els;
		if (!last->u.if_.els) {
			diag_error(pc->src, last->loc, "an if used as a value needs a final else");
			YYABORT;
		}
		$$ = if_value(pc, mk_if(pc, @$, $2, $3, $5));
	}
	| '(' expr ')' { $$ = $2; }
	| '(' record_items ')' { $$ = $2; $$->loc = @$; }
	| '(' expr ',' exprs ')' {
		$$ = mk(pc, AST_TUPLE, @$);
		$$->u.tuple.items = (struct ast_list){0};
		push(pc, &$$->u.tuple.items, $2);
		for (int i = 0; i < $4.n; i++)
			push(pc, &$$->u.tuple.items, $4.v[i]);
	}
	| IDENT '(' ')' {
		$$ = mk(pc, AST_CALL, @$);
		$$->u.call.name = $1;
		$$->u.call.name_loc = @1;
	}
	| IDENT '(' exprs ')' {
		$$ = mk(pc, AST_CALL, @$);
		$$->u.call.name = $1;
		$$->u.call.name_loc = @1;
		$$->u.call.args = $3;
	}
	| IDENT '(' type ')' {
		/* sizeof(uint32): sema says which calls take a type */
		$$ = mk(pc, AST_CALL, @$);
		$$->u.call.name = $1;
		$$->u.call.name_loc = @1;
		struct ast_node *t = mk(pc, AST_TYPE, @3);
		t->u.type = $3;
		push(pc, &$$->u.call.args, t);
	}
	| IDENT '(' type ',' expr ')' {
		/* offsetof(struct T, a.b): sema says which calls take a type */
		$$ = mk(pc, AST_CALL, @$);
		$$->u.call.name = $1;
		$$->u.call.name_loc = @1;
		struct ast_node *t = mk(pc, AST_TYPE, @3);
		t->u.type = $3;
		push(pc, &$$->u.call.args, t);
		push(pc, &$$->u.call.args, $5);
	}
	| FETCH_ARG fetch_rule ')' ':' fetch_type {
		$$ = mk(pc, AST_FETCH, @$);
		$$->u.fetch.rule = $2;
		$$->u.fetch.type = $5;
		$$->u.fetch.type_loc = @5;
	}
	;

map
	: MAP %prec MAP_NO_KEYS {
		$$ = mk(pc, AST_MAP, @$);
		$$->u.map.name = $1;
	}
	| MAP '[' exprs ']' {
		$$ = mk(pc, AST_MAP, @$);
		$$->u.map.name = $1;
		$$->u.map.keys = $3;
		$$->u.map.has_brackets = true;
	}
	;

exprs
	: expr { $$ = (struct ast_list){0}; push(pc, &$$, $1); }
	| exprs ',' expr { $$ = $1; push(pc, &$$, $3); }
	;

/* go-ftrace fetch rules inside arg( ... ):
 *   %reg | (%reg) | +N(rule) | -N(rule) | *rule
 * The lexer is in its FETCH state here and returns the final ')' too. */
fetch_rule
	: REG {
		$$ = mk_rule(pc, FETCH_REG, @$);
		$$->reg = $1;
	}
	| '(' REG ')' {
		$$ = mk_rule(pc, FETCH_REG, @$);
		$$->reg = $2;
		$$->parenthesized = true;
	}
	| '+' INT '(' fetch_rule ')' {
		if ($2 > INT64_MAX) {
			diag_error(pc->src, @2, "fetch offset too large");
			YYABORT;
		}
		$$ = mk_rule(pc, FETCH_OFFSET, @$);
		$$->off = (int64_t)$2;
		$$->base = $4;
	}
	| '-' INT '(' fetch_rule ')' {
		if ($2 > INT64_MAX) {
			diag_error(pc->src, @2, "fetch offset too large");
			YYABORT;
		}
		$$ = mk_rule(pc, FETCH_OFFSET, @$);
		$$->off = -(int64_t)$2;
		$$->base = $4;
	}
	| '*' fetch_rule {
		$$ = mk_rule(pc, FETCH_DEREF, @$);
		$$->base = $2;
	}
	;

/* The type is validated by sema; a cast type name here gets its message there. */
fetch_type
	: IDENT
	| TYPENAME
	;

%%

/* With custom error reports bison calls this only when its stack overflows. */
static void yyerror(YYLTYPE *loc, void *scanner, struct parse_ctx *pc, const char *msg)
{
	(void)scanner;
	diag_error(pc->src, *loc, "nested too deeply (%s)", msg);
}

/* Tokens that can start an expression: an "expecting" list holding them says
 * "expression" instead. */
static bool starts_expr(yysymbol_kind_t sym)
{
	static const int chars[] = {'(', '-', '!', '~', '*', '&', '{'};
	for (size_t i = 0; i < ARRAY_SIZE(chars); i++)
		if (sym == YYTRANSLATE(chars[i]))
			return true;
	switch (sym) {
	case YYSYMBOL_INT:
	case YYSYMBOL_BOOL:
	case YYSYMBOL_STRING:
	case YYSYMBOL_VAR:
	case YYSYMBOL_POSPARAM:
	case YYSYMBOL_IDENT:
	case YYSYMBOL_MAP:
	case YYSYMBOL_FETCH_ARG:
	case YYSYMBOL_INC:
	case YYSYMBOL_DEC:
	case YYSYMBOL_IF_EXPR:
		return true;
	default:
		return false;
	}
}

/* Tokens that continue a complete expression (operators, assignment). Listing them
 * after `print(1)` would hide what is missing: "expecting ';' or '}'". */
static bool continues_expr(yysymbol_kind_t sym)
{
	static const int chars[] = {'?', '|', '^', '&', '<', '>', '+', '-',
				    '*', '/', '%', '.', '[', '(', '='};
	for (size_t i = 0; i < ARRAY_SIZE(chars); i++)
		if (sym == YYTRANSLATE(chars[i]))
			return true;
	return (sym >= YYSYMBOL_OR && sym <= YYSYMBOL_SHR_ASSIGN);
}

/* "syntax error, unexpected X, expecting A or B". Long lists are left out, as bison
 * does. */
static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner, struct parse_ctx *pc)
{
	(void)scanner;
	yysymbol_kind_t exp[YYNTOKENS];
	int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
	if (n < 0)
		return n;
	/* STRING is expected exactly where an expression may start, '||' exactly after a
	 * complete one. */
	bool has_str = false, has_or = false, has_other = false, has_probe = false;
	for (int i = 0; i < n; i++) {
		has_probe |= exp[i] == YYSYMBOL_PROBE;
		has_str |= exp[i] == YYSYMBOL_STRING;
		has_or |= exp[i] == YYSYMBOL_OR;
		has_other |= !continues_expr(exp[i]);
	}
	bool expr = has_str && n > 1, after_expr = has_or && has_other;
	const char *names[YYNTOKENS + 1];
	int nnames = 0;
	if (expr)
		names[nnames++] = "expression";
	for (int i = 0; i < n; i++)
		/* a C definition, a config block or an import is never what a mistake is
		 * missing: not worth listing */
		if (!(expr && starts_expr(exp[i])) && !(after_expr && continues_expr(exp[i])) &&
		    exp[i] != YYSYMBOL_CDEF && exp[i] != YYSYMBOL_DIRECTIVE &&
		    exp[i] != YYSYMBOL_CONFIG && exp[i] != YYSYMBOL_MACRO && exp[i] != YYSYMBOL_LET &&
		    exp[i] != YYSYMBOL_IMPORT &&
		    !(has_probe && exp[i] == YYSYMBOL_POSPARAM)) /* $1 { } is a probe too */
			names[nnames++] = yysymbol_name(exp[i]);

	struct strbuf sb = {0};
	strbuf_puts(&sb, "syntax error");
	yysymbol_kind_t tok = yypcontext_token(ctx);
	if (tok != YYSYMBOL_YYEMPTY)
		strbuf_printf(&sb, ", unexpected %s", yysymbol_name(tok));
	if (nnames <= 5)
		for (int i = 0; i < nnames; i++)
			strbuf_printf(&sb, "%s%s", i ? " or " : ", expecting ", names[i]);
	diag_error(pc->src, *yypcontext_location(ctx), "%s", sb.buf);
	strbuf_free(&sb);
	return 0;
}
