// SPDX-License-Identifier: MIT
// qlock::condition_variable's lifetime, by C++'s rule
// ([thread.condition.condvar]: the destructor may run once every waiter
// has been notified, even before they have woken): waiters wait on a
// condition variable with a qlock::mutex; the notifier notifies them all
// and destroys it at once, while the woken waiters are still on their way
// back into the mutex, then reuses the memory:
//   - built with AddressSanitizer: `delete`, and ASan reports any later
//     access by a waiter (use after free);
//   - otherwise (plain and TSan builds): destroyed in place and its bytes
//     poisoned; after joining the waiters, the poison must be intact.
// std::condition_variable_any runs the same rounds, as the control.
// The notifier knows every waiter is inside its wait because each one
// registers under the mutex right before waiting; nothing sleeps.
#include <qlock/qlock.hpp>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define CV_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CV_TEST_ASAN 1
#endif
#endif

#define CHECK(x)                                                              \
	do {                                                                  \
		if (!(x)) {                                                   \
			std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,    \
				     __LINE__, #x);                           \
			std::abort();                                         \
		}                                                             \
	} while (0)

namespace {

constexpr int waiters = 3, rounds = 200;
[[maybe_unused]] constexpr unsigned char poison = 0xa5;

qlock::mutex m;
int inside;     // under m
bool go;        // under m

template <class Cond> void wait_for_go(Cond *cv)
{
	std::unique_lock<qlock::mutex> lk(m);
	inside++;
	cv->wait(lk, [] { return go; });
	inside--;
}

// Returns with m held and every waiter inside its wait.
std::unique_lock<qlock::mutex> wait_registered()
{
	for (;;) {
		std::unique_lock<qlock::mutex> lk(m);
		if (inside == waiters)
			return lk;
		lk.unlock();
		std::this_thread::yield();
	}
}

// Where the condition variable lives, how it is destroyed and reused, and
// the check that no waiter touched it afterwards.
#ifdef CV_TEST_ASAN
template <class Cond> Cond *make() { return new Cond; }
template <class Cond> void destroy_and_reuse(Cond *cv) { delete cv; }
template <class Cond> void check_untouched() {}
#else
template <class Cond> unsigned char *storage()
{
	alignas(Cond) static unsigned char bytes[sizeof(Cond)];
	return bytes;
}
template <class Cond> Cond *make() { return new (storage<Cond>()) Cond; }
template <class Cond> void destroy_and_reuse(Cond *cv)
{
	cv->~Cond();
	std::memset(storage<Cond>(), poison, sizeof(Cond));
}
template <class Cond> void check_untouched()
{
	const unsigned char *b = storage<Cond>();
	for (std::size_t i = 0; i < sizeof(Cond); i++)
		if (b[i] != poison) {
			std::fprintf(stderr, "FAIL: a woken waiter wrote the "
				     "destroyed condition variable\n");
			std::abort();
		}
}
#endif

template <class Cond> void one_round(bool notify_all, bool destroy_locked)
{
	Cond *cv = make<Cond>();
	std::vector<std::thread> ts;

	go = false;
	for (int i = 0; i < waiters; i++)
		ts.emplace_back(wait_for_go<Cond>, cv);
	std::unique_lock<qlock::mutex> lk = wait_registered();
	go = true;
	if (notify_all) {
		cv->notify_all();
	} else {
		for (int i = 0; i < waiters; i++)
			cv->notify_one();
	}
	if (!destroy_locked)
		lk.unlock(); // else the waiters still wait for m
	destroy_and_reuse(cv);
	if (lk.owns_lock())
		lk.unlock();
	for (auto &t : ts)
		t.join();
	check_untouched<Cond>();
}

template <class Cond> void all_modes(const char *name)
{
	for (int mode = 0; mode < 4; mode++) {
		bool notify_all = mode & 1, locked = mode & 2;

		for (int r = 0; r < rounds; r++)
			one_round<Cond>(notify_all, locked);
		std::printf("%s: %s, destroyed %s the mutex, %s: %d rounds clean\n",
			    name, notify_all ? "notify_all" : "notify_one each",
			    locked ? "holding" : "after unlocking",
#ifdef CV_TEST_ASAN
			    "deleted",
#else
			    "poisoned in place",
#endif
			    rounds);
		std::fflush(stdout); // before a failure's abort
	}
}

} // namespace

int main()
{
	all_modes<std::condition_variable_any>("std::condition_variable_any");
	all_modes<qlock::condition_variable>("qlock::condition_variable");
	return 0;
}
