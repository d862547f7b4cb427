// SPDX-License-Identifier: GPL-2.0
/* srff_band(): band = #{ i : t[i] <= before }, checked at every edge. */
#include "kernel.h"
#include "band.h"
#include "test.h"
#include "../../include/uapi/linux/srff.h"

/* The definition, counted the slow way. */
static unsigned int ref_band(const u64 *t, unsigned int n, u64 before)
{
	unsigned int i, band = 0;

	for (i = 0; i < n; i++)
		band += t[i] <= before;
	return band;
}

static void band_default_thresholds(void)
{
	static const u64 t[] = { 1500, 5000 };

	CHECK_EQ(srff_band(t, 2, 0), 0);
	CHECK_EQ(srff_band(t, 2, 1499), 0);
	CHECK_EQ(srff_band(t, 2, 1500), 1);	/* reaching a threshold moves */
	CHECK_EQ(srff_band(t, 2, 1501), 1);
	CHECK_EQ(srff_band(t, 2, 4999), 1);
	CHECK_EQ(srff_band(t, 2, 5000), 2);
	CHECK_EQ(srff_band(t, 2, 5001), 2);
	CHECK_EQ(srff_band(t, 2, UINT64_MAX), 2);
}

/* 15 thresholds: t-1, t and t+1 around each of them. */
static void band_fifteen_thresholds(void)
{
	u64 t[SRFF_MAX_THRESHOLDS];
	unsigned int i;

	CHECK_EQ(SRFF_MAX_THRESHOLDS, 15);
	for (i = 0; i < SRFF_MAX_THRESHOLDS; i++)
		t[i] = 1000ULL << i;
	for (i = 0; i < SRFF_MAX_THRESHOLDS; i++) {
		CHECK_EQ(srff_band(t, SRFF_MAX_THRESHOLDS, t[i] - 1), i);
		CHECK_EQ(srff_band(t, SRFF_MAX_THRESHOLDS, t[i]), i + 1);
		CHECK_EQ(srff_band(t, SRFF_MAX_THRESHOLDS, t[i] + 1), i + 1);
	}
	CHECK_EQ(srff_band(t, SRFF_MAX_THRESHOLDS, UINT64_MAX),
		 SRFF_MAX_THRESHOLDS);
	CHECK(SRFF_MAX_THRESHOLDS + 1 == SRFF_MAX_BANDS);
}

/* A flow's first packet (0 bytes before it) is always in the top band. */
static void band_first_packet_is_top(void)
{
	u64 t[SRFF_MAX_THRESHOLDS];
	unsigned int n, i;

	for (i = 0; i < SRFF_MAX_THRESHOLDS; i++)
		t[i] = 1 + i;			/* the smallest valid config */
	for (n = 0; n <= SRFF_MAX_THRESHOLDS; n++)
		CHECK_EQ(srff_band(t, n, 0), 0);
	/* With no thresholds, everything is band 0. */
	CHECK_EQ(srff_band(t, 0, UINT64_MAX), 0);
}

static void band_huge_values(void)
{
	static const u64 t[] = { 1ULL << 62, UINT64_MAX - 1, UINT64_MAX };

	CHECK_EQ(srff_band(t, 3, (1ULL << 62) - 1), 0);
	CHECK_EQ(srff_band(t, 3, 1ULL << 62), 1);
	CHECK_EQ(srff_band(t, 3, UINT64_MAX - 2), 1);
	CHECK_EQ(srff_band(t, 3, UINT64_MAX - 1), 2);
	CHECK_EQ(srff_band(t, 3, UINT64_MAX), 3);
}

/* Against the definition, for pseudo-random configs and byte counts. */
static void band_matches_definition(void)
{
	u64 x = 0x9e3779b97f4a7c15ULL, t[SRFF_MAX_THRESHOLDS];
	unsigned int iter, i, n;

	for (iter = 0; iter < 20000; iter++) {
		u64 before;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = x % (SRFF_MAX_THRESHOLDS + 1);
		t[0] = 1 + (x >> 40);
		for (i = 1; i < n; i++)
			t[i] = t[i - 1] + 1 + ((x >> (i * 3)) & 0xffff);
		before = (x >> 20) & ((1ULL << ((x >> 58) & 63)) - 1);
		if (n && (iter & 3) == 0)	/* land on a threshold */
			before = t[(x >> 8) % n] - (iter & 4 ? 1 : 0);
		CHECK_EQ(srff_band(t, n, before), ref_band(t, n, before));
		CHECK(srff_band(t, n, before) <= n);
	}
}

const struct srff_test srff_tests_band[] = {
	SRFF_TEST(band_default_thresholds),
	SRFF_TEST(band_fifteen_thresholds),
	SRFF_TEST(band_first_packet_is_top),
	SRFF_TEST(band_huge_values),
	SRFF_TEST(band_matches_definition),
	{ NULL, NULL }
};
