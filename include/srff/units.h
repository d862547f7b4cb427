/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sizes and durations as srff reads them everywhere: srffctl's arguments
 * and saved files, and the module's parameters (thresholds=16k,1m
 * idle_reset_ms=100ms), so that one configuration reads the same in both.
 * Freestanding C, no libc and no kernel headers: srffctl's unit tests
 * (srffctl/tests/test_parse.c) test the very code the module runs.
 *
 * Sizes as tc reads them (iproute2's get_size()): a bare number or "b" is
 * bytes; k or kb is 1024, m or mb 1024^2, g or gb 1024^3, t or tb 1024^4,
 * in either case (tc's "Kb" is 1024 bytes, not kilobits); Ki, Mi, Gi, Ti
 * (and KiB, ...) mean the same. Unlike tc the result must be whole bytes:
 * 1.5k is 1536, 1.1k is refused.
 *
 * Durations: a bare number or "ms" is milliseconds; s, m or min, h (lower
 * case: M is not a unit of time); 2.5s is 2500. The result must be whole
 * milliseconds and fit in 32 bits.
 *
 * Both return 0, or -1 for anything else (empty, signs, spaces, overflow).
 * A trailing newline is ignored (a value written to sysfs has one).
 */
#ifndef _SRFF_UNITS_H
#define _SRFF_UNITS_H

#define SRFF_U64_MAX	(~0ULL)

static inline int srff_units_isdigit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whether [s, e) equals the lower-case @unit; in either case if @fold. */
static inline int srff_units_is(const char *s, const char *e, const char *unit,
				int fold)
{
	for (; s < e && *unit; s++, unit++) {
		char c = fold && *s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s;

		if (c != *unit)
			return 0;
	}
	return s == e && !*unit;
}

/*
 * [s, num_end): a decimal number with an optional fraction; times @mult,
 * it must come out whole and fit in 64 bits.
 */
static inline int srff_units_scaled(const char *s, const char *num_end,
				    unsigned long long mult,
				    unsigned long long *out)
{
	unsigned long long ip = 0, frac = 0, div = 1;
	const char *p = s;

	if (p == num_end || !srff_units_isdigit(*p))
		return -1;
	for (; p < num_end && srff_units_isdigit(*p); p++) {
		unsigned int digit = *p - '0';

		if (ip > SRFF_U64_MAX / 10 ||
		    (ip == SRFF_U64_MAX / 10 && digit > SRFF_U64_MAX % 10))
			return -1;
		ip = ip * 10 + digit;
	}
	if (p < num_end && *p == '.') {
		p++;
		if (p == num_end)
			return -1;
		for (; p < num_end && srff_units_isdigit(*p); p++) {
			if (div > SRFF_U64_MAX / 10 / mult)
				return -1;	/* frac * mult could overflow */
			frac = frac * 10 + (*p - '0');
			div *= 10;
		}
	}
	if (p != num_end)
		return -1;
	if (ip && mult > SRFF_U64_MAX / ip)
		return -1;
	/* frac / div * mult must be whole; frac < div <= U64_MAX / mult */
	if ((frac * mult) % div)
		return -1;
	if (ip * mult > SRFF_U64_MAX - frac * mult / div)
		return -1;
	*out = ip * mult + frac * mult / div;
	return 0;
}

/* Splits @s into number and unit; the end ignores one trailing newline. */
static inline void srff_units_split(const char *s, const char **num_end,
				    const char **end)
{
	const char *p = s;

	while (srff_units_isdigit(*p) || *p == '.')
		p++;
	*num_end = p;
	while (*p)
		p++;
	if (p > *num_end && p[-1] == '\n')
		p--;
	*end = p;
}

static inline int srff_parse_size(const char *s, unsigned long long *out)
{
	static const struct { const char *unit; unsigned int shift; } units[] = {
		{ "", 0 }, { "b", 0 },
		{ "k", 10 }, { "kb", 10 }, { "ki", 10 }, { "kib", 10 },
		{ "m", 20 }, { "mb", 20 }, { "mi", 20 }, { "mib", 20 },
		{ "g", 30 }, { "gb", 30 }, { "gi", 30 }, { "gib", 30 },
		{ "t", 40 }, { "tb", 40 }, { "ti", 40 }, { "tib", 40 },
	};
	const char *num_end, *end;
	unsigned int i;

	srff_units_split(s, &num_end, &end);
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (srff_units_is(num_end, end, units[i].unit, 1))
			return srff_units_scaled(s, num_end,
						 1ULL << units[i].shift, out);
	return -1;
}

static inline int srff_parse_duration_ms(const char *s, unsigned int *out)
{
	static const struct { const char *unit; unsigned int ms; } units[] = {
		{ "", 1 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
		{ "min", 60000 }, { "h", 3600000 },
	};
	const char *num_end, *end;
	unsigned long long v;
	unsigned int i;

	srff_units_split(s, &num_end, &end);
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!srff_units_is(num_end, end, units[i].unit, 0))
			continue;
		if (srff_units_scaled(s, num_end, units[i].ms, &v) ||
		    v > 0xffffffffULL)
			return -1;
		*out = (unsigned int)v;
		return 0;
	}
	return -1;
}

#endif /* _SRFF_UNITS_H */
