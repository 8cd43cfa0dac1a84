/* check_layout_cli.c: `tilec layout`: goldens of `show` with --grid, --table
 * and --inverse, and exit codes for bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tests.h"
#include "tl.h"

static const struct {
	const char *args[12];
	int rc;
	const char *golden;     /* or a substring of stderr when rc != 0 */
} cli_cases[] = {
	{{"layout", "show", "mma", "--operand", "C", "--dtype", "f16", "--grid", "--table", "--inverse"}, 0,
	 "test/golden/layout/cli_mma_c_f16.txt"},
	{{"layout", "show", "mma", "--operand", "A", "--dtype", "f16", "--grid"}, 0,
	 "test/golden/layout/cli_mma_a_f16.txt"},
	{{"layout", "show", "mma", "--operand", "C", "--tile", "64x64", "--warps", "4", "--policy", "full-row"}, 0,
	 "test/golden/layout/cli_mma_block_c.txt"},
	{{"layout", "show", "swizzle", "--mode", "64B", "--shape", "16x32", "--dtype", "f16", "--grid", "--inverse"}, 0,
	 "test/golden/layout/cli_swizzle_64b.txt"},
	{{"layout", "show", "smem", "--shape", "8x16", "--dtype", "i8", "--k-outer", "--table"}, 0,
	 "test/golden/layout/cli_smem_padded.txt"},
	{{"layout", "show", "wmma", "--operand", "A", "--table"}, 0, "test/golden/layout/cli_wmma_a.txt"},
	{{"layout", "list"}, 0, "test/golden/layout/cli_list.txt"},
	{{"layout", "show", "wgmma", "--tile", "64x16", "--grid"}, 0, "test/golden/layout/cli_wgmma_64x16.txt"},
	{{"layout", "show", "wgmma", "--tile", "32x16"}, 2, "wgmma needs --tile 64xN"},
	{{"layout"}, 2, "usage: tilec layout show NAME"},
	{{"layout", "show", "nope"}, 2, "unknown layout 'nope'"},
	{{"layout", "show", "mma", "--operand", "X"}, 2, "bad --operand 'X'"},
	{{"layout", "show", "mma", "--operand", "C", "--bogus"}, 2, "unknown option '--bogus'"},
	{{"layout", "show", "swizzle", "--mode", "128B", "--shape", "64x32", "--dtype", "f16"}, 1,
	 "needs the continuous extent (32) to be a multiple of 64"},
	{{"layout", "show", "swizzle", "--mode", "128B", "--shape", "64x", "--dtype", "f16"}, 2, "bad --shape"},
	{{"layout", "show", "mma", "--operand", "C", "--tile", "100x64", "--warps", "4"}, 1,
	 "no valid warp partition"},
	{{"layout", "show", "mma", "--operand", "C", "--warps"}, 2, "--warps needs a count"},
	{{"layout", "show", "mma", "--operand", "C", "--warp-grid", "0x1"}, 2, "--warp-grid needs --tile"},
	{{"layout", "show", "mma", "--operand", "C", "--tile", "64x64", "--warp-grid", "0x1"}, 2,
	 "bad --warp-grid '0x1'"},
	{{"layout", "show", "mma", "--operand", "C", "--tile", "64x64", "--warp-grid", "65x1"}, 2,
	 "bad --warp-grid '65x1'"},
	/* empty values (fuzz_layout: --operand '' read past the string) */
	{{"layout", "show", "mma", "--operand", ""}, 2, "bad --operand ''"},
	{{"layout", "show", "swizzle", "--shape", "8x64", "--dtype", "f16", "--mode", ""}, 2, "bad --mode ''"},
	{{"layout", "show", "swizzle", "--mode", "128B", "--dtype", "f16", "--shape", ""}, 2, "bad --shape ''"},
	{{"layout", "show", "swizzle", "--mode", "128B", "--shape", "8x64", "--dtype", ""}, 2, "unknown --dtype ''"},
	{{"layout", "show", "mma", "--operand", "C", "--warps", "4", "--tile", ""}, 2, "bad --tile ''"},
	{{"layout", "show", "mma", "--operand", "C", "--tile", "64x64", "--warps", "4", "--policy", ""}, 2,
	 "bad --policy ''"},
};

/* --table with a sink streams: the buffer stays small, the text is the same */
START_TEST(table_streams)
{
	char *argv[] = {"layout", "show", "mma", "--operand", "C", "--tile", "512x512", "--warps", "4",
			"--table"};
	Buf whole, out, err;
	FILE *f = tmpfile();
	char *text;
	long n;

	ck_assert_ptr_nonnull(f);
	buf_init(&whole);
	buf_init(&out);
	buf_init(&err);
	ck_assert_int_eq(layout_cli_run(10, argv, &whole, &err), 0);
	ck_assert_int_eq(layout_cli_stream(10, argv, &out, &err, f), 0);
	ck_assert_msg(whole.len > 4 << 20, "the table is %zu bytes", whole.len);
	ck_assert_msg(out.len < 1 << 17, "%zu bytes left in the buffer", out.len);
	fwrite(buf_str(&out), 1, out.len, f);
	n = ftell(f);
	ck_assert_int_eq(n, (long)whole.len);
	text = malloc((size_t)n + 1);
	rewind(f);
	ck_assert_int_eq((long)fread(text, 1, (size_t)n, f), n);
	text[n] = 0;
	ck_assert(!strcmp(text, buf_str(&whole)));
	free(text);
	fclose(f);
	buf_free(&whole);
	buf_free(&out);
	buf_free(&err);
}
END_TEST

START_TEST(cli_table)
{
	char *argv[12];
	int argc = 0, rc;
	Buf out, err;
	char msg[512];

	/* on the heap, as exact-size copies: the sanitizer build sees a read past one */
	while (argc < 12 && cli_cases[_i].args[argc]) {
		argv[argc] = strdup(cli_cases[_i].args[argc]);
		ck_assert_ptr_nonnull(argv[argc]);
		argc++;
	}
	buf_init(&out);
	buf_init(&err);
	rc = layout_cli_run(argc, argv, &out, &err);
	ck_assert_msg(rc == cli_cases[_i].rc, "rc %d: %s", rc, buf_str(&err));
	if (rc == 0)
		ck_assert_msg(!test_golden(cli_cases[_i].golden, buf_str(&out), msg, sizeof msg), "%s", msg);
	else {
		ck_assert_msg(strstr(buf_str(&err), cli_cases[_i].golden), "stderr: %s", buf_str(&err));
		ck_assert_str_eq(buf_str(&out), "");
	}
	buf_free(&out);
	buf_free(&err);
	while (argc > 0)
		free(argv[--argc]);
}
END_TEST

Suite *
suite_layout_cli(void)
{
	Suite *s = suite_create("layout_cli");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, cli_table, 0, countof(cli_cases));
	tcase_add_test(tc, table_streams);
	suite_add_tcase(s, tc);
	return s;
}
