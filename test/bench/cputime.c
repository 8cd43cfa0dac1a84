/* cputime: run a command REPS times and print the median and the minimum of its
 * whole-process CPU time (user + sys, from wait4's rusage, microsecond resolution) in
 * milliseconds: "median_ms min_ms". The command's stdout and stderr go to /dev/null; a
 * run that exits non-zero makes cputime exit 1 after printing "failed STATUS".
 * Used by test/bench/gen.sh.  Usage: cputime REPS COMMAND [ARGS...] */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: cputime REPS COMMAND [ARGS...]\n");
		return 2;
	}
	int reps = atoi(argv[1]);
	if (reps < 1 || reps > 1000) {
		fprintf(stderr, "cputime: REPS must be 1..1000\n");
		return 2;
	}
	double *t = malloc(sizeof *t * (size_t)reps);
	if (!t)
		return 2;
	for (int r = 0; r < reps; r++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("cputime: fork");
			return 2;
		}
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		int status;
		struct rusage ru;
		if (wait4(pid, &status, 0, &ru) < 0) {
			perror("cputime: wait4");
			return 2;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			printf("failed %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			return 1;
		}
		t[r] = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	}
	qsort(t, (size_t)reps, sizeof *t, cmp_double);
	double med = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
	printf("%.2f %.2f\n", med, t[0]);
	free(t);
	return 0;
}
