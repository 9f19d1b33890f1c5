/* SPDX-License-Identifier: MIT */
/*
 * Lock-order checking (QLOCK_LOCKDEP=1|abort, qlock-run --lockdep) for
 * unmodified programs: the kernel's lockdep algorithm (a dependency graph
 * checked for cycles as it grows, a cache of lock chains already checked)
 * run on lock objects, as helgrind and TSan do, with the kernel's classes
 * kept for naming, grouping and suppressing reports.
 *
 * Nodes.  A node is one lifetime of one lock object: it is made when an
 * address is initialised (pthread_*_init) or, for a lock set with an
 * initialiser, first used, and it dies when the object is destroyed,
 * initialised again, or its memory is released in a way the drop-in sees
 * (qlock_lockdep_forget(): free, munmap, dlclose through libqlock-lockdep-hooks).
 * A node's id is recycled with a new generation, so nothing of a dead
 * lock's history (its edges, its cached chains) applies to the next lock
 * at that address.  An address maps to its live node through an
 * open-addressing table read without locks (writers hold the graph lock;
 * a reader validates what it finds against the node itself, and anything
 * doubtful sends it to the locked path).
 *
 * Classes.  Each node belongs to a class, for reports only: the stack of
 * the call that created it (QLOCK_LOCKDEP_CLASS_FRAMES frames, 8 by
 * default, above the drop-in), so that every object built at one place
 * (an init loop, one constructor called from one place) is one class, and
 * objects built through one wrapper from different callers are not; a
 * static lock (set with PTHREAD_*_INITIALIZER in a module's data) is a
 * class of its own, named by its symbol.  A report names a class by its
 * first frame outside lock wrappers, by the rule the profile uses too
 * (wrapper.h; --wrapper, --lockdep-wrapper add patterns).
 * Two objects are one class when their creation stacks are equal; two
 * objects are never one node.
 *
 * Dependencies: taking lock object B (not by trylock, which cannot block)
 * while holding A records the edge A -> B.  A new edge is first checked
 * for a path back from B to A: if one exists, the edge would close a cycle
 * and the cycle is reported with the threads, the stacks that made each
 * of its edges and the objects (the edge is then not added, so the graph
 * stays acyclic).  As in the kernel, the held stack has a running hash
 * (its chain key, over node ids and generations); the chain key with the
 * node and mode being taken is looked up in a cache of chains already
 * checked, so once a program's nesting patterns have been seen an
 * acquisition costs that look-up.  Read locks: an edge records the mode
 * its first lock is held in and the mode the second waits in (exclusive,
 * read of a writer-preferring rwlock, which waits behind queued writers,
 * read of a reader-preferring one, which waits only for a writer); a
 * cycle is reported only if every lock in it can block its waiter.
 *
 * Bounds.  Nothing stops checking: held stacks, nodes, edges, classes and
 * stacks grow (mmap'd chunks; no malloc, which takes locks of its own).
 * What is bounded: the chain cache (LD_CHAIN_SLOTS keys; a full bucket
 * replaces an old key, which costs a repeat of that chain its re-check),
 * a stack's depth (QLOCK_LOCKDEP_DEPTH frames), and node ids (2^32).
 *
 * Condition variables: a wait releases its mutex and re-takes it (the
 * re-lock is an acquisition at the wait's call site, checked like any
 * other, and the watchdog sees a thread blocked in it).
 *
 * Reports go to stderr or to QLOCK_LOCKDEP_FILE, each in one write(2),
 * once per distinct problem, each with a one-line hint; QLOCK_LOCKDEP_JSON
 * writes them as JSON at exit; QLOCK_LOCKDEP_SUPPRESS names a file of
 * patterns that silence reports; QLOCK_LOCKDEP_CLASSES lists the classes
 * at exit; QLOCK_LOCKDEP=abort aborts after the first report.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "deadlock.h"
#include "lockdep.h"
#include "shim.h" /* the objects' layouts */
#include "symbolize.h"
#include "unwinder.h"
#include "wrapper.h"

bool shim_lockdep_on;
static bool ld_abort;
static int ld_fd = STDERR_FILENO;
static char ld_json_path[4096];
static char ld_classes_path[4096];
static bool ld_classes;
static unsigned ld_depth = 16;        /* frames kept per stack */
static unsigned ld_class_frames = 8;  /* frames of the creation stack that key a class */

#define LD_FRAMES_MAX 64
#define LD_CHAIN_SLOTS (1u << 17)
#define LD_MAX_CYCLE 64
#define LD_MAX_PATTERNS 64

enum ld_origin { LD_ORIGIN_INIT, LD_ORIGIN_STATIC, LD_ORIGIN_USE };
enum ld_type { LD_TYPE_MUTEX, LD_TYPE_RWLOCK, LD_TYPE_SPIN };

static const char *const ld_type_name[] = { "mutex", "rwlock", "spinlock" };

/* ---- memory --------------------------------------------------------------- */

static void *ld_map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * A growable array of fixed-size elements at stable addresses: chunks of
 * 2^LD_CHUNK_BITS elements, allocated as the array grows (graph lock), read
 * without a lock (a chunk's pointer is written before any index in it is
 * published).  Index 0 is never used (0 = none).
 */
#define LD_CHUNK_BITS 12
#define LD_CHUNKS (1u << 20) /* 2^32 elements */
struct ld_vec {
	char **chunk;
	uint32_t size, n;
};

static bool ld_vec_init(struct ld_vec *v, uint32_t size)
{
	v->chunk = ld_map(LD_CHUNKS * sizeof(char *));
	v->size = size;
	v->n = 1;
	return v->chunk != NULL;
}

static inline void *ld_vec_at(const struct ld_vec *v, uint32_t i)
{
	char *c = qa_read(&v->chunk[i >> LD_CHUNK_BITS]);

	return c + (size_t)(i & ((1u << LD_CHUNK_BITS) - 1)) * v->size;
}

/* A new element (zeroed when fresh), 0 when out of memory.  Graph lock. */
static uint32_t ld_vec_push(struct ld_vec *v)
{
	uint32_t i = v->n;

	if (i == UINT32_MAX)
		return 0;
	if (!v->chunk[i >> LD_CHUNK_BITS]) {
		char *c = ld_map((size_t)v->size << LD_CHUNK_BITS);

		if (!c)
			return 0;
		qa_write_release(&v->chunk[i >> LD_CHUNK_BITS], c);
	}
	v->n = i + 1;
	return i;
}

/*
 * A hash map of 64-bit keys (>= 2; 0 empty, 1 deleted) to 32-bit values,
 * grown as it fills.  Graph lock (or the report lock, for the set of
 * problems already reported).
 */
struct ld_map {
	uint64_t *k;
	uint32_t *v;
	uint32_t cap, used, dead;
};

static inline uint64_t ld_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return x;
}

static bool ld_map_grow(struct ld_map *m)
{
	uint32_t cap = m->used * 4 > m->cap ? m->cap * 2 : m->cap;
	struct ld_map n = { NULL, NULL, cap ? cap : 1024, 0, 0 };

	n.k = ld_map((size_t)n.cap * 8);
	n.v = ld_map((size_t)n.cap * 4);
	if (!n.k || !n.v)
		return false;
	for (uint32_t i = 0; i < m->cap; i++) {
		if (m->k[i] < 2)
			continue;
		uint32_t j = (uint32_t)ld_mix(m->k[i]) & (n.cap - 1);

		while (n.k[j])
			j = (j + 1) & (n.cap - 1);
		n.k[j] = m->k[i];
		n.v[j] = m->v[i];
		n.used++;
	}
	if (m->k) {
		munmap(m->k, (size_t)m->cap * 8);
		munmap(m->v, (size_t)m->cap * 4);
	}
	*m = n;
	return true;
}

static uint32_t *ld_map_find(const struct ld_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (uint32_t j = (uint32_t)ld_mix(key) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		if (m->k[j] == key)
			return &m->v[j];
		if (m->k[j] == 0)
			return NULL;
	}
}

/* Insert (or overwrite); false when out of memory. */
static bool ld_map_put(struct ld_map *m, uint64_t key, uint32_t val)
{
	uint32_t *p = ld_map_find(m, key);

	if (p) {
		*p = val;
		return true;
	}
	if ((m->used + m->dead + 1) * 4 >= m->cap * 3 && !ld_map_grow(m))
		return false;
	for (uint32_t j = (uint32_t)ld_mix(key) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
		if (m->k[j] < 2) {
			if (m->k[j] == 1)
				m->dead--;
			m->k[j] = key;
			m->v[j] = val;
			m->used++;
			return true;
		}
	}
}

static void ld_map_del(struct ld_map *m, uint64_t key)
{
	uint32_t *p = ld_map_find(m, key);

	if (p) {
		m->k[p - m->v] = 1;
		m->used--;
		m->dead++;
	}
}

/* ---- state ------------------------------------------------------------------ */

struct ld_node {
	const void *lock;  /* the object's address */
	uint32_t gen;      /* bumped at death: ids are recycled */
	uint32_t cls;
	uint32_t out, in;  /* edge lists */
	uint32_t vis[3];   /* search stamps, per wait mode */
	uint64_t ord;      /* position in the graph's topological order */
	uint32_t next_free;
	uint32_t page_next;  /* the other nodes in its page (ld_pages) */
	uint8_t live, type;
};

struct ld_class {
	uintptr_t addr;    /* a static lock's address */
	uint32_t stack;    /* the creation stack (not for a static lock) */
	uint8_t origin, type;
	uint64_t objects;  /* nodes made in this class */
	uint64_t live;     /* of which alive */
};

struct ld_edge {
	uint32_t from, to;
	uint32_t out_next, out_prev, in_next, in_prev;
	uint32_t stack[6];    /* where `to` was taken (the whole stack), per
			       * pair of modes (hold * 3 + wait) first seen */
	uint32_t next_free;
	uint8_t combos;       /* bit hold * 3 + wait, every pair of modes seen */
	uint8_t hold, wait;   /* the modes of the first one */
	uint8_t cond;         /* `to` was re-taken by a condvar wait */
	int32_t tid;
	char comm[16];
	uint32_t uid;         /* the thread that made it (ld_thread.uid) */
	uintptr_t pc_from[2]; /* where `from` was taken, per hold mode */
};

struct ld_stack {
	uint64_t off;         /* into ld_frames */
	uint32_t n;
};

/* The search of a cycle check: a node and the mode it is waited for in. */
struct ld_state {
	uint32_t node;
	uint8_t wait;
	uint8_t how;      /* the pair of modes (hold * 3 + wait) of `edge` used */
	int32_t parent;
	uint32_t edge;
};

/* The pair of modes each edge of the last path found was followed in
 * (graph lock): a report shows the modes that make the cycle. */
static uint8_t ld_path_how[64];

static struct ld_vec ld_nodes, ld_classes_v, ld_edges, ld_stacks, ld_frames;
static struct ld_map ld_edge_map, ld_class_map, ld_stack_map, ld_once_map;
static uint32_t ld_node_free, ld_edge_free;
/* Released memory (qlock_lockdep_forget): the nodes of each 4 KiB page
 * (graph lock), and a filter read without a lock that says which pages
 * may have some (a count per hash of the page; 0 = none). */
static struct ld_map ld_pages;
static uint32_t *ld_filter;
static uint64_t ld_nedges_live, ld_nedges_total, ld_nobjects;
static uint64_t *ld_chain;   /* the chain cache (lossy) */
static struct ld_state *ld_queue;
static uint32_t ld_queue_cap;
static uint32_t ld_vis_gen;
/* A topological order of the nodes (every edge goes from a lower ord to a
 * higher one), kept as edges are added (Pearce and Kelly's dynamic
 * topological sort): an edge that agrees with it cannot close a cycle, so
 * it needs no search.  Broken for good once a cycle that cannot deadlock
 * enters the graph (read locks of a reader-preferring rwlock taken in
 * both orders): then every new edge is searched. */
static uint64_t ld_ord_next = 1ull << 62, ld_ord_low = 1ull << 62;
/* Room between two ords: new nodes are LD_ORD_SPACE apart, so that a
 * node moved against the order usually finds a gap to move into. */
#define LD_ORD_SPACE (1ull << 20)
static bool ld_unordered;
static uint32_t *ld_pk;       /* the nodes the reordering moves */
static uint32_t ld_pk_cap;
static uint64_t ld_nchains, ld_nreports, ld_nsuppressed, ld_njoined;
/* Threads that ended (pthread_t -> uid, until joined) and who joined whom
 * (uid -> joiner's uid); graph lock. */
static struct ld_map ld_exited, ld_joiner;
static uint32_t ld_uid_next;
static int ld_graph_lock, ld_rep_lock;
static struct ld_thread *ld_thread_list;
static pthread_key_t ld_key;

/* The address -> node table (see the top). */
struct ld_islot {
	const void *lock;    /* NULL empty, LD_TOMB deleted */
	uint64_t ref;        /* node id << 32 | generation */
};
#define LD_TOMB ((const void *)1)
static struct ld_islot *ld_itab;
static uint64_t ld_imask;     /* read with the table: see ld_itab_lookup() */
static uint32_t ld_iused, ld_idead;

__thread struct ld_thread *ld_me __attribute__((tls_model("initial-exec")));
__thread int ld_busy __attribute__((tls_model("initial-exec")));
__thread struct ld_thread *ld_hot __attribute__((tls_model("initial-exec")));

/* A hook runs on this thread (the lock calls it makes are not tracked):
 * ld_busy, and ld_hot cleared for the inline paths (lockdep.h). */
static inline void ld_busy_on(void)
{
	ld_busy = 1;
	ld_hot = NULL;
}

static inline void ld_busy_off(void)
{
	ld_busy = 0;
	ld_hot = ld_me;
}

#define LD_PTR(v) ((const void *)(uintptr_t)(v))
#define NODE(i) ((struct ld_node *)ld_vec_at(&ld_nodes, (i)))
#define EDGE(i) ((struct ld_edge *)ld_vec_at(&ld_edges, (i)))
#define CLASS(i) ((struct ld_class *)ld_vec_at(&ld_classes_v, (i)))
#define STACK(i) ((struct ld_stack *)ld_vec_at(&ld_stacks, (i)))

/* ---- small helpers ---------------------------------------------------------- */

/* The graph's and the report buffer's locks: short, rare sections; no
 * pthread lock may be used here. */
static void ld_spin_lock(int *l)
{
	int z = 0;

	while (!qa_try_cmpxchg_acquire(l, &z, 1)) {
		z = 0;
		/* The kernel's, not the drop-in's sched_yield() (offcpu.c),
		 * an entry point for the program's threads. */
		syscall(SYS_sched_yield);
	}
}

static void ld_spin_unlock(int *l)
{
	qa_write_release(l, 0); /* pairs with the cmpxchg_acquire above */
}

static inline uint64_t ld_chain_add(uint64_t chain, uint32_t node, uint32_t gen, unsigned tag)
{
	uint64_t x = ld_mix(chain * 31 + ((uint64_t)node << 36 | (uint64_t)gen << 4 | tag));

	return x ? x : 1;
}

static bool ld_chain_seen(uint64_t key)
{
	uint32_t i = (uint32_t)(key >> 17) & (LD_CHAIN_SLOTS - 1) & ~3u;

	for (unsigned n = 0; n < 4; n++)
		if (qa_read(&ld_chain[i + n]) == key)
			return true;
	return false;
}

/* Into the 4-way bucket: an empty way, else a way chosen by the key. */
static void ld_chain_add_key(uint64_t key)
{
	uint32_t i = (uint32_t)(key >> 17) & (LD_CHAIN_SLOTS - 1) & ~3u;

	for (unsigned n = 0; n < 4; n++) {
		uint64_t z = 0;

		if (qa_try_cmpxchg_relaxed(&ld_chain[i + n], &z, key))
			return;
		if (z == key)
			return;
	}
	qa_write(&ld_chain[i + (key & 3)], key);
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

static inline unsigned ld_hold_of(enum ld_obj obj)
{
	return obj == LD_RWLOCK_READ ? LD_HOLD_R : LD_HOLD_W;
}

/* ---- stacks ------------------------------------------------------------------ */

/* The unwinder backtrace() calls (unwinder.h), found at set-up;
 * ld_uw.backtrace NULL: backtrace(). */
static struct shim_unwinder ld_uw;

/* A walk under way: the frames as backtrace() gives them (the first the
 * walk's caller's), up to pc and `max` frames from it. */
struct ld_walk {
	void **b;
	uintptr_t pc;
	unsigned max;
	int n, at;           /* frames in b[]; the index of pc, -1 not yet */
	struct shim_unwind_at last;
};

static _Unwind_Reason_Code ld_walk_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct ld_walk *c = arg;
	uintptr_t ip;

	if (!shim_unwind_step(&ld_uw, ctx, &c->last, &ip))
		return _URC_END_OF_STACK;
	c->b[c->n] = (void *)ip;
	if (c->at < 0 && ip == c->pc)
		c->at = c->n;
	c->n++;
	if (c->n == LD_FRAMES_MAX || (c->at >= 0 && c->n - c->at == (int)c->max))
		return _URC_END_OF_STACK;
	return _URC_NO_REASON;
}

/* The caller's stack from the frame that returns to pc (the program's
 * call of the lock function) outward, into f[]; returns its depth.
 * Each frame unwound costs about 2,000 instructions, so the walk ends at
 * the last frame kept: the unwinder's own walk stops there (ld_walk_frame());
 * without it, backtrace() is asked first for the frames below pc
 * (*below: how many the call site found there last, lockdep's and the
 * drop-in's own, two or three) and the `max` above it only, and for every
 * frame only when that window leaves the answer open (pc not in it while
 * the stack goes on, or too deep in it).  The frames kept are those of a
 * whole unwind either way.  Inline, so that its own frame is not one of
 * them. */
static inline __attribute__((always_inline)) unsigned
ld_backtrace_at(uintptr_t pc, uintptr_t *f, unsigned max, int *below)
{
	void *b[LD_FRAMES_MAX];
	int w = qa_read(below) + (int)max, n, i = 0;

	if (ld_uw.backtrace) { /* the unwinder itself: it stops at the last frame kept */
		struct ld_walk c = { b, pc, max, 0, -1, { 0, 0, 0 } };

		(void)ld_uw.backtrace(ld_walk_frame, &c);
		n = c.n;
		if (n > 1 && b[n - 1] == NULL) /* as backtrace() */
			n--;
		i = c.at < 0 ? n : c.at;
		goto got;
	}
	w = w < LD_FRAMES_MAX ? w : LD_FRAMES_MAX;
	n = backtrace(b, w);
	while (i < n && (uintptr_t)b[i] != pc)
		i++;
	if (n == w && w < LD_FRAMES_MAX && i + (int)max > n) {
		n = backtrace(b, LD_FRAMES_MAX); /* the window was not enough */
		i = 0;
		while (i < n && (uintptr_t)b[i] != pc)
			i++;
		if (i < n && i > qa_read(below)) /* a hint: a race loses a frame at most */
			qa_write(below, i);
	}
got:
	if (i == n) { /* pc not on the unwound stack (a tail call): from pc */
		f[0] = pc;
		i = 2 < n ? 2 : n; /* its caller in lockdep, the entry point */
		unsigned k = 1;

		for (; i < n && k < max; i++)
			f[k++] = (uintptr_t)b[i];
		return k;
	}
	unsigned k = 0;

	for (; i < n && k < max; i++)
		f[k++] = (uintptr_t)b[i];
	return k;
}

/* Each call site with its own count of frames below pc (see above). */
#define ld_backtrace(pc, f, max) __extension__({                            \
	static int ld_below_ = 2;                                            \
	ld_backtrace_at((pc), (f), (max), &ld_below_);                       \
})

/* The depot id of stack f[0..n-1] (equal stacks, one id).  Graph lock. */
static uint32_t ld_stack_id(const uintptr_t *f, unsigned n)
{
	uint64_t h = 0x51ed27;

	for (unsigned i = 0; i < n; i++)
		h = ld_mix(h * 31 + f[i]);
	h = h < 2 ? h + 2 : h;
	uint32_t *p = ld_map_find(&ld_stack_map, h);
	if (p) {
		const struct ld_stack *s = STACK(*p);
		bool same = s->n == n;

		for (unsigned i = 0; same && i < n; i++)
			same = *(uintptr_t *)ld_vec_at(&ld_frames, (uint32_t)(s->off + i)) == f[i];
		if (same)
			return *p;
	}
	uint32_t id = ld_vec_push(&ld_stacks);
	if (!id)
		return 0;
	uint64_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t j = ld_vec_push(&ld_frames);

		if (!j)
			return 0;
		if (i == 0)
			off = j;
		*(uintptr_t *)ld_vec_at(&ld_frames, j) = f[i];
	}
	STACK(id)->off = off;
	STACK(id)->n = n;
	if (!p)
		(void)ld_map_put(&ld_stack_map, h, id);
	return id;
}

static unsigned ld_stack_get(uint32_t id, uintptr_t *f, unsigned max)
{
	if (!id)
		return 0;
	const struct ld_stack *s = STACK(id);
	unsigned n = s->n < max ? s->n : max;

	for (unsigned i = 0; i < n; i++)
		f[i] = *(uintptr_t *)ld_vec_at(&ld_frames, (uint32_t)(s->off + i));
	return n;
}

/* ---- classes and nodes --------------------------------------------------------- */

/* The class of a new node.  Graph lock. */
static uint32_t ld_class_get(enum ld_origin o, enum ld_type t, uintptr_t addr, uint32_t stack)
{
	uint64_t key = o == LD_ORIGIN_STATIC ? (1ull << 63) | (uint64_t)addr << 4 | t
					     : (uint64_t)stack << 8 | (uint64_t)o << 4 | t | 0x100000000000ull;
	uint32_t *p = ld_map_find(&ld_class_map, key);

	if (p)
		return *p;
	uint32_t c = ld_vec_push(&ld_classes_v);
	if (!c)
		return 0;
	struct ld_class *k = CLASS(c);
	k->addr = addr;
	k->stack = stack;
	k->origin = (uint8_t)o;
	k->type = (uint8_t)t;
	(void)ld_map_put(&ld_class_map, key, c);
	return c;
}

static inline uint32_t ld_ihash(const void *lock)
{
	/* one multiply: the hot path's look-up (Fibonacci hashing) */
	return (uint32_t)(((uintptr_t)lock >> 3) * 0x9e3779b97f4a7c15ull >> 32);
}

/* The live node of `lock` without a lock, or 0 (then: the locked path).
 * Whatever a racing writer left, a node is returned only if it is live
 * and says it is this address's, in the generation the table gives. */
static inline uint32_t ld_itab_lookup(const void *lock, uint32_t *gen)
{
	/* The mask before the table: a grown table is published before its
	 * mask, so a reader never pairs an old table with a larger mask. */
	uint64_t mask = qa_read_acquire(&ld_imask);
	struct ld_islot *t = qa_read_acquire(&ld_itab);

	if (!t)
		return 0;
	for (uint64_t j = ld_ihash(lock) & mask, n = 0; n <= mask; j = (j + 1) & mask, n++) {
		const void *cur = qa_read_acquire(&t[j].lock);

		if (cur == lock) {
			uint64_t ref = qa_read_acquire(&t[j].ref);
			uint32_t id = (uint32_t)(ref >> 32), g = (uint32_t)ref;

			if (!id || id >= qa_read(&ld_nodes.n))
				return 0;
			struct ld_node *nd = NODE(id);
			if (qa_read_acquire(&nd->gen) != g || qa_read(&nd->lock) != lock ||
			    !qa_read(&nd->live))
				return 0;
			*gen = g;
			return id;
		}
		if (cur == NULL)
			return 0;
	}
	return 0;
}

/* Rebuild the table (bigger when live slots passed a quarter).  Graph
 * lock.  Readers racing with it miss and take the locked path. */
static bool ld_itab_rebuild(void)
{
	uint64_t cap = ld_itab ? ld_imask + 1 : 0;
	uint64_t ncap = !cap ? 1u << 16 : ld_iused * 4 >= cap ? cap * 2 : cap;
	struct ld_islot *old = ld_itab, *nt;

	if (ncap != cap || !old) {
		nt = ld_map(ncap * sizeof *nt);
		if (!nt)
			return false;
	} else {
		/* Same size, to clear the deleted slots: in place, through a
		 * scratch copy (a reader meanwhile misses, then waits for us). */
		nt = old;
		old = ld_map(cap * sizeof *old);
		if (!old)
			return false;
		memcpy(old, nt, cap * sizeof *old);
		for (uint64_t j = 0; j < cap; j++)
			qa_write(&nt[j].lock, (const void *)NULL);
	}
	ld_iused = 0;
	ld_idead = 0;
	for (uint64_t j = 0; old && j < cap; j++) {
		const void *l = old[j].lock;

		if (!l || l == LD_TOMB)
			continue;
		uint64_t k = ld_ihash(l) & (ncap - 1);

		while (nt[k].lock)
			k = (k + 1) & (ncap - 1);
		qa_write(&nt[k].ref, old[j].ref);
		qa_write_release(&nt[k].lock, l);
		ld_iused++;
	}
	if (nt != ld_itab) {
		/* The table before its (larger) mask: a reader that reads the
		 * new table with the old mask only misses (ld_itab_lookup()).
		 * The old table stays mapped: a reader may still be in it. */
		qa_write_release(&ld_itab, nt);
		qa_write_release(&ld_imask, ncap - 1);
	} else {
		munmap(old, cap * sizeof *old);
	}
	return true;
}

/* Graph lock: the slot of `lock`, or -1. */
static int64_t ld_itab_find(const void *lock)
{
	if (!ld_itab)
		return -1;
	for (uint64_t j = ld_ihash(lock) & ld_imask, n = 0; n <= ld_imask;
	     j = (j + 1) & ld_imask, n++) {
		if (ld_itab[j].lock == lock)
			return (int64_t)j;
		if (ld_itab[j].lock == NULL)
			return -1;
	}
	return -1;
}

static bool ld_itab_set(const void *lock, uint32_t id, uint32_t gen)
{
	int64_t s = ld_itab_find(lock);
	uint64_t ref = (uint64_t)id << 32 | gen;

	if (s >= 0) {
		qa_write_release(&ld_itab[s].ref, ref);
		return true;
	}
	if ((!ld_itab || (ld_iused + ld_idead + 1) * 4 >= (ld_imask + 1) * 3) &&
	    !ld_itab_rebuild())
		return false;
	for (uint64_t j = ld_ihash(lock) & ld_imask;; j = (j + 1) & ld_imask) {
		const void *cur = ld_itab[j].lock;

		if (cur == NULL || cur == LD_TOMB) {
			if (cur == LD_TOMB)
				ld_idead--;
			qa_write(&ld_itab[j].ref, ref);
			qa_write_release(&ld_itab[j].lock, lock); /* after the ref */
			ld_iused++;
			return true;
		}
	}
}

static void ld_itab_del(const void *lock)
{
	int64_t s = ld_itab_find(lock);

	if (s >= 0) {
		qa_write_release(&ld_itab[s].lock, LD_TOMB);
		ld_iused--;
		ld_idead++;
	}
}

static void ld_edge_unlink(uint32_t e);

/* Put node id on its page's list (graph lock). */
static void ld_page_link(uint32_t id)
{
	uintptr_t page = (uintptr_t)NODE(id)->lock >> LD_PAGE_SHIFT;
	uint32_t *head = ld_map_find(&ld_pages, (uint64_t)page + 2);

	NODE(id)->page_next = head ? *head : 0;
	if (head)
		*head = id;
	else if (!ld_map_put(&ld_pages, (uint64_t)page + 2, id))
		return; /* out of memory: only its release goes unseen */
	qa_fetch_add_relaxed(&ld_filter[ld_filter_slot(page)], 1);
}

static void ld_page_unlink(uint32_t id)
{
	uintptr_t page = (uintptr_t)NODE(id)->lock >> LD_PAGE_SHIFT;
	uint32_t *head = ld_map_find(&ld_pages, (uint64_t)page + 2);

	if (!head)
		return;
	if (*head == id) {
		*head = NODE(id)->page_next;
		if (!*head)
			ld_map_del(&ld_pages, (uint64_t)page + 2);
	} else {
		uint32_t p = *head;

		while (p && NODE(p)->page_next != id)
			p = NODE(p)->page_next;
		if (!p)
			return;
		NODE(p)->page_next = NODE(id)->page_next;
	}
	qa_fetch_sub_relaxed(&ld_filter[ld_filter_slot(page)], 1);
}

/* End node id's life: its edges go, its id is recycled.  Graph lock. */
static void ld_node_kill(uint32_t id)
{
	struct ld_node *n = NODE(id);

	if (!n->live)
		return;
	while (n->out)
		ld_edge_unlink(n->out);
	while (n->in)
		ld_edge_unlink(n->in);
	ld_itab_del(n->lock);
	ld_page_unlink(id);
	CLASS(n->cls)->live--;
	qa_write(&n->live, (uint8_t)0);
	qa_write_release(&n->gen, n->gen + 1);
	n->next_free = ld_node_free;
	ld_node_free = id;
}

/* A new node for `lock`, replacing any live one.  Graph lock. */
static uint32_t ld_node_new(const void *lock, enum ld_type type, uint32_t cls, uint32_t *gen)
{
	uint32_t g;
	int64_t s = ld_itab_find(lock);

	if (s >= 0) {
		uint32_t old = (uint32_t)(ld_itab[s].ref >> 32);

		if (old && NODE(old)->live && NODE(old)->lock == lock)
			ld_node_kill(old);
	}
	uint32_t id = ld_node_free;
	if (id) {
		ld_node_free = NODE(id)->next_free;
	} else {
		id = ld_vec_push(&ld_nodes);
		if (!id)
			return 0;
	}
	struct ld_node *n = NODE(id);
	g = n->gen;
	n->ord = ld_ord_next += LD_ORD_SPACE; /* no edges yet: anywhere will do */
	n->cls = cls;
	n->type = (uint8_t)type;
	n->out = n->in = 0;
	qa_write(&n->lock, lock);
	qa_write_release(&n->live, (uint8_t)1);
	if (!ld_itab_set(lock, id, g)) {
		n->live = 0;
		n->next_free = ld_node_free;
		ld_node_free = id;
		return 0;
	}
	ld_page_link(id);
	CLASS(cls)->objects++;
	CLASS(cls)->live++;
	ld_nobjects++;
	*gen = g;
	return id;
}

/* Is `lock` in a loaded module's data (a static lock)?  _dl_find_object()
 * asks the loader's sorted table of modules; dladdr(), which answers the
 * same, also looks for the nearest symbol (a scan of the module's symbol
 * table: tens of thousands of instructions in a large library). */
static bool ld_is_static(const void *lock)
{
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
	struct dl_find_object r;

	return _dl_find_object((void *)(uintptr_t)lock, &r) == 0;
#else
	Dl_info di;

	return dladdr(lock, &di) && di.dli_fname;
#endif
}

/* The node of `lock`, made at its first use if no init call made one. */
static uint32_t ld_node_of(const void *lock, enum ld_obj obj, uintptr_t pc, uint32_t *gen)
{
	uint32_t id = ld_itab_lookup(lock, gen);

	if (qa_likely(id))
		return id;
	/* First use (or a doubtful look-up): the creation stack, then the
	 * locked path. */
	uintptr_t f[LD_FRAMES_MAX];
	bool st = ld_is_static(lock);
	unsigned n = st ? 0 : ld_backtrace(pc, f, ld_class_frames);

	ld_spin_lock(&ld_graph_lock);
	int64_t s = ld_itab_find(lock);
	if (s >= 0) {
		uint64_t ref = ld_itab[s].ref;

		id = (uint32_t)(ref >> 32);
		if (id && NODE(id)->live && NODE(id)->lock == lock &&
		    NODE(id)->gen == (uint32_t)ref) {
			*gen = (uint32_t)ref;
			ld_spin_unlock(&ld_graph_lock);
			return id;
		}
	}
	uint32_t c = ld_class_get(st ? LD_ORIGIN_STATIC : LD_ORIGIN_USE, ld_type_of(obj),
				  st ? (uintptr_t)lock : 0, st ? 0 : ld_stack_id(f, n));
	id = c ? ld_node_new(lock, ld_type_of(obj), c, gen) : 0;
	ld_spin_unlock(&ld_graph_lock);
	return id;
}

void lockdep_init(const volatile void *vlock, enum ld_obj obj, uintptr_t pc)
{
	const void *lock = LD_PTR(vlock);
	uintptr_t f[LD_FRAMES_MAX];
	uint32_t gen;

	if (ld_busy)
		return;
	ld_busy_on();
	unsigned n = ld_backtrace(pc, f, ld_class_frames);
	ld_spin_lock(&ld_graph_lock);
	uint32_t c = ld_class_get(LD_ORIGIN_INIT, ld_type_of(obj), 0, ld_stack_id(f, n));
	if (c)
		(void)ld_node_new(lock, ld_type_of(obj), c, &gen);
	ld_spin_unlock(&ld_graph_lock);
	ld_busy_off();
}

/* Memory released (free, munmap, dlclose): every lock in [lo, hi) dies
 * with it.  The filter answers most calls (no lock in those pages)
 * without a lock, and without a call: the search is out of line. */
static void ld_forget_pages(uintptr_t lo, uintptr_t hi, uintptr_t p0, uintptr_t p1);

static inline void ld_forget_range(uintptr_t lo, uintptr_t hi)
{
	uintptr_t p = ld_filter_first(ld_filter, lo, hi);

	if (p)
		ld_forget_pages(lo, hi, p, (hi - 1) >> LD_PAGE_SHIFT);
}

/* The pages p0..p1 of [lo, hi), of which p0 may hold locks. */
static __attribute__((noinline)) void ld_forget_pages(uintptr_t lo, uintptr_t hi, uintptr_t p0,
						      uintptr_t p1)
{
	if (ld_busy) /* released inside a hook (which may hold the graph lock) */
		return;
	ld_busy_on();
	ld_spin_lock(&ld_graph_lock);
	for (uintptr_t p = p0; p <= p1; p++) {
		if (!qa_read(&ld_filter[ld_filter_slot(p)]))
			continue;
		uint32_t *head = ld_map_find(&ld_pages, (uint64_t)p + 2);

		for (uint32_t id = head ? *head : 0, next; id; id = next) {
			uintptr_t l = (uintptr_t)NODE(id)->lock;

			next = NODE(id)->page_next;
			if (l >= lo && l < hi)
				ld_node_kill(id); /* may empty the list: `next` read first */
		}
	}
	ld_spin_unlock(&ld_graph_lock);
	ld_busy_off();
}

/* ---- the dependency graph ------------------------------------------------------- */

/* A waiter in mode `wait` blocks on a lock held in mode `hold`: all but a
 * reader-preferring read against a read hold. */
static inline bool ld_blocks(unsigned wait, unsigned hold)
{
	return !(wait == LD_WAIT_RR && hold == LD_HOLD_R);
}

static uint32_t ld_edge_find(uint32_t from, uint32_t to)
{
	uint32_t *p = ld_map_find(&ld_edge_map, (uint64_t)from << 32 | to);

	return p ? *p : 0;
}

static void ld_edge_unlink(uint32_t e)
{
	struct ld_edge *d = EDGE(e);

	if (d->out_prev)
		EDGE(d->out_prev)->out_next = d->out_next;
	else
		NODE(d->from)->out = d->out_next;
	if (d->out_next)
		EDGE(d->out_next)->out_prev = d->out_prev;
	if (d->in_prev)
		EDGE(d->in_prev)->in_next = d->in_next;
	else
		NODE(d->to)->in = d->in_next;
	if (d->in_next)
		EDGE(d->in_next)->in_prev = d->in_prev;
	ld_map_del(&ld_edge_map, (uint64_t)d->from << 32 | d->to);
	d->next_free = ld_edge_free;
	ld_edge_free = e;
	ld_nedges_live--;
}

static uint32_t ld_edge_new(uint32_t from, uint32_t to)
{
	uint32_t e = ld_edge_free;

	if (e) {
		ld_edge_free = EDGE(e)->next_free;
	} else {
		e = ld_vec_push(&ld_edges);
		if (!e)
			return 0;
	}
	if (!ld_map_put(&ld_edge_map, (uint64_t)from << 32 | to, e)) {
		EDGE(e)->next_free = ld_edge_free;
		ld_edge_free = e;
		return 0;
	}
	struct ld_edge *d = EDGE(e);
	memset(d, 0, sizeof *d);
	d->from = from;
	d->to = to;
	d->out_next = NODE(from)->out;
	if (d->out_next)
		EDGE(d->out_next)->out_prev = e;
	NODE(from)->out = e;
	d->in_next = NODE(to)->in;
	if (d->in_next)
		EDGE(d->in_next)->in_prev = e;
	NODE(to)->in = e;
	ld_nedges_live++;
	ld_nedges_total++;
	return e;
}

static bool ld_queue_push(uint32_t *tail, struct ld_state s)
{
	if (*tail == ld_queue_cap) {
		uint32_t cap = ld_queue_cap ? ld_queue_cap * 2 : 4096;
		struct ld_state *q = ld_map((size_t)cap * sizeof *q);

		if (!q)
			return false;
		if (ld_queue) {
			memcpy(q, ld_queue, (size_t)ld_queue_cap * sizeof *q);
			munmap(ld_queue, (size_t)ld_queue_cap * sizeof *q);
		}
		ld_queue = q;
		ld_queue_cap = cap;
	}
	ld_queue[(*tail)++] = s;
	return true;
}

/*
 * Is there a path from node `start`, waited for in mode `wait`, back to
 * `target` held in mode `hold`, along which every lock blocks its waiter?
 * Fills path[] with its edges (from start) and returns their number, or 0.
 * Graph lock held.
 */
static int ld_path(uint32_t start, unsigned wait, uint32_t target, unsigned hold,
		   uint32_t *path, int max)
{
	uint32_t gen = ++ld_vis_gen, head = 0, tail = 0;

	if (gen == 0) {
		for (uint32_t i = 1; i < ld_nodes.n; i++)
			memset(NODE(i)->vis, 0, sizeof NODE(i)->vis);
		gen = ld_vis_gen = 1;
	}
	if (!ld_queue_push(&tail, (struct ld_state){ start, (uint8_t)wait, 0, -1, 0 }))
		return 0;
	NODE(start)->vis[wait] = gen;
	while (head < tail) {
		struct ld_state s = ld_queue[head++];

		for (uint32_t e = NODE(s.node)->out; e; e = EDGE(e)->out_next) {
			const struct ld_edge *d = EDGE(e);

			for (unsigned b = 0; b < 6; b++) {
				unsigned h = b / 3, w = b % 3;

				if (!(d->combos & (1u << b)) || !ld_blocks(s.wait, h))
					continue;
				if (d->to == target && ld_blocks(w, hold)) {
					int n = 0;

					for (int32_t q = (int32_t)head - 1; q > 0; q = ld_queue[q].parent)
						n++;
					if (n + 1 > max)
						return 0;
					path[n] = e;
					ld_path_how[n] = (uint8_t)b;
					for (int32_t q = (int32_t)head - 1, i = n - 1; q > 0;
					     q = ld_queue[q].parent, i--) {
						path[i] = ld_queue[q].edge;
						ld_path_how[i] = ld_queue[q].how;
					}
					return n + 1;
				}
				struct ld_node *to = NODE(d->to);
				if (to->vis[w] != gen) {
					to->vis[w] = gen;
					if (!ld_queue_push(&tail, (struct ld_state){
						d->to, (uint8_t)w, (uint8_t)b, (int32_t)head - 1, e }))
						return 0;
				}
			}
		}
	}
	return 0;
}

static bool ld_pk_push(uint32_t *n, uint32_t id)
{
	if (*n == ld_pk_cap) {
		uint32_t cap = ld_pk_cap ? ld_pk_cap * 2 : 4096;
		uint32_t *q = ld_map((size_t)cap * sizeof *q);

		if (!q)
			return false;
		if (ld_pk) {
			memcpy(q, ld_pk, (size_t)ld_pk_cap * sizeof *q);
			munmap(ld_pk, (size_t)ld_pk_cap * sizeof *q);
		}
		ld_pk = q;
		ld_pk_cap = cap;
	}
	ld_pk[(*n)++] = id;
	return true;
}

static int ld_by_ord(const void *a, const void *b)
{
	uint64_t x = NODE(*(const uint32_t *)a)->ord, y = NODE(*(const uint32_t *)b)->ord;

	return x < y ? -1 : x > y;
}

static int ld_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Collect into ld_pk[*n ..] the nodes reachable from `start` along out-edges
 * (back = false) whose ord is below `lim`, or reaching `start` along
 * in-edges (back = true) whose ord is above `lim`; *edge gets the nearest
 * ord of a neighbour left out (the lowest above, or the highest below).
 * False when `stop` is met (a cycle) or memory runs out.  Graph lock.
 */
static bool ld_collect(uint32_t start, bool back, uint64_t lim, uint32_t stop, uint32_t *n,
		       uint64_t *edge, uint32_t gen)
{
	uint32_t head = *n;
	unsigned v = back ? 2 : 1;

	if (!ld_pk_push(n, start))
		return false;
	NODE(start)->vis[v] = gen;
	for (; head < *n; head++) {
		struct ld_node *x = NODE(ld_pk[head]);

		for (uint32_t e = back ? x->in : x->out; e;
		     e = back ? EDGE(e)->in_next : EDGE(e)->out_next) {
			uint32_t wi = back ? EDGE(e)->from : EDGE(e)->to;
			struct ld_node *w = NODE(wi);

			if (wi == stop)
				return false;
			if (w->vis[v] == gen)
				continue;
			if (back ? w->ord > lim : w->ord < lim) {
				w->vis[v] = gen;
				if (!ld_pk_push(n, wi))
					return false;
			} else if (back ? w->ord > *edge : w->ord < *edge) {
				*edge = w->ord;
			}
		}
	}
	return true;
}

/* Spread the nodes ld_pk[a .. b-1], in their order, between ords lo and
 * hi (exclusive); false when the gap is too small. */
static bool ld_spread(uint32_t a, uint32_t b, uint64_t lo, uint64_t hi)
{
	uint64_t step = hi > lo ? (hi - lo) / (b - a + 1) : 0;

	if (step == 0)
		return false;
	qsort(ld_pk + a, b - a, sizeof *ld_pk, ld_by_ord);
	for (uint32_t i = a; i < b; i++)
		NODE(ld_pk[i])->ord = lo + step * (i - a + 1);
	return true;
}

static void ld_vis_next(uint32_t *gen)
{
	*gen = ++ld_vis_gen;
	if (*gen == 0) {
		for (uint32_t i = 1; i < ld_nodes.n; i++)
			memset(NODE(i)->vis, 0, sizeof NODE(i)->vis);
		*gen = ld_vis_gen = 1;
	}
}

/* Every live node numbered again, LD_ORD_SPACE apart, in its order. */
static void ld_relabel(void)
{
	uint32_t n = 0;

	for (uint32_t i = 1; i < ld_nodes.n; i++)
		if (NODE(i)->live && !ld_pk_push(&n, i)) {
			ld_unordered = true;
			return;
		}
	qsort(ld_pk, n, sizeof *ld_pk, ld_by_ord);
	ld_ord_low = 1ull << 62;
	for (uint32_t i = 0; i < n; i++)
		NODE(ld_pk[i])->ord = (1ull << 62) + (uint64_t)i * LD_ORD_SPACE;
	ld_ord_next = (1ull << 62) + (uint64_t)n * LD_ORD_SPACE;
}

/*
 * Edge from -> to has just been added against the order (ord[to] <
 * ord[from]).  B, the nodes that reach `from` with ords above ord[to],
 * must all come before F, the nodes `to` reaches with ords below
 * ord[from].  Cheapest first: B moved into the gap just below `to`
 * (usually a few nodes: the new lock and what led to it), else F moved
 * into the gap just above `from`, else both sets exchange their ords
 * (Pearce and Kelly) and every node is numbered again.  Reaching one end
 * from the other means a cycle (one that cannot deadlock, or it would
 * have been reported): the order is then given up.  Graph lock.
 */
static void ld_reorder(uint32_t from, uint32_t to)
{
	uint64_t lb = NODE(to)->ord, ub = NODE(from)->ord, below = 0, above = 3ull << 62;
	uint32_t gen, nb = 0, nf;

	ld_vis_next(&gen);
	if (!ld_collect(from, true, lb, to, &nb, &below, gen))
		goto give_up;
	if (ld_spread(0, nb, below, lb))
		return;
	nf = nb;
	if (!ld_collect(to, false, ub, from, &nf, &above, gen))
		goto give_up;
	if (ld_spread(nb, nf, ub, above))
		return;
	/* Both: the union's ords, sorted, B's nodes first then F's. */
	{
		uint32_t n = nf;
		uint64_t *ords = ld_map((size_t)n * sizeof *ords);

		if (!ords)
			goto give_up;
		qsort(ld_pk, nb, sizeof *ld_pk, ld_by_ord);
		qsort(ld_pk + nb, nf - nb, sizeof *ld_pk, ld_by_ord);
		for (uint32_t i = 0; i < n; i++)
			ords[i] = NODE(ld_pk[i])->ord;
		qsort(ords, n, sizeof *ords, ld_u64_cmp);
		for (uint32_t i = 0; i < n; i++)
			NODE(ld_pk[i])->ord = ords[i];
		munmap(ords, (size_t)n * sizeof *ords);
	}
	ld_relabel();
	return;
give_up:
	ld_unordered = true;
}

/* ---- naming ------------------------------------------------------------------------ */

struct ld_supp {
	const char *pat;
	uint8_t what;      /* 0 any, 1 class, 2 site */
	uint64_t hits;
};
static struct ld_supp ld_supps[LD_MAX_PATTERNS];
static unsigned ld_nsupps;

/* Report text accumulates in a growable buffer (report lock). */
struct ld_out {
	char *buf;
	size_t len, cap;
	bool suppressed;
	unsigned supp;
};
static struct ld_out ld_rep, ld_jrep; /* the text, and its JSON form */
static struct ld_out ld_json;         /* every report's JSON, for the exit */

static void ld_vadd(struct ld_out *o, const char *fmt, va_list ap)
{
	for (;;) {
		va_list aq;

		va_copy(aq, ap);
		int n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0, fmt, aq);
		va_end(aq);
		if (n < 0)
			return;
		if (o->buf && o->len + (size_t)n < o->cap) {
			o->len += (size_t)n;
			return;
		}
		size_t cap = o->cap ? o->cap * 2 : 65536;

		while (cap < o->len + (size_t)n + 1)
			cap *= 2;
		char *b = ld_map(cap);
		if (!b)
			return;
		if (o->buf) {
			memcpy(b, o->buf, o->len);
			munmap(o->buf, o->cap);
		}
		o->buf = b;
		o->cap = cap;
	}
}

static void ld_add(struct ld_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ld_add(struct ld_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ld_vadd(o, fmt, ap);
	va_end(ap);
}

/* A JSON string of s. */
static void ld_jstr(struct ld_out *o, const char *s)
{
	ld_add(o, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			ld_add(o, "\\%c", c);
		else if (c < 0x20)
			ld_add(o, "\\u%04x", c);
		else
			ld_add(o, "%c", c);
	}
	ld_add(o, "\"");
}

static void ld_check_supp(struct ld_out *o, const char *text, unsigned what)
{
	for (unsigned i = 0; i < ld_nsupps; i++)
		if ((ld_supps[i].what == 0 || ld_supps[i].what == what) &&
		    fnmatch(ld_supps[i].pat, text, 0) == 0) {
			o->suppressed = true;
			o->supp = i;
		}
}

/* One frame, "function (file:line)" as the symbolizer gives it. */
static void ld_sym(uintptr_t pc, char *buf, size_t len)
{
	shim_symbolize((const void *)pc, buf, len);
}

/* The first frame of f[0..n-1] outside lock wrappers (the last if all are). */
static unsigned ld_first_user(const uintptr_t *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		char fn[256], mod[128];
		unsigned long size;

		shim_symbolize_func((const void *)f[i], fn, sizeof fn, &size, mod, sizeof mod);
		if (!shim_is_wrapper(fn, size, mod))
			return i;
	}
	return n ? n - 1 : 0;
}

/* A site (one return address), checked against the site suppressions. */
static void ld_site(struct ld_out *o, uintptr_t pc, char *buf, size_t len)
{
	ld_sym(pc, buf, len);
	ld_check_supp(o, buf, 2);
}

/* A stack, one frame a line, wrapper frames marked; into the text and
 * (as an array of strings) into the JSON. */
static void ld_add_stack(struct ld_out *o, const uintptr_t *f, unsigned n, const char *indent)
{
	unsigned u = ld_first_user(f, n);
	char s[256];

	ld_add(&ld_jrep, "[");
	for (unsigned i = 0; i < n; i++) {
		ld_site(o, f[i], s, sizeof s);
		ld_add(o, "%s%s%s\n", indent, s, i < u ? "  [lock wrapper]" : "");
		if (i)
			ld_add(&ld_jrep, ",");
		ld_jstr(&ld_jrep, s);
	}
	ld_add(&ld_jrep, "]");
}

/* A class described: "initialised at f (x.c:3) <- g (x.c:9)" from its
 * first frame outside wrappers, or "static `sym` (module)". */
static void ld_class_desc(uint32_t c, char *buf, size_t len)
{
	const struct ld_class *k = CLASS(c);
	uintptr_t f[LD_FRAMES_MAX] = { 0 };
	size_t o;

	if (k->origin == LD_ORIGIN_STATIC) {
		char s[256];

		shim_symbolize_data((const void *)k->addr, s, sizeof s);
		snprintf(buf, len, "static %s %s", ld_type_name[k->type], s);
		return;
	}
	unsigned n = ld_stack_get(k->stack, f, LD_FRAMES_MAX);
	unsigned u = ld_first_user(f, n);
	o = (size_t)snprintf(buf, len, "%s", k->origin == LD_ORIGIN_INIT ? "initialised at "
						: "first taken at ");
	for (unsigned i = u, shown = 0; i < n && shown < 3 && o < len; i++, shown++) {
		char s[256], fn[256], mod[128];
		unsigned long size;

		/* up to three frames of the program's own (not libc's start-up) */
		shim_symbolize_func((const void *)f[i], fn, sizeof fn, &size, mod, sizeof mod);
		if (shown && strncmp(mod, "libc.so", 7) == 0)
			break;

		ld_sym(f[i], s, sizeof s);
		o += (size_t)snprintf(buf + o, len - o, "%s%s", shown ? " <- " : "", s);
	}
	if (!n)
		snprintf(buf + o, len - o, "(unknown)");
}

/* A lock object: "mutex 0x55d0 (class #3, initialised at ...)". */
static void ld_obj_desc_cls(struct ld_out *o, uint32_t cls, const void *lock, enum ld_type t,
			    char *buf, size_t len)
{
	char c[1024];

	if (!cls) {
		snprintf(buf, len, "%s %p (never locked through the checker)", ld_type_name[t], lock);
		return;
	}
	ld_class_desc(cls, c, sizeof c);
	if (o)
		ld_check_supp(o, c, 1);
	if (CLASS(cls)->origin == LD_ORIGIN_STATIC) {
		snprintf(buf, len, "%s at %p (class #%u)", c, lock, cls);
	} else if (ld_is_static(lock)) { /* initialised, in a module's data */
		char d[256];

		shim_symbolize_data(lock, d, sizeof d);
		snprintf(buf, len, "%s %p = %s (class #%u, %s)", ld_type_name[t], lock, d, cls, c);
	} else {
		snprintf(buf, len, "%s %p (class #%u, %s)", ld_type_name[t], lock, cls, c);
	}
}

static void ld_obj_desc(struct ld_out *o, uint32_t node, const void *lock, enum ld_type t,
			char *buf, size_t len)
{
	ld_obj_desc_cls(o, node ? NODE(node)->cls : 0, lock, t, buf, len);
}

void lockdep_node_name(uint32_t node, uint32_t gen, char *buf, unsigned long len)
{
	(void)gen;
	if (!node || node >= ld_nodes.n) {
		snprintf(buf, len, "(untracked lock)");
		return;
	}
	ld_obj_desc(NULL, node, NODE(node)->lock, (enum ld_type)NODE(node)->type, buf, len);
}

/* ---- reports --------------------------------------------------------------------------- */

static void ld_begin(const char *kind)
{
	ld_spin_lock(&ld_rep_lock);
	ld_rep.len = 0;
	ld_rep.suppressed = false;
	ld_jrep.len = 0;
	ld_add(&ld_jrep, "{\"kind\":");
	ld_jstr(&ld_jrep, kind);
}

static void ld_header(const char *what, const char *kind)
{
	char comm[16];

	ld_begin(kind);
	ld_comm_self(comm);
	ld_add(&ld_rep, "qlock-lockdep: %s\n  thread \"%s\" (tid %d)\n", what, comm,
	       (int)ld_gettid());
	ld_add(&ld_jrep, ",\"title\":");
	ld_jstr(&ld_jrep, what);
	ld_add(&ld_jrep, ",\"thread\":{\"name\":");
	ld_jstr(&ld_jrep, comm);
	ld_add(&ld_jrep, ",\"tid\":%d}", (int)ld_gettid());
}

static void ld_add_held(const struct ld_thread *t)
{
	char c[1200], s[256];

	ld_add(&ld_jrep, ",\"held\":[");
	if (!t || t->depth == 0) {
		ld_add(&ld_rep, "  locks held by this thread: none\n");
		ld_add(&ld_jrep, "]");
		return;
	}
	ld_add(&ld_rep, "  locks held by this thread (oldest first):\n");
	for (uint32_t i = 0; i < t->depth; i++) {
		const struct ld_held *h = &t->held[i];

		ld_obj_desc(&ld_rep, h->node, h->lock, ld_type_of((enum ld_obj)h->obj), c, sizeof c);
		ld_site(&ld_rep, h->pc, s, sizeof s);
		ld_add(&ld_rep, "    %s%s, taken at %s%s%s\n",
		       h->obj == LD_RWLOCK_READ ? "read: " : h->obj == LD_RWLOCK_WRITE ? "write: " : "",
		       c, s, h->trylock ? " (trylock)" : "", h->cond ? " (condvar wait)" : "");
		ld_add(&ld_jrep, "%s{\"lock\":\"%p\",\"object\":", i ? "," : "", h->lock);
		ld_jstr(&ld_jrep, c);
		ld_add(&ld_jrep, ",\"mode\":\"%s\",\"taken_at\":",
		       h->obj == LD_RWLOCK_READ ? "read" : h->obj == LD_RWLOCK_WRITE ? "write" : "exclusive");
		ld_jstr(&ld_jrep, s);
		ld_add(&ld_jrep, ",\"trylock\":%s}", h->trylock ? "true" : "false");
	}
	ld_add(&ld_jrep, "]");
}

static void ld_exit(void);

static void ld_end(const char *hint)
{
	if (ld_rep.suppressed) {
		qa_fetch_add_relaxed(&ld_nsuppressed, 1);
		ld_supps[ld_rep.supp].hits++;
		ld_spin_unlock(&ld_rep_lock);
		return;
	}
	ld_add(&ld_rep, "  hint: %s\n\n", hint);
	ld_add(&ld_jrep, ",\"hint\":");
	ld_jstr(&ld_jrep, hint);
	ld_add(&ld_jrep, "}");
	if (ld_json_path[0])
		ld_add(&ld_json, "%s%.*s", ld_json.len ? ",\n" : "", (int)ld_jrep.len, ld_jrep.buf);
	(void)!write(ld_fd, ld_rep.buf, ld_rep.len);
	qa_fetch_add_relaxed(&ld_nreports, 1);
	ld_spin_unlock(&ld_rep_lock);
	if (ld_abort) {
		static const char m[] = "qlock-lockdep: aborting (QLOCK_LOCKDEP=abort)\n";

		ld_exit(); /* the summary, the class list, the JSON document */
		(void)!write(ld_fd, m, sizeof m - 1);
		abort();
	}
}

/* First time for this problem key?  (Report lock not needed: own lock.) */
static int ld_once_lock;

static bool ld_once(uint64_t key)
{
	int *lock = &ld_once_lock;
	bool first;

	key = ld_mix(key);
	key = key < 2 ? key + 2 : key;
	ld_spin_lock(lock);
	first = !ld_map_find(&ld_once_map, key);
	if (first && !ld_map_put(&ld_once_map, key, 1))
		first = true; /* out of memory: better a repeat than a lost report */
	ld_spin_unlock(lock);
	return first;
}

static const char *const ld_mode_word[] = { "", " (read)", " (write)", "" };

/* A cycle's objects and edges, copied under the graph lock (the report is
 * written after it, as nodes may die meanwhile); ld_cyc_lock. */
static struct ld_cyc {
	const void *lock;
	uint32_t node, cls;
	uint8_t type;
	/* the edge from this object to the next */
	char comm[16];
	int32_t tid;
	uintptr_t pc_from;
	uint8_t hold, wait, cond;
	unsigned nf;
	uintptr_t f[LD_FRAMES_MAX];
} ld_cyc[LD_MAX_CYCLE + 1];
static int ld_cyc_lock;

static void ld_cyc_gather(uint32_t node, const void *lock, const uint32_t *path, int n)
{
	for (int i = 0; i <= n; i++) {
		uint32_t id = i == 0 ? node : EDGE(path[i - 1])->to;
		struct ld_cyc *y = &ld_cyc[i];

		y->node = id;
		y->lock = i == 0 ? lock : NODE(id)->lock;
		y->cls = NODE(id)->cls;
		y->type = NODE(id)->type;
		if (i < n) {
			const struct ld_edge *d = EDGE(path[i]);

			memcpy(y->comm, d->comm, sizeof y->comm);
			y->tid = d->tid;
			y->pc_from = d->pc_from[y->hold] ? d->pc_from[y->hold] : d->pc_from[d->hold];
			y->hold = ld_path_how[i] / 3; /* the modes the cycle needs */
			y->wait = ld_path_how[i] % 3;
			y->cond = d->cond;
			unsigned b = y->hold * 3u + y->wait;
			y->nf = ld_stack_get(d->stack[b] ? d->stack[b] : d->stack[d->hold * 3 + d->wait],
					     y->f, LD_FRAMES_MAX);
		}
	}
}

static void ld_report_cycle(const struct ld_held *h, enum ld_obj obj, uintptr_t pc, bool cond,
			    const struct ld_thread *t, int n)
{
	char c[1200], s1[256], comm[16];
	uintptr_t f[LD_FRAMES_MAX];
	unsigned nf;

	ld_begin("cycle");
	ld_add(&ld_rep, "qlock-lockdep: possible deadlock: lock-order cycle of %d locks\n", n + 1);
	ld_add(&ld_jrep, ",\"title\":\"possible deadlock: lock-order cycle\",\"locks\":[");
	/* The cycle's objects: #0 the one being taken, then along the path. */
	for (int i = 0; i <= n; i++) {
		const struct ld_cyc *y = &ld_cyc[i];

		ld_obj_desc_cls(&ld_rep, y->cls, y->lock, (enum ld_type)y->type, c, sizeof c);
		ld_add(&ld_rep, "  #%d %s\n", i, c);
		ld_add(&ld_jrep, "%s{\"n\":%d,\"lock\":\"%p\",\"class\":%u,\"object\":", i ? "," : "",
		       i, y->lock, y->cls);
		ld_jstr(&ld_jrep, c);
		ld_add(&ld_jrep, "}");
	}
	ld_add(&ld_jrep, "],\"chains\":[");
	ld_comm_self(comm);
	ld_site(&ld_rep, h->pc, s1, sizeof s1);
	ld_add(&ld_rep, "  now: thread \"%s\" (tid %d) holds #%d%s, taken at %s\n"
	       "       and %s #0%s at:\n", comm, (int)t->tid, n, h->obj == LD_RWLOCK_READ ? " (read)" : "",
	       s1, cond ? "re-takes (after a condition-variable wait)" : "takes",
	       ld_mode_word[obj]);
	ld_add(&ld_jrep, "{\"thread\":{\"name\":");
	ld_jstr(&ld_jrep, comm);
	ld_add(&ld_jrep, ",\"tid\":%d},\"holds\":%d,\"held_at\":", (int)t->tid, n);
	ld_jstr(&ld_jrep, s1);
	ld_add(&ld_jrep, ",\"takes\":0,\"condvar\":%s,\"stack\":", cond ? "true" : "false");
	nf = ld_backtrace(pc, f, ld_depth);
	ld_add_stack(&ld_rep, f, nf, "         ");
	ld_add(&ld_jrep, "}");
	for (int i = 0; i < n; i++) {
		const struct ld_cyc *d = &ld_cyc[i];

		ld_site(&ld_rep, d->pc_from, s1, sizeof s1);
		ld_add(&ld_rep, "  before: thread \"%s\" (tid %d) held #%d%s, taken at %s\n"
		       "       and %s #%d%s at:\n", d->comm, (int)d->tid, i,
		       d->hold == LD_HOLD_R ? " (read)" : "", s1,
		       d->cond ? "re-took (after a condition-variable wait)" : "took", i + 1,
		       d->wait != LD_WAIT_W ? " (read)" : "");
		ld_add(&ld_jrep, ",{\"thread\":{\"name\":");
		ld_jstr(&ld_jrep, d->comm);
		ld_add(&ld_jrep, ",\"tid\":%d},\"holds\":%d,\"held_at\":", (int)d->tid, i);
		ld_jstr(&ld_jrep, s1);
		ld_add(&ld_jrep, ",\"takes\":%d,\"condvar\":%s,\"stack\":", i + 1,
		       d->cond ? "true" : "false");
		ld_add_stack(&ld_rep, d->f, d->nf, "         ");
		ld_add(&ld_jrep, "}");
	}
	ld_add(&ld_jrep, "]");
	ld_add(&ld_rep, "  run at the same time, each of these threads can wait for a lock "
	       "the next one holds\n");
	ld_add_held(t);
	ld_end("take these locks in one global order everywhere (or take the later one "
	       "with trylock and back off); if the two chains can never run at once, "
	       "suppress it with a class: or site: pattern (--lockdep-suppress)");
}

static inline struct ld_thread *ld_thread_get(void);

/* Has thread `me` waited (pthread_join, directly or through the threads
 * it joined) for the end of the thread with uid `uid`?  Graph lock. */
static bool ld_joined_by(uint32_t uid, uint32_t me)
{
	for (unsigned n = 0; uid && n < 64; n++) {
		uint32_t *j = ld_map_find(&ld_joiner, (uint64_t)uid + 2);

		if (!j)
			return false;
		if (*j == me)
			return true;
		uid = *j;
	}
	return false;
}

/* A cycle some of whose dependencies were made by threads this one has
 * joined: those threads ended before this acquisition, so the chains
 * cannot run at once (a verification pass after the workers' join).
 * Graph lock. */
static bool ld_cycle_joined(const struct ld_thread *t, const uint32_t *path, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t u = EDGE(path[i])->uid;

		if (u != t->uid && ld_joined_by(u, t->uid))
			return true;
	}
	return false;
}

EXPORT void qlock_lockdep_joined(pthread_t th)
{
	struct ld_thread *t;

	if (!shim_lockdep_on || ld_busy)
		return;
	ld_busy_on();
	t = ld_thread_get();
	if (t) {
		ld_spin_lock(&ld_graph_lock);
		uint64_t key = (uint64_t)th | 2ull << 62;
		uint32_t *u = ld_map_find(&ld_exited, key);

		if (u) {
			(void)ld_map_put(&ld_joiner, (uint64_t)*u + 2, t->uid);
			ld_map_del(&ld_exited, key);
		}
		ld_spin_unlock(&ld_graph_lock);
	}
	ld_busy_off();
}

/* Record the edges from every held lock to node `node` taken in mode
 * `wait`; report any that closes a cycle.  Graph lock taken here. */
static void ld_check_deps(struct ld_thread *t, uint32_t node, uint32_t gen, const void *lock,
			  enum ld_obj obj, unsigned wait, uintptr_t pc, bool cond)
{
	uint32_t path[LD_MAX_CYCLE];
	uint32_t stack = 0;
	char comm[16];
	bool have_comm = false;

	for (uint32_t i = 0; i < t->depth; i++) {
		const struct ld_held *h = &t->held[i];
		unsigned hold = ld_hold_of((enum ld_obj)h->obj);
		uint8_t bit = (uint8_t)(1u << (hold * 3 + wait));

		if (h->node == 0 || h->node == node)
			continue;
		ld_spin_lock(&ld_graph_lock);
		struct ld_node *hn = NODE(h->node), *nn = NODE(node);
		if (hn->gen != h->gen || !hn->live || nn->gen != gen || !nn->live) {
			ld_spin_unlock(&ld_graph_lock);
			continue; /* destroyed meanwhile */
		}
		uint32_t e = ld_edge_find(h->node, node);
		if (e && (EDGE(e)->combos & bit)) {
			ld_spin_unlock(&ld_graph_lock);
			continue;
		}
		/* A node with no edges yet goes anywhere: the one held before
		 * everything, the one taken after everything.  Along the
		 * order, no path can lead back: no search. */
		if (!hn->out && !hn->in)
			hn->ord = ld_ord_low -= LD_ORD_SPACE;
		if (!nn->out && !nn->in)
			nn->ord = ld_ord_next += LD_ORD_SPACE;
		bool along = !ld_unordered && hn->ord < nn->ord;
		int n = along ? 0 : ld_path(node, wait, h->node, hold, path, LD_MAX_CYCLE);
		if (n && ld_cycle_joined(t, path, n)) {
			/* Not a deadlock of this run's threads: not reported,
			 * counted, and the edge stays out of the graph. */
			ld_njoined++;
			ld_spin_unlock(&ld_graph_lock);
			continue;
		}
		if (n) {
			/* Once per pair of classes and call sites. */
			uint64_t key = ld_mix((uint64_t)hn->cls << 32 | nn->cls) ^ ld_mix(h->pc * 7 + pc);

			if (ld_once(key)) {
				ld_spin_lock(&ld_cyc_lock);
				ld_cyc_gather(node, lock, path, n);
				ld_spin_unlock(&ld_graph_lock);
				ld_report_cycle(h, obj, pc, cond, t, n);
				ld_spin_unlock(&ld_cyc_lock);
			} else {
				ld_spin_unlock(&ld_graph_lock);
			}
			continue;
		}
		if (!stack) {
			uintptr_t f[LD_FRAMES_MAX];
			unsigned nf = ld_backtrace(pc, f, ld_depth);

			stack = ld_stack_id(f, nf);
		}
		if (!e) {
			e = ld_edge_new(h->node, node);
			if (e) {
				struct ld_edge *d = EDGE(e);

				if (!have_comm) {
					ld_comm_self(comm);
					have_comm = true;
				}
				d->hold = (uint8_t)hold;
				d->wait = (uint8_t)wait;
				d->cond = cond;
				d->tid = t->tid;
				d->uid = t->uid;
				memcpy(d->comm, comm, sizeof d->comm);
			}
		}
		if (e) {
			struct ld_edge *d = EDGE(e);

			if (!d->pc_from[hold])
				d->pc_from[hold] = h->pc;
			if (!d->stack[hold * 3 + wait])
				d->stack[hold * 3 + wait] = stack;
			d->combos |= bit;
			if (!along && !ld_unordered && hn->ord > nn->ord)
				ld_reorder(h->node, node);
		}
		ld_spin_unlock(&ld_graph_lock);
	}
}

/* ---- threads ------------------------------------------------------------------------------ */

static void ld_thread_exit(void *p)
{
	struct ld_thread *t = p;

	if (t != ld_me)
		return;
	ld_me = NULL;
	ld_hot = NULL;
	qa_write(&t->depth, 0u);
	t->chain = 0;
	ld_spin_lock(&ld_graph_lock); /* ended: a join may now name it */
	(void)ld_map_put(&ld_exited, (uint64_t)t->self | 2ull << 62, t->uid);
	ld_spin_unlock(&ld_graph_lock);
	qa_write_release(&t->tid, 0); /* free for another thread */
}

static struct ld_thread *ld_thread_new(void)
{
	static struct ld_vec threads;
	int32_t tid = ld_gettid();
	struct ld_thread *t;

	for (t = qa_read_acquire(&ld_thread_list); t; t = t->next) {
		int32_t z = 0;

		if (qa_read(&t->tid) == 0 && qa_try_cmpxchg_acquire(&t->tid, &z, tid))
			goto got;
	}
	ld_spin_lock(&ld_graph_lock);
	uint32_t i = threads.chunk || ld_vec_init(&threads, sizeof *t) ? ld_vec_push(&threads) : 0;
	ld_spin_unlock(&ld_graph_lock);
	if (!i)
		return NULL;
	t = ld_vec_at(&threads, i);
	t->held = t->inline_held;
	t->cap = LD_HELD_INLINE;
	t->tid = tid;
	t->linked = true;
	{
		struct ld_thread *h = qa_read(&ld_thread_list);

		do /* pairs with the read_acquire in lockdep_threads() */
			t->next = h;
		while (!qa_try_cmpxchg_release(&ld_thread_list, &h, t));
	}
got:
	t->chain = 0;
	qa_write(&t->depth, 0u);
	t->uid = qa_fetch_add_relaxed(&ld_uid_next, 1) + 1;
	t->self = pthread_self();
	ld_spin_lock(&ld_graph_lock); /* a detached thread's entry: its id is reused */
	ld_map_del(&ld_exited, (uint64_t)t->self | 2ull << 62);
	ld_spin_unlock(&ld_graph_lock);
	ld_me = t;
	(void)pthread_setspecific(ld_key, t);
	return t;
}

static inline struct ld_thread *ld_thread_get(void)
{
	struct ld_thread *t = ld_me;

	return qa_likely(t != NULL) ? t : ld_thread_new();
}

struct ld_thread *lockdep_threads(void)
{
	return shim_lockdep_on ? qa_read_acquire(&ld_thread_list) : NULL;
}

/* Room for one more held entry: the array doubles (the old one stays
 * mapped, for readers; lockdep.h). */
static bool ld_held_room(struct ld_thread *t)
{
	if (t->depth < t->cap)
		return true;
	uint32_t cap = t->cap * 2;
	struct ld_held *h = ld_map((size_t)cap * sizeof *h);

	if (!h)
		return false;
	memcpy(h, t->held, (size_t)t->cap * sizeof *h);
	qa_write_release(&t->held, h);
	qa_write_release(&t->cap, cap); /* after the array: see lockdep.h */
	return true;
}

/* ---- the hooks ------------------------------------------------------------------------------ */

/* Drop held entry i, re-hashing the chain of the entries above it. */
static void ld_remove(struct ld_thread *t, int i)
{
	uint32_t d = t->depth;
	uint64_t chain = t->held[i].chain;

	for (uint32_t j = (uint32_t)i; j + 1 < d; j++) {
		t->held[j] = t->held[j + 1];
		t->held[j].chain = chain;
		chain = ld_chain_add(chain, t->held[j].node, t->held[j].gen,
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

/* A lock taken at its first try that this thread's stack says it holds
 * (entry i): only a re-take of a recursive mutex or a read re-take of an
 * rwlock succeeds at once on a lock the thread holds; anything else was
 * released by another thread (reported there). */
static bool ld_taken_stale(const struct ld_thread *t, int i, const void *lock, enum ld_obj obj)
{
	if (obj == LD_MUTEX)
		return (((const struct qm *)lock)->kind & MUTEX_KIND_MASK) != MUTEX_RECURSIVE;
	return !(obj == LD_RWLOCK_READ && t->held[i].obj == LD_RWLOCK_READ);
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
			   const char *why, const char *hint)
{
	char c[1200], s[256];
	uintptr_t f[LD_FRAMES_MAX];

	if (!ld_once((uint64_t)pc * 8 + 1))
		return;
	ld_header(what, "self");
	ld_obj_desc(&ld_rep, t->held[i].node, lock, ld_type_of(obj), c, sizeof c);
	ld_add(&ld_rep, "  %s\n", c);
	ld_add(&ld_jrep, ",\"lock\":\"%p\",\"object\":", lock);
	ld_jstr(&ld_jrep, c);
	ld_site(&ld_rep, t->held[i].pc, s, sizeof s);
	ld_add(&ld_rep, "  held since %s\n", s);
	ld_add(&ld_jrep, ",\"held_at\":");
	ld_jstr(&ld_jrep, s);
	ld_add(&ld_rep, "  %s again at:\n", mode == LD_TIMED ? "timed lock" : "locked");
	ld_add(&ld_jrep, ",\"stack\":");
	unsigned nf = ld_backtrace(pc, f, ld_depth);
	ld_add_stack(&ld_rep, f, nf, "    ");
	ld_add(&ld_rep, "  %s%s\n", why, mode == LD_TIMED ? " (here: until the timeout)" : "");
	ld_add_held(t);
	ld_end(hint);
}

/* The watchdog's view of a blocking acquisition (deadlock.h). */
static inline void ld_wait_begin(struct ld_thread *t, const void *lock, enum ld_obj obj,
				 uintptr_t pc)
{
	t->wait_lock = lock;
	t->wait_pc = pc;
	t->wait_obj = (uint8_t)obj;
	t->wait_behind = obj == LD_RWLOCK_READ && ld_wait_of(lock, obj) == LD_WAIT_R;
	/* The fields before the odd sequence: pairs with ld_snapshot(). */
	qa_write_release(&t->wait_seq, t->wait_seq + 1);
	if (qa_unlikely(!t->armed) && t->depth > 0) {
		t->armed = true; /* once per thread: the watchdog runs from then */
		shim_deadlock_arm();
	}
}

/* A blocking acquisition that took the lock at its first try: checked as
 * one that blocks, but it never waited (lockdep_acquired()). */
#define LD_TAKEN 3

/* A push checked (ld_acquire()): into the set's first way, whose entry
 * moves to the second. */
static void ld_trans_add(struct ld_thread *t, const struct ld_acq *a)
{
	struct ld_trans *e = ld_trans_set(t, a->base, a->lock);

	e[1] = e[0];
	e->lock = a->lock;
	e->base = a->base;
	e->next = a->chain;
	e->node = a->node;
	e->gen = a->gen;
	e->live_gen = &NODE(a->node)->gen; /* nodes never move */
	e->obj = a->obj;
}

static inline __attribute__((always_inline)) void
ld_acquire(struct ld_acq *a, const void *lock, enum ld_obj obj, int mode, uintptr_t pc,
	   bool cond)
{
	struct ld_thread *t;

	a->t = NULL;
	if (ld_busy)
		return;
	ld_busy_on();
	t = ld_thread_get();
	if (!t)
		goto out;
	{
		const struct ld_trans *e = ld_trans_find(t, t->chain, lock, obj);

		if (qa_likely(e != NULL)) {
			a->t = t;
			a->lock = lock;
			a->pc = pc;
			a->node = e->node;
			a->gen = e->gen;
			a->obj = (uint8_t)obj;
			a->mode = (uint8_t)mode;
			a->cond = cond;
			a->recurse = -1;
			a->base = t->chain;
			a->chain = e->next;
			if (mode == LD_BLOCK)
				ld_wait_begin(t, lock, obj, pc);
			goto out;
		}
	}
	{
		/* The node: the thread's own cache first (an entry holds while its node
		 * lives in the same generation (pairs with ld_node_kill()). */
		struct ld_tnode *c = &t->tnode[ld_ihash(lock) & (LD_TCACHE - 1)];
		struct ld_node *nd;

		if (c->lock == lock && c->node &&
		    (nd = NODE(c->node), qa_read_acquire(&nd->gen) == c->gen) &&
		    qa_read(&nd->live)) {
			a->node = c->node;
			a->gen = c->gen;
		} else {
			a->node = ld_node_of(lock, obj, pc, &a->gen);
			c->lock = lock;
			c->node = a->node;
			c->gen = a->gen;
		}
	}
	if (!a->node)
		goto out;
	a->t = t;
	a->lock = lock;
	a->pc = pc;
	a->obj = (uint8_t)obj;
	a->mode = (uint8_t)mode;
	a->cond = cond;
	a->recurse = -1;
	a->chain = 0; /* not worked out (a re-take) */
	if (mode == LD_BLOCK)
		ld_wait_begin(t, lock, obj, pc);

	int i = ld_find_held(t, lock);
	if (i >= 0 && (mode == LD_TAKEN ? ld_taken_stale(t, i, lock, obj) : ld_stale(lock, obj))) {
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
					       "the mutex is not recursive: the thread waits for itself",
					       "unlock before re-locking, or make the mutex "
					       "PTHREAD_MUTEX_RECURSIVE if re-entry is intended");
		} else if (obj == LD_SPIN) {
			if (mode != LD_TRY)
				ld_report_self(t, i, lock, obj, mode, pc,
					       "self-deadlock: a thread locks a spinlock it holds",
					       "the thread spins on itself",
					       "unlock before re-locking; a spinlock is never recursive");
		} else if (held == LD_RWLOCK_READ && obj == LD_RWLOCK_READ) {
			a->recurse = i;
			if (mode != LD_TRY && ld_wait_of(lock, obj) == LD_WAIT_R)
				ld_report_self(t, i, lock, obj, mode, pc,
					       "recursive read lock that can deadlock",
					       "the rwlock is PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: "
					       "a writer queued in between waits for this thread's read "
					       "lock, and this read waits behind that writer",
					       "do not read-lock it again while holding it, or use the "
					       "default (reader-preferring) kind");
		} else if (held == LD_RWLOCK_READ && obj == LD_RWLOCK_WRITE) {
			if (mode != LD_TRY)
				ld_report_self(t, i, lock, obj, mode, pc,
					       "read -> write upgrade of an rwlock: the thread "
					       "write-locks an rwlock it read-holds",
					       "the write lock waits for every reader, this thread too",
					       "release the read lock first and re-check the state "
					       "under the write lock");
		}
		/* held for writing: the shim answers EDEADLK, as glibc */
		goto out;
	}
	/* The chain key once this lock is held: the key of the checks as
	 * well (a node's wait mode follows from its hold mode, the kind of
	 * an rwlock being fixed for the node's life), so the held-stack
	 * push after the acquisition reuses it. */
	a->base = t->chain;
	a->chain = ld_chain_add(t->chain, a->node, a->gen, ld_hold_of(obj));
	if (mode != LD_TRY && t->depth > 0) {
		uint64_t key = a->chain;
		uint64_t *tc = &t->tchain[(key >> 40) & (LD_TCACHE - 1)];

		if (*tc != key) { /* not in the thread's cache: the shared one */
			if (!ld_chain_seen(key)) {
				ld_check_deps(t, a->node, a->gen, lock, obj, ld_wait_of(lock, obj),
					      pc, cond);
				ld_chain_add_key(key);
				qa_fetch_add_relaxed(&ld_nchains, 1);
			}
			*tc = key;
		}
	}
	if (mode != LD_TRY || t->depth == 0) /* checked: a hit next time */
		ld_trans_add(t, a);
out:
	ld_busy_off();
}

void lockdep_acquire_pre(struct ld_acq *a, const volatile void *vlock, enum ld_obj obj,
			 int mode, uintptr_t pc)
{
	ld_acquire(a, LD_PTR(vlock), obj, mode, pc, false);
}

void lockdep_cond_reacquire_pre(struct ld_acq *a, const void *mutex, uintptr_t pc)
{
	ld_acquire(a, mutex, LD_MUTEX, LD_BLOCK, pc, true);
}

static inline __attribute__((always_inline)) void ld_acquire_post(struct ld_acq *a, int err)
{
	struct ld_thread *t = a->t;

	if (!t)
		return;
	if (a->mode == LD_BLOCK) /* the wait is over: pairs with ld_snapshot() */
		qa_write_release(&t->wait_seq, t->wait_seq + 1);
	if (err != 0)
		return;
	if (a->recurse >= 0 && a->recurse < (int)t->depth &&
	    t->held[a->recurse].lock == a->lock) {
		if (t->held[a->recurse].count < UINT16_MAX)
			t->held[a->recurse].count++;
		return;
	}
	if (!ld_held_room(t))
		return; /* out of memory: this one goes untracked */
	uint32_t d = t->depth;
	struct ld_held *h = &t->held[d];
	h->lock = a->lock;
	h->pc = a->pc;
	h->chain = t->chain;
	h->node = a->node;
	h->gen = a->gen;
	h->count = 1;
	h->obj = a->obj;
	h->trylock = a->mode == LD_TRY;
	h->cond = a->cond;
	/* The key worked out before the acquisition, unless the stack
	 * changed since (a signal handler's locks in between). */
	t->chain = qa_likely(a->chain && t->chain == a->base)
			   ? a->chain
			   : ld_chain_add(t->chain, a->node, a->gen, ld_hold_of((enum ld_obj)a->obj));
	/* The entry before the depth that shows it: pairs with the
	 * read_acquire of a reader on another thread (lockdep.h). */
	qa_write_release(&t->depth, d + 1);
}

void lockdep_acquire_post(struct ld_acq *a, int err)
{
	ld_acquire_post(a, err);
}

/* The cases lockdep_took() (lockdep.h) leaves: a push not in the
 * thread's cache, a re-take, a thread's first lock. */
void lockdep_acquired(const volatile void *vlock, enum ld_obj obj, uintptr_t pc)
{
	struct ld_acq a;

	ld_acquire(&a, LD_PTR(vlock), obj, LD_TAKEN, pc, false);
	ld_acquire_post(&a, 0);
}

static void ld_report_lock(struct ld_thread *t, const void *lock, enum ld_obj obj,
			   uintptr_t pc, const char *what, int held, const char *kind,
			   const char *hint)
{
	char c[1200], s[256];
	uintptr_t f[LD_FRAMES_MAX];
	uint32_t gen, node = ld_itab_lookup(lock, &gen);

	ld_header(what, kind);
	ld_obj_desc(&ld_rep, node, lock, ld_type_of(obj), c, sizeof c);
	ld_add(&ld_rep, "  %s\n", c);
	ld_add(&ld_jrep, ",\"lock\":\"%p\",\"object\":", lock);
	ld_jstr(&ld_jrep, c);
	if (held >= 0) {
		ld_site(&ld_rep, t->held[held].pc, s, sizeof s);
		ld_add(&ld_rep, "  held since %s\n", s);
		ld_add(&ld_jrep, ",\"held_at\":");
		ld_jstr(&ld_jrep, s);
	}
	ld_add(&ld_rep, "  at:\n");
	ld_add(&ld_jrep, ",\"stack\":");
	unsigned nf = ld_backtrace(pc, f, ld_depth);
	ld_add_stack(&ld_rep, f, nf, "    ");
	ld_add_held(t);
	ld_end(hint);
}

/* The cases lockdep_unlocking() (lockdep.h) leaves: a lock below the
 * top, taken more than once, or not held. */
void lockdep_release(const volatile void *vlock, enum ld_obj obj, uintptr_t pc)
{
	const void *lock = LD_PTR(vlock);
	struct ld_thread *t;
	uint32_t gen;

	if (ld_busy)
		return;
	ld_busy_on();
	t = ld_thread_get();
	if (!t)
		goto out;
	int i = ld_find_held(t, lock);
	if (i < 0) {
		bool known = ld_itab_lookup(lock, &gen) != 0;

		if (ld_once((uint64_t)pc * 8 + 2))
			ld_report_lock(t, lock, obj, pc, known
				       ? "unlock of a lock this thread does not hold"
				       : "unlock of a lock nobody locked", -1,
				       known ? "unlock-unheld" : "unlock-unknown",
				       "unlock a lock only on the thread that locked it, once "
				       "per lock (a semaphore or a condvar signals across threads)");
		goto out;
	}
	if (t->held[i].count > 1) {
		t->held[i].count--;
	} else if ((uint32_t)i + 1 == t->depth) { /* the top: the usual case */
		t->chain = t->held[i].chain;
		qa_write_release(&t->depth, (uint32_t)i); /* see lockdep_acquire_post() */
	} else {
		ld_remove(t, i);
	}
out:
	ld_busy_off();
}

void lockdep_cond_release(const void *mutex, uintptr_t pc)
{
	lockdep_release(mutex, LD_MUTEX, pc);
}

void lockdep_destroy(const volatile void *vlock, enum ld_obj obj, uintptr_t pc, int err)
{
	const void *lock = LD_PTR(vlock);
	struct ld_thread *t;

	if (ld_busy)
		return;
	ld_busy_on();
	t = ld_thread_get();
	if (t) {
		int i = ld_find_held(t, lock);

		if (i >= 0 && ld_once((uint64_t)pc * 8 + 3))
			ld_report_lock(t, lock, obj, pc, "destroy of a lock this thread holds", i,
				       "destroy-held", "unlock it before destroying it (or do not "
				       "destroy it while any thread may use it)");
	}
	if (err == 0) { /* its history dies with it */
		int64_t s;

		ld_spin_lock(&ld_graph_lock);
		s = ld_itab_find(lock);
		if (s >= 0) {
			uint32_t id = (uint32_t)(ld_itab[s].ref >> 32);

			if (id && NODE(id)->live && NODE(id)->lock == lock)
				ld_node_kill(id);
			else
				ld_itab_del(lock);
		}
		ld_spin_unlock(&ld_graph_lock);
	}
	ld_busy_off();
}

EXPORT const uint32_t *qlock_lockdep_filter(void)
{
	return qa_read(&shim_lockdep_on) ? ld_filter : NULL;
}

/* Memory released where locks may live: see qlock_lockdep_forget(). */
EXPORT void qlock_lockdep_forget(const void *p, size_t len)
{
	if (!shim_lockdep_on || !p || !len)
		return;
	ld_forget_range((uintptr_t)p, (uintptr_t)p + len); /* busy: ld_forget_pages() */
}

/* ---- the watchdog's snapshot -------------------------------------------------------- */

static unsigned ld_snapshot(struct dl_view *v, unsigned max)
{
	unsigned n = 0;

	for (struct ld_thread *t = qa_read_acquire(&ld_thread_list); t && n < max; t = t->next) {
		struct dl_view *o = &v[n];
		int32_t tid = qa_read_acquire(&t->tid);

		if (!tid)
			continue;
		uint64_t s1 = qa_read_acquire(&t->wait_seq);
		o->tid = tid;
		o->wait_seq = s1;
		o->wait_lock = (s1 & 1) ? (uintptr_t)qa_read(&t->wait_lock) : 0;
		o->wait_pc = qa_read(&t->wait_pc);
		o->wait_kind = qa_read(&t->wait_obj);
		o->wait_behind = qa_read(&t->wait_behind);
		uint32_t cap = qa_read_acquire(&t->cap);
		const struct ld_held *h = qa_read_acquire(&t->held);
		uint32_t d = qa_read_acquire(&t->depth);
		if (d > cap)
			d = cap;
		o->nheld = d < DL_HELD ? d : DL_HELD;
		/* The innermost locks when there are more than a view holds. */
		for (unsigned k = 0; k < o->nheld; k++) {
			const struct ld_held *e = &h[d - o->nheld + k];

			o->held[k].lock = (uintptr_t)qa_read(&e->lock);
			o->held[k].pc = qa_read(&e->pc);
			o->held[k].kind = qa_read(&e->obj);
		}
		qa_smp_rmb(); /* the reads above before the second look */
		if (qa_read(&t->wait_seq) != s1)
			o->wait_lock = 0;
		if (o->wait_lock || o->nheld)
			n++;
	}
	return n;
}

static void ld_describe(uintptr_t lock, uint32_t kind, char *buf, size_t len)
{
	uint32_t gen, node = ld_itab_lookup((const void *)lock, &gen);
	char c[1024];

	(void)kind;
	if (!node) {
		buf[0] = '\0';
		return;
	}
	ld_class_desc(NODE(node)->cls, c, sizeof c);
	snprintf(buf, len, "class #%u, %s", NODE(node)->cls, c);
}

/* ---- set-up and exit ------------------------------------------------------------------- */

/* In a fork child only the forking thread is left: free the others'
 * records; a lock held by a vanished thread cannot be released either. */
static void ld_fork_child(void)
{
	int32_t tid = ld_gettid();

	qa_write(&ld_graph_lock, 0);
	qa_write(&ld_rep_lock, 0);
	qa_write(&ld_once_lock, 0);
	qa_write(&ld_cyc_lock, 0);
	for (struct ld_thread *t = ld_thread_list; t; t = t->next) {
		if (t == ld_me) {
			qa_write(&t->tid, tid);
		} else if (qa_read(&t->tid) != 0) {
			qa_write(&t->depth, 0u);
			qa_write_release(&t->tid, 0);
		}
	}
}

static int ld_open(const char *path, int flags)
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
	return open(out, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
}

static void ld_write_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = write(fd, b, n);

		if (w <= 0)
			return;
		b += w;
		n -= (size_t)w;
	}
}

/* The classes formed (QLOCK_LOCKDEP_CLASSES), one a line, and into the JSON. */
static void ld_list_classes(struct ld_out *txt, struct ld_out *js)
{
	char c[1024];

	ld_add(txt, "qlock-lockdep: %u lock classes (objects made, alive at exit):\n",
	       ld_classes_v.n - 1);
	for (uint32_t i = 1; i < ld_classes_v.n; i++) {
		const struct ld_class *k = CLASS(i);

		ld_class_desc(i, c, sizeof c);
		ld_add(txt, "  #%u %s: %llu object%s, %llu alive: %s\n", i, ld_type_name[k->type],
		       (unsigned long long)k->objects, k->objects == 1 ? "" : "s",
		       (unsigned long long)k->live, c);
		ld_add(js, "%s{\"class\":%u,\"type\":\"%s\",\"objects\":%llu,\"alive\":%llu,\"name\":",
		       i > 1 ? "," : "", i, ld_type_name[k->type], (unsigned long long)k->objects,
		       (unsigned long long)k->live);
		ld_jstr(js, c);
		ld_add(js, "}");
	}
}

/* At exit: one summary line (so a clean run says it ran), the class list
 * and the JSON document when asked for. */
static void ld_exit(void)
{
	char msg[512];
	unsigned long long deps = ld_nedges_total, chains = qa_read(&ld_nchains);
	unsigned classes = ld_classes_v.n - 1;
	int n;

	ld_busy_on();
	ld_spin_lock(&ld_rep_lock);
	n = snprintf(msg, sizeof msg,
		     "qlock-lockdep: %llu lock object%s in %u class%s, %llu dependenc%s, %llu lock "
		     "chain%s checked; problems reported: %llu",
		     (unsigned long long)ld_nobjects, ld_nobjects == 1 ? "" : "s", classes,
		     classes == 1 ? "" : "es", deps, deps == 1 ? "y" : "ies", chains,
		     chains == 1 ? "" : "s", (unsigned long long)qa_read(&ld_nreports));
	if (ld_nsuppressed)
		n += snprintf(msg + n, sizeof msg - (size_t)n, ", suppressed: %llu",
			      (unsigned long long)ld_nsuppressed);
	if (ld_njoined)
		n += snprintf(msg + n, sizeof msg - (size_t)n, ", cycles through joined "
			      "threads' dependencies (not reported): %llu",
			      (unsigned long long)ld_njoined);
	n += snprintf(msg + n, sizeof msg - (size_t)n, " (pid %d)\n", (int)getpid());
	(void)!write(ld_fd, msg, (size_t)n);
	if (ld_classes || ld_json_path[0]) {
		struct ld_out txt = { 0 }, js = { 0 };

		ld_list_classes(&txt, &js);
		if (ld_classes) {
			int fd = ld_classes_path[0] ? ld_open(ld_classes_path, O_TRUNC) : ld_fd;

			if (fd >= 0) {
				ld_write_all(fd, txt.buf, txt.len);
				if (fd != ld_fd)
					close(fd);
			}
		}
		if (ld_json_path[0]) {
			struct ld_out doc = { 0 };
			int fd = ld_open(ld_json_path, O_TRUNC);

			ld_add(&doc, "{\"tool\":\"qlock-lockdep\",\"pid\":%d,\"summary\":{\"objects\":%llu,"
			       "\"classes\":%u,\"dependencies\":%llu,\"chains\":%llu,\"reports\":%llu,"
			       "\"suppressed\":%llu,\"joined\":%llu},\n\"reports\":[\n%.*s],\n\"classes\":[%.*s]}\n",
			       (int)getpid(), (unsigned long long)ld_nobjects, classes, deps, chains,
			       (unsigned long long)qa_read(&ld_nreports),
			       (unsigned long long)ld_nsuppressed, (unsigned long long)ld_njoined,
			       (int)ld_json.len,
			       ld_json.buf ? ld_json.buf : "", (int)js.len, js.buf ? js.buf : "");
			if (fd >= 0) {
				ld_write_all(fd, doc.buf, doc.len);
				close(fd);
			}
		}
	}
	ld_spin_unlock(&ld_rep_lock);
	ld_busy_off();
}

/* A file of suppressions: one pattern a line ("class:PATTERN",
 * "site:PATTERN", or a bare PATTERN for either; # comments). */
static void ld_read_supps(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "libqlock-pthread: QLOCK_LOCKDEP_SUPPRESS=%s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	char *b = ld_map((size_t)st.st_size + 1);
	ssize_t n = b ? read(fd, b, (size_t)st.st_size) : -1;
	close(fd);
	if (n < 0)
		return;
	b[n] = '\0';
	for (char *line = b, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		size_t l = strlen(line);
		while (l && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r'))
			line[--l] = '\0';
		if (!*line || *line == '#' || ld_nsupps == LD_MAX_PATTERNS)
			continue;
		struct ld_supp *s = &ld_supps[ld_nsupps++];
		if (strncmp(line, "class:", 6) == 0) {
			s->what = 1;
			line += 6;
		} else if (strncmp(line, "site:", 5) == 0) {
			s->what = 2;
			line += 5;
		}
		s->pat = line;
	}
}

static unsigned ld_env_uint(const char *name, unsigned def, unsigned lo, unsigned hi)
{
	const char *v = getenv(name);
	char *end;

	if (!v || !*v)
		return def;
	unsigned long x = strtoul(v, &end, 10);
	if (*end || x < lo || x > hi) {
		fprintf(stderr, "libqlock-pthread: %s=%s: expected %u to %u; %u taken\n", name, v,
			lo, hi, def);
		return def;
	}
	return (unsigned)x;
}

void shim_lockdep_setup(void)
{
	const char *v = getenv("QLOCK_LOCKDEP");
	const char *f = getenv("QLOCK_LOCKDEP_FILE");
	const char *j = getenv("QLOCK_LOCKDEP_JSON");
	const char *c = getenv("QLOCK_LOCKDEP_CLASSES");
	const char *s = getenv("QLOCK_LOCKDEP_SUPPRESS");

	if (!v || !*v || strcmp(v, "0") == 0)
		return;
	if (strcmp(v, "abort") == 0)
		ld_abort = true;
	else if (strcmp(v, "1") != 0)
		fprintf(stderr, "libqlock-pthread: QLOCK_LOCKDEP=%s: expected 1 or abort; "
			"taken as 1\n", v);
	if (f && *f) {
		int fd = ld_open(f, O_APPEND);

		if (fd < 0) {
			fprintf(stderr, "libqlock-pthread: QLOCK_LOCKDEP_FILE=%s: %s; "
				"reporting on stderr\n", f, strerror(errno));
		} else {
			ld_fd = fd;
		}
	}
	if (j && *j)
		snprintf(ld_json_path, sizeof ld_json_path, "%s", j);
	if (c && *c && strcmp(c, "0") != 0) {
		ld_classes = true;
		if (strcmp(c, "1") != 0)
			snprintf(ld_classes_path, sizeof ld_classes_path, "%s", c);
	}
	if (s && *s)
		ld_read_supps(s);
	shim_wrapper_setup();
	ld_depth = ld_env_uint("QLOCK_LOCKDEP_DEPTH", 16, 1, LD_FRAMES_MAX);
	ld_class_frames = ld_env_uint("QLOCK_LOCKDEP_CLASS_FRAMES", 8, 1, LD_FRAMES_MAX);
	ld_chain = ld_map(LD_CHAIN_SLOTS * sizeof *ld_chain);
	ld_filter = ld_map(LD_FILTER_SLOTS * sizeof *ld_filter);
	if (!ld_chain || !ld_filter || !ld_vec_init(&ld_nodes, sizeof(struct ld_node)) ||
	    !ld_vec_init(&ld_classes_v, sizeof(struct ld_class)) ||
	    !ld_vec_init(&ld_edges, sizeof(struct ld_edge)) ||
	    !ld_vec_init(&ld_stacks, sizeof(struct ld_stack)) ||
	    !ld_vec_init(&ld_frames, sizeof(uintptr_t)) || !ld_itab_rebuild()) {
		fprintf(stderr, "libqlock-pthread: lockdep: no memory for its tables: off\n");
		return;
	}
	if (pthread_key_create(&ld_key, ld_thread_exit) != 0) {
		fprintf(stderr, "libqlock-pthread: lockdep: no thread key: off\n");
		return;
	}
	/* The unwinder loads on its first use: now, not inside a lock call. */
	{
		void *b[4];

		(void)backtrace(b, 4);
		shim_unwinder_find(&ld_uw);
	}
	(void)pthread_atfork(NULL, NULL, ld_fork_child);
	atexit(ld_exit);
	shim_deadlock_setup(ld_snapshot, ld_describe);
	qa_write(&shim_lockdep_on, true);
}
