/* SPDX-License-Identifier: MIT */
/*
 * The lock doctor's wrapper rule (shim/doctor/wrapper.h) on names from
 * real programs (RocksDB, Kyoto Cabinet, libstdc++) and from the tests'
 * own programs, and its patterns: every variable that names them
 * (QLOCK_WRAPPER, QLOCK_LOCKDEP_WRAPPER, QLOCK_PROFILE_WRAPPER) feeds the
 * one list that lockdep and the profile both read.
 */
#include <stdio.h>
#include <stdlib.h>

#include "wrapper.h"

static int failed;

static void check(const char *func, unsigned long size, const char *mod, int want)
{
	int got = shim_is_wrapper(func, size, mod);

	printf("%-3s %-7s %s [%lu bytes, %s]\n", got == want ? "ok" : "BAD",
	       got ? "wrapper" : "site", func, size, *mod ? mod : "?");
	if (got != want)
		failed = 1;
}

int main(void)
{
	setenv("QLOCK_WRAPPER", "acquire_resource", 1);
	setenv("QLOCK_LOCKDEP_WRAPPER", "Db::*Latch", 1);
	setenv("QLOCK_PROFILE_WRAPPER", "withdraw,*::enter_gate", 1);
	shim_wrapper_setup();

	/* The lock calls' own wrappers. */
	check("rocksdb::port::Mutex::Lock()", 40, "librocksdb.so.7.8", 1);
	check("rocksdb::InstrumentedMutex::LockInternal()", 300, "librocksdb.so.7.8", 1);
	check("rocksdb::InstrumentedMutexLock::InstrumentedMutexLock(rocksdb::InstrumentedMutex*)", 90,
	      "librocksdb.so.7.8", 1);
	check("kyotocabinet::Mutex::lock()", 20, "libkyotocabinet.so.16", 1);
	check("kyotocabinet::SpinRWLock::lock_reader()", 120, "libkyotocabinet.so.16", 1);
	check("kyotocabinet::SlottedMutex::SlottedMutex(unsigned long)", 150, "libkyotocabinet.so.16", 1);
	check("kyotocabinet::ScopedSpinRWLock::ScopedSpinRWLock(kyotocabinet::SpinRWLock*, bool)", 0,
	      "kccachetest", 1);
	check("std::lock_guard<std::mutex>::lock_guard(std::mutex&)", 0, "wrapped", 1);
	check("std::mutex::lock()", 0, "wrapped", 1);
	check("__gthread_mutex_lock(pthread_mutex_t*)", 0, "wrapped", 1);
	check("Counter::ScopedGuard::ScopedGuard(Counter&)", 0, "wrapped", 1);
	check("execute_native_thread_routine", 0, "libstdc++.so.6", 1);
	check("acct_lock", 24, "lockdep_cases", 1);
	check("mylock_take", 30, "prog", 1);         /* small, says lock */
	check("item_rdlock", 300, "prog", 1);

	/* User code: the sites. */
	check("rocksdb::DBImpl::GetImpl(rocksdb::ReadOptions const&, rocksdb::Slice const&, "
	      "rocksdb::DBImpl::GetImplOptions&)", 4000, "librocksdb.so.7.8", 0);
	check("rocksdb::BlockBasedTable::Get(rocksdb::ReadOptions const&)", 3000, "librocksdb.so.7.8", 0);
	check("rocksdb::LRUCacheShard::Lookup(rocksdb::Slice const&, unsigned int)", 200,
	      "librocksdb.so.7.8", 0);
	check("kyotocabinet::CacheDB::accept(char const*, unsigned long, "
	      "kyotocabinet::DB::Visitor*, bool)", 900, "libkyotocabinet.so.16", 0);
	check("transfer", 80, "lockdep_cases", 0);
	check("queue_new", 60, "lockdep_cases", 0);
	check("block_read", 30, "prog", 0);          /* small, but block */
	check("clock_tick", 30, "prog", 0);
	check("deadlock_check", 30, "prog", 0);
	check("worker(long)", 200, "wrapped", 0);
	check("", 0, "prog", 0);                     /* no name: never */

	/* The patterns, from each variable. */
	check("acquire_resource", 500, "lockdep_cases", 1);
	check("Db::PageLatch(int)", 500, "prog", 1);
	check("withdraw(Account&, long)", 500, "wrapped", 1);
	check("Bank::enter_gate()", 500, "prog", 1);
	check("deposit(Account&, long)", 500, "wrapped", 0);

	puts(failed ? "FAIL" : "PASS");
	return failed;
}
