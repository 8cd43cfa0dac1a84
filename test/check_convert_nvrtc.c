/*
 * check_convert_nvrtc.c: programs with layout conversions (convert.c) go
 * through tilec's CUDA emission and NVRTC (libnvrtc, no GPU needed) for
 * sm_80: the PTX has no local memory, and shared memory and barriers exactly
 * when the conversion goes through shared memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "tilec_tile.h"

#define countof(a) (sizeof(a) / sizeof((a)[0]))

static tilec_jit *jit;

static const struct {
	const char *path;
	int shared;   /* the conversion goes through shared memory */
} emits[] = {
	{"samples/convert.tile", 1},
	{"test/control/release_shared.tile", 1},
	{"test/control/pin_backward.tile", 1},
	{"test/control/require_registers.tile", 0},
	{"test/control/release_elided.tile", 0},
};

START_TEST(emit_nvrtc)
{
	tilec_module *m = NULL;
	char *err = NULL;
	const char *ptx, *cu;
	int rc;

	ck_assert_ptr_nonnull(jit);
	rc = tilec_jit_compile_tile_file(jit, emits[_i].path, NULL, "sm_80", &m, &err);
	ck_assert_msg(rc == TILEC_OK, "%s: %s\n%s", emits[_i].path, err ? err : "",
		      m ? tilec_module_log(m) : "");
	cu = tilec_module_source(m);
	ck_assert_int_eq(strstr(cu, "__syncthreads();") != NULL, emits[_i].shared);
	ck_assert_int_eq(strstr(cu, "_cvt") != NULL, emits[_i].shared);
	ptx = tilec_module_ptx(m);
	ck_assert_ptr_nonnull(ptx);
	ck_assert_msg(!strstr(ptx, "ld.local") && !strstr(ptx, "st.local"), "%s: local memory in the PTX",
		      emits[_i].path);
	ck_assert_int_eq(strstr(ptx, "st.shared") != NULL, emits[_i].shared);
	ck_assert_int_eq(strstr(ptx, "bar.sync") != NULL, emits[_i].shared);
	tilec_module_free(m);
	free(err);
}
END_TEST

Suite *
suite_convert_nvrtc(void)
{
	Suite *s = suite_create("convert_nvrtc");
	TCase *tc = tcase_create("convert_nvrtc");
	tilec_jit_options o;
	char *err = NULL;

	memset(&o, 0, sizeof o);
	o.no_disk_cache = 1;
	if (tilec_jit_create(&jit, &o, &err) != TILEC_OK)
		jit = NULL;
	free(err);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, emit_nvrtc, 0, (int)countof(emits));
	suite_add_tcase(s, tc);
	return s;
}
