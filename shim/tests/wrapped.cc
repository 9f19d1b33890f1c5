// SPDX-License-Identifier: MIT
// A C++ program whose locks are taken through wrapper classes, as
// RocksDB's port::Mutex and Kyoto Cabinet's Mutex are: the profile must
// name the call sites in user code (deposit, withdraw, audit), not the
// wrappers.  And through the standard library's inline ones (tally, peek,
// post): built with optimisation, std::mutex::lock() and its kin are
// inlined into the user's function, whose line is the site, not the
// header's.  The mutexes' critical sections yield, so that the other
// threads find them held.
//   wrapped [THREADS [ITERATIONS]]
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

// A pthread mutex wrapper that checks the call's result (not a tail call).
class Mutex {
public:
	Mutex() { pthread_mutex_init(&mu_, nullptr); }
	~Mutex() { pthread_mutex_destroy(&mu_); }
	__attribute__((noinline)) void Lock()
	{
		if (pthread_mutex_lock(&mu_) != 0)
			abort();
	}
	void Unlock() { pthread_mutex_unlock(&mu_); }

private:
	pthread_mutex_t mu_;
};

// The scoped holder around it.
class MutexLock {
public:
	__attribute__((noinline)) explicit MutexLock(Mutex *mu) : mu_(mu)
	{
		mu_->Lock();
		held_++;
	}
	~MutexLock() { mu_->Unlock(); }

private:
	Mutex *mu_;
	static thread_local long held_;
};
thread_local long MutexLock::held_;

// A std::mutex wrapper (out of line, as a library's would be).
class Journal {
public:
	__attribute__((noinline)) void lock()
	{
		mu_.lock();
		entries_++;
	}
	void unlock() { mu_.unlock(); }
	long entries_ = 0;

private:
	std::mutex mu_;
};

struct Account {
	Mutex mu;
	long balance = 0;
};

static Account account;
static Journal journal;

__attribute__((noinline)) void deposit(Account &a, long v)
{
	MutexLock l(&a.mu); // SITE_DEPOSIT
	a.balance += v;
	sched_yield();
}

__attribute__((noinline)) void withdraw(Account &a, long v)
{
	a.mu.Lock(); // SITE_WITHDRAW
	a.balance -= v;
	sched_yield();
	a.mu.Unlock();
}

__attribute__((noinline)) long audit(const Account &a)
{
	journal.lock(); // SITE_AUDIT
	long b = a.balance;
	sched_yield();
	journal.unlock();
	return b;
}

// The standard library's lock holders straight in user code.
static std::mutex tally_mu;
static long tally_count;
static std::shared_mutex book_mu;
static long book;

__attribute__((noinline)) void tally(long v)
{
	std::lock_guard<std::mutex> g(tally_mu); // SITE_TALLY
	tally_count += v;
	sched_yield();
}

__attribute__((noinline)) long peek()
{
	std::shared_lock<std::shared_mutex> g(book_mu); // SITE_PEEK
	return book;
}

__attribute__((noinline)) void post(long v)
{
	std::unique_lock<std::shared_mutex> g(book_mu); // SITE_POST
	book += v;
}

static void worker(long n)
{
	post(1);
	for (long i = 0; i < n; i++) {
		deposit(account, 3);
		withdraw(account, 2);
		(void)audit(account);
		tally(1);
		(void)peek();
	}
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	long n = argc > 2 ? atol(argv[2]) : 2000;
	std::vector<std::thread> ts;

	for (int t = 0; t < threads; t++)
		ts.emplace_back(worker, n);
	for (auto &t : ts)
		t.join();
	printf("balance %ld, journal %ld\n", account.balance, journal.entries_);
	return account.balance == threads * n ? 0 : 1;
}
