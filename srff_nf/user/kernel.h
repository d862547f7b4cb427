/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for the kernel API that flowkey.c, band.h and table.c
 * use (compat.h includes this file when __KERNEL__ is not defined). It
 * provides exactly that subset, with the kernel's semantics, plus a few
 * hooks (prefixed srff_user_) that tests, the fuzzer and the benchmark use
 * to observe or perturb it. What differs from the kernel, and why:
 *
 * - struct sk_buff is {head, rest}: skb->data holds skb_headlen() bytes, and
 *   skb->frag the data_len bytes after them (one "page fragment"). Both can
 *   be allocated to their exact size (srff_user_skb_new), so AddressSanitizer
 *   flags any read past either. skb_header_pointer() is the kernel's code:
 *   a pointer into the head when the range is in it, else a copy through
 *   skb_copy_bits(), else NULL. The one deviation: the model has no headroom,
 *   so a negative offset or length WARNs and returns NULL where the kernel
 *   would read the headroom.
 * - RCU: rcu_read_lock() is a no-op and call_rcu() only queues the callback
 *   (through the rcu_head itself, no allocation). The grace period ends when
 *   the caller says so, with synchronize_rcu() or rcu_barrier(), which run
 *   the queued callbacks. Single-threaded callers therefore see real RCU
 *   lifetimes: an unlinked flow stays readable until the grace period ends,
 *   and is freed then. Readers on other threads are waited for only if they
 *   register as quiescent-state readers (srff_user_rcu_register(), for the
 *   benchmark's resize measurement; call_rcu() is then still single-threaded).
 * - Spinlocks are test-and-set locks that remember their owner thread, so
 *   lockdep_assert_held() really checks that the caller holds the lock. _bh
 *   variants are the plain ones (no softirqs here). sizeof(spinlock_t) is 16
 *   here, 4 in a kernel without lock debugging.
 * - kmem_cache_alloc()/kvcalloc() are malloc()/calloc(). Live objects are
 *   counted (srff_user_slab_live, srff_user_kv_live) so tests can prove that
 *   nothing leaks or is allocated past a cap, and the next allocations can
 *   be made to fail (srff_user_slab_fail_nth, srff_user_kv_fail_nth).
 * - jiffies is a plain global the caller advances; HZ is 250, the value of
 *   Debian's amd64 kernels. cond_resched() counts its calls and calls
 *   srff_user_resched_hook, so a benchmark can time the stretches between.
 * - WARN_ON() prints file:line, counts in srff_user_warnings and, with
 *   srff_user_warn_abort set (the fuzzer), aborts.
 *
 * Uses the kernel's uapi headers for the packet header structs and IPPROTO_*
 * values: never include glibc's <netinet/...> or <arpa/inet.h> alongside.
 */
#ifndef _SRFF_USER_KERNEL_H
#define _SRFF_USER_KERNEL_H

#ifdef __KERNEL__
#error "user/kernel.h is the user-space shim; the kernel build uses the real headers"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <limits.h>

#include <linux/types.h>
#include <asm/byteorder.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

/* ---- types, attributes, compiler helpers ------------------------------ */

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;
typedef unsigned int gfp_t;
typedef unsigned int slab_flags_t;

#define __aligned(x)		__attribute__((__aligned__(x)))
#define __must_check		__attribute__((__warn_unused_result__))
#define __always_unused		__attribute__((__unused__))
#define __rcu
#define __percpu
#define SMP_CACHE_BYTES		64
#define ____cacheline_aligned_in_smp	__aligned(SMP_CACHE_BYTES)

#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), #cond)
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)						\
	do { *(volatile __typeof__(x) *)&(x) = (val); } while (0)

#define __same_type(a, b)	__builtin_types_compatible_p(__typeof__(a), __typeof__(b))

#define container_of(ptr, type, member) ({				\
	void *__mptr = (void *)(ptr);					\
	_Static_assert(__same_type(*(ptr), ((type *)0)->member) ||	\
		       __same_type(*(ptr), void),			\
		       "pointer type mismatch in container_of()");	\
	((type *)((char *)__mptr - offsetof(type, member))); })

/* The kernel's typecheck(): a type mismatch is a (fatal, -Werror) warning. */
#define typecheck(type, x) ({						\
	type __dummy;							\
	__typeof__(x) __dummy2;						\
	(void)(&__dummy == &__dummy2);					\
	1; })

#define min_t(type, x, y) ({						\
	type __min1 = (x);						\
	type __min2 = (y);						\
	__min1 < __min2 ? __min1 : __min2; })
#define max_t(type, x, y) ({						\
	type __max1 = (x);						\
	type __max2 = (y);						\
	__max1 > __max2 ? __max1 : __max2; })
#define min(x, y)		((x) < (y) ? (x) : (y))
#define max(x, y)		((x) > (y) ? (x) : (y))
#define U64_MAX			((u64)~0ULL)
#define div64_u64(a, b)		((u64)(a) / (u64)(b))
#define clamp_t(type, val, lo, hi)	min_t(type, max_t(type, val, lo), hi)

#define BITS_PER_LONG		(sizeof(long) * CHAR_BIT)

/* ---- WARN_ON ---------------------------------------------------------- */

extern unsigned long srff_user_warnings;	/* WARN_ONs that fired */
extern bool srff_user_warn_abort;		/* abort() on a WARN (fuzzer) */
void srff_user_warn(const char *file, int line, const char *cond);

#define WARN_ON(condition) ({						\
	int __ret_warn_on = !!(condition);				\
	if (unlikely(__ret_warn_on))					\
		srff_user_warn(__FILE__, __LINE__, #condition);	\
	unlikely(__ret_warn_on); })

/* ---- errors ----------------------------------------------------------- */

#define MAX_ERRNO		4095
#define IS_ERR_VALUE(x)		unlikely((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)

static inline void *__must_check ERR_PTR(long error)
{
	return (void *)error;
}

static inline long __must_check PTR_ERR(const void *ptr)
{
	return (long)ptr;
}

static inline bool __must_check IS_ERR(const void *ptr)
{
	return IS_ERR_VALUE((unsigned long)ptr);
}

/* ---- byte order, address families ------------------------------------- */

#define htons(x)		__cpu_to_be16(x)
#define ntohs(x)		__be16_to_cpu(x)
#define htonl(x)		__cpu_to_be32(x)
#define ntohl(x)		__be32_to_cpu(x)

#ifndef AF_INET
#define AF_INET			2
#endif
#ifndef AF_INET6
#define AF_INET6		10
#endif

/* ---- log2 ------------------------------------------------------------- */

/* As the kernel's: the position of the highest set bit, 1-based; 0 for 0. */
static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* As the kernel's; 0 gives 1 here, where the kernel's is undefined. */
static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	return n <= 1 ? 1UL : 1UL << (BITS_PER_LONG - __builtin_clzl(n - 1));
}

/* ---- atomics and bit operations ---------------------------------------- */

typedef struct { int counter; } atomic_t;
typedef struct { s64 counter; } atomic64_t;

#define ATOMIC_INIT(i)		{ (i) }

static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic_set(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic_inc(atomic_t *v)
{
	__atomic_fetch_add(&v->counter, 1, __ATOMIC_RELAXED);
}

static inline void atomic_dec(atomic_t *v)
{
	__atomic_fetch_sub(&v->counter, 1, __ATOMIC_RELAXED);
}

/* Value-returning atomics are fully ordered, as in the kernel. */
static inline int atomic_inc_return(atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST);
}

static inline s64 atomic64_read(const atomic64_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic64_set(atomic64_t *v, s64 i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic64_add(s64 i, atomic64_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic64_inc(atomic64_t *v)
{
	__atomic_fetch_add(&v->counter, 1, __ATOMIC_RELAXED);
}

static inline s64 atomic64_fetch_add(s64 i, atomic64_t *v)
{
	return __atomic_fetch_add(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline void atomic64_sub(s64 i, atomic64_t *v)
{
	__atomic_fetch_sub(&v->counter, i, __ATOMIC_RELAXED);
}

static inline s64 atomic64_xchg(atomic64_t *v, s64 i)
{
	return __atomic_exchange_n(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline void atomic_add(int i, atomic_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic_sub(int i, atomic_t *v)
{
	__atomic_fetch_sub(&v->counter, i, __ATOMIC_RELAXED);
}

/* cmpxchg(): fully ordered, returns the value found, as the kernel's. */
#define cmpxchg(ptr, old, new) ({					\
	__typeof__(*(ptr)) __old = (old);				\
	__atomic_compare_exchange_n((ptr), &__old, (new), false,	\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	__old; })

#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)

/* Fully ordered on success; on failure *old is what was found. */
static inline bool atomic_try_cmpxchg(atomic_t *v, int *old, int new)
{
	return __atomic_compare_exchange_n(&v->counter, old, new, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

static inline void set_bit(long nr, volatile unsigned long *addr)
{
	__atomic_fetch_or(addr + nr / BITS_PER_LONG,
			  1UL << (nr % BITS_PER_LONG), __ATOMIC_RELAXED);
}

static inline void clear_bit(long nr, volatile unsigned long *addr)
{
	__atomic_fetch_and(addr + nr / BITS_PER_LONG,
			   ~(1UL << (nr % BITS_PER_LONG)), __ATOMIC_RELAXED);
}

/* Acquire on success, as the kernel's. */
static inline bool test_and_set_bit_lock(long nr, volatile unsigned long *addr)
{
	unsigned long m = 1UL << (nr % BITS_PER_LONG);

	return __atomic_fetch_or(addr + nr / BITS_PER_LONG, m,
				 __ATOMIC_ACQUIRE) & m;
}

static inline void clear_bit_unlock(long nr, volatile unsigned long *addr)
{
	__atomic_fetch_and(addr + nr / BITS_PER_LONG,
			   ~(1UL << (nr % BITS_PER_LONG)), __ATOMIC_RELEASE);
}

static inline bool test_bit(long nr, const volatile unsigned long *addr)
{
	return (__atomic_load_n(addr + nr / BITS_PER_LONG, __ATOMIC_RELAXED) >>
		(nr % BITS_PER_LONG)) & 1;
}

/* ---- spinlocks --------------------------------------------------------- */

typedef struct {
	int locked;
	const void *owner;	/* srff_user_self() of the holder */
} spinlock_t;

const void *srff_user_self(void);

static inline void spin_lock_init(spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
	l->owner = NULL;
}

static inline void spin_lock(spinlock_t *l)
{
	/* Taking a lock we hold would spin forever: say so and stop. */
	if (WARN_ON(__atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
		    l->owner == srff_user_self()))
		__builtin_trap();
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#else
			;
#endif
	l->owner = srff_user_self();
}

static inline void spin_unlock(spinlock_t *l)
{
	WARN_ON(l->owner != srff_user_self());
	l->owner = NULL;
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#define spin_lock_bh(l)		spin_lock(l)
#define spin_unlock_bh(l)	spin_unlock(l)

/* Not a no-op: a caller that does not hold @l is a WARN. */
#define lockdep_assert_held(l)						\
	WARN_ON(!__atomic_load_n(&(l)->locked, __ATOMIC_RELAXED) ||	\
		(l)->owner != srff_user_self())

/* Mutexes are the spinlocks above: nothing here sleeps. */
struct mutex {
	spinlock_t lock;
};

#define mutex_init(m)		spin_lock_init(&(m)->lock)
#define mutex_destroy(m)	WARN_ON(__atomic_load_n(&(m)->lock.locked, __ATOMIC_RELAXED))
#define mutex_lock(m)		spin_lock(&(m)->lock)
#define mutex_unlock(m)		spin_unlock(&(m)->lock)
#define might_sleep()		do { } while (0)

/* ---- hlist, RCU hlist -------------------------------------------------- */

struct hlist_head {
	struct hlist_node *first;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

/* As in the kernel: a deleted node points at unmapped addresses. */
#define LIST_POISON1		((void *)0x100)
#define LIST_POISON2		((void *)0x122)

#define HLIST_HEAD_INIT		{ .first = NULL }
#define INIT_HLIST_HEAD(ptr)	((ptr)->first = NULL)

static inline void INIT_HLIST_NODE(struct hlist_node *h)
{
	h->next = NULL;
	h->pprev = NULL;
}

static inline bool hlist_unhashed(const struct hlist_node *h)
{
	return !h->pprev;
}

static inline int hlist_empty(const struct hlist_head *h)
{
	return !READ_ONCE(h->first);
}

static inline void __hlist_del(struct hlist_node *n)
{
	struct hlist_node *next = n->next;
	struct hlist_node **pprev = n->pprev;

	WRITE_ONCE(*pprev, next);
	if (next)
		WRITE_ONCE(next->pprev, pprev);
}

#define hlist_entry(ptr, type, member)	container_of(ptr, type, member)

#define hlist_entry_safe(ptr, type, member) ({				\
	__typeof__(ptr) ____ptr = (ptr);				\
	____ptr ? hlist_entry(____ptr, type, member) : NULL; })

#define hlist_for_each_entry_safe(pos, n, head, member)			\
	for (pos = hlist_entry_safe((head)->first, __typeof__(*pos), member);\
	     pos && ({ n = pos->member.next; 1; });			\
	     pos = hlist_entry_safe(n, __typeof__(*pos), member))

#define rcu_read_lock()		do { } while (0)
#define rcu_read_unlock()	do { } while (0)
#define rcu_dereference_raw(p)	__atomic_load_n(&(p), __ATOMIC_CONSUME)
#define rcu_dereference(p)	rcu_dereference_raw(p)
/* The condition is lockdep's; there is no lockdep here. */
#define rcu_dereference_check(p, c)	rcu_dereference_raw(p)
#define rcu_dereference_protected(p, c)	rcu_dereference_raw(p)
#define rcu_access_pointer(p)	__atomic_load_n(&(p), __ATOMIC_RELAXED)
#define RCU_INIT_POINTER(p, v)	__atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#define rcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

#define hlist_first_rcu(head)	(*((struct hlist_node __rcu **)(&(head)->first)))
#define hlist_next_rcu(node)	(*((struct hlist_node __rcu **)(&(node)->next)))

static inline void hlist_add_head_rcu(struct hlist_node *n,
				      struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	n->next = first;
	WRITE_ONCE(n->pprev, &h->first);
	rcu_assign_pointer(hlist_first_rcu(h), n);
	if (first)
		WRITE_ONCE(first->pprev, &n->next);
}

static inline void hlist_del_rcu(struct hlist_node *n)
{
	__hlist_del(n);
	WRITE_ONCE(n->pprev, LIST_POISON2);
}

/* The optional trailing argument is the kernel's lockdep condition. */
#define hlist_for_each_entry_rcu(pos, head, member, cond...)		\
	for (pos = hlist_entry_safe(rcu_dereference_raw(hlist_first_rcu(head)),\
				    __typeof__(*(pos)), member);	\
	     pos;							\
	     pos = hlist_entry_safe(rcu_dereference_raw(hlist_next_rcu(	\
				    &(pos)->member)), __typeof__(*(pos)), member))

struct callback_head {
	struct callback_head *next;
	void (*func)(struct callback_head *head);
};
#define rcu_head callback_head
typedef void (*rcu_callback_t)(struct rcu_head *head);

/* Queue @func; it runs at the next synchronize_rcu() or rcu_barrier(). */
void call_rcu(struct rcu_head *head, rcu_callback_t func);
void synchronize_rcu(void);
void rcu_barrier(void);
extern unsigned long srff_user_rcu_pending;	/* callbacks queued */
/* Readers on other threads (benchmarks; kernel.c says how). */
void srff_user_rcu_register(void);
void srff_user_rcu_quiescent(void);
void srff_user_rcu_offline(void);

/* ---- memory ------------------------------------------------------------ */

#define GFP_KERNEL		0x01u
#define GFP_ATOMIC		0x02u
#define __GFP_NOWARN		0x04u
#define __GFP_ACCOUNT		0x08u
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)

struct kmem_cache {
	const char *name;
	size_t size;
	size_t align;
	long live;		/* objects allocated and not freed */
};

struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags,
				     void (*ctor)(void *));
#define KMEM_CACHE(__struct, __flags)					\
	kmem_cache_create(#__struct, sizeof(struct __struct),		\
			  __alignof__(struct __struct), (__flags), NULL)
void *kmem_cache_alloc(struct kmem_cache *s, gfp_t flags);
void kmem_cache_free(struct kmem_cache *s, void *obj);
/* WARNs (as the kernel does) when objects remain; NULL is fine. */
void kmem_cache_destroy(struct kmem_cache *s);

void *kvcalloc(size_t n, size_t size, gfp_t flags);
void kvfree(const void *p);
#define kvzalloc(size, flags)	kvcalloc(1, (size), (flags))
#define struct_size(p, member, n)					\
	(sizeof(*(p)) + sizeof((p)->member[0]) * (size_t)(n))

/*
 * Per-CPU data: SRFF_USER_NR_CPUS copies, SRFF_USER_PCPU_STRIDE bytes
 * apart in one kvcalloc() (as the kernel's per-CPU chunks are, one offset
 * for every variable of a CPU). Each thread stands in for one CPU, given
 * round-robin at its first per-CPU operation; two
 * threads may share one, so this_cpu ops are atomic.
 */
#define SRFF_USER_NR_CPUS	4
#define SRFF_USER_PCPU_STRIDE	4096
int srff_user_cpu(void);
void *srff_user_alloc_percpu(size_t size, gfp_t flags);
#define alloc_percpu_gfp(type, flags)	((type *)srff_user_alloc_percpu(sizeof(type), (flags)))
#define free_percpu(p)			kvfree(p)
#define per_cpu_ptr(p, cpu)						\
	((typeof(p))((char *)(p) + (size_t)(cpu) * SRFF_USER_PCPU_STRIDE))
#define this_cpu_ptr(p)			per_cpu_ptr(p, srff_user_cpu())
#define for_each_possible_cpu(cpu)	for ((cpu) = 0; (cpu) < SRFF_USER_NR_CPUS; (cpu)++)
#define num_possible_cpus()		SRFF_USER_NR_CPUS
/* The calling thread's copy of per-CPU lvalue @var. */
#define srff_user_this_cpu(var)	(*this_cpu_ptr(&(var)))
#define this_cpu_read(var)		__atomic_load_n(&srff_user_this_cpu(var), __ATOMIC_RELAXED)
#define this_cpu_add(var, val)		((void)__atomic_fetch_add(&srff_user_this_cpu(var), (val), __ATOMIC_RELAXED))
#define this_cpu_inc(var)		this_cpu_add(var, 1)
#define this_cpu_add_return(var, val)	__atomic_add_fetch(&srff_user_this_cpu(var), (val), __ATOMIC_RELAXED)
#define this_cpu_inc_return(var)	this_cpu_add_return(var, 1)
#define this_cpu_xchg(var, n)		__atomic_exchange_n(&srff_user_this_cpu(var), (n), __ATOMIC_RELAXED)
#define this_cpu_cmpxchg(var, o, n) ({					\
	typeof(var) __old = (o);					\
	__atomic_compare_exchange_n(&srff_user_this_cpu(var), &__old, (n), \
				    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
	__old;								\
})

extern long srff_user_slab_live;	/* objects live in all caches */
extern unsigned long srff_user_slab_allocs; /* kmem_cache_alloc() calls */
extern long srff_user_kv_live;		/* kvcalloc()s not kvfree()d */
/* When > 0: counts down on each allocation, which fails when it hits 0. */
extern int srff_user_slab_fail_nth;
extern int srff_user_kv_fail_nth;

/* ---- randomness, hashing ----------------------------------------------- */

void get_random_bytes(void *buf, size_t len);

typedef struct {
	u64 key[2];
} siphash_key_t;

/* SipHash-2-4, the kernel's siphash(): 64-bit output. */
u64 siphash(const void *data, size_t len, const siphash_key_t *key);

/* ---- time, scheduling -------------------------------------------------- */

#define HZ			250
#define USEC_PER_SEC		1000000UL
/* The kernel starts jiffies 5 minutes before the 32-bit wrap. */
#define INITIAL_JIFFIES		((unsigned long)(unsigned int)(-300 * HZ))

extern unsigned long jiffies;

#define time_after(a, b)						\
	(typecheck(unsigned long, a) && typecheck(unsigned long, b) &&	\
	 ((long)((b) - (a)) < 0))
#define time_before(a, b)	time_after(b, a)
#define time_after_eq(a, b)						\
	(typecheck(unsigned long, a) && typecheck(unsigned long, b) &&	\
	 ((long)((a) - (b)) >= 0))
#define time_before_eq(a, b)	time_after_eq(b, a)

/* SRFF_RACE_WINDOW() marks a point of the shared code where another CPU
 * may run: a test sets srff_user_race_hook to run that CPU's work there,
 * deterministically (the hook is cleared while it runs, so it runs once).
 */
extern void (*srff_user_race_hook)(void);
#define SRFF_RACE_WINDOW() do {						\
	void (*__hook)(void) = srff_user_race_hook;			\
	if (__hook) {							\
		srff_user_race_hook = NULL;				\
		__hook();						\
	}								\
} while (0)

static inline u64 jiffies64_to_msecs(u64 j)
{
	return j * 1000 / HZ;	/* HZ divides 1000 */
}

extern unsigned long srff_user_resched_calls;
extern void (*srff_user_resched_hook)(void);

static inline int cond_resched(void)
{
	srff_user_resched_calls++;
	if (srff_user_resched_hook)
		srff_user_resched_hook();
	return 0;
}

/* ---- sk_buff ------------------------------------------------------------ */

struct skb_shared_info {
	unsigned short gso_size;	/* payload bytes per segment; 0: not GSO */
	unsigned short gso_segs;
};

struct sk_buff {
	unsigned char *data;	/* the linear head: skb_headlen() bytes */
	unsigned int len;	/* bytes in the packet, head and rest */
	unsigned int data_len;	/* bytes past the head, all in frag */
	unsigned char *frag;	/* those data_len bytes */
	u32 priority;
	struct skb_shared_info shinfo;
};

#define skb_shinfo(skb)		(&(skb)->shinfo)

static inline bool skb_is_gso(const struct sk_buff *skb)
{
	return skb->shinfo.gso_size;
}

#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))

static inline unsigned int skb_headlen(const struct sk_buff *skb)
{
	return skb->len - skb->data_len;
}

/* Copy @len bytes at @offset out of head and rest; -EFAULT if past len. */
int skb_copy_bits(const struct sk_buff *skb, int offset, void *to, int len);

static inline void *__must_check
__skb_header_pointer(const struct sk_buff *skb, int offset, int len,
		     const void *data, int hlen, void *buffer)
{
	/* No headroom in this model (see the top of the file). */
	if (WARN_ON(offset < 0 || len < 0))
		return NULL;
	if (likely(hlen - offset >= len))
		return (unsigned char *)data + offset;

	if (!skb || unlikely(skb_copy_bits(skb, offset, buffer, len) < 0))
		return NULL;

	return buffer;
}

static inline void *__must_check
skb_header_pointer(const struct sk_buff *skb, int offset, int len, void *buffer)
{
	return __skb_header_pointer(skb, offset, len, skb->data,
				    skb_headlen(skb), buffer);
}

/*
 * A packet of @len bytes copied from @bytes, the first @headlen (clamped to
 * @len) in the head and the rest in the fragment, each buffer allocated to
 * its exact size. NULL when out of memory.
 */
struct sk_buff *srff_user_skb_new(const void *bytes, unsigned int len,
				  unsigned int headlen);
void srff_user_skb_free(struct sk_buff *skb);

/* Tracepoints (srff_nf/trace.h) are the kernel's: nothing here. */
#define trace_srff_flow_create(t, key)		do { (void)(t); (void)(key); } while (0)
#define trace_srff_flow_retire(t, f, bytes, now, why)	\
	do { (void)(t); (void)(f); (void)(bytes); (void)(now); (void)(why); } while (0)

#endif /* _SRFF_USER_KERNEL_H */
