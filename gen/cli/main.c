/*
 * main.c: the tilec executable. Subcommands (`tilec cute ...`,
 * `tilec layout ...`) are dispatched from a table; everything else is the
 * compiler driver. All work happens in the library; this file only routes.
 */
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {
	/* add subcommands here: {"name", name_main}, */
	{"cute", cute_main},
	{"layout", layout_main},
	{"run", run_main},
	{NULL, NULL},
};

int
main(int argc, char **argv)
{
	size_t i;

	/* every subcommand's standard output is checked at exit (a full disk is an error) */
	if (argc > 1) {
		for (i = 0; commands[i].name; i++)
			if (!strcmp(argv[1], commands[i].name))
				return cli_finish_stdout("tilec", commands[i].fn(argc - 1, argv + 1));
	}
	return cli_finish_stdout("tilec", driver_main(argc, argv));
}
