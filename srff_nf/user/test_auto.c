// SPDX-License-Identifier: GPL-2.0
/* Unit tests of auto.c: the decayed histogram and the threshold rule. */
#include <string.h>

#include "kernel.h"
#include "test.h"
#include "auto.h"

/* @flows flows of @size bytes each, added to the cumulative @h. */
static void add(struct srff_sizes *h, u64 flows, u64 size)
{
	unsigned int b = srff_sizes_bucket(size);

	h->flows[b] += flows;
	h->bytes[b] += flows * size;
	h->reason[SRFF_SIZE_FIN] += flows;
}

static struct srff_auto a;
static struct srff_sizes h;

static void reset(void)
{
	memset(&a, 0, sizeof(a));
	memset(&h, 0, sizeof(h));
}

/* Fewer recent flows than the minimum: no thresholds, nothing written. */
static void auto_needs_min_flows(void)
{
	u64 th[2] = { 7, 8 };

	reset();
	add(&h, 999, 100000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ(srff_auto_flows(&a), 999);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), -EAGAIN);
	CHECK_EQ(th[0], 7);
	/* Under 4 * 1000 flows nothing decays: 20 more make 1019. */
	add(&h, 20, 100000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ(srff_auto_flows(&a), 1019);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), 0);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 0, 1000, th), -EAGAIN);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 0, th), -EAGAIN);
}

/*
 * geo, 3 bands: 5000 flows of 30 kB and 5000 of 1 MB. The median is in
 * the 30 kB bucket, [28672, 32768): t1 is its upper bound, t2 32 times it.
 */
static void auto_geo_3_bands(void)
{
	u64 th[2];

	reset();
	add(&h, 5000, 30000);
	add(&h, 5000, 1000000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), 0);
	CHECK_EQ(th[0], 32768);
	CHECK_EQ(th[1], 32 * 32768);
	/* 5001 small ones: the median is still theirs; 4999: the big ones'
	 * bucket, [917504, 1048576).
	 */
	reset();
	add(&h, 4999, 30000);
	add(&h, 5001, 1000000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), 0);
	CHECK_EQ(th[0], 1048576);
}

/* geo, 4 bands: the 60th percentile, then x8, x64; 2 bands: p60 alone. */
static void auto_geo_4_and_2_bands(void)
{
	u64 th[3];

	reset();
	add(&h, 6000, 100000);		/* [98304, 114688) */
	add(&h, 4000, 5000000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 3, 1000, th), 0);
	CHECK_EQ(th[0], 114688);
	CHECK_EQ(th[1], 8 * 114688);
	CHECK_EQ(th[2], 64 * 114688);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 1, 1000, th), 0);
	CHECK_EQ(th[0], 114688);
	/* 5999 at 100 kB: the 60th percentile is in the big ones' bucket. */
	reset();
	add(&h, 5999, 100000);
	add(&h, 4001, 5000000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 1, 1000, th), 0);
	CHECK_EQ(th[0], srff_sizes_low(srff_sizes_bucket(5000000) + 1));
}

/* Small flows only: the floor, then the growth. */
static void auto_floor(void)
{
	u64 th[3];

	reset();
	add(&h, 5000, 1000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 3, 1000, th), 0);
	CHECK_EQ(th[0], SRFF_AUTO_FLOOR);
	CHECK_EQ(th[1], 8 * SRFF_AUTO_FLOOR);
	CHECK_EQ(th[2], 64 * SRFF_AUTO_FLOOR);
}

/* Huge flows and 15 thresholds: refused rather than wrapped. */
static void auto_no_overflow(void)
{
	u64 th[15];
	unsigned int i;

	reset();
	add(&h, 2000, 1ULL << 40);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 15, 1000, th), -ERANGE);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 4, 1000, th), 0);
	for (i = 1; i < 4; i++)
		CHECK(th[i] == 8 * th[i - 1]);
	reset();
	add(&h, 2000, 1000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 15, 1000, th), 0);
	CHECK_EQ(th[14], SRFF_AUTO_FLOOR << 42);
}

/* Old flows fade: 1/64 per update, only what is new is added, and
 * never below 4 * min_flows.
 */
static void auto_decay(void)
{
	unsigned int i;

	reset();
	add(&h, 6400, 5000);
	srff_auto_update(&a, &h, 100);
	CHECK_EQ(srff_auto_flows(&a), 6400);
	srff_auto_update(&a, &h, 100);		/* nothing new */
	CHECK_EQ(srff_auto_flows(&a), 6300);
	for (i = 1; i < 64; i++)
		srff_auto_update(&a, &h, 100);
	/* 6400 * (63/64)^64 = 2335 */
	CHECK(srff_auto_flows(&a) >= 2330 && srff_auto_flows(&a) <= 2340);
	CHECK_EQ(srff_auto_ended(&h), 6400);
	/* With min_flows 1000 the decay stops once 4000 or fewer are left. */
	for (i = 0; i < 200; i++)
		srff_auto_update(&a, &h, 1000);
	CHECK_EQ(srff_auto_flows(&a), 2335);	/* already below: kept */
	reset();
	add(&h, 6400, 5000);
	for (i = 0; i < 200; i++)
		srff_auto_update(&a, &h, 1000);
	CHECK(srff_auto_flows(&a) > 3930 && srff_auto_flows(&a) <= 4000);
}

/*
 * A slow server: 10 flows a period. Decayed by 1/64 a period, the recent
 * copy would level off at 640 flows and never reach 1000; kept whole
 * below 4000, it holds 1000 after 100 periods and learns.
 */
static void auto_slow_server(void)
{
	u64 th[2];
	unsigned int i;

	reset();
	for (i = 0; i < 99; i++) {
		add(&h, 10, 40000);
		srff_auto_update(&a, &h, 1000);
	}
	CHECK_EQ(srff_auto_flows(&a), 990);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), -EAGAIN);
	add(&h, 10, 40000);
	srff_auto_update(&a, &h, 1000);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), 0);
	for (i = 0; i < 5000; i++) {		/* and it stays learnt */
		add(&h, 10, 40000);
		srff_auto_update(&a, &h, 1000);
	}
	CHECK(srff_auto_flows(&a) > 3900 && srff_auto_flows(&a) <= 4010);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), 0);
}

/* A mix that changes: the thresholds follow within a few half-lives. */
static void auto_follows_a_new_mix(void)
{
	u64 th[1], first;
	unsigned int i;

	reset();
	for (i = 0; i < 50; i++) {
		add(&h, 100, 50000);		/* [49152, 57344) */
		srff_auto_update(&a, &h, 1000);
	}
	CHECK_EQ_INT(srff_auto_thresholds(&a, 1, 1000, th), 0);
	first = th[0];
	CHECK_EQ(first, 57344);
	for (i = 0; i < 400; i++) {
		add(&h, 100, 2000000);		/* [1835008, 2097152) */
		srff_auto_update(&a, &h, 1000);
	}
	CHECK_EQ_INT(srff_auto_thresholds(&a, 1, 1000, th), 0);
	CHECK_EQ(th[0], 2097152);
}

/*
 * 8 bands, as main.c's auto_step runs the rule: every update, thresholds
 * from the recent copy, installed only if one moved by more than a
 * quarter (the default ladder installed before). Mix A, per update: 70
 * flows of 200 kB and 30 of 5 MB (p60 in [196608, 229376)); then mix B:
 * 70 of 1 kB and 30 of 50 MB (p60 under the floor). One install on A,
 * after 1000 flows; one on B, when B's small flows pass 60 % of the
 * decayed copy (the 116th update: experiments/threshold_study.py's
 * KernelAuto, auto.c's arithmetic in Python, gives the same); none in
 * 2000 updates of B after that, nor when its batches vary a little
 * (docs/thresholds.md, "Rules that learn": converge on A, then on B,
 * and hold still).
 */
static unsigned int run_mix(u64 *inst, unsigned int n, unsigned int updates,
			    u64 small, u64 big, unsigned int wobble,
			    unsigned int *last)
{
	unsigned int i, k, installs = 0;
	u64 th[7];

	for (i = 1; i <= updates; i++) {
		k = wobble && (i & 1) ? wobble : 0;
		add(&h, 70 - k, small);
		add(&h, 30 + k, big);
		srff_auto_update(&a, &h, 1000);
		if (srff_auto_thresholds(&a, n, 1000, th) ||
		    !srff_auto_moved(inst, th, n))
			continue;
		memcpy(inst, th, n * sizeof(th[0]));
		installs++;
		*last = i;
	}
	return installs;
}

static void auto_converges_then_holds(void)
{
	u64 inst[7];
	unsigned int i, last = 0;

	reset();
	for (i = 0; i < 7; i++)
		inst[i] = SRFF_AUTO_FLOOR << (3 * i);	/* config.c's default */
	CHECK_EQ(run_mix(inst, 7, 100, 200000, 5000000, 0, &last), 1);
	CHECK_EQ(last, 10);
	for (i = 0; i < 7; i++)
		CHECK_EQ(inst[i], 229376ULL << (3 * i));
	CHECK_EQ(run_mix(inst, 7, 200, 1000, 50000000, 0, &last), 1);
	CHECK_EQ(last, 116);
	for (i = 0; i < 7; i++)
		CHECK_EQ(inst[i], SRFF_AUTO_FLOOR << (3 * i));
	CHECK_EQ(run_mix(inst, 7, 2000, 1000, 50000000, 0, &last), 0);
	CHECK_EQ(run_mix(inst, 7, 2000, 1000, 50000000, 5, &last), 0);
}

/* Hysteresis: more than a quarter, either way, in any threshold. */
static void auto_moved(void)
{
	u64 old[2] = { 100000, 1000000 };
	u64 same[2] = { 125000, 750000 };
	u64 up[2] = { 100000, 1250001 };
	u64 down[2] = { 74999, 1000000 };

	CHECK(!srff_auto_moved(old, old, 2));
	CHECK(!srff_auto_moved(old, same, 2));
	CHECK(srff_auto_moved(old, up, 2));
	CHECK(srff_auto_moved(old, down, 2));
}

const struct srff_test srff_tests_auto[] = {
	SRFF_TEST(auto_needs_min_flows),
	SRFF_TEST(auto_slow_server),
	SRFF_TEST(auto_geo_3_bands),
	SRFF_TEST(auto_geo_4_and_2_bands),
	SRFF_TEST(auto_floor),
	SRFF_TEST(auto_no_overflow),
	SRFF_TEST(auto_decay),
	SRFF_TEST(auto_follows_a_new_mix),
	SRFF_TEST(auto_converges_then_holds),
	SRFF_TEST(auto_moved),
	{ NULL, NULL },
};
