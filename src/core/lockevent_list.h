/* SPDX-License-Identifier: MIT */
/*
 * The lock event list, in the spirit of the kernel's lock_events_list.h.
 * One line per event; lock families add theirs here.  No include guard:
 * the file is expanded with different definitions of LOCK_EVENT().
 */
/* generic: every sleeping lock */
LOCK_EVENT(slowpath)     /* entered the slow path                          */
LOCK_EVENT(spin)         /* spin iterations spent waiting                  */
LOCK_EVENT(sleep)        /* futex waits that actually slept or returned    */
LOCK_EVENT(wake)         /* wake-ups issued by an unlocker                 */
LOCK_EVENT(steal)        /* lock taken ahead of a queued waiter            */
LOCK_EVENT(handoff)      /* lock passed straight to a waiter               */
LOCK_EVENT(timeout)      /* timed lock gave up                             */
/* queued spinlock */
LOCK_EVENT(lock_pending) /* acquired through the pending bit               */
LOCK_EVENT(lock_queued)  /* acquired through the MCS queue                 */
LOCK_EVENT(lock_no_node) /* no queue node (slot or nesting limit): fallback */
LOCK_EVENT(lock_use_node2) /* queued at nesting level 2 (signal handler)   */
/* reader-writer */
LOCK_EVENT(read_alone)   /* shared acquisition by a reader on its own      */
LOCK_EVENT(read_group)   /* shared acquisition as part of a reader group   */
LOCK_EVENT(read_wake)    /* readers woken in a batch                       */
LOCK_EVENT(wait_early)   /* qspinlock: queued waiter slept early (predecessor asleep) */
LOCK_EVENT(qrw_waiting_retry) /* qrwlock: failed attempts to set WAITING (seed 000) */
/* rwsem */
LOCK_EVENT(rwsem_opt_lock)    /* writer got the lock by optimistic spinning   */
LOCK_EVENT(rwsem_opt_fail)    /* writer's optimistic spin gave up             */
LOCK_EVENT(rwsem_opt_nospin)  /* writer spun on readers too long: nonspinnable */
LOCK_EVENT(rwsem_rlock_steal) /* reader stole the lock in the slow path       */
LOCK_EVENT(rwsem_rlock_fast)  /* reader in the slow path found no one queued  */
/* TP locks */
LOCK_EVENT(tp_serial_handoff) /* a woken waiter asked for the serial lock     */
LOCK_EVENT(owner_off_cpu)     /* a waiter found the owner off the CPU by its own
                               * call (sched_yield(), a sleep; shim/offcpu.c) */
