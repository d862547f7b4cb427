// SPDX-License-Identifier: GPL-2.0
/*
 * The out-of-line half of the user-space kernel shim: see kernel.h for what
 * it models and where it differs from the kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

#include "kernel.h"

unsigned long jiffies = INITIAL_JIFFIES;

unsigned long srff_user_warnings;
bool srff_user_warn_abort;

void srff_user_warn(const char *file, int line, const char *cond)
{
	srff_user_warnings++;
	fprintf(stderr, "WARNING: %s:%d: WARN_ON(%s)\n", file, line, cond);
	if (srff_user_warn_abort)
		abort();
}

/* Any per-thread address identifies the thread. */
static __thread char self_marker;

const void *srff_user_self(void)
{
	return &self_marker;
}

/* ---- RCU: callbacks wait for the caller to end the grace period ---------- */

static struct rcu_head *rcu_queue_head;
static struct rcu_head **rcu_queue_tail = &rcu_queue_head;
unsigned long srff_user_rcu_pending;

void call_rcu(struct rcu_head *head, rcu_callback_t func)
{
	head->func = func;
	head->next = NULL;
	*rcu_queue_tail = head;
	rcu_queue_tail = &head->next;
	srff_user_rcu_pending++;
}

void rcu_barrier(void)
{
	/* Callbacks may queue callbacks: run until the queue stays empty. */
	while (rcu_queue_head) {
		struct rcu_head *list = rcu_queue_head;

		rcu_queue_head = NULL;
		rcu_queue_tail = &rcu_queue_head;
		while (list) {
			struct rcu_head *next = list->next;

			srff_user_rcu_pending--;
			list->func(list);
			list = next;
		}
	}
}

/*
 * Readers on other threads, for benchmarks (quiescent-state based, as
 * liburcu's QSBR flavour): a registered thread is inside a read-side
 * section except when it says otherwise, with srff_user_rcu_quiescent()
 * between packets or srff_user_rcu_offline() when it stops reading.
 * synchronize_rcu() waits until every online reader has passed a
 * quiescent state after it began. Unit tests register none.
 */
#define RCU_READERS	8
static struct {
	unsigned long seen;	/* the latest grace period it saw begin */
	bool online;
} rcu_readers[RCU_READERS];
static unsigned long rcu_gp;
static __thread int rcu_reader = -1;

void srff_user_rcu_register(void)
{
	static int next;
	int i = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);

	if (i >= RCU_READERS)
		__builtin_trap();
	rcu_reader = i;
	__atomic_store_n(&rcu_readers[i].seen, __atomic_load_n(&rcu_gp, __ATOMIC_SEQ_CST),
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&rcu_readers[i].online, true, __ATOMIC_SEQ_CST);
}

void srff_user_rcu_quiescent(void)
{
	__atomic_store_n(&rcu_readers[rcu_reader].seen,
			 __atomic_load_n(&rcu_gp, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
}

void srff_user_rcu_offline(void)
{
	__atomic_store_n(&rcu_readers[rcu_reader].online, false, __ATOMIC_SEQ_CST);
}

void synchronize_rcu(void)
{
	unsigned long gp = __atomic_add_fetch(&rcu_gp, 1, __ATOMIC_SEQ_CST);
	int i;

	for (i = 0; i < RCU_READERS; i++)
		while (__atomic_load_n(&rcu_readers[i].online, __ATOMIC_SEQ_CST) &&
		       __atomic_load_n(&rcu_readers[i].seen, __ATOMIC_SEQ_CST) < gp)
			;
	rcu_barrier();
}

/* ---- memory ------------------------------------------------------------- */

long srff_user_slab_live;
unsigned long srff_user_slab_allocs;
long srff_user_kv_live;
int srff_user_slab_fail_nth;
int srff_user_kv_fail_nth;

static bool fail_now(int *nth)
{
	return *nth > 0 && --*nth == 0;
}

struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags,
				     void (*ctor)(void *))
{
	struct kmem_cache *s = calloc(1, sizeof(*s));

	(void)flags;
	if (!s || ctor) {	/* constructors are not modelled */
		free(s);
		return NULL;
	}
	s->name = name;
	s->size = size;
	s->align = align ? align : sizeof(void *);
	return s;
}

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t flags)
{
	void *obj;

	(void)flags;
	/* Atomic: benchmark threads allocate at once (bench -c). */
	__atomic_fetch_add(&srff_user_slab_allocs, 1, __ATOMIC_RELAXED);
	if (fail_now(&srff_user_slab_fail_nth))
		return NULL;
	if (s->align <= _Alignof(max_align_t))
		obj = malloc(s->size);
	else
		obj = aligned_alloc(s->align, (s->size + s->align - 1) &
					      ~(s->align - 1));
	if (obj) {
		__atomic_fetch_add(&s->live, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&srff_user_slab_live, 1, __ATOMIC_RELAXED);
	}
	return obj;
}

void kmem_cache_free(struct kmem_cache *s, void *obj)
{
	if (!obj)
		return;
	WARN_ON(__atomic_fetch_sub(&s->live, 1, __ATOMIC_RELAXED) <= 0);
	__atomic_fetch_sub(&srff_user_slab_live, 1, __ATOMIC_RELAXED);
	free(obj);
}

void kmem_cache_destroy(struct kmem_cache *s)
{
	if (!s)
		return;
	/* The kernel's "Objects remaining ... on __kmem_cache_shutdown()". */
	WARN_ON(s->live != 0);
	free(s);
}

void *kvcalloc(size_t n, size_t size, gfp_t flags)
{
	void *p;

	(void)flags;
	if (fail_now(&srff_user_kv_fail_nth))
		return NULL;
	if (size && n > SIZE_MAX / size)
		return NULL;
	p = calloc(n ? n : 1, size ? size : 1);
	if (p)
		srff_user_kv_live++;
	return p;
}

void kvfree(const void *p)
{
	if (!p)
		return;
	srff_user_kv_live--;
	free((void *)p);
}

/* ---- per-CPU data ------------------------------------------------------- */

static int next_cpu;
static __thread int user_cpu = -1;

int srff_user_cpu(void)
{
	if (user_cpu < 0)
		user_cpu = __atomic_fetch_add(&next_cpu, 1, __ATOMIC_RELAXED) %
			   SRFF_USER_NR_CPUS;
	return user_cpu;
}

void *srff_user_alloc_percpu(size_t size, gfp_t flags)
{
	/* Every CPU's copy of every variable is STRIDE bytes from the last. */
	if (size > SRFF_USER_PCPU_STRIDE) {
		WARN_ON(1);
		return NULL;
	}
	return kvcalloc(SRFF_USER_NR_CPUS, SRFF_USER_PCPU_STRIDE, flags);
}

/* ---- randomness, SipHash ------------------------------------------------ */

void get_random_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("getrandom");
			abort();
		}
		p += n;
		len -= n;
	}
}

static inline u64 rol64(u64 word, unsigned int shift)
{
	return (word << (shift & 63)) | (word >> ((-shift) & 63));
}

static inline u64 get_le64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return __le64_to_cpu(v);
}

#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = rol64(v1, 13); v1 ^= v0; v0 = rol64(v0, 32);	\
	v2 += v3; v3 = rol64(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = rol64(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = rol64(v1, 17); v1 ^= v2; v2 = rol64(v2, 32);	\
} while (0)

/* SipHash-2-4 (Aumasson and Bernstein, 2012), from the paper. */
u64 siphash(const void *data, size_t len, const siphash_key_t *key)
{
	const u8 *in = data, *end = in + (len & ~(size_t)7);
	u64 v0 = 0x736f6d6570736575ULL ^ key->key[0];
	u64 v1 = 0x646f72616e646f6dULL ^ key->key[1];
	u64 v2 = 0x6c7967656e657261ULL ^ key->key[0];
	u64 v3 = 0x7465646279746573ULL ^ key->key[1];
	u64 b = (u64)len << 56, m;
	unsigned int i;

	for (; in != end; in += 8) {
		m = get_le64(in);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (i = 0; i < (len & 7); i++)
		b |= (u64)in[i] << (8 * i);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	for (i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- scheduling --------------------------------------------------------- */

unsigned long srff_user_resched_calls;
void (*srff_user_resched_hook)(void);
void (*srff_user_race_hook)(void);

/* ---- sk_buff ------------------------------------------------------------ */

int skb_copy_bits(const struct sk_buff *skb, int offset, void *to, int len)
{
	int start = skb_headlen(skb), copy;
	unsigned char *dst = to;

	if (offset < 0 || len < 0 || offset > (int)skb->len - len)
		return -EFAULT;

	copy = start - offset;
	if (copy > 0) {
		if (copy > len)
			copy = len;
		memcpy(dst, skb->data + offset, copy);
		len -= copy;
		offset += copy;
		dst += copy;
	}
	if (len > 0)
		memcpy(dst, skb->frag + (offset - start), len);
	return 0;
}

struct sk_buff *srff_user_skb_new(const void *bytes, unsigned int len,
				  unsigned int headlen)
{
	struct sk_buff *skb = calloc(1, sizeof(*skb));

	if (!skb)
		return NULL;
	if (headlen > len)
		headlen = len;
	skb->len = len;
	skb->data_len = len - headlen;
	/* Exact sizes, even 0: ASan reports any byte read past either. */
	skb->data = malloc(headlen);
	skb->frag = malloc(skb->data_len);
	if ((!skb->data && headlen) || (!skb->frag && skb->data_len)) {
		srff_user_skb_free(skb);
		return NULL;
	}
	if (headlen)
		memcpy(skb->data, bytes, headlen);
	if (skb->data_len)
		memcpy(skb->frag, (const u8 *)bytes + headlen, skb->data_len);
	return skb;
}

void srff_user_skb_free(struct sk_buff *skb)
{
	if (!skb)
		return;
	free(skb->data);
	free(skb->frag);
	free(skb);
}
