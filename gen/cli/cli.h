/*
 * cli.h: entry points of the tilec command line. main.c dispatches on the
 * first argument: a subcommand name from the table in main.c, else the
 * compiler driver. Each returns the process exit status:
 * 0 success, 1 an error in the input, 2 a usage error.
 */
#ifndef CLI_H
#define CLI_H

int driver_main(int argc, char **argv); /* driver.c: tilec [options] file.tile */
int cute_main(int argc, char **argv);   /* cute_cli.c: tilec cute OP ARG... | --batch */
int layout_main(int argc, char **argv); /* layout_cli.c: tilec layout show NAME ... */
int run_main(int argc, char **argv);    /* cpu/run_cli.c: tilec run FILE.tile (CPU check) */

/* driver.c: a whole file (or standard input for "-"), NUL-terminated; NULL with errno */
#include <stddef.h>
#include <stdio.h>
char *cli_readall(const char *path, size_t *len);

/* layout_cli.c: the same, writing to buffers (for tests) */
struct Buf;
int layout_cli_run(int argc, char **argv, struct Buf *out, struct Buf *err);
/* the same; a non-NULL sink takes --table output as it is made (constant memory) */
int layout_cli_stream(int argc, char **argv, struct Buf *out, struct Buf *err, FILE *sink);

#endif
