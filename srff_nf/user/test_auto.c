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
	srff_auto_update(&a, &h);
	CHECK_EQ(srff_auto_flows(&a), 999);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), -EAGAIN);
	CHECK_EQ(th[0], 7);
	/* 999 decayed by 1/64 is 983.4: 20 more make 1003. */
	add(&h, 20, 100000);
	srff_auto_update(&a, &h);
	CHECK_EQ(srff_auto_flows(&a), 1003);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), 0);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 0, 1000, th), -EAGAIN);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 0, th), -EAGAIN);
}

/*
 * Equal bytes, as an MLFQ splits them: 3000 flows of 1 MB. Band 0 carries
 * min(1 MB, t) of each: a third of the bytes at t = 333 333, so the first
 * bucket bound at or above it, 393 216 (1.5 * 2^18); two thirds at
 * 666 667: 786 432 (3 * 2^18), also twice the first.
 */
static void auto_equal_bytes_mlfq(void)
{
	u64 th[2];

	reset();
	add(&h, 3000, 1000000);
	srff_auto_update(&a, &h);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 2, 1000, th), 0);
	CHECK_EQ(th[0], 393216);
	CHECK_EQ(th[1], 786432);
}

/* A mix: 9000 flows of 10 KB and 1000 of 10 MB. The big ones carry 99 %
 * of the bytes; band 0 must carry half: 10^10 / 2 = 9000 * 10^4 + 1000 t
 * at t = 4.91 MB -> bucket bound 5 242 880 (1.25 * 2^22).
 */
static void auto_mix(void)
{
	u64 th[1];

	reset();
	add(&h, 9000, 10000);
	add(&h, 1000, 10000000);
	srff_auto_update(&a, &h);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 1, 1000, th), 0);
	CHECK_EQ(th[0], 5242880);
}

/* Small flows only: the floor, then the spacing. */
static void auto_floor_and_spacing(void)
{
	u64 th[3];

	reset();
	add(&h, 5000, 1000);
	srff_auto_update(&a, &h);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 3, 1000, th), 0);
	CHECK_EQ(th[0], SRFF_AUTO_FLOOR);
	CHECK_EQ(th[1], 2 * SRFF_AUTO_FLOOR);
	CHECK_EQ(th[2], 4 * SRFF_AUTO_FLOOR);
}

/* Huge counts of huge flows do not overflow: thresholds still ascend. */
static void auto_no_overflow(void)
{
	u64 th[15];
	unsigned int i;

	reset();
	add(&h, 1ULL << 30, 1ULL << 40);
	add(&h, 1ULL << 30, 1000);
	srff_auto_update(&a, &h);
	CHECK_EQ_INT(srff_auto_thresholds(&a, 15, 1000, th), 0);
	for (i = 1; i < 15; i++)
		CHECK(th[i] >= 2 * th[i - 1]);
}

/* Old flows fade: 1/64 per update, only what is new is added. */
static void auto_decay(void)
{
	unsigned int i;

	reset();
	add(&h, 6400, 5000);
	srff_auto_update(&a, &h);
	CHECK_EQ(srff_auto_flows(&a), 6400);
	srff_auto_update(&a, &h);		/* nothing new */
	CHECK_EQ(srff_auto_flows(&a), 6300);
	for (i = 1; i < 64; i++)
		srff_auto_update(&a, &h);
	/* 6400 * (63/64)^64 = 2335 */
	CHECK(srff_auto_flows(&a) >= 2330 && srff_auto_flows(&a) <= 2340);
	CHECK_EQ(srff_auto_ended(&h), 6400);
}

/* A mix that changes: the thresholds follow within a few half-lives. */
static void auto_follows_a_new_mix(void)
{
	u64 th[1], first;
	unsigned int i;

	reset();
	for (i = 0; i < 50; i++) {
		add(&h, 100, 50000);
		srff_auto_update(&a, &h);
	}
	CHECK_EQ_INT(srff_auto_thresholds(&a, 1, 1000, th), 0);
	first = th[0];
	CHECK(first >= 16384 && first <= 50000);
	for (i = 0; i < 400; i++) {
		add(&h, 100, 2000000);
		srff_auto_update(&a, &h);
	}
	CHECK_EQ_INT(srff_auto_thresholds(&a, 1, 1000, th), 0);
	CHECK(th[0] >= 800000 && th[0] <= 1200000);
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
	SRFF_TEST(auto_equal_bytes_mlfq),
	SRFF_TEST(auto_mix),
	SRFF_TEST(auto_floor_and_spacing),
	SRFF_TEST(auto_no_overflow),
	SRFF_TEST(auto_decay),
	SRFF_TEST(auto_follows_a_new_mix),
	SRFF_TEST(auto_moved),
	{ NULL, NULL },
};
