// SPDX-License-Identifier: GPL-2.0
/*
 * threshold_sim: one bottleneck link, flows sent as skbs through srff's
 * bands, for experiments/threshold_study.py.
 *
 *   arrivals (Poisson, load rho) -> hook: band = #thresholds <= bytes the
 *   flow enqueued before this skb -> strict priority over the bands, each
 *   band a leaf: fifo | fair (SCFQ) | fq (SCFQ + fq_codel's new-flow boost)
 *   -> link of rate R, one skb at a time (non-preemptive)
 *
 * A flow keeps at most `window` bytes in the qdisc (TSQ: about two 64 KB
 * skbs), at least one skb; it refills when one of its skbs has left the
 * link. Its first skb is at most `first` bytes (a GSO super-packet of the
 * initial window), the later ones at most `later` bytes. leaf=srpt is the
 * ideal reference: one skb per flow queued, the smallest remaining flow
 * first (non-preemptive per skb).
 *
 * Jobs are read from stdin, one per line of key=value words; every job
 * prints one JSON line. Keys (defaults in brackets):
 *   dist=cdf:PATH | pareto:ALPHA:LOW:HIGH   sizes (CDF file: "bytes cum")
 *   load=RHO [0.8]  rate=BYTES_PER_S [12.5e6]  seed=N [1]
 *   dist2=... at=T load2=RHO [load]   from time T on, arrivals draw their
 *                      sizes from dist2 at load2 (a change of mix)
 *   warm=N [2000] meas=N [30000]   flows [warm, warm+meas) are measured;
 *                                   arrivals go on until they all finish
 *   thr=T1,T2,... []  leaf=fifo|fair|fq|srpt [fq]
 *   first=B [14600] later=B [64240] window=B [131072]
 *   trace=t:s,t:s,...   explicit arrivals (time s, size bytes): all measured
 *   sample=N           print N sizes (one per line), no simulation
 *   drr=Q0,Q1,...      the bands share the link by deficit round robin with
 *                      these quanta (bytes, one per band, as ETS's) instead
 *                      of strict priority; quantum 0: a strict band, before
 *                      every DRR band (ETS's `strict N`: a prefix of zeros)
 *   assured=R0,R1,...  strict priority, but a band still within its assured
 *                      rate (bytes/s; tokens up to one 64 KB skb) goes
 *                      first, highest first, and only then pays tokens:
 *                      what it borrows beyond its rate costs it none (HTB
 *                      classes with prio per band and a small rate each,
 *                      under the shaper: htb_charge_class)
 *   las=PERIOD,N[,MODE[,SHIFT]]
 *                      thresholds from the live flows instead of thr=: every
 *                      PERIOD s, N thresholds from the bytes the active
 *                      flows have enqueued (a candidate rule, not in
 *                      srff_nf/auto.h: srff's bucket layout and 16 KiB
 *                      floor), installed at once. MODE 0 [default]: count
 *                      quantiles (k+1)/(N+1) of all active flows; 1: the
 *                      floor, then quantiles k/N of the active flows past
 *                      it (las_step). The histogram loses a 2^-SHIFT share
 *                      each period [1: halved]; SHIFT 0: only the flows
 *                      active now
 *   thrlog=1           report the thresholds at time 0 and at every las
 *                      recomputation (thr_log:
 *                      [time, t1, ...], the first at time 0)
 *   tmax=T             stop at time T; flows not done are left out
 *   small=B [100000] big=B [1000000]  bins: < small, [small, big), >= big
 * Besides FCTs it reports the flows >= big's stalls: the longest time one
 * waited with an skb queued and none sent (stall_big_max_ms), and the mean
 * of each one's longest (stall_big_mean_ms).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BANDS	16
#define MAX_CDF		4096
#define MAX_TRACE	4096

enum leaf { LEAF_FIFO, LEAF_FAIR, LEAF_FQ, LEAF_SRPT };

struct dist {
	int pareto;
	double alpha, lo, hi;			/* bounded Pareto */
	int ncdf;
	double cx[MAX_CDF], cp[MAX_CDF];	/* piecewise-linear CDF */
};

struct job {
	struct dist d, d2;			/* sizes; after `at`, d2's */
	double at, load2;
	double load, rate;
	uint64_t seed;
	long warm, meas, sample;
	int nthr;
	double thr[MAX_BANDS];
	enum leaf leaf;
	double first, later, window;
	double small, big;
	int ntrace;
	double tt[MAX_TRACE], ts[MAX_TRACE];
	double las_period;
	int las_n, las_mode, las_shift;
	int thrlog;
	double tmax;
	int ndrr;
	double drr[MAX_BANDS];
	int nassured;
	double assured[MAX_BANDS];
};

/* xoshiro256** seeded by splitmix64: the same stream on every machine. */
static uint64_t rs[4];

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_seed(uint64_t s)
{
	for (int i = 0; i < 4; i++)
		rs[i] = splitmix(&s);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static double rng_u(void)	/* [0, 1) */
{
	uint64_t r = rotl(rs[1] * 5, 7) * 9, t = rs[1] << 17;

	rs[2] ^= rs[0]; rs[3] ^= rs[1]; rs[1] ^= rs[2]; rs[0] ^= rs[3];
	rs[2] ^= t; rs[3] = rotl(rs[3], 45);
	return (r >> 11) * 0x1.0p-53;
}

static double size_mean(const struct dist *j)
{
	if (j->pareto) {
		double a = j->alpha, l = j->lo, h = j->hi;

		return pow(l, a) / (1 - pow(l / h, a)) * a / (a - 1) *
		       (pow(l, 1 - a) - pow(h, 1 - a));
	}
	double m = 0;

	for (int i = 1; i < j->ncdf; i++)
		m += (j->cp[i] - j->cp[i - 1]) * (j->cx[i] + j->cx[i - 1]) / 2;
	return m + j->cp[0] * j->cx[0];
}

static double size_draw(const struct dist *j)
{
	double u = rng_u(), x;

	if (j->pareto) {
		double a = j->alpha, l = j->lo, h = j->hi;

		x = l / pow(1 - u * (1 - pow(l / h, a)), 1 / a);
	} else {
		int i = 1;

		if (u < j->cp[0]) {
			x = j->cx[0];
		} else {
			while (i < j->ncdf - 1 && u >= j->cp[i])
				i++;
			double dp = j->cp[i] - j->cp[i - 1];

			x = dp > 0 ? j->cx[i - 1] + (u - j->cp[i - 1]) / dp *
				     (j->cx[i] - j->cx[i - 1]) : j->cx[i];
		}
	}
	x = ceil(x);
	return x < 1 ? 1 : x;
}

/* An skb waiting in a band: ordered by (key, seq). */
struct skb {
	double key;
	uint64_t seq;
	long flow;
	double len;
};

struct heap {
	struct skb *a;
	long n, cap;
};

static int skb_less(const struct skb *x, const struct skb *y)
{
	return x->key < y->key || (x->key == y->key && x->seq < y->seq);
}

static void heap_push(struct heap *h, struct skb s)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->a = realloc(h->a, h->cap * sizeof(*h->a));
	}
	long i = h->n++;

	while (i > 0) {
		long p = (i - 1) / 2;

		if (!skb_less(&s, &h->a[p]))
			break;
		h->a[i] = h->a[p];
		i = p;
	}
	h->a[i] = s;
}

static struct skb heap_pop(struct heap *h)
{
	struct skb top = h->a[0], last = h->a[--h->n];
	long i = 0;

	for (;;) {
		long c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && skb_less(&h->a[c + 1], &h->a[c]))
			c++;
		if (!skb_less(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

struct flow {
	double size, enq, done, queued;	/* bytes */
	double arrival;
	double last_srv, max_gap;	/* its latest skb sent; longest wait */
	double last_f;			/* SCFQ finish tag in band last_band */
	int last_band;
	int nq[MAX_BANDS];		/* skbs queued per band */
};

static struct job J;
static struct flow *F;
static long nflows, capflows;
static struct heap bands[MAX_BANDS];
static double vtime[MAX_BANDS];
static uint64_t seq;
static double *fct, *fsize, *fgap;
static long nmeasured;

static double *thr_log;			/* thrlog=1: time, thresholds */
static long thr_log_n, thr_log_cap;

static void thr_log_add(double now)
{
	if (!J.thrlog)
		return;
	if (thr_log_n + MAX_BANDS > thr_log_cap) {
		thr_log_cap = thr_log_cap ? 2 * thr_log_cap : 4096;
		thr_log = realloc(thr_log, thr_log_cap * sizeof(*thr_log));
	}
	thr_log[thr_log_n++] = now;
	for (int k = 0; k < J.nthr; k++)
		thr_log[thr_log_n++] = J.thr[k];
}

static int band_of(double sent)
{
	int b = 0;

	while (b < J.nthr && J.thr[b] <= sent)
		b++;
	return b;
}

/* Put flow f's next skbs into the qdisc, as far as its window allows. */
static void flow_fill(long fi)
{
	struct flow *f = &F[fi];

	while (f->enq < f->size) {
		double len = f->size - f->enq, cap = f->enq ? J.later : J.first;

		if (len > cap)
			len = cap;
		if (f->queued > 0 && (J.leaf == LEAF_SRPT ||
				      f->queued + len > J.window))
			return;
		int b = J.leaf == LEAF_SRPT ? 0 : band_of(f->enq);
		struct skb s = { .seq = seq++, .flow = fi, .len = len };

		switch (J.leaf) {
		case LEAF_FIFO:
			s.key = 0;
			break;
		case LEAF_SRPT:
			s.key = f->size - f->enq;
			break;
		case LEAF_FAIR:
		case LEAF_FQ:
			if (f->last_band != b) {
				f->last_band = b;
				f->last_f = 0;
			}
			double start = f->last_f > vtime[b] ? f->last_f : vtime[b];

			f->last_f = start + len;
			/* fq_codel: a flow with nothing queued enters new_flows
			 * and its first skb goes before the old flows' */
			s.key = J.leaf == LEAF_FQ && !f->nq[b] ? -1 : f->last_f;
			break;
		}
		f->nq[b]++;
		f->queued += len;
		f->enq += len;
		heap_push(&bands[b], s);
	}
}

/* The band to send from next: the highest non-empty one, or by DRR. */
static double deficit[MAX_BANDS];
static int drr_cur, drr_turn;
static double tokens[MAX_BANDS], tokens_t;	/* assured=: bytes, as of */
static int within_rate;		/* band_next's pick was within its rate */

/* Every band's tokens brought to @now. */
static void tokens_fill(double now)
{
	for (int b = 0; b < J.nassured; b++) {
		tokens[b] += J.assured[b] * (now - tokens_t);
		if (tokens[b] > 65536)
			tokens[b] = 65536;
	}
	tokens_t = now;
}

static int band_next(void)
{
	int b = 0, nb = J.ndrr ? J.ndrr : J.nthr + 1;

	within_rate = 0;
	if (J.nassured) {	/* a band within its rate first, then strict */
		for (b = 0; b < nb; b++)
			if (bands[b].n && tokens[b] >= bands[b].a[0].len) {
				within_rate = 1;
				return b;
			}
		b = 0;
	}
	if (!J.ndrr) {
		while (b < nb && !bands[b].n)
			b++;
		return b < nb ? b : -1;
	}
	for (b = 0; b < nb && !J.drr[b]; b++)	/* the strict bands first */
		if (bands[b].n)
			return b;
	for (b = 0; b < nb && !bands[b].n; b++)
		;
	if (b == nb)
		return -1;
	for (;;) {
		struct heap *h = &bands[drr_cur];

		if (h->n && J.drr[drr_cur] > 0) {
			if (drr_turn) {		/* a new turn: one more quantum */
				deficit[drr_cur] += J.drr[drr_cur];
				drr_turn = 0;
			}
			if (deficit[drr_cur] >= h->a[0].len) {
				deficit[drr_cur] -= h->a[0].len;
				return drr_cur;
			}
		} else {
			deficit[drr_cur] = 0;	/* an empty band keeps nothing */
		}
		drr_cur = (drr_cur + 1) % nb;
		drr_turn = 1;
	}
}

static double next_arrival_time;
static double lambda;

static int arrivals_left(void)
{
	return J.ntrace ? nflows < J.ntrace : 1;
}

static void flow_arrive(double now)
{
	if (nflows == capflows) {
		capflows = capflows ? 2 * capflows : 65536;
		F = realloc(F, capflows * sizeof(*F));
	}
	struct flow *f = &F[nflows];

	memset(f, 0, sizeof(*f));
	f->arrival = now;
	f->last_band = -1;
	f->size = J.ntrace ? J.ts[nflows] :
		  size_draw(J.at > 0 && now >= J.at ? &J.d2 : &J.d);
	nflows++;
	flow_fill(nflows - 1);
	if (J.ntrace) {
		next_arrival_time = nflows < J.ntrace ? J.tt[nflows] : INFINITY;
		return;
	}
	next_arrival_time = now - log(1 - rng_u()) / lambda;
	if (J.at > 0 && now < J.at && next_arrival_time >= J.at) {
		/* the second mix from `at` on: Poisson, memoryless */
		lambda = J.load2 * J.rate / size_mean(&J.d2);
		next_arrival_time = J.at - log(1 - rng_u()) / lambda;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pct(double *v, long n, double p)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	long i = (long)ceil(p * n) - 1;

	return v[i < 0 ? 0 : i];
}

/* JSON has no nan: Python's json reads NaN */
static void pnum(const char *sep, const char *fmt, double v)
{
	fputs(sep, stdout);
	if (isnan(v))
		fputs("NaN", stdout);
	else
		printf(fmt, v);
}

static void report(void)
{
	/* bins: 0 small, 1 medium, 2 large, 3 all */
	double n[4] = { 0 }, sf[4] = { 0 }, ss[4] = { 0 }, ss2[4] = { 0 };
	double *sfct = malloc((nmeasured + 1) * sizeof(double));
	double *ssd = malloc((nmeasured + 1) * sizeof(double));
	long ns = 0;

	for (long i = 0; i < nmeasured; i++) {
		if (!fsize[i])
			continue;	/* not done by tmax */
		double sd = fct[i] / (fsize[i] / J.rate);
		int b = fsize[i] < J.small ? 0 : fsize[i] < J.big ? 1 : 2;

		for (int k = 0; k < 2; k++) {
			int bb = k ? 3 : b;

			n[bb]++;
			sf[bb] += fct[i];
			ss[bb] += sd;
			ss2[bb] += sd * sd;
		}
		if (!b) {
			sfct[ns] = fct[i];
			ssd[ns++] = sd;
		}
	}
	printf("{\"flows\": %ld, \"n\": [%.0f, %.0f, %.0f, %.0f]", nflows,
	       n[0], n[1], n[2], n[3]);
	printf(", \"fct_ms\": [");
	for (int b = 0; b < 4; b++)
		pnum(b ? ", " : "", "%.6g", n[b] ? 1e3 * sf[b] / n[b] : NAN);
	printf("], \"sd\": [");
	for (int b = 0; b < 4; b++)
		pnum(b ? ", " : "", "%.6g", n[b] ? ss[b] / n[b] : NAN);
	/* standard error of the mean slowdown (i.i.d. approximation) */
	printf("], \"sd_se\": [");
	for (int b = 0; b < 4; b++) {
		double m = n[b] ? ss[b] / n[b] : 0;
		double var = n[b] > 1 ? (ss2[b] - n[b] * m * m) / (n[b] - 1) : 0;

		pnum(b ? ", " : "", "%.4g", n[b] > 1 ? sqrt(var / n[b]) : NAN);
	}
	pnum("], \"p99_small_fct_ms\": ", "%.6g", 1e3 * pct(sfct, ns, 0.99));
	pnum(", \"p99_small_sd\": ", "%.6g", pct(ssd, ns, 0.99));
	{	/* the large flows' stalls: how long one waited without service */
		double mx = 0, sum = 0;
		long nb = 0;

		for (long i = 0; i < nmeasured; i++)
			if (fsize[i] && fsize[i] >= J.big) {
				mx = fgap[i] > mx ? fgap[i] : mx;
				sum += fgap[i];
				nb++;
			}
		pnum(", \"stall_big_max_ms\": ", "%.6g", nb ? 1e3 * mx : NAN);
		pnum(", \"stall_big_mean_ms\": ", "%.6g", nb ? 1e3 * sum / nb : NAN);
	}
	if (J.thrlog) {
		int w = 1 + J.nthr;

		printf(", \"thr_log\": [");
		for (long i = 0; i + w <= thr_log_n; i += w) {
			printf("%s[%.9g", i ? ", " : "", thr_log[i]);
			for (int k = 1; k < w; k++)
				printf(", %.0f", thr_log[i + k]);
			printf("]");
		}
		printf("]");
	}
	printf(", \"fct\": [");
	if (J.ntrace)
		for (long i = 0; i < nmeasured; i++)
			printf("%s%.9g", i ? ", " : "", fct[i]);
	printf("]}\n");
	free(sfct);
	free(ssd);
}


/* srff_nf/sizes.h's buckets, and the live-table rule (las=, a candidate
 * that srff_nf/auto.h does not have), in doubles. */
#define LAS_BUCKETS	128
#define LAS_FLOOR	16384.0
#define LAS_SHIFT	8

static int las_bucket(double bytes)
{
	uint64_t u = (uint64_t)bytes >> 8;
	int msb, b;

	if (u < 4)
		return u;
	msb = 63 - __builtin_clzll(u);
	b = ((msb - 1) << 2) | ((u >> (msb - 2)) & 3);
	return b < LAS_BUCKETS - 1 ? b : LAS_BUCKETS - 1;
}

static double las_low(int b)
{
	if (b < 4)
		return (double)b * 256;
	int msb = (b >> 2) + 1, sub = b & 3;

	return ldexp(4 | sub, msb - 2) * 256;
}

static uint64_t las_hist[LAS_BUCKETS];	/* decayed, << LAS_SHIFT */
static double las_next;
static long las_first;			/* flows before it are all done */

/*
 * The live-table rule, every las_period. Mode 0 (band_study's las): the
 * N thresholds at the count quantiles (k+1)/(N+1) of the bytes every
 * active flow has enqueued, the first at least the floor. Mode 1: the
 * first threshold is the floor; the N-1 others at the count quantiles
 * k/N (k = 1..N-1) of the active flows past the floor, each the low bound
 * of the bucket that holds it (a flow at the quantile is at or past it;
 * those below are served first). Either over a histogram that keeps
 * what it held less a 2^-las_shift share each period (mode 0: halved;
 * las_shift 0: the active flows now, nothing older). With no active flow
 * to count, the thresholds stay.
 */
static void las_step(double now)
{
	uint64_t live[LAS_BUCKETS] = { 0 }, n = 0, cum, need;
	double t[MAX_BANDS];
	int b, k, k0 = J.las_mode ? 1 : 0;
	double past = J.las_mode ? LAS_FLOOR : 0;

	while (las_first < nflows && F[las_first].done >= F[las_first].size)
		las_first++;
	for (long i = las_first; i < nflows; i++)
		if (F[i].done < F[i].size && F[i].enq >= past)
			live[las_bucket(F[i].enq)]++;
	for (b = 0; b < LAS_BUCKETS; b++) {
		if (!J.las_shift)
			las_hist[b] = 0;
		else
			las_hist[b] -= las_hist[b] >> J.las_shift;
		las_hist[b] += live[b] << LAS_SHIFT;
		n += las_hist[b];
	}
	las_next = now + J.las_period;
	if (!n)
		return;
	t[0] = LAS_FLOOR;
	for (k = k0, b = 0, cum = 0; k < J.las_n; k++) {
		if (J.las_mode) {	/* the first bucket reaching k/N */
			need = (n * k + J.las_n - 1) / J.las_n;
			while (b < LAS_BUCKETS - 1 && cum + las_hist[b] < need)
				cum += las_hist[b++];
		} else {
			need = n * (k + 1) / (J.las_n + 1);
			while (b < LAS_BUCKETS - 1 && cum + las_hist[b] <= need)
				cum += las_hist[b++];
		}
		t[k] = las_low(b);
		if (!k && t[k] < LAS_FLOOR)
			t[k] = LAS_FLOOR;
		if (k && t[k] <= t[k - 1])
			t[k] = las_low(las_bucket(t[k - 1]) + 1);
	}
	memcpy(J.thr, t, sizeof(t[0]) * J.las_n);
	J.nthr = J.las_n;
	thr_log_add(now);
}

static void simulate(void)
{
	long first_meas = J.ntrace ? 0 : J.warm;
	long nmeas = J.ntrace ? J.ntrace : J.meas;
	long done_meas = 0;
	double now = 0, tx_end = 0;
	int busy = 0;
	struct skb cur = { 0 };

	nflows = 0;
	seq = 0;
	for (int b = 0; b < MAX_BANDS; b++) {
		bands[b].n = 0;
		vtime[b] = 0;
		deficit[b] = 0;
		tokens[b] = 65536;
	}
	tokens_t = 0;
	drr_cur = 0;
	drr_turn = 1;
	rng_seed(J.seed);
	memset(las_hist, 0, sizeof(las_hist));
	las_first = 0;
	las_next = J.las_period;
	if (J.las_n) {			/* before any flow: the floor ladder */
		J.nthr = J.las_n;
		for (int k = 0; k < J.las_n; k++)
			J.thr[k] = k ? las_low(las_bucket(J.thr[k - 1]) + 1) : LAS_FLOOR;
	}
	thr_log_n = 0;
	thr_log_add(0);
	lambda = J.load * J.rate / size_mean(&J.d);
	fct = calloc(nmeas, sizeof(double));
	fsize = calloc(nmeas, sizeof(double));
	fgap = calloc(nmeas, sizeof(double));
	nmeasured = nmeas;
	next_arrival_time = J.ntrace ? J.tt[0] : -log(1 - rng_u()) / lambda;

	while (done_meas < nmeas) {
		int queued = 0;

		if (J.tmax > 0 && now >= J.tmax)
			break;		/* the flows not done are left out */

		for (int b = 0; b < MAX_BANDS && !queued; b++)
			queued = bands[b].n > 0;
		if (J.las_n && las_next <= next_arrival_time &&
		    (busy ? las_next <= tx_end : !queued)) {
			now = las_next;
			las_step(now);
			continue;
		}
		if (busy && tx_end <= next_arrival_time) {
			struct flow *f = &F[cur.flow];

			now = tx_end;
			busy = 0;
			f->queued -= cur.len;
			f->done += cur.len;
			if (f->done >= f->size) {
				long i = cur.flow - first_meas;

				if (i >= 0 && i < nmeas) {
					fct[i] = now - f->arrival;
					fsize[i] = f->size;
					fgap[i] = f->max_gap;
					done_meas++;
				}
			} else {
				flow_fill(cur.flow);
			}
			continue;
		}
		if (!busy && queued && next_arrival_time > now) {
			if (J.nassured)
				tokens_fill(now);
			int b = band_next();

			cur = heap_pop(&bands[b]);
			{	/* a flow always has an skb queued: a wait is a stall */
				struct flow *f = &F[cur.flow];
				double since = f->last_srv > 0 ? f->last_srv : f->arrival;

				if (now - since > f->max_gap)
					f->max_gap = now - since;
				f->last_srv = now;
			}
			F[cur.flow].nq[b]--;
			if (J.leaf == LEAF_FAIR || J.leaf == LEAF_FQ)
				if (cur.key >= 0)
					vtime[b] = cur.key;
			busy = 1;
			tx_end = now + cur.len / J.rate;
			if (within_rate)
				tokens[b] -= cur.len;
			continue;
		}
		if (!arrivals_left() || next_arrival_time == INFINITY) {
			fprintf(stderr, "threshold_sim: stuck\n");
			exit(1);
		}
		now = next_arrival_time;
		flow_arrive(now);
	}
	report();
	free(fct);
	free(fsize);
	free(fgap);
}

static void parse_list(const char *s, double *out, int *n, int max)
{
	*n = 0;
	while (*s && *n < max) {
		char *end;

		out[(*n)++] = strtod(s, &end);
		if (end == s)
			break;
		s = *end == ',' ? end + 1 : end;
	}
}

/* "pareto:ALPHA:LOW:HIGH" or "cdf:PATH" into @d; -1 if neither. */
static int parse_dist(const char *v, struct dist *d)
{
	memset(d, 0, sizeof(*d));
	if (!strncmp(v, "pareto:", 7)) {
		d->pareto = 1;
		return sscanf(v + 7, "%lf:%lf:%lf", &d->alpha, &d->lo,
			      &d->hi) == 3 ? 0 : -1;
	}
	if (!strncmp(v, "cdf:", 4)) {
		FILE *fp = fopen(v + 4, "r");
		char buf[256];

		if (!fp)
			return -1;
		while (fgets(buf, sizeof(buf), fp) && d->ncdf < MAX_CDF)
			if (buf[0] != '#' &&
			    sscanf(buf, "%lf %lf", &d->cx[d->ncdf],
				   &d->cp[d->ncdf]) == 2)
				d->ncdf++;
		fclose(fp);
		return d->ncdf >= 2 ? 0 : -1;
	}
	return -1;
}

static int parse_job(char *line)
{
	memset(&J, 0, sizeof(J));
	J.load = 0.8;
	J.rate = 12.5e6;
	J.seed = 1;
	J.warm = 2000;
	J.meas = 30000;
	J.leaf = LEAF_FQ;
	J.first = 14600;
	J.later = 64240;
	J.window = 131072;
	J.small = 100000;
	J.big = 1000000;
	for (char *w = strtok(line, " \t\n"); w; w = strtok(NULL, " \t\n")) {
		char *v = strchr(w, '=');

		if (!v)
			goto bad;
		*v++ = 0;
		if (!strcmp(w, "dist") || !strcmp(w, "dist2")) {
			if (parse_dist(v, w[4] ? &J.d2 : &J.d) < 0)
				goto bad;
		} else if (!strcmp(w, "at")) {
			J.at = atof(v);
		} else if (!strcmp(w, "load2")) {
			J.load2 = atof(v);
		} else if (!strcmp(w, "thrlog")) {
			J.thrlog = atoi(v);
		} else if (!strcmp(w, "tmax")) {
			J.tmax = atof(v);
		} else if (!strcmp(w, "load")) {
			J.load = atof(v);
		} else if (!strcmp(w, "rate")) {
			J.rate = atof(v);
		} else if (!strcmp(w, "seed")) {
			J.seed = strtoull(v, NULL, 10);
		} else if (!strcmp(w, "warm")) {
			J.warm = atol(v);
		} else if (!strcmp(w, "meas")) {
			J.meas = atol(v);
		} else if (!strcmp(w, "sample")) {
			J.sample = atol(v);
		} else if (!strcmp(w, "drr")) {
			parse_list(v, J.drr, &J.ndrr, MAX_BANDS);
			for (int b = 0; b < J.ndrr; b++)
				if (!(J.drr[b] >= 0) || (b && !J.drr[b] &&
							 J.drr[b - 1] > 0))
					goto bad;	/* zeros: a prefix */
			if (J.ndrr && !J.drr[J.ndrr - 1])
				goto bad;		/* one DRR band at least */
		} else if (!strcmp(w, "assured")) {
			parse_list(v, J.assured, &J.nassured, MAX_BANDS);
			for (int b = 0; b < J.nassured; b++)
				if (!(J.assured[b] >= 0))
					goto bad;
		} else if (!strcmp(w, "las")) {
			J.las_shift = 1;
			if (sscanf(v, "%lf,%d,%d,%d", &J.las_period, &J.las_n,
				   &J.las_mode, &J.las_shift) < 2 ||
			    J.las_period <= 0 || J.las_n < 1 ||
			    J.las_n > MAX_BANDS - 1 || J.las_mode < 0 ||
			    J.las_mode > 1 || J.las_shift < 0 ||
			    J.las_shift > 16)
				goto bad;
		} else if (!strcmp(w, "thr")) {
			parse_list(v, J.thr, &J.nthr, MAX_BANDS - 1);
		} else if (!strcmp(w, "leaf")) {
			J.leaf = !strcmp(v, "fifo") ? LEAF_FIFO :
				 !strcmp(v, "fair") ? LEAF_FAIR :
				 !strcmp(v, "fq") ? LEAF_FQ :
				 !strcmp(v, "srpt") ? LEAF_SRPT : -1;
			if ((int)J.leaf < 0)
				goto bad;
		} else if (!strcmp(w, "first")) {
			J.first = atof(v);
		} else if (!strcmp(w, "later")) {
			J.later = atof(v);
		} else if (!strcmp(w, "window")) {
			J.window = atof(v);
		} else if (!strcmp(w, "small")) {
			J.small = atof(v);
		} else if (!strcmp(w, "big")) {
			J.big = atof(v);
		} else if (!strcmp(w, "trace")) {
			for (char *p = v; *p && J.ntrace < MAX_TRACE;) {
				char *end;

				J.tt[J.ntrace] = strtod(p, &end);
				if (*end != ':')
					goto bad;
				J.ts[J.ntrace++] = strtod(end + 1, &end);
				p = *end == ',' ? end + 1 : end;
			}
		} else {
			goto bad;
		}
	}
	if (J.leaf == LEAF_SRPT && (J.nthr || J.las_n || J.ndrr || J.nassured))
		goto bad;
	int nbands = (J.las_n ? J.las_n : J.nthr) + 1;

	if (J.ndrr && J.ndrr != nbands)
		goto bad;		/* a quantum per band */
	if (J.nassured && (J.ndrr || J.nassured != nbands))
		goto bad;		/* a rate per band, over strict */
	if (!J.ntrace && !J.d.pareto && J.d.ncdf < 2)
		goto bad;
	if (J.at > 0 && !J.d2.pareto && J.d2.ncdf < 2)
		goto bad;		/* a switch needs its second mix */
	if (!J.load2)
		J.load2 = J.load;
	return 0;
bad:
	printf("{\"error\": \"bad job\"}\n");
	return -1;
}

int main(void)
{
	static char line[1 << 16];

	while (fgets(line, sizeof(line), stdin)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (parse_job(line) < 0) {
			fflush(stdout);
			continue;
		}
		if (J.sample) {
			rng_seed(J.seed);
			for (long i = 0; i < J.sample; i++)
				printf("%.0f\n", size_draw(&J.d));
			printf("end\n");
		} else {
			simulate();
		}
		fflush(stdout);
	}
	return 0;
}
