/*
 * cli_io.c: the file handling every tilec subcommand shares (cli.h):
 * inputs read in bounded memory up to a size limit, outputs written to a
 * temporary file in the target's directory and renamed into place with
 * every write checked, outputs that would overwrite an input (or each
 * other) refused by device and inode, standard output checked at exit,
 * and option names for error messages as the user wrote them.
 */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "tilec.h"

size_t
cli_input_limit(void)
{
	const char *e = getenv("TILEC_MAX_INPUT");
	unsigned long long v;
	char *end;

	if (!e || !*e)
		return CLI_INPUT_LIMIT;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (errno || end == e || *e == '-')
		return CLI_INPUT_LIMIT;
	if (*end == 'K' || *end == 'k')
		v = v > (1ull << 53) ? 0 : v << 10, end++;
	else if (*end == 'M' || *end == 'm')
		v = v > (1ull << 43) ? 0 : v << 20, end++;
	else if (*end == 'G' || *end == 'g')
		v = v > (1ull << 33) ? 0 : v << 30, end++;
	if (*end || v == 0 || v > (1ull << 32))
		return CLI_INPUT_LIMIT;
	return (size_t)v;
}

/* read a whole file (or stdin for "-"), at most cli_input_limit() bytes; NULL with errno
 * (EFBIG past the limit: the read stops there, so /dev/zero ends quickly) */
char *
cli_readall(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t lim = cli_input_limit(), n = 0, cap = 0, r;
	char *s = NULL, *t;
	int e = 0;

	if (!f)
		return NULL;
	for (;;) {
		/* grown when full (not before the read that finds the end: a small file's
		 * first 64 KB then went into a fresh 128 KB mapping, copied) */
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 65536;

			if (nc > lim + 65536)
				nc = lim + 65536;
			if (nc <= cap) { /* full: one byte past the limit was read */
				e = EFBIG;
				break;
			}
			t = realloc(s, nc + 1);
			if (!t) {
				e = ENOMEM;
				break;
			}
			s = t;
			cap = nc;
		}
		r = fread(s + n, 1, cap - n, f);
		n += r;
		if (n > lim) {
			e = EFBIG;
			break;
		}
		if (r == 0)
			break;
	}
	if (!e && ferror(f))
		e = errno ? errno : EIO;
	if (f != stdin)
		fclose(f);
	if (e) {
		free(s);
		errno = e;
		return NULL;
	}
	if (!s && !(s = malloc(1))) {
		errno = ENOMEM;
		return NULL;
	}
	s[n] = 0;
	*len = n;
	return s;
}

const char *
cli_read_error(int e, char *buf, size_t n)
{
	if (e == EFBIG)
		snprintf(buf, n, "input larger than %zu bytes (the limit; set TILEC_MAX_INPUT=BYTES, "
		         "or with a K, M or G suffix, to change it)", cli_input_limit());
	else
		snprintf(buf, n, "%s", strerror(e));
	return buf;
}

/* the canonical path of p: realpath when it exists, else realpath(dir)/base */
static char *
canon(const char *p)
{
	char *r = realpath(p, NULL), *d, *slash, *out;
	const char *base;

	if (r)
		return r;
	if (!(d = strdup(p)))
		return NULL;
	slash = strrchr(d, '/');
	if (slash) {
		*slash = 0;
		base = p + (slash - d) + 1;
		r = realpath(slash == d ? "/" : d, NULL);
	} else {
		base = p;
		r = realpath(".", NULL);
	}
	free(d);
	if (!r)
		return NULL;
	out = malloc(strlen(r) + strlen(base) + 2);
	if (out)
		sprintf(out, "%s/%s", r, base);
	free(r);
	return out;
}

int
cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ca, *cb;
	int same;

	if (!strcmp(a, b))
		return 1;
	if (!stat(a, &sa) && !stat(b, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ca = canon(a);
	cb = canon(b);
	same = ca && cb && !strcmp(ca, cb);
	free(ca);
	free(cb);
	return same;
}

int
cli_same_as_stdin(const char *path)
{
	struct stat si, sp;

	return !fstat(0, &si) && S_ISREG(si.st_mode) && !stat(path, &sp) &&
	       si.st_dev == sp.st_dev && si.st_ino == sp.st_ino;
}

static int
writeall(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0) {
			errno = EIO;
			return -1;
		}
		p += k, n -= (size_t)k;
	}
	return 0;
}

/* not a regular file (a device, a FIFO, a terminal): written in place, no rename */
static int
write_inplace(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY), e;

	if (fd < 0)
		return -1;
	if (writeall(fd, data, len)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

int
cli_write_file(const char *path, const char *data, size_t len)
{
	struct stat st;
	char *real = NULL, *tmp;
	const char *target = path, *slash;
	mode_t mode, um;
	int fd, e, exists;

	if ((exists = !stat(path, &st))) {
		if (!S_ISREG(st.st_mode))
			return write_inplace(path, data, len);
		/* through a symlink: replace the file it names, keep the link */
		if ((real = realpath(path, NULL)))
			target = real;
		mode = st.st_mode & 07777;
	} else {
		um = umask(0);
		umask(um);
		mode = 0666 & ~um;
	}
	slash = strrchr(target, '/');
	tmp = malloc(strlen(target) + 16);
	if (!tmp) {
		free(real);
		errno = ENOMEM;
		return -1;
	}
	if (slash)
		sprintf(tmp, "%.*s/.tilec-XXXXXX", (int)(slash - target), target);
	else
		strcpy(tmp, ".tilec-XXXXXX");
	fd = mkstemp(tmp);
	if (fd < 0 && exists && (errno == EACCES || errno == EPERM)) {
		/* a writable file in a directory we may not create files in: rewritten in place */
		free(tmp);
		e = write_inplace(target, data, len);
		free(real);
		return e;
	}
	if (fd < 0)
		goto fail;
	if (fchmod(fd, mode) || writeall(fd, data, len)) {
		e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		goto fail;
	}
	if (close(fd)) {
		e = errno;
		unlink(tmp);
		errno = e;
		goto fail;
	}
	if (rename(tmp, target)) {
		e = errno;
		unlink(tmp);
		errno = e;
		goto fail;
	}
	free(tmp);
	free(real);
	return 0;
fail:
	free(tmp);
	free(real);
	return -1;
}

int
cli_finish_stdout(const char *prog, int rc)
{
	int bad = fflush(stdout) != 0 || ferror(stdout);
	int e = errno;

	if (fclose(stdout) && !bad && errno != EBADF) /* EBADF: started with stdout closed */
		bad = 1, e = errno;
	if (bad) {
		fprintf(stderr, "%s: error: cannot write standard output: %s\n", prog,
		        strerror(e ? e : EIO));
		return rc ? rc : 1;
	}
	return rc;
}

/* s with control and non-ASCII bytes written as \xNN */
static void
escape(char *buf, size_t n, const char *s, size_t len)
{
	size_t o = 0, i;

	for (i = 0; i < len && o + 5 < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isprint(c))
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, n - o, "\\x%02x", c);
	}
	buf[o] = 0;
}

const char *
cli_optname(int argc, char **argv, const struct option *longopts, char *buf, size_t n,
            int *gave_value)
{
	const char *a = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : NULL;
	int islong = 0;
	size_t k = 0;

	if (gave_value)
		*gave_value = 0;
	if (a && a[0] == '-' && a[1] == '-' && a[2]) {
		k = strcspn(a + 2, "=");
		if (optopt == 0 || optopt >= 256) {
			islong = 1;
		} else {
			const struct option *lo;

			for (lo = longopts; lo && lo->name; lo++)
				if (lo->val == optopt && !strncmp(lo->name, a + 2, k))
					islong = 1;
		}
	}
	if (islong) {
		escape(buf, n, a, k + 2);
		/* glibc: optopt 0 for an unknown or ambiguous name, the option's val for a known
		 * option that takes no argument */
		if (gave_value)
			*gave_value = optopt != 0 && a[k + 2] == '=';
	} else if (optopt > 0 && optopt < 256 && isgraph(optopt)) {
		snprintf(buf, n, "-%c", optopt);
	} else if (optopt > 0 && optopt < 256) {
		char c = (char)optopt;

		buf[0] = '-';
		escape(buf + 1, n - 1, &c, 1);
	} else if (a) {
		escape(buf, n, a, strlen(a));
	} else {
		snprintf(buf, n, "?");
	}
	return buf;
}

int
cli_epilogue(const char *s, int *out)
{
	static const struct { const char *name; int v; } names[] = {
		{"auto", TILEC_EPILOGUE_AUTO}, {"direct", TILEC_EPILOGUE_DIRECT}, {"shared", TILEC_EPILOGUE_SHARED},
	};
	size_t i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(s, names[i].name)) {
			*out = names[i].v;
			return 0;
		}
	return -1;
}

int
cli_raster_group(const char *s, int *out)
{
	char *end;
	long g;

	if (!strcmp(s, "auto")) {
		*out = -1;
		return 0;
	}
	g = strtol(s, &end, 10);
	if (!*s || *end || g < 0 || g > 65535)
		return -1;
	*out = (int)g;
	return 0;
}
