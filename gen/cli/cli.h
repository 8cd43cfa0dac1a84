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

#include <stddef.h>
#include <stdio.h>

/* ---- cli_io.c: files and options shared by every subcommand ---- */

/* inputs are at most this many bytes unless TILEC_MAX_INPUT (bytes, or with a K/M/G suffix,
 * up to 4 GiB) says otherwise */
#define CLI_INPUT_LIMIT ((size_t)16 << 20)
size_t cli_input_limit(void);
/* a whole file (or standard input for "-"), NUL-terminated, read in bounded memory;
 * NULL with errno (EFBIG: longer than cli_input_limit()) */
char *cli_readall(const char *path, size_t *len);
/* the message for a cli_readall failure (errno e) */
const char *cli_read_error(int e, char *buf, size_t n);
/* 1 if a and b name the same file (device and inode when both exist, else the
 * canonical paths) */
int cli_same_file(const char *a, const char *b);
/* 1 if standard input is the regular file path names ("tilec -o f - < f") */
int cli_same_as_stdin(const char *path);
/* write data to path: a temporary file in path's directory renamed into place (a symlink's
 * target is replaced, its mode kept), or in place for a device or FIFO; 0 or -1 with errno */
int cli_write_file(const char *path, const char *data, size_t len);
/* flush and close stdout at exit; an error (a full disk) is reported and makes rc non-zero */
int cli_finish_stdout(const char *prog, int rc);
/* the option that getopt_long just refused, as the user wrote it (control bytes escaped);
 * *gave_value: a long option written with "=VALUE" */
struct option;
const char *cli_optname(int argc, char **argv, const struct option *longopts, char *buf,
                        size_t n, int *gave_value);

/* the values of the code options tilec and tilec run share: 0 and *out set, or -1 (the
 * caller's usage error names the option): --epilogue=auto|direct|shared (TILEC_EPILOGUE_*),
 * --raster-group=auto|G (-1 for auto, G in 0..65535) */
int cli_epilogue(const char *s, int *out);
int cli_raster_group(const char *s, int *out);

/* layout_cli.c: the same, writing to buffers (for tests) */
struct Buf;
int layout_cli_run(int argc, char **argv, struct Buf *out, struct Buf *err);
/* the same; a non-NULL sink takes --table output as it is made (constant memory) */
int layout_cli_stream(int argc, char **argv, struct Buf *out, struct Buf *err, FILE *sink);

#endif
