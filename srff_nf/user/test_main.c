// SPDX-License-Identifier: GPL-2.0
/*
 * Runs every user-space unit test and prints KTAP; the last line is
 * "srff-user: N passed, M failed". Exit status 0 only if none failed.
 * An argument runs only the tests whose name contains it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "test.h"

unsigned int srff_test_failed_checks;
unsigned long srff_test_expected_warnings;

void srff_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	srff_test_failed_checks++;
	if (srff_test_failed_checks > 20)	/* one bug, one screenful */
		return;
	printf("    # %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static const struct srff_test *const suites[] = {
	srff_tests_shim,
	srff_tests_flowkey,
	srff_tests_band,
	srff_tests_table,
	srff_tests_auto,
};

static bool selected(const struct srff_test *t, const char *filter)
{
	return !filter || strstr(t->name, filter);
}

/* What every test must leave as it found it. */
static void check_clean(void)
{
	if (srff_user_warnings != srff_test_expected_warnings)
		srff_test_fail(__FILE__, __LINE__, "%lu WARN_ON(s), expected %lu",
			       srff_user_warnings, srff_test_expected_warnings);
	if (srff_user_slab_live)
		srff_test_fail(__FILE__, __LINE__, "%ld slab object(s) leaked",
			       srff_user_slab_live);
	if (srff_user_kv_live)
		srff_test_fail(__FILE__, __LINE__, "%ld kvcalloc() leaked",
			       srff_user_kv_live);
	if (srff_user_rcu_pending)
		srff_test_fail(__FILE__, __LINE__, "%lu RCU callback(s) pending",
			       srff_user_rcu_pending);
	srff_user_warnings = 0;
	srff_test_expected_warnings = 0;
	srff_user_slab_fail_nth = 0;
	srff_user_kv_fail_nth = 0;
}

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	unsigned int total = 0, passed = 0, failed = 0, s;
	const struct srff_test *t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (s = 0; s < sizeof(suites) / sizeof(suites[0]); s++)
		for (t = suites[s]; t->name; t++)
			total += selected(t, filter);

	printf("KTAP version 1\n1..%u\n", total);
	for (s = 0; s < sizeof(suites) / sizeof(suites[0]); s++) {
		for (t = suites[s]; t->name; t++) {
			if (!selected(t, filter))
				continue;
			srff_test_failed_checks = 0;
			t->fn();
			check_clean();
			if (srff_test_failed_checks) {
				failed++;
				printf("not ok %u %s\n", passed + failed, t->name);
			} else {
				passed++;
				printf("ok %u %s\n", passed + failed, t->name);
			}
		}
	}
	printf("srff-user: %u passed, %u failed\n", passed, failed);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
