/*
 * tl.h: infrastructure shared by every part of tilec: source locations,
 * arenas, growable string buffers, error values and diagnostics.
 * Module APIs live in their own headers (ast.h, ir.h, cute.h, layout.h, ...);
 * this one is small on purpose so that every module can include it.
 */
#ifndef TL_H
#define TL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define TL_VERSION "0.1.0"

#define countof(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define TL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TL_PRINTF(f, a)
#endif

/* ---- source locations ---------------------------------------------- */

typedef struct Loc {
	const char *file; /* never NULL once set; "<input>" for strings */
	int line, col;    /* 1-based; 0 means "no location" */
} Loc;

/* ---- arena (arena.c) ------------------------------------------------ */

/*
 * A bump allocator: everything a compilation allocates comes from one arena
 * and is dropped at once by arena_free(). Memory is zeroed. On out-of-memory
 * arena_alloc() longjmps to *oom if set, else returns NULL.
 */
typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
	ArenaBlock *head;
	size_t used;              /* bytes handed out, for statistics */
	void *oom;                /* jmp_buf * or NULL */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t n);
void *arena_realloc(Arena *a, void *p, size_t old, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) TL_PRINTF(2, 3);

#define anew(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define anewn(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* ---- growable string buffer (buf.c) --------------------------------- */

typedef struct Buf {
	char *s;    /* always NUL-terminated once anything was written */
	size_t len, cap;
	int oom;    /* set if an allocation failed; content is then truncated */
} Buf;

void buf_init(Buf *b);
void buf_free(Buf *b);
void buf_reset(Buf *b);
void buf_putc(Buf *b, int c);
void buf_puts(Buf *b, const char *s);
void buf_putn(Buf *b, const char *s, size_t n);
void buf_printf(Buf *b, const char *fmt, ...) TL_PRINTF(2, 3);
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
/* vsnprintf, the common formats (%s %c %d %u %x, l/ll/z, no width) without libc's set-up */
int tl_vsnprintf(char *dst, size_t cap, const char *fmt, va_list ap);
char *buf_take(Buf *b); /* caller frees; buffer is reset */
const char *buf_str(const Buf *b); /* "" when empty */

/* FNV-1a over s[0..n) from basis h (TL_HASH_BASIS, or a seed): the one string hash of the
 * name tables (ir.c, sema_expr.c, render_c.c) and of the CPU run's input seeds (run.c) */
#define TL_HASH_BASIS 14695981039346656037ULL
uint64_t tl_strhash(const char *s, size_t n, uint64_t h);

/* ---- error values (err.c) ------------------------------------------- */

/*
 * Algebra and layout code report broken preconditions through an Err:
 * the function returns a failure value (NULL, -1, ...) and fills err->msg.
 * An Err may be NULL when the caller does not care about the message.
 */
typedef struct Err {
	int set;
	char msg[512];
	Loc loc;          /* the source place the error is about, when known (line 0: none) */
} Err;

int err_set(Err *e, const char *fmt, ...) TL_PRINTF(2, 3); /* returns -1 */
void err_clear(Err *e);
/* give e the place l unless it has one (the innermost place wins); returns -1 */
int err_loc(Err *e, Loc l);

/* checked 64-bit arithmetic; return 0 on success, -1 on overflow (inline: the layout core
 * calls them per point of a domain) */
static inline int
ck_add(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_add_overflow(a, b, r) ? -1 : 0;
}

static inline int
ck_mul(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_mul_overflow(a, b, r) ? -1 : 0;
}
/* [al, ah] * [bl, bh]: the interval of the products; -1 when a corner product overflows */
int ck_interval_mul(int64_t al, int64_t ah, int64_t bl, int64_t bh, int64_t *lo, int64_t *hi);
int64_t floordiv64(int64_t a, int64_t b); /* b != 0 */
int64_t floormod64(int64_t a, int64_t b); /* b != 0 */

/* ---- diagnostics (diag.c) ------------------------------------------- */

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagKind;

typedef struct Diag {
	DiagKind kind;
	Loc loc;
	char *msg;
	struct Diag *next;
} Diag;

/*
 * A diagnostic sink. Messages are collected in order (never printed by
 * library code); the CLI prints them with diag_print(). src/srclen let the
 * printer show the source line and a caret.
 */
typedef struct Diags {
	Arena *arena;
	Diag *head, *tail;
	int nerr, nwarn;
	int limit;          /* stop recording errors past this many (0: 1000) */
} Diags;

void diags_init(Diags *d, Arena *a);
void diag(Diags *d, Loc loc, const char *fmt, ...) TL_PRINTF(3, 4);
void diag_warn(Diags *d, Loc loc, const char *fmt, ...) TL_PRINTF(3, 4);
void diag_note(Diags *d, Loc loc, const char *fmt, ...) TL_PRINTF(3, 4);
void diag_vadd(Diags *d, DiagKind k, Loc loc, const char *fmt, va_list ap);
/* "file:line:col: error: msg\n" for each; with src and caret=1 also the line and a caret */
void diag_format(const Diags *d, Buf *out, const char *src, size_t srclen, int caret);

#endif
