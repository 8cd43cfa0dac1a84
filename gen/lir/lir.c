/*
 * lir.c: building the lowered kernel IR (lir.h): nodes from the arena, lists.
 */
#include "lir.h"

LNode *
lir_node(Arena *a, LKind k)
{
	LNode *n = anew(a, LNode);

	n->kind = k;
	if (k == L_FOR)
		n->u.loop.trip = -1, n->u.loop.step = 1;
	if (k == L_STORE || k == L_ASSIGN)
		n->u.set.buf = -1;
	return n;
}

void
lir_append(LList *l, LNode *n)
{
	n->next = NULL;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
}

LNode *
lir_last(const LList *l)
{
	return l->tail;
}
