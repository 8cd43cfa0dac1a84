/*
 * tests.h: shared helpers for the Check suites. Each test/check_NAME.c
 * defines `Suite *suite_NAME(void)`; the Makefile lists them in suites.h.
 */
#ifndef TESTS_H
#define TESTS_H

#include <check.h>

#define SUITE(n) Suite *suite_##n(void);
#include "suites.h"
#undef SUITE

/* read a whole file into a malloc'd NUL-terminated buffer; NULL on failure */
char *test_readfile(const char *path, size_t *len);
/* compare text with a golden file; with UPDATE_GOLDEN=1 rewrite it instead.
 * On mismatch writes build/golden/<basename> and returns a message to show. */
int test_golden(const char *golden_path, const char *got, char *msg, size_t msgsz);

#endif
