/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal test harness printing KTAP. Each test_*.c file defines a
 * NULL-terminated array of tests; test_main.c runs them all and, after each
 * one, also fails it if it left a WARN_ON, a live object, a kvcalloc()
 * or a queued RCU callback behind.
 */
#ifndef _SRFF_USER_TEST_H
#define _SRFF_USER_TEST_H

#include <stdio.h>

struct srff_test {
	const char *name;
	void (*fn)(void);
};

#define SRFF_TEST(fn)	{ #fn, fn }

extern const struct srff_test srff_tests_shim[];
extern const struct srff_test srff_tests_flowkey[];
extern const struct srff_test srff_tests_band[];
extern const struct srff_test srff_tests_table[];
extern const struct srff_test srff_tests_auto[];

/* Failed checks in the running test. */
extern unsigned int srff_test_failed_checks;
/* WARN_ONs the running test expects to fire (checked, then reset). */
extern unsigned long srff_test_expected_warnings;

void srff_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define CHECK(cond) do {						\
	if (!(cond))							\
		srff_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);	\
} while (0)

#define CHECK_EQ(a, b) do {						\
	unsigned long long __a = (a), __b = (b);			\
	if (__a != __b)							\
		srff_test_fail(__FILE__, __LINE__,			\
			       "%s == %s: 0x%llx (%llu) != 0x%llx (%llu)", \
			       #a, #b, __a, __a, __b, __b);		\
} while (0)

#define CHECK_EQ_INT(a, b) do {						\
	long long __a = (a), __b = (b);					\
	if (__a != __b)							\
		srff_test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", \
			       #a, #b, __a, __b);			\
} while (0)

#endif /* _SRFF_USER_TEST_H */
