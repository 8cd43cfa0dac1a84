/*
 * driver.c: `tilec [options] file.tile`. (Skeleton: the front end replaces
 * this with the full driver.)
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "tl.h"

int
driver_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("tilec %s\n", TL_VERSION);
		return 0;
	}
	fprintf(stderr, "usage: tilec [options] file.tile\n");
	return 2;
}
