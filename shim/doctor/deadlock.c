/* SPDX-License-Identifier: MIT */
/*
 * The deadlock watchdog (deadlock.h).  Each tick it takes a snapshot of
 * the threads, notes since when each waiting thread has been seen waiting
 * in the same wait (its wait_seq: a thread seen at two ticks with the same
 * odd sequence has waited all along), and follows, from each thread that
 * has waited the threshold, the chain "waits for L, which T holds, which
 * waits for L2, ...": a chain that comes back to its start, every thread
 * on it past the threshold, is a deadlock.  Each (thread, wait) is
 * reported at most once.
 *
 * A thread's view is consistent while it is blocked, and every thread of a
 * reported cycle has been blocked in the same wait for the whole
 * threshold, so a running thread's changing stack can make the watchdog
 * miss a cycle for a tick, never report a false one: it ends a chain (a
 * holder that does not wait).  Threshold granularity: the tick (1 s, or
 * the threshold if shorter); the wait shown is at least the threshold.
 */
#define _GNU_SOURCE
#include "deadlock.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/atomic.h"
#include "core/futex.h"
#include "symbolize.h"

static dl_snapshot_fn dl_snap;
static dl_describe_fn dl_describe;
static uint64_t dl_after_ns = 10ull * 1000000000ull;
static int dl_started;

static struct dl_view dl_views[DL_THREADS];

/* Since when each waiting thread has been seen in its wait. */
struct dl_seen {
	int32_t tid;
	bool reported;
	uint64_t seq, since_ns;
};
static struct dl_seen dl_seen[DL_THREADS], dl_seen_next[DL_THREADS];
static unsigned dl_nseen;

static const char *const dl_kind_name[] = { "mutex", "rwlock (read)", "rwlock (write)",
					    "spinlock" };

static const char *kind_name(uint32_t k)
{
	return k < sizeof(dl_kind_name) / sizeof(dl_kind_name[0]) ? dl_kind_name[k] : "lock";
}

struct out {
	char buf[8192];
	size_t len;
};

static void out_add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len + 1 >= sizeof(o->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < sizeof(o->buf) - o->len ? (size_t)n : sizeof(o->buf) - o->len - 1;
}

/* The entry by which thread view h holds `lock`, or NULL. */
static const struct dl_held *holds(const struct dl_view *h, uintptr_t lock)
{
	for (unsigned i = 0; i < h->nheld && i < DL_HELD; i++)
		if (h->held[i].lock == lock)
			return &h->held[i];
	return NULL;
}

/* Does the waiter of `kind` wait for holder entry e?  A reader waits for
 * a writer only (a reader that waits behind a queued writer is not
 * followed: the chain ends there). */
static bool blocks(uint32_t wait_kind, const struct dl_held *e)
{
	return wait_kind != DL_RWLOCK_READ || e->kind != DL_RWLOCK_READ;
}

/* Does v[cur], a read that queues behind waiting writers, wait for v[j],
 * a writer waiting for the same rwlock? */
static bool queued_behind(const struct dl_view *v, unsigned cur, unsigned j)
{
	return v[cur].wait_behind && j != cur && v[j].wait_lock == v[cur].wait_lock &&
	       v[j].wait_kind == DL_RWLOCK_WRITE;
}

/* The blocking holder of what v[cur] waits for (or, for a read of a
 * writer-preferring rwlock, a writer it queues behind): an index, -1 if
 * there is none or one of them is not stuck (then nothing is certain). */
static int holder_of(const struct dl_view *v, const uint64_t *waited, unsigned n,
		     unsigned cur, uint64_t min_wait, int prefer)
{
	int found = -1;

	for (unsigned j = 0; j < n; j++) {
		const struct dl_held *e = holds(&v[j], v[cur].wait_lock);

		if ((!e || !blocks(v[cur].wait_kind, e)) && !queued_behind(v, cur, j))
			continue;
		if (waited[j] < min_wait)
			return -1; /* a holder that runs will unlock */
		if (found < 0 || (int)j == prefer)
			found = (int)j;
	}
	return found;
}

static void describe_lock(uintptr_t lock, uint32_t kind, char *buf, size_t len)
{
	char extra[320];

	extra[0] = '\0';
	if (dl_describe)
		dl_describe(lock, kind, extra, sizeof(extra));
	snprintf(buf, len, "%s %#lx%s%s%s", kind_name(kind), (unsigned long)lock,
		 extra[0] ? " (" : "", extra, extra[0] ? ")" : "");
}

static void report_cycle(const struct dl_view *v, const uint64_t *waited, const int *path,
			 unsigned len)
{
	struct out o = { .len = 0 };
	uint64_t least = UINT64_MAX;

	for (unsigned i = 0; i < len; i++)
		if (waited[path[i]] < least)
			least = waited[path[i]];
	if (len == 1)
		out_add(&o, "libqlock-pthread: deadlock: thread %d has waited %.1f s for a lock it holds itself:\n",
			(int)v[path[0]].tid, least / 1e9);
	else
		out_add(&o, "libqlock-pthread: deadlock: %u threads have each waited %.1f s or more, in a cycle:\n",
			len, least / 1e9);
	for (unsigned i = 0; i < len; i++) {
		const struct dl_view *t = &v[path[i]];
		const struct dl_view *h = &v[path[(i + 1) % len]];
		const struct dl_held *e = holds(h, t->wait_lock);
		char lock[512], at[256], held_at[256];

		describe_lock(t->wait_lock, t->wait_kind, lock, sizeof(lock));
		shim_symbolize((const void *)t->wait_pc, at, sizeof(at));
		out_add(&o, "libqlock-pthread:   thread %d waits for %s\n", (int)t->tid, lock);
		out_add(&o, "libqlock-pthread:       at %s\n", at);
		if (e && blocks(t->wait_kind, e) && e->pc) {
			shim_symbolize((const void *)e->pc, held_at, sizeof(held_at));
			out_add(&o, "libqlock-pthread:     held by thread %d (%s), locked at %s\n",
				(int)h->tid, kind_name(e->kind), held_at);
		} else if (e && blocks(t->wait_kind, e)) { /* where is not known */
			out_add(&o, "libqlock-pthread:     held by thread %d (%s)\n", (int)h->tid,
				kind_name(e->kind));
		} else if (h->wait_lock == t->wait_lock) {
			shim_symbolize((const void *)h->wait_pc, held_at, sizeof(held_at));
			out_add(&o, "libqlock-pthread:     queued behind thread %d, which waits to "
				"write it at %s (a writer-preferring rwlock)\n", (int)h->tid, held_at);
		}
	}
	if (len == 1)
		out_add(&o, "libqlock-pthread:   hint: unlock it first, or make it a recursive mutex if the re-entry is meant\n");
	else
		out_add(&o, "libqlock-pthread:   hint: take these locks in one order everywhere; --lockdep reports every order that can deadlock, before it hangs\n");
	(void)!write(STDERR_FILENO, o.buf, o.len);
}

static void tick(uint64_t now)
{
	static uint64_t waited[DL_THREADS];
	static int path[DL_THREADS];
	unsigned n, nnext = 0;

	for (unsigned i = 0; i < DL_THREADS; i++)
		dl_views[i].wait_behind = 0; /* a source may not set it */
	n = dl_snap(dl_views, DL_THREADS);

	if (n > DL_THREADS)
		n = DL_THREADS;
	/* How long has each thread been in its current wait? */
	for (unsigned i = 0; i < n; i++) {
		const struct dl_view *t = &dl_views[i];
		struct dl_seen s = { t->tid, false, t->wait_seq, now };

		waited[i] = 0;
		if (!t->wait_lock)
			continue;
		for (unsigned k = 0; k < dl_nseen; k++)
			if (dl_seen[k].tid == t->tid && dl_seen[k].seq == t->wait_seq) {
				s = dl_seen[k];
				break;
			}
		waited[i] = now - s.since_ns;
		dl_seen_next[nnext++] = s;
	}
	memcpy(dl_seen, dl_seen_next, nnext * sizeof(dl_seen[0]));
	dl_nseen = nnext;

	for (unsigned i = 0; i < n; i++) {
		unsigned len = 0;
		int cur = (int)i;
		bool cycle = false;

		if (!dl_views[i].wait_lock || waited[i] < dl_after_ns)
			continue;
		path[len++] = cur;
		while (len < n + 1) {
			int h = holder_of(dl_views, waited, n, (unsigned)cur, dl_after_ns, (int)i);
			bool seen = false;

			if (h < 0)
				break;
			if (h == (int)i) {
				cycle = true;
				break;
			}
			for (unsigned k = 0; k < len; k++)
				seen |= path[k] == h;
			if (seen || !dl_views[h].wait_lock)
				break;
			path[len++] = h;
			cur = h;
		}
		if (!cycle)
			continue;
		/* Once per (thread, wait): skip a cycle already shown. */
		bool shown = false;
		for (unsigned k = 0; k < len; k++)
			for (unsigned s = 0; s < dl_nseen; s++)
				if (dl_seen[s].tid == dl_views[path[k]].tid &&
				    dl_seen[s].seq == dl_views[path[k]].wait_seq && dl_seen[s].reported)
					shown = true;
		if (shown)
			continue;
		report_cycle(dl_views, waited, path, len);
		for (unsigned k = 0; k < len; k++)
			for (unsigned s = 0; s < dl_nseen; s++)
				if (dl_seen[s].tid == dl_views[path[k]].tid &&
				    dl_seen[s].seq == dl_views[path[k]].wait_seq)
					dl_seen[s].reported = true;
	}
}

bool shim_peek(void *dst, const volatile void *src, size_t n)
{
	static int refused;
	struct iovec to = { dst, n }, from = { (void *)(uintptr_t)src, n };

	if (!qa_read(&refused)) {
		ssize_t got = process_vm_readv(getpid(), &to, 1, &from, 1, 0);

		if (got == (ssize_t)n)
			return true;
		if (got >= 0 || (errno != ENOSYS && errno != EPERM))
			return false; /* EFAULT: not mapped */
		qa_write(&refused, 1);
	}
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return true;
}

static void *watchdog(void *arg)
{
	uint64_t step = dl_after_ns < 1000000000ull ? dl_after_ns : 1000000000ull;
	struct timespec ts = { (time_t)(step / 1000000000ull), (long)(step % 1000000000ull) };

	(void)arg;
	for (;;) {
		syscall(SYS_nanosleep, &ts, NULL); /* not the drop-in's (offcpu.c) */
		tick(qc_now_ns());
	}
	return NULL;
}

void shim_deadlock_arm(void)
{
	int expect = 0;
	pthread_t th;
	pthread_attr_t a;
	sigset_t all, old;

	if (qa_likely(qa_read(&dl_started) != 0) || !qa_read(&dl_snap))
		return;
	if (!qa_try_cmpxchg_relaxed(&dl_started, &expect, 1))
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_attr_init(&a) == 0) {
		(void)pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		(void)pthread_attr_setstacksize(&a, 256 * 1024);
		if (pthread_create(&th, &a, watchdog, NULL) != 0)
			qa_write(&dl_started, 2); /* could not: stays off */
		(void)pthread_attr_destroy(&a);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void shim_deadlock_setup(dl_snapshot_fn snap, dl_describe_fn describe)
{
	const char *v = getenv("QLOCK_DEADLOCK_AFTER");

	if (v && *v) {
		char *end;
		double s = strtod(v, &end);

		if (*end || s < 0 || s > 1e6) {
			fprintf(stderr, "libqlock-pthread: QLOCK_DEADLOCK_AFTER=%s: not a number of "
				"seconds; the deadlock report stays at %.0f s\n", v,
				dl_after_ns / 1e9);
		} else if (s == 0) {
			return; /* off */
		} else {
			dl_after_ns = (uint64_t)(s * 1e9);
		}
	}
	dl_describe = describe;
	qa_write(&dl_snap, snap);
}
