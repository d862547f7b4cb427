// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the user-space kernel shim itself: if SipHash or
 * skb_header_pointer() were wrong here, every other test would prove less.
 */
#include <stdlib.h>

#include "kernel.h"
#include "test.h"

/* The kernel's lib/test_siphash.c: key 00..0f, message i bytes 00..(i-1). */
static const u64 siphash_vectors[64] = {
	0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
	0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
	0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
	0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
	0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
	0xa129ca6149be45e5ULL, 0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL,
	0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL, 0xbed65cf21aa2ee98ULL,
	0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
	0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL,
	0x2f2e6163076bcfadULL, 0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL,
	0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL, 0x7127512f72f27cceULL,
	0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
	0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL,
	0x9abfd8766a33735cULL, 0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL,
	0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL, 0xf935451de4f21df2ULL,
	0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
	0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL,
	0xa192d576b245165aULL, 0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL,
	0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL, 0xb78dbfaf3a8d83bdULL,
	0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
	0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL,
	0x958a324ceb064572ULL
};

static const siphash_key_t test_key = {
	{ 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL }
};

/* The one vector printed in the SipHash paper (appendix A). */
static void siphash_paper_vector(void)
{
	u8 msg[15];
	unsigned int i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = i;
	CHECK_EQ(siphash(msg, sizeof(msg), &test_key), 0xa129ca6149be45e5ULL);
}

/* All 64 reference vectors, each from an exact-size, unaligned buffer. */
static void siphash_reference_vectors(void)
{
	unsigned int len, i;

	for (len = 0; len < 64; len++) {
		u8 *buf = malloc(len + 1), *msg = buf + 1;

		for (i = 0; i < len; i++)
			msg[i] = i;
		CHECK_EQ(siphash(msg, len, &test_key), siphash_vectors[len]);
		free(buf);
	}
}

static void siphash_key_matters(void)
{
	siphash_key_t k = test_key;
	u8 msg[40] = { 0 };
	u64 h = siphash(msg, sizeof(msg), &k);

	k.key[1] ^= 1;
	CHECK(siphash(msg, sizeof(msg), &k) != h);
	k = test_key;
	msg[39] = 1;
	CHECK(siphash(msg, sizeof(msg), &k) != h);
}

/* Every (offset, len) against packets of every length and head split. */
static void skb_header_pointer_bounds(void)
{
	u8 bytes[24], buf[24];
	unsigned int len, head;
	int off, n;

	for (n = 0; n < (int)sizeof(bytes); n++)
		bytes[n] = 0x80 + n;
	for (len = 0; len <= sizeof(bytes); len++) {
		for (head = 0; head <= len; head++) {
			struct sk_buff *skb = srff_user_skb_new(bytes, len, head);

			CHECK(skb);
			CHECK_EQ(skb_headlen(skb), head);
			for (off = 0; off <= (int)len + 1; off++) {
				for (n = 1; n <= (int)len + 1; n++) {
					const u8 *p;

					memset(buf, 0, sizeof(buf));
					p = skb_header_pointer(skb, off, n, buf);
					if (off + n > (int)len) {
						CHECK(!p);
						continue;
					}
					CHECK(p);
					if (!p)
						continue;
					/* Pointer into the head iff it fits. */
					CHECK((p == buf) == (off + n > (int)head));
					CHECK(!memcmp(p, bytes + off, n));
				}
			}
			srff_user_skb_free(skb);
		}
	}
}

/* No headroom in the model: negative offsets are refused, loudly. */
static void skb_header_pointer_negative(void)
{
	u8 bytes[8] = { 0 }, buf[8];
	struct sk_buff *skb = srff_user_skb_new(bytes, sizeof(bytes), 8);

	CHECK(!skb_header_pointer(skb, -1, 1, buf));
	CHECK(!skb_header_pointer(skb, INT_MIN, 4, buf));
	CHECK(!skb_header_pointer(skb, INT_MAX, 4, buf));
	CHECK_EQ(srff_user_warnings, 2);
	srff_test_expected_warnings = 2;
	srff_user_skb_free(skb);
}

static void log2_and_minmax(void)
{
	CHECK_EQ(roundup_pow_of_two(1), 1);
	CHECK_EQ(roundup_pow_of_two(2), 2);
	CHECK_EQ(roundup_pow_of_two(3), 4);
	CHECK_EQ(roundup_pow_of_two(1000), 1024);
	CHECK_EQ(roundup_pow_of_two(1024), 1024);
	CHECK_EQ(roundup_pow_of_two(1025), 2048);
	CHECK_EQ(roundup_pow_of_two(1UL << 40), 1UL << 40);
	CHECK_EQ(roundup_pow_of_two((1UL << 40) + 1), 1UL << 41);
	CHECK_EQ(min_t(unsigned int, 5, 3), 3);
	CHECK_EQ(max_t(int, -5, 3), 3);
	CHECK_EQ(clamp_t(unsigned long, 1, 4096, 1 << 20), 4096);
	CHECK_EQ(clamp_t(unsigned long, 1UL << 30, 4096, 1 << 20), 1 << 20);
	CHECK_EQ(clamp_t(unsigned long, 5000, 4096, 1 << 20), 5000);
}

static void jiffies_compare_wraps(void)
{
	unsigned long a = ULONG_MAX - 2, b = a + 5;	/* b wrapped to 2 */

	CHECK(time_after(b, a));
	CHECK(!time_after(a, b));
	CHECK(time_after_eq(b, a));
	CHECK(time_after_eq(a, a));
	CHECK(!time_after(a, a));
	CHECK(time_before(a, b));
	/* The kernel starts 5 minutes before the 32-bit wrap. */
	CHECK_EQ(INITIAL_JIFFIES, 0xfffedb08UL);
}

static void err_ptr(void)
{
	void *p = ERR_PTR(-ENOSPC);
	int x;

	CHECK(IS_ERR(p));
	CHECK_EQ_INT(PTR_ERR(p), -ENOSPC);
	CHECK(IS_ERR(ERR_PTR(-MAX_ERRNO)));
	CHECK(!IS_ERR(ERR_PTR(-MAX_ERRNO - 1)));
	CHECK(!IS_ERR(NULL));
	CHECK(!IS_ERR(&x));
}

static void atomics_and_bits(void)
{
	atomic_t a = ATOMIC_INIT(0);
	atomic64_t b;
	unsigned long flags[2] = { 0, 0 };

	CHECK_EQ_INT(atomic_inc_return(&a), 1);
	atomic_inc(&a);
	atomic_dec(&a);
	CHECK_EQ_INT(atomic_read(&a), 1);
	atomic64_set(&b, 10);
	CHECK_EQ_INT(atomic64_fetch_add(5, &b), 10);	/* returns the old value */
	atomic64_add(1, &b);
	atomic64_inc(&b);
	CHECK_EQ_INT(atomic64_read(&b), 17);
	set_bit(0, flags);
	set_bit(65, flags);
	CHECK(test_bit(0, flags) && test_bit(65, flags) && !test_bit(1, flags));
	CHECK_EQ(flags[0], 1);
	CHECK_EQ(flags[1], 2);
	clear_bit(0, flags);
	CHECK(!test_bit(0, flags));
}

struct obj {
	int v;
	struct hlist_node node;
	struct rcu_head rcu;
};

static struct kmem_cache *obj_cache;

static void obj_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(obj_cache, container_of(rcu, struct obj, rcu));
}

/* hlist RCU operations, and frees that wait for the grace period. */
static void hlist_rcu_and_call_rcu(void)
{
	struct hlist_head head;
	struct hlist_node *tmp;
	struct obj *o, *keep = NULL;
	int i, sum = 0, n = 0;

	obj_cache = KMEM_CACHE(obj, 0);
	INIT_HLIST_HEAD(&head);
	CHECK(hlist_empty(&head));
	for (i = 1; i <= 4; i++) {
		o = kmem_cache_alloc(obj_cache, GFP_KERNEL);
		o->v = i;
		hlist_add_head_rcu(&o->node, &head);
	}
	CHECK_EQ(srff_user_slab_live, 4);
	hlist_for_each_entry_rcu(o, &head, node, true)
		sum = sum * 10 + o->v;
	CHECK_EQ(sum, 4321);			/* added at the head */

	hlist_for_each_entry_safe(o, tmp, &head, node) {
		if (o->v % 2) {
			hlist_del_rcu(&o->node);
			call_rcu(&o->rcu, obj_free_rcu);
			if (o->v == 3)
				keep = o;
		}
	}
	hlist_for_each_entry_rcu(o, &head, node)
		n++;
	CHECK_EQ(n, 2);
	/* Unlinked but not yet freed: a reader may still hold it. */
	CHECK_EQ(srff_user_rcu_pending, 2);
	CHECK_EQ(srff_user_slab_live, 4);
	CHECK_EQ(keep->v, 3);
	CHECK(keep->node.pprev == LIST_POISON2);
	rcu_barrier();
	CHECK_EQ(srff_user_slab_live, 2);

	hlist_for_each_entry_safe(o, tmp, &head, node) {
		hlist_del_rcu(&o->node);
		call_rcu(&o->rcu, obj_free_rcu);
	}
	CHECK(hlist_empty(&head));
	synchronize_rcu();
	CHECK_EQ(srff_user_slab_live, 0);
	kmem_cache_destroy(obj_cache);
}

static void lockdep_is_checked(void)
{
	spinlock_t l;

	spin_lock_init(&l);
	spin_lock_bh(&l);
	lockdep_assert_held(&l);
	spin_unlock_bh(&l);
	CHECK_EQ(srff_user_warnings, 0);
	lockdep_assert_held(&l);		/* not held: must fire */
	CHECK_EQ(srff_user_warnings, 1);
	srff_test_expected_warnings = 1;
}

static void allocation_failures(void)
{
	struct kmem_cache *c = KMEM_CACHE(obj, 0);
	void *p;

	srff_user_slab_fail_nth = 2;
	p = kmem_cache_alloc(c, GFP_ATOMIC);
	CHECK(p);
	CHECK(!kmem_cache_alloc(c, GFP_ATOMIC));
	kmem_cache_free(c, p);
	srff_user_kv_fail_nth = 1;
	CHECK(!kvcalloc(4, 8, GFP_KERNEL));
	CHECK(!kvcalloc(SIZE_MAX / 2, 4, GFP_KERNEL));	/* overflow */
	p = kvcalloc(4, 8, GFP_KERNEL);
	CHECK(p && !((u64 *)p)[3]);
	kvfree(p);
	kmem_cache_destroy(c);
}

const struct srff_test srff_tests_shim[] = {
	SRFF_TEST(siphash_paper_vector),
	SRFF_TEST(siphash_reference_vectors),
	SRFF_TEST(siphash_key_matters),
	SRFF_TEST(skb_header_pointer_bounds),
	SRFF_TEST(skb_header_pointer_negative),
	SRFF_TEST(log2_and_minmax),
	SRFF_TEST(jiffies_compare_wraps),
	SRFF_TEST(err_ptr),
	SRFF_TEST(atomics_and_bits),
	SRFF_TEST(hlist_rcu_and_call_rcu),
	SRFF_TEST(lockdep_is_checked),
	SRFF_TEST(allocation_failures),
	{ NULL, NULL }
};
