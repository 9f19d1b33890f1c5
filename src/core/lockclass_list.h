/* SPDX-License-Identifier: MIT */
/*
 * Lock classes: each lock family counts its events and futex calls under
 * its own class.  One line per class; families add theirs here.  No
 * include guard: expanded with different definitions of LOCK_CLASS().
 */
LOCK_CLASS(other,      "other")
LOCK_CLASS(ticket,     "ticket")
LOCK_CLASS(ttas,       "ttas")
LOCK_CLASS(ww_mutex,   "ww-mutex")
LOCK_CLASS(ww_rwlock,  "ww-rwlock")
LOCK_CLASS(qspinlock,  "qspinlock")
LOCK_CLASS(qrwlock,    "qrwlock")
LOCK_CLASS(rwsem,      "rwsem")
LOCK_CLASS(osq,        "osq")
LOCK_CLASS(tp_mutex,   "tp-mutex")
LOCK_CLASS(tp_rwlock,  "tp-rwlock")
LOCK_CLASS(tp_cond,    "tp-cond")
