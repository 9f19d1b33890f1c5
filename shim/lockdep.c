/* SPDX-License-Identifier: MIT */
/*
 * Lock-order checking (QLOCK_LOCKDEP=1|abort, qlock-run --lockdep), in
 * the spirit of the kernel's lockdep, for unmodified programs.
 *
 * Lock classes.  A lock belongs to the class of the call that initialised
 * it (the pthread_*_init call site); a lock used without an init call is
 * classed by its address when that is inside a loaded module (a static
 * PTHREAD_MUTEX_INITIALIZER lock: one class per lock), else by the site
 * of its first acquisition (a heap lock set with an initialiser).  A table
 * of lock instances (address -> class) gives a lock's class; destroy
 * forgets it, so memory reused for another lock gets that lock's class.
 *
 * Held locks: a per-thread stack (struct ld_thread, lockdep.h), bounded
 * to LD_MAX_DEPTH entries; deeper locks are not tracked (said once).
 *
 * Dependencies: taking lock class B (not by trylock, which cannot block)
 * while holding class A records the edge A -> B in a graph of classes.  A
 * new edge is first checked for a path back from B to A: if one exists,
 * the edge would close a cycle and the cycle is reported with the threads
 * and call sites that made each of its edges (the edge is then not
 * added, so the graph stays acyclic and each new way of closing a cycle
 * is reported once).  As in the kernel, the held stack has a running
 * hash (its chain key); the chain key together with the class and mode
 * being taken is looked up in a lock-free set of chains already checked,
 * so once a program's lock nesting patterns have been seen, an
 * acquisition costs that one look-up.  Nesting two locks of one class (an
 * array of locks initialised at one call site) adds no edge: the order
 * between them is not known to the checker.
 *
 * Read locks: an edge records the mode its first lock is held in (read or
 * write) and the mode the second waits in: exclusive, read of a
 * writer-preferring rwlock (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP,
 * which waits behind queued writers), or read of a reader-preferring one
 * (glibc's default, which waits only for a writer).  A cycle is reported
 * only if every lock in it can block its waiter: a reader-preferring read
 * does not wait for readers.
 *
 * Memory: one mmap'd arena of fixed tables made at set-up (no malloc:
 * malloc takes locks of its own, and lock paths must not recurse).  A
 * full table is reported once and its additions stop.
 *
 * Reports go to stderr or to QLOCK_LOCKDEP_FILE, each in one write(2),
 * once per distinct problem; QLOCK_LOCKDEP=abort aborts after the first.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lockdep.h"
#include "shim.h" /* the objects' layouts */
#include "symbolize.h"

bool shim_lockdep_on;
static bool ld_abort;
static int ld_fd = STDERR_FILENO;

#define LD_INST_SLOTS (1u << 20)   /* lock instances (power of two) */
#define LD_MAX_CLASSES 8192u
#define LD_CLASS_SLOTS (2 * LD_MAX_CLASSES)
#define LD_MAX_EDGES 32768u
#define LD_CHAIN_SLOTS (1u << 16)
#define LD_ONCE_SLOTS 4096u
#define LD_MAX_THREADS 4096u
#define LD_PROBES 64

enum ld_origin { LD_ORIGIN_INIT, LD_ORIGIN_STATIC, LD_ORIGIN_USE };
enum ld_type { LD_TYPE_MUTEX, LD_TYPE_RWLOCK, LD_TYPE_SPIN };

struct ld_inst {
	const void *lock;  /* 0 = free slot; never freed once claimed */
	uint32_t cls;      /* 0 = to be derived at the next use */
	uint32_t pad;
};

struct ld_class {
	uintptr_t key;     /* init or first-use site, or the static address */
	uint8_t origin, type;
	uint32_t edges;    /* first outgoing edge (graph lock) */
};

struct ld_edge {
	uint32_t from, to, next;
	uint8_t combos;    /* bit hold * 3 + wait, every pair of modes seen */
	uint8_t hold, wait; /* the modes of the first one, described below */
	int32_t tid;
	char comm[16];
	uintptr_t pc_from, pc_to; /* where the held lock, then this one, were taken */
};

/* The BFS of a cycle check: a state is a class and the mode it is waited
 * for in; vis[] stamps the states seen in the current search. */
struct ld_state {
	uint32_t cls;
	uint8_t wait;
	int32_t parent;
	uint32_t edge;
};

static struct ld_arena {
	struct ld_inst inst[LD_INST_SLOTS];
	struct ld_class cls[LD_MAX_CLASSES];
	uint32_t cls_hash[LD_CLASS_SLOTS];
	struct ld_edge edge[LD_MAX_EDGES];
	uint64_t chain[LD_CHAIN_SLOTS];
	uint64_t once[LD_ONCE_SLOTS];
	struct ld_thread thr[LD_MAX_THREADS];
	uint32_t vis[LD_MAX_CLASSES * 3];
	struct ld_state queue[LD_MAX_CLASSES * 3];
	char buf[16384]; /* a report (report lock) */
} *A;

static uint32_t ld_nclasses = 1; /* class 0 = none */
static uint32_t ld_nedges = 1;   /* edge 0 = none */
static uint32_t ld_vis_gen;
static uint64_t ld_nchains, ld_nreports;
static int ld_graph_lock, ld_rep_lock;
static struct ld_thread *ld_thread_list;
static pthread_key_t ld_key;

static __thread struct ld_thread *ld_me __attribute__((tls_model("initial-exec")));
static __thread int ld_busy __attribute__((tls_model("initial-exec")));

/* The lock's address (pthread_spinlock_t is volatile; only the address is used). */
#define LD_PTR(v) ((const void *)(uintptr_t)(v))

/* ---- small helpers ------------------------------------------------------ */

/* The graph's and the report buffer's locks: short, rare sections (a new
 * class or dependency, a report); no pthread lock may be used here. */
static void ld_spin_lock(int *l)
{
	int z = 0;

	while (!qa_try_cmpxchg_acquire(l, &z, 1)) {
		z = 0;
		sched_yield();
	}
}

static void ld_spin_unlock(int *l)
{
	qa_write_release(l, 0); /* pairs with the cmpxchg_acquire above */
}

static inline uint64_t ld_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return x ? x : 1;
}

static inline uint64_t ld_chain_add(uint64_t chain, uint32_t cls, unsigned tag)
{
	return ld_mix(chain * 31 + ((uint64_t)cls << 4 | tag));
}

/* A lock-free set of 64-bit keys (never 0): true if key was added now. */
static bool ld_set_add(uint64_t *set, uint32_t slots, uint64_t key, bool *full)
{
	uint32_t i = (uint32_t)(key >> 20) & (slots - 1);

	for (int n = 0; n < LD_PROBES; n++, i = (i + 1) & (slots - 1)) {
		uint64_t cur = qa_read(&set[i]);

		if (cur == key)
			return false;
		if (cur == 0) {
			if (qa_try_cmpxchg_relaxed(&set[i], &cur, key))
				return true;
			if (cur == key)
				return false;
		}
	}
	if (full)
		*full = true;
	return false;
}

static bool ld_set_has(const uint64_t *set, uint32_t slots, uint64_t key)
{
	uint32_t i = (uint32_t)(key >> 20) & (slots - 1);

	for (int n = 0; n < LD_PROBES; n++, i = (i + 1) & (slots - 1)) {
		uint64_t cur = qa_read(&set[i]);

		if (cur == key)
			return true;
		if (cur == 0)
			return false;
	}
	return false;
}

/* First time for this problem key? (A full set says yes: better a repeat
 * than a lost report.) */
static bool ld_once(uint64_t key)
{
	bool full = false;

	return ld_set_add(A->once, LD_ONCE_SLOTS, ld_mix(key), &full) || full;
}

static int32_t ld_gettid(void)
{
	return (int32_t)syscall(SYS_gettid);
}

static void ld_comm_self(char name[16])
{
	memset(name, 0, 16);
	if (prctl(PR_GET_NAME, name) != 0)
		strcpy(name, "?");
}

static enum ld_type ld_type_of(enum ld_obj obj)
{
	return obj == LD_MUTEX ? LD_TYPE_MUTEX : obj == LD_SPIN ? LD_TYPE_SPIN : LD_TYPE_RWLOCK;
}

static const char *const ld_type_name[] = { "mutex", "rwlock", "spinlock" };

/* ---- symbols ------------------------------------------------------------ */

/* A code address (a return address) as the shim's symbolizer names it:
 * "function (file:line)", "function+0xoff (module)" or "module+0xoff"
 * (symbolize.h).  It takes no pthread lock, so a report may call it from
 * inside a lock call. */
static void ld_sym(uintptr_t pc, char *buf, size_t len)
{
	shim_symbolize((const void *)pc, buf, len);
}

/* A data address (a static lock) as "symbol (module)" or "module+0xoff". */
static void ld_data_sym(uintptr_t addr, char *buf, size_t len)
{
	Dl_info di;

	if (dladdr((void *)addr, &di) && di.dli_fname) {
		const char *mod = strrchr(di.dli_fname, '/');

		mod = mod ? mod + 1 : di.dli_fname;
		if (di.dli_sname && di.dli_saddr == (void *)addr)
			snprintf(buf, len, "%s (%s)", di.dli_sname, mod);
		else
			snprintf(buf, len, "%s+%#lx", mod,
				 (unsigned long)(addr - (uintptr_t)di.dli_fbase));
		return;
	}
	snprintf(buf, len, "%#lx", (unsigned long)addr);
}

void lockdep_class_name(uint32_t c, char *buf, unsigned long len)
{
	char s[256];

	if (!A || c == 0 || c >= qa_read_acquire(&ld_nclasses)) {
		snprintf(buf, len, "(untracked lock)");
		return;
	}
	const struct ld_class *k = &A->cls[c];
	const char *t = ld_type_name[k->type];

	switch (k->origin) {
	case LD_ORIGIN_INIT:
		ld_sym(k->key, s, sizeof s);
		snprintf(buf, len, "%s initialised at %s", t, s);
		break;
	case LD_ORIGIN_STATIC:
		ld_data_sym(k->key, s, sizeof s);
		snprintf(buf, len, "static %s %s", t, s);
		break;
	default:
		ld_sym(k->key, s, sizeof s);
		snprintf(buf, len, "%s first taken at %s (no init call seen)", t, s);
		break;
	}
}

/* ---- reports ------------------------------------------------------------ */

struct ld_out {
	size_t len;
};

static void ld_add(struct ld_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ld_add(struct ld_out *o, const char *fmt, ...)
{
	size_t size = sizeof A->buf;
	va_list ap;
	int n;

	if (o->len + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(A->buf + o->len, size - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < size - o->len ? (size_t)n : size - o->len - 1;
}

static void ld_begin(struct ld_out *o)
{
	ld_spin_lock(&ld_rep_lock);
	o->len = 0;
}

static void ld_add_held(struct ld_out *o, const struct ld_thread *t)
{
	char c[320], s[256];

	if (!t || t->depth == 0) {
		ld_add(o, "  locks held by this thread: none\n");
		return;
	}
	ld_add(o, "  locks held by this thread (oldest first):\n");
	for (uint32_t i = 0; i < t->depth; i++) {
		const struct ld_held *h = &t->held[i];

		lockdep_class_name(h->cls, c, sizeof c);
		ld_sym(h->pc, s, sizeof s);
		ld_add(o, "    %p %s%s, taken at %s%s\n", h->lock,
		       h->obj == LD_RWLOCK_READ ? "read: " :
		       h->obj == LD_RWLOCK_WRITE ? "write: " : "", c, s,
		       h->trylock ? " (trylock)" : "");
	}
}

static void ld_end(struct ld_out *o)
{
	ld_add(o, "\n");
	(void)!write(ld_fd, A->buf, o->len);
	qa_fetch_add_relaxed(&ld_nreports, 1);
	ld_spin_unlock(&ld_rep_lock);
	if (ld_abort) {
		static const char m[] = "qlock-lockdep: aborting (QLOCK_LOCKDEP=abort)\n";

		(void)!write(ld_fd, m, sizeof m - 1);
		abort();
	}
}

static void ld_header(struct ld_out *o, const char *what)
{
	char comm[16];

	ld_comm_self(comm);
	ld_add(o, "qlock-lockdep: %s\n  thread \"%s\" (tid %d)\n", what, comm,
	       (int)ld_gettid());
}

/* Said once per table. */
static void ld_full(const char *what)
{
	char msg[200];
	int n = snprintf(msg, sizeof msg,
			 "qlock-lockdep: %s table full: %s are no longer tracked "
			 "(reported once)\n", what, what);

	(void)!write(ld_fd, msg, (size_t)n);
}

/* ---- classes and instances ---------------------------------------------- */

static uint32_t ld_class_find(uintptr_t key, enum ld_origin o, enum ld_type t,
			      uint32_t *slot)
{
	uint32_t i = (uint32_t)(ld_mix(key * 4 + o) >> 20) & (LD_CLASS_SLOTS - 1);

	for (int n = 0; n < LD_PROBES; n++, i = (i + 1) & (LD_CLASS_SLOTS - 1)) {
		uint32_t c = qa_read_acquire(&A->cls_hash[i]);

		if (c == 0) {
			*slot = i;
			return 0;
		}
		if (A->cls[c].key == key && A->cls[c].origin == o && A->cls[c].type == t)
			return c;
	}
	*slot = UINT32_MAX;
	return 0;
}

static uint32_t ld_class_get(uintptr_t key, enum ld_origin o, enum ld_type t)
{
	static bool full;
	uint32_t slot, c = ld_class_find(key, o, t, &slot);

	if (c)
		return c;
	ld_spin_lock(&ld_graph_lock);
	c = ld_class_find(key, o, t, &slot);
	if (!c && slot != UINT32_MAX && ld_nclasses < LD_MAX_CLASSES) {
		c = ld_nclasses;
		A->cls[c].key = key;
		A->cls[c].origin = (uint8_t)o;
		A->cls[c].type = (uint8_t)t;
		A->cls[c].edges = 0;
		qa_write_release(&ld_nclasses, c + 1);
		/* The class is filled before it is published: pairs with
		 * the read_acquire in ld_class_find(). */
		qa_write_release(&A->cls_hash[slot], c);
	} else if (!c && !full) {
		full = true;
		ld_full("lock class");
	}
	ld_spin_unlock(&ld_graph_lock);
	return c;
}

/* The instance slot of `lock`, claimed if new; NULL when the table is full. */
static struct ld_inst *ld_inst_slot(const void *lock, bool claim)
{
	static bool full;
	/* one multiply: the hot path's look-up (Fibonacci hashing) */
	uint32_t i = (uint32_t)(((uintptr_t)lock >> 3) * 0x9e3779b97f4a7c15ull >> 40) &
		     (LD_INST_SLOTS - 1);

	for (int n = 0; n < LD_PROBES; n++, i = (i + 1) & (LD_INST_SLOTS - 1)) {
		struct ld_inst *e = &A->inst[i];
		const void *cur = qa_read(&e->lock);

		if (cur == lock)
			return e;
		if (cur == NULL) {
			if (!claim)
				return NULL;
			if (qa_try_cmpxchg_relaxed(&e->lock, &cur, lock) || cur == lock)
				return e;
		}
	}
	if (claim && !full) {
		full = true;
		ld_full("lock instance");
	}
	return NULL;
}

/* The class of `lock`, derived at its first use if no init call named it. */
static uint32_t ld_class_of(const void *lock, enum ld_obj obj, uintptr_t pc)
{
	struct ld_inst *e = ld_inst_slot(lock, true);
	uint32_t c, z = 0;
	Dl_info di;

	if (!e)
		return 0;
	c = qa_read_acquire(&e->cls);
	if (qa_likely(c))
		return c;
	if (dladdr(lock, &di) && di.dli_fname)
		c = ld_class_get((uintptr_t)lock, LD_ORIGIN_STATIC, ld_type_of(obj));
	else
		c = ld_class_get(pc, LD_ORIGIN_USE, ld_type_of(obj));
	if (c && !qa_try_cmpxchg_release(&e->cls, &z, c))
		c = z; /* another thread derived it first */
	return c;
}

void lockdep_init(const volatile void *vlock, enum ld_obj obj, uintptr_t pc)
{
	const void *lock = LD_PTR(vlock);

	if (ld_busy)
		return;
	ld_busy = 1;
	uint32_t c = ld_class_get(pc, LD_ORIGIN_INIT, ld_type_of(obj));
	struct ld_inst *e = c ? ld_inst_slot(lock, true) : NULL;

	if (e)
		qa_write_release(&e->cls, c);
	ld_busy = 0;
}

/* ---- threads ------------------------------------------------------------- */

static void ld_thread_exit(void *p)
{
	struct ld_thread *t = p;

	if (t != ld_me)
		return;
	ld_me = NULL;
	qa_write(&t->depth, 0u);
	t->chain = 0;
	t->lost = false;
	qa_write_release(&t->tid, 0); /* free for another thread */
}

static struct ld_thread *ld_thread_new(void)
{
	static bool full;
	int32_t tid = ld_gettid();

	for (uint32_t i = 0; i < LD_MAX_THREADS; i++) {
		struct ld_thread *t = &A->thr[i];
		int32_t z = 0;

		if (qa_read(&t->tid) != 0 || !qa_try_cmpxchg_acquire(&t->tid, &z, tid))
			continue;
		t->chain = 0;
		t->lost = false;
		qa_write(&t->depth, 0u);
		if (!t->linked) {
			t->linked = true;
			struct ld_thread *h = qa_read(&ld_thread_list);

			do /* pairs with the read_acquire in lockdep_threads() */
				t->next = h;
			while (!qa_try_cmpxchg_release(&ld_thread_list, &h, t));
		}
		ld_me = t;
		(void)pthread_setspecific(ld_key, t);
		return t;
	}
	if (!full) {
		full = true;
		ld_full("thread");
	}
	return NULL;
}

static inline struct ld_thread *ld_thread_get(void)
{
	struct ld_thread *t = ld_me;

	return qa_likely(t != NULL) ? t : ld_thread_new();
}

struct ld_thread *lockdep_threads(void)
{
	return A ? qa_read_acquire(&ld_thread_list) : NULL;
}

/* ---- the dependency graph ------------------------------------------------ */

static inline unsigned ld_hold_of(enum ld_obj obj)
{
	return obj == LD_RWLOCK_READ ? LD_HOLD_R : LD_HOLD_W;
}

/* A waiter in mode `wait` blocks on a lock held in mode `hold`: all but a
 * reader-preferring read against a read hold. */
static inline bool ld_blocks(unsigned wait, unsigned hold)
{
	return !(wait == LD_WAIT_RR && hold == LD_HOLD_R);
}

static uint32_t ld_edge_find(uint32_t from, uint32_t to)
{
	for (uint32_t e = A->cls[from].edges; e; e = A->edge[e].next)
		if (A->edge[e].to == to)
			return e;
	return 0;
}

/*
 * Is there a path from class `start`, waited for in mode `wait`, back to
 * `target` held in mode `hold`, along which every lock blocks its waiter?
 * Fills path[] with its edges (from start) and returns their number, or 0.
 * Graph lock held.
 */
static int ld_path(uint32_t start, unsigned wait, uint32_t target, unsigned hold,
		   uint32_t *path, int max)
{
	uint32_t gen = ++ld_vis_gen, head = 0, tail = 0;

	if (gen == 0) {
		memset(A->vis, 0, sizeof A->vis);
		gen = ld_vis_gen = 1;
	}
	A->queue[tail++] = (struct ld_state){ start, (uint8_t)wait, -1, 0 };
	A->vis[start * 3 + wait] = gen;
	while (head < tail) {
		struct ld_state s = A->queue[head++];

		for (uint32_t e = A->cls[s.cls].edges; e; e = A->edge[e].next) {
			const struct ld_edge *d = &A->edge[e];

			for (unsigned b = 0; b < 6; b++) {
				unsigned h = b / 3, w = b % 3;

				if (!(d->combos & (1u << b)) || !ld_blocks(s.wait, h))
					continue;
				if (d->to == target && ld_blocks(w, hold)) {
					int n = 0;

					for (int32_t q = (int32_t)head - 1; q > 0; q = A->queue[q].parent)
						n++;
					if (n + 1 > max)
						return 0;
					path[n] = e;
					for (int32_t q = (int32_t)head - 1, i = n - 1; q > 0;
					     q = A->queue[q].parent, i--)
						path[i] = A->queue[q].edge;
					return n + 1;
				}
				if (A->vis[d->to * 3 + w] != gen &&
				    tail < LD_MAX_CLASSES * 3) {
					A->vis[d->to * 3 + w] = gen;
					A->queue[tail++] = (struct ld_state){
						d->to, (uint8_t)w, (int32_t)head - 1, e };
				}
			}
		}
	}
	return 0;
}

#define LD_MAX_CYCLE 16

static void ld_report_cycle(const struct ld_held *h, uint32_t cls, enum ld_obj obj,
			    uintptr_t pc, const struct ld_thread *t,
			    const uint32_t *path, int n)
{
	struct ld_out o;
	char c[320], s1[256], s2[256];
	uint32_t ids[LD_MAX_CYCLE + 1];

	/* The cycle's classes: #0 the one being taken, then along the path. */
	ids[0] = cls;
	for (int i = 0; i < n; i++)
		ids[i + 1] = A->edge[path[i]].to; /* ids[n] == h->cls */
	ld_begin(&o);
	ld_add(&o, "qlock-lockdep: possible deadlock: lock-order cycle of %d locks\n",
	       n + 1);
	for (int i = 0; i <= n; i++) {
		lockdep_class_name(ids[i], c, sizeof c);
		ld_add(&o, "  #%d %s\n", i, c);
	}
	ld_sym(h->pc, s1, sizeof s1);
	ld_sym(pc, s2, sizeof s2);
	{
		char comm[16];

		ld_comm_self(comm);
		ld_add(&o, "  now: thread \"%s\" (tid %d) holds #%d%s, taken at %s\n"
		       "       and takes #0%s at %s\n", comm, (int)t->tid, n,
		       h->obj == LD_RWLOCK_READ ? " (read)" : "", s1,
		       obj == LD_RWLOCK_READ ? " (read)" : obj == LD_RWLOCK_WRITE ? " (write)" : "",
		       s2);
	}
	for (int i = 0; i < n; i++) {
		const struct ld_edge *d = &A->edge[path[i]];

		ld_sym(d->pc_from, s1, sizeof s1);
		ld_sym(d->pc_to, s2, sizeof s2);
		ld_add(&o, "  before: thread \"%s\" (tid %d) held #%d%s, taken at %s\n"
		       "       and took #%d%s at %s\n", d->comm, (int)d->tid, i,
		       d->hold == LD_HOLD_R ? " (read)" : "", s1, i + 1,
		       d->wait != LD_WAIT_W ? " (read)" : "", s2);
	}
	ld_add(&o, "  run at the same time, each of these threads can wait for a lock "
	       "the next one holds\n");
	ld_add_held(&o, t);
	ld_end(&o);
}

/* Record the edges from every held lock to class `cls` taken in mode
 * `wait`; report any that closes a cycle.  Graph lock taken here. */
static void ld_check_deps(struct ld_thread *t, uint32_t cls, enum ld_obj obj,
			  unsigned wait, uintptr_t pc)
{
	static bool full;
	uint32_t path[LD_MAX_CYCLE];
	char comm[16];
	bool have_comm = false;

	for (uint32_t i = 0; i < t->depth; i++) {
		const struct ld_held *h = &t->held[i];
		unsigned hold = ld_hold_of((enum ld_obj)h->obj);
		uint8_t bit = (uint8_t)(1u << (hold * 3 + wait));

		if (h->cls == 0 || h->cls == cls)
			continue;
		ld_spin_lock(&ld_graph_lock);
		uint32_t e = ld_edge_find(h->cls, cls);
		if (e && (A->edge[e].combos & bit)) {
			ld_spin_unlock(&ld_graph_lock);
			continue;
		}
		int n = ld_path(cls, wait, h->cls, hold, path, LD_MAX_CYCLE);
		if (n) {
			ld_spin_unlock(&ld_graph_lock);
			/* Once per cycle closed by this pair of classes. */
			if (ld_once((uint64_t)h->cls << 32 | cls))
				ld_report_cycle(h, cls, obj, pc, t, path, n);
			continue;
		}
		if (e) {
			A->edge[e].combos |= bit;
		} else if (ld_nedges < LD_MAX_EDGES) {
			struct ld_edge *d = &A->edge[ld_nedges];

			if (!have_comm) {
				ld_comm_self(comm);
				have_comm = true;
			}
			d->from = h->cls;
			d->to = cls;
			d->combos = bit;
			d->hold = (uint8_t)hold;
			d->wait = (uint8_t)wait;
			d->tid = t->tid;
			memcpy(d->comm, comm, sizeof d->comm);
			d->pc_from = h->pc;
			d->pc_to = pc;
			d->next = A->cls[h->cls].edges;
			A->cls[h->cls].edges = ld_nedges++;
		} else if (!full) {
			full = true;
			ld_full("lock dependency");
		}
		ld_spin_unlock(&ld_graph_lock);
	}
}

/* ---- the hooks ------------------------------------------------------------ */

/* Drop held entry i, re-hashing the chain of the entries above it. */
static void ld_remove(struct ld_thread *t, int i)
{
	uint32_t d = t->depth;
	uint64_t chain = t->held[i].chain;

	for (uint32_t j = (uint32_t)i; j + 1 < d; j++) {
		t->held[j] = t->held[j + 1];
		t->held[j].chain = chain;
		chain = ld_chain_add(chain, t->held[j].cls,
				     ld_hold_of((enum ld_obj)t->held[j].obj));
	}
	t->chain = chain;
	qa_write_release(&t->depth, d - 1); /* see lockdep_acquire_post() */
}

/* A mutex or spinlock this thread's stack says it holds is free: another
 * thread unlocked it (reported there).  Its first word is 0 when free, for
 * the shim's algorithms and glibc's alike (shim.h). */
static bool ld_stale(const void *lock, enum ld_obj obj)
{
	if (obj == LD_MUTEX)
		return qa_read(&((const struct qm *)lock)->word[0]) == 0;
	if (obj == LD_SPIN)
		return qa_read((const volatile int *)lock) == 0;
	return false;
}

static int ld_find_held(const struct ld_thread *t, const void *lock)
{
	for (int i = (int)t->depth - 1; i >= 0; i--)
		if (t->held[i].lock == lock)
			return i;
	return -1;
}

static unsigned ld_wait_of(const void *lock, enum ld_obj obj)
{
	if (obj != LD_RWLOCK_READ)
		return LD_WAIT_W;
	/* glibc's kind, at __flags (both for the shim's rwlocks and glibc's) */
	uint32_t kind = ((const struct qrw *)lock)->flags;
	return kind == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP ? LD_WAIT_R : LD_WAIT_RR;
}

static void ld_report_self(struct ld_thread *t, int i, const void *lock,
			   enum ld_obj obj, int mode, uintptr_t pc, const char *what,
			   const char *why)
{
	struct ld_out o;
	char c[320], s[256];

	if (!ld_once((uint64_t)pc * 8 + 1))
		return;
	ld_begin(&o);
	ld_header(&o, what);
	lockdep_class_name(t->held[i].cls, c, sizeof c);
	ld_add(&o, "  %s %p: %s\n", ld_type_name[ld_type_of(obj)], lock, c);
	ld_sym(t->held[i].pc, s, sizeof s);
	ld_add(&o, "  held since %s\n", s);
	ld_sym(pc, s, sizeof s);
	ld_add(&o, "  %s again at %s\n  %s%s\n", mode == LD_TIMED ? "timed lock" : "locked",
	       s, why, mode == LD_TIMED ? " (here: until the timeout)" : "");
	ld_add_held(&o, t);
	ld_end(&o);
}

void lockdep_acquire_pre(struct ld_acq *a, const volatile void *vlock, enum ld_obj obj,
			 int mode, uintptr_t pc)
{
	const void *lock = LD_PTR(vlock);
	struct ld_thread *t;

	a->t = NULL;
	if (ld_busy)
		return;
	ld_busy = 1;
	t = ld_thread_get();
	if (!t)
		goto out;
	a->cls = ld_class_of(lock, obj, pc);
	if (!a->cls)
		goto out;
	a->t = t;
	a->lock = lock;
	a->pc = pc;
	a->obj = (uint8_t)obj;
	a->mode = (uint8_t)mode;
	a->recurse = -1;

	int i = ld_find_held(t, lock);
	if (i >= 0 && ld_stale(lock, obj)) {
		ld_remove(t, i);
		i = -1;
	}
	if (i >= 0) {
		enum ld_obj held = (enum ld_obj)t->held[i].obj;

		if (obj == LD_MUTEX) {
			int kind = ((const struct qm *)lock)->kind;
			int type = kind & MUTEX_KIND_MASK;

			if (kind == -1 || type == MUTEX_ERRORCHECK)
				goto out; /* EINVAL / EDEADLK, EBUSY */
			if (type == MUTEX_RECURSIVE)
				a->recurse = i;
			else if (mode != LD_TRY)
				ld_report_self(t, i, lock, obj, mode, pc,
					       "self-deadlock: a thread locks a mutex it holds",
					       "the mutex is not recursive: the thread waits for itself");
		} else if (obj == LD_SPIN) {
			if (mode != LD_TRY)
				ld_report_self(t, i, lock, obj, mode, pc,
					       "self-deadlock: a thread locks a spinlock it holds",
					       "the thread spins on itself");
		} else if (held == LD_RWLOCK_READ && obj == LD_RWLOCK_READ) {
			a->recurse = i;
			if (mode != LD_TRY && ld_wait_of(lock, obj) == LD_WAIT_R)
				ld_report_self(t, i, lock, obj, mode, pc,
					       "recursive read lock that can deadlock",
					       "the rwlock is PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: "
					       "a writer queued in between waits for this thread's read "
					       "lock, and this read waits behind that writer");
		} else if (held == LD_RWLOCK_READ && obj == LD_RWLOCK_WRITE) {
			if (mode != LD_TRY)
				ld_report_self(t, i, lock, obj, mode, pc,
					       "read -> write upgrade of an rwlock: the thread "
					       "write-locks an rwlock it read-holds",
					       "the write lock waits for every reader, this thread too");
		}
		/* held for writing: the shim answers EDEADLK, as glibc */
		goto out;
	}
	if (mode != LD_TRY && t->depth > 0) {
		unsigned wait = ld_wait_of(lock, obj);
		uint64_t key = ld_chain_add(t->chain, a->cls, 8 + wait);

		if (!ld_set_has(A->chain, LD_CHAIN_SLOTS, key)) {
			static bool full;
			bool f = false;

			ld_check_deps(t, a->cls, obj, wait, pc);
			if (ld_set_add(A->chain, LD_CHAIN_SLOTS, key, &f))
				qa_fetch_add_relaxed(&ld_nchains, 1);
			if (f && !full) {
				full = true;
				ld_full("lock chain");
			}
		}
	}
out:
	ld_busy = 0;
}

void lockdep_acquire_post(struct ld_acq *a, int err)
{
	struct ld_thread *t = a->t;

	if (!t || err != 0)
		return;
	if (a->recurse >= 0 && a->recurse < (int)t->depth &&
	    t->held[a->recurse].lock == a->lock) {
		if (t->held[a->recurse].count < UINT16_MAX)
			t->held[a->recurse].count++;
		return;
	}
	uint32_t d = t->depth;
	if (d == LD_MAX_DEPTH) {
		if (!t->lost && ld_once(0xdeeb)) {
			struct ld_out o;

			ld_begin(&o);
			ld_header(&o, "more than 48 locks held by one thread: the deeper "
				  "ones are not tracked (reported once)");
			ld_end(&o);
		}
		t->lost = true;
		return;
	}
	struct ld_held *h = &t->held[d];
	h->lock = a->lock;
	h->pc = a->pc;
	h->chain = t->chain;
	h->cls = a->cls;
	h->count = 1;
	h->obj = a->obj;
	h->trylock = a->mode == LD_TRY;
	t->chain = ld_chain_add(t->chain, a->cls, ld_hold_of((enum ld_obj)a->obj));
	/* The entry before the depth that shows it: pairs with the
	 * read_acquire of a reader on another thread (lockdep.h). */
	qa_write_release(&t->depth, d + 1);
}

static void ld_report_lock(struct ld_thread *t, const void *lock, enum ld_obj obj,
			   uintptr_t pc, const char *what, int held)
{
	struct ld_out o;
	char c[320], s[256];
	struct ld_inst *e = ld_inst_slot(lock, false);
	uint32_t cls = e ? qa_read_acquire(&e->cls) : 0;

	ld_begin(&o);
	ld_header(&o, what);
	if (cls)
		lockdep_class_name(cls, c, sizeof c);
	else
		snprintf(c, sizeof c, "%s never locked through the checker",
			 ld_type_name[ld_type_of(obj)]);
	ld_add(&o, "  %s %p: %s\n", ld_type_name[ld_type_of(obj)], lock, c);
	if (held >= 0) {
		ld_sym(t->held[held].pc, s, sizeof s);
		ld_add(&o, "  held since %s\n", s);
	}
	ld_sym(pc, s, sizeof s);
	ld_add(&o, "  at %s\n", s);
	ld_add_held(&o, t);
	ld_end(&o);
}

void lockdep_release(const volatile void *vlock, enum ld_obj obj, uintptr_t pc)
{
	const void *lock = LD_PTR(vlock);
	struct ld_thread *t;

	if (ld_busy)
		return;
	ld_busy = 1;
	t = ld_thread_get();
	if (!t)
		goto out;
	int i = ld_find_held(t, lock);
	if (i < 0) {
		/* A lock the table could not hold, or one lost past the
		 * stack's depth, is not a misuse we can tell. */
		if (!t->lost && ld_inst_slot(lock, false) && ld_once((uint64_t)pc * 8 + 2))
			ld_report_lock(t, lock, obj, pc,
				       "unlock of a lock this thread does not hold", -1);
		else if (!t->lost && !ld_inst_slot(lock, false) &&
			 ld_once((uint64_t)pc * 8 + 2))
			ld_report_lock(t, lock, obj, pc,
				       "unlock of a lock nobody locked", -1);
		goto out;
	}
	if (t->held[i].count > 1)
		t->held[i].count--;
	else
		ld_remove(t, i);
out:
	ld_busy = 0;
}

void lockdep_destroy(const volatile void *vlock, enum ld_obj obj, uintptr_t pc, int err)
{
	const void *lock = LD_PTR(vlock);
	struct ld_thread *t;

	if (ld_busy)
		return;
	ld_busy = 1;
	t = ld_thread_get();
	if (t) {
		int i = ld_find_held(t, lock);

		if (i >= 0 && ld_once((uint64_t)pc * 8 + 3))
			ld_report_lock(t, lock, obj, pc,
				       "destroy of a lock this thread holds", i);
	}
	/* Forget its class: memory reused for another lock gets that one's. */
	struct ld_inst *e = err == 0 ? ld_inst_slot(lock, false) : NULL;
	if (e)
		qa_write(&e->cls, 0u);
	ld_busy = 0;
}

/* ---- set-up ------------------------------------------------------------- */

/* In a fork child only the forking thread is left: free the others'
 * records; a lock held by a vanished thread cannot be released either. */
static void ld_fork_child(void)
{
	int32_t tid = ld_gettid();

	qa_write(&ld_graph_lock, 0);
	qa_write(&ld_rep_lock, 0);
	for (uint32_t i = 0; i < LD_MAX_THREADS; i++) {
		struct ld_thread *t = &A->thr[i];

		if (t == ld_me)
			qa_write(&t->tid, tid);
		else if (qa_read(&t->tid) != 0) {
			qa_write(&t->depth, 0u);
			qa_write_release(&t->tid, 0);
		}
	}
}

/* At exit, one line: what was checked, so a clean run says it ran. */
static void ld_summary(void)
{
	char msg[256];
	unsigned classes = qa_read(&ld_nclasses) - 1;
	unsigned deps = qa_read(&ld_nedges) - 1;
	unsigned long long chains = qa_read(&ld_nchains);
	int n = snprintf(msg, sizeof msg,
			 "qlock-lockdep: %u lock class%s, %u dependenc%s, %llu lock "
			 "chain%s checked; problems reported: %llu (pid %d)\n",
			 classes, classes == 1 ? "" : "es", deps,
			 deps == 1 ? "y" : "ies", chains, chains == 1 ? "" : "s",
			 (unsigned long long)qa_read(&ld_nreports), (int)getpid());

	(void)!write(ld_fd, msg, (size_t)n);
}

static int ld_open(const char *path)
{
	char out[4096];
	size_t o = 0;

	for (const char *p = path; *p && o + 24 < sizeof out; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			o += (size_t)snprintf(out + o, sizeof out - o, "%d", (int)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			out[o++] = '%';
			p++;
		} else {
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	return open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

void shim_lockdep_setup(void)
{
	const char *v = getenv("QLOCK_LOCKDEP");
	const char *f = getenv("QLOCK_LOCKDEP_FILE");

	if (!v || !*v || strcmp(v, "0") == 0)
		return;
	if (strcmp(v, "abort") == 0)
		ld_abort = true;
	else if (strcmp(v, "1") != 0)
		fprintf(stderr, "libqlock-pthread: QLOCK_LOCKDEP=%s: expected 1 or abort; "
			"taken as 1\n", v);
	if (f && *f) {
		int fd = ld_open(f);

		if (fd < 0) {
			fprintf(stderr, "libqlock-pthread: QLOCK_LOCKDEP_FILE=%s: %s; "
				"reporting on stderr\n", f, strerror(errno));
		} else {
			ld_fd = fd;
		}
	}
	void *p = mmap(NULL, sizeof *A, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "libqlock-pthread: lockdep: no memory for its tables "
			"(%zu bytes): off\n", sizeof *A);
		return;
	}
	A = p;
	if (pthread_key_create(&ld_key, ld_thread_exit) != 0) {
		fprintf(stderr, "libqlock-pthread: lockdep: no thread key: off\n");
		return;
	}
	(void)pthread_atfork(NULL, NULL, ld_fork_child);
	atexit(ld_summary);
	qa_write(&shim_lockdep_on, true);
}
