// SPDX-License-Identifier: MIT
// C++ programs with known answers for the lock-order checker (see
// lockdep_cases.c): std::mutex members (no init call, no destroy),
// std::lock, std::condition_variable.  Built with optimisation, the
// standard library's lock calls are inlined: the sites are these lines
// (SITE_*), not the headers'.
//   lockdep_cases_cc CASE
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace {

struct Account {
	std::mutex mu;
	long balance = 0;
};

__attribute__((noinline)) void transfer(Account &from, Account &to, long n)
{
	std::lock_guard<std::mutex> a(from.mu); // SITE_TRANSFER_FROM
	std::lock_guard<std::mutex> b(to.mu);   // SITE_TRANSFER_TO
	from.balance -= n;
	to.balance += n;
}

__attribute__((noinline)) void transfer_std_lock(Account &from, Account &to, long n)
{
	std::scoped_lock both(from.mu, to.mu); // std::lock: lock, then try the rest
	from.balance -= n;
	to.balance += n;
}

void in_turn(void (*f)(Account &, Account &, long), Account &a, Account &b)
{
	std::thread([&] { f(a, b, 1); }).join();
	std::thread([&] { f(b, a, 1); }).join();
}

// Objects freed and others built in the same memory, taken the other way.
__attribute__((noinline)) void reuse_after_delete()
{
	for (int round = 0; round < 4; round++) {
		Account *a = new Account, *b = new Account;

		// lower address first in even rounds, higher first in odd ones:
		// the same two blocks come back, so the order flips
		if ((a < b) == (round % 2 == 0))
			transfer(*a, *b, 1);
		else
			transfer(*b, *a, 1);
		delete a;
		delete b;
	}
}

std::mutex cm, cn;
std::condition_variable cv;
bool ready;

// Holds M then N, waits on M: the re-lock takes M while holding N.
__attribute__((noinline)) void cv_waiter()
{
	std::unique_lock<std::mutex> m(cm);
	std::lock_guard<std::mutex> n(cn);
	cv.wait(m, [] { return ready; }); // SITE_CV_WAIT
}

void cv_relock()
{
	std::thread t(cv_waiter);
	for (;;) {
		std::unique_lock<std::mutex> m(cm);
		if (!cn.try_lock()) { // the waiter holds N and waits
			ready = true;
			cv.notify_one();
			break;
		}
		cn.unlock();
		m.unlock();
		std::this_thread::yield();
	}
	t.join();
}

} // namespace

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	Account a, b;

	alarm(600);
	if (!strcmp(c, "cxx_member_abba"))
		in_turn(transfer, a, b);
	else if (!strcmp(c, "cxx_std_lock"))
		in_turn(transfer_std_lock, a, b);
	else if (!strcmp(c, "cxx_reuse_delete"))
		reuse_after_delete();
	else if (!strcmp(c, "cxx_cond_relock"))
		cv_relock();
	else {
		std::fprintf(stderr, "lockdep_cases_cc: unknown case '%s'\n", c);
		return 2;
	}
	std::printf("%s: done\n", c);
	return 0;
}
