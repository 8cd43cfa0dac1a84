/*
 * infer_cost_tmp.c: a stand-in register-count scorer behind cost_score's
 * signature, used until the cost models (cost.c) are merged; then deleted.
 * regs = the per-thread slots of every local fragment in the attempt.
 */
#include <string.h>

#include "infer.h"

static int64_t
slots(const Layout *L)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < L->nout; i++)
		n *= L->out_shape[i];
	return n;
}

int
cost_score(Arena *a, CostModelKind m, const Target *t, const IrKernel *k, IrStmt *const *members,
	   int nmembers, const LayoutMap *map, Cost *out, Err *err)
{
	int b;

	(void)a, (void)m, (void)t, (void)members, (void)nmembers;
	if (!k || !map || !out)
		return err_set(err, "cost_score: null argument");
	memset(out, 0, sizeof *out);
	for (b = 0; b < map->nbuf && b < k->nbuf; b++)
		if (map->buf[b] && map->buf[b]->is_frag)
			out->regs += slots(map->buf[b]);
	return 0;
}

int
cost_better(const Cost *a, const Cost *b)
{
	return a->mem != b->mem ? a->mem < b->mem : a->regs < b->regs;
}

const char *
cost_model_name(CostModelKind m)
{
	return m == COST_REGISTER_COUNT ? "register-count" : "io-aware";
}

int
cost_model_lookup(const char *s, CostModelKind *m)
{
	if (s && !strcmp(s, "io-aware"))
		*m = COST_IO_AWARE;
	else if (s && !strcmp(s, "register-count"))
		*m = COST_REGISTER_COUNT;
	else
		return -1;
	return 0;
}
