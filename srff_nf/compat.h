/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flowkey.c, band.h and table.c build both in the kernel and in user space
 * (unit tests, fuzzing, native benchmarks). In the kernel this header pulls
 * in the real APIs; in user space, user/kernel.h provides the small subset
 * those files use, with the same semantics (see that file for the limits).
 */
#ifndef _SRFF_COMPAT_H
#define _SRFF_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/rcupdate.h>
#include <linux/rculist.h>
#include <linux/atomic.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/siphash.h>
#include <linux/jiffies.h>
#include <linux/random.h>
#include <linux/log2.h>
#include <linux/err.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/limits.h>
#include <net/ip.h>
#include <linux/version.h>
#include <net/genetlink.h>

/* A dump's attributes, parsed and validated by the core against the op's
 * policy (genl_start). 6.6 moved them into a struct genl_info.
 */
static inline struct nlattr **srff_dumpit_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/* User-space tests run another "CPU" here to force an interleaving. */
#define SRFF_RACE_WINDOW()	do { } while (0)
#else
#include "user/kernel.h"
#endif

/*
 * Sum per-CPU copies of a struct made of u64 counters, @size bytes, into
 * @out, which it overwrites (with zeros when @pcpu is NULL: copies not
 * allocated yet count nothing). Any context: a counter read while its CPU adds
 * to it is read whole on a 64-bit kernel (on a 32-bit one the two halves may
 * tear, for a moment) but may be a moment old.
 */
static inline void srff_pcpu_sum_u64(u64 *out, const void __percpu *pcpu,
				     size_t size)
{
	unsigned int cpu;
	size_t i;

	memset(out, 0, size);
	if (!pcpu)
		return;
	for_each_possible_cpu(cpu) {
		const u64 *src = per_cpu_ptr(pcpu, cpu);

		for (i = 0; i < size / sizeof(u64); i++)
			out[i] += READ_ONCE(src[i]);
	}
}

#endif /* _SRFF_COMPAT_H */
