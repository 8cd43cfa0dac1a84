/*
 * memo_opts.c: tilec_options for check_jit_memo.c, which cannot include
 * tilec.h next to tilec_jit.h (their status names clash).
 */
#include <stdlib.h>

#include "tilec.h"

enum { MO_DEFAULT, MO_BN32, MO_BN16, MO_REGCOUNT, MO_HOOK, MO_TMA, MO_NOTMA, MO_WS, MO_RASTER, MO_PERSIST };

struct tilec_options *memo_opts(int kind, int *hook_calls);

static int
hook(struct tilec_pass_list *p, void *u)
{
	(void)p;
	(*(int *)u)++;
	return 0;
}

/* options of one kind (MO_*), malloc'd; the pass hook counts its calls in *hook_calls */
struct tilec_options *
memo_opts(int kind, int *hook_calls)
{
	static const char *bn32[] = {"BN=32"}, *bn16[] = {"BN=16"};
	tilec_options *o = malloc(sizeof *o);

	if (!o)
		return NULL;
	tilec_options_init(o);
	switch (kind) {
	case MO_BN32: o->defines = bn32; o->ndefines = 1; break;
	case MO_BN16: o->defines = bn16; o->ndefines = 1; break;
	case MO_REGCOUNT: o->cost_model = TILEC_COST_REGISTER_COUNT; break;
	case MO_HOOK: o->pass_hook = hook; o->pass_hook_user = hook_calls; break;
	case MO_TMA: o->tma = 1; break;
	case MO_NOTMA: o->tma = 0; break;
	case MO_WS: o->warp_specialize = 1; break;
	case MO_RASTER: o->raster_group = 8; break;
	case MO_PERSIST: o->persistent = 1; break;
	default: break;
	}
	return o;
}
