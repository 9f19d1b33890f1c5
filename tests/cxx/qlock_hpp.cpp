// SPDX-License-Identifier: MIT
// qlock/qlock.hpp from a C++17/C++20 program: the standard lock concepts
// as the standard's wrappers use them, with real contention.  Threads meet
// at latches made of atomics and joins; nothing sleeps to wait for another.
#include <qlock/qlock.hpp>

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#define CHECK(x)                                                              \
	do {                                                                  \
		if (!(x)) {                                                   \
			std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__,    \
				     __LINE__, #x);                           \
			std::abort();                                         \
		}                                                             \
	} while (0)

using namespace std::chrono_literals;

// ---- compile-time properties ------------------------------------------------

template <class L> constexpr bool fixed_in_place =
	!std::is_copy_constructible_v<L> && !std::is_copy_assignable_v<L> &&
	!std::is_move_constructible_v<L> && !std::is_move_assignable_v<L> &&
	std::is_nothrow_default_constructible_v<L> &&
	std::is_nothrow_destructible_v<L> && std::is_standard_layout_v<L>;
// The locks need no destructor; the condition variable's waits for its
// woken waiters to leave it (cv_lifetime.cpp).
template <class L> constexpr bool lock_in_place =
	fixed_in_place<L> && std::is_trivially_destructible_v<L>;
static_assert(lock_in_place<qlock::mutex>);
static_assert(lock_in_place<qlock::shared_mutex>);
static_assert(lock_in_place<qlock::spinlock>);
static_assert(lock_in_place<qlock::rwlock>);
static_assert(lock_in_place<qlock::rw_semaphore>);
static_assert(fixed_in_place<qlock::condition_variable> &&
	      !std::is_trivially_destructible_v<qlock::condition_variable>);
static_assert(sizeof(qlock::spinlock) == 4);
static_assert(sizeof(qlock::mutex) == sizeof(qlock_tp_mutex_t));
static_assert(sizeof(qlock::shared_mutex) == sizeof(qlock_tp_rwlock_t));
static_assert(sizeof(qlock::rwlock) == sizeof(qlock_rwlock_t));
static_assert(sizeof(qlock::rw_semaphore) == sizeof(qlock_rwsem_t));
static_assert(sizeof(qlock::condition_variable) == sizeof(qlock_tp_cond_t));

// The concepts each lock meets, and no others: a member a lock does not
// have is not declared at all, so detection (as here) sees the truth.
template <class L, class = void> struct has_timed : std::false_type {};
template <class L>
struct has_timed<L, std::void_t<decltype(std::declval<L &>().try_lock_for(1ms)),
				decltype(std::declval<L &>().try_lock_until(
					std::chrono::steady_clock::now()))>>
	: std::true_type {};
template <class L, class = void> struct has_shared : std::false_type {};
template <class L>
struct has_shared<L, std::void_t<decltype(std::declval<L &>().lock_shared()),
				 decltype(std::declval<L &>().try_lock_shared()),
				 decltype(std::declval<L &>().unlock_shared())>>
	: std::true_type {};
template <class L, class = void> struct has_shared_timed : std::false_type {};
template <class L>
struct has_shared_timed<L, std::void_t<decltype(std::declval<L &>().try_lock_shared_for(1ms))>>
	: std::true_type {};
template <class L, class = void> struct has_downgrade : std::false_type {};
template <class L>
struct has_downgrade<L, std::void_t<decltype(std::declval<L &>().downgrade())>>
	: std::true_type {};
template <class L, bool timed, bool shared, bool downgrade>
constexpr bool meets = has_timed<L>::value == timed &&
		       has_shared<L>::value == shared &&
		       has_shared_timed<L>::value == (shared && timed) &&
		       has_downgrade<L>::value == downgrade &&
		       noexcept(std::declval<L &>().try_lock());
static_assert(meets<qlock::mutex, true, false, false>);
static_assert(meets<qlock::shared_mutex, true, true, false>);
static_assert(meets<qlock::spinlock, false, false, false>);
static_assert(meets<qlock::rwlock, false, true, false>);
static_assert(meets<qlock::rw_semaphore, true, true, true>);
// The spinning locks' calls cannot throw.
static_assert(noexcept(std::declval<qlock::spinlock &>().lock()) &&
	      noexcept(std::declval<qlock::spinlock &>().unlock()));
static_assert(noexcept(std::declval<qlock::rwlock &>().lock()) &&
	      noexcept(std::declval<qlock::rwlock &>().lock_shared()) &&
	      noexcept(std::declval<qlock::rwlock &>().unlock_shared()));

// constexpr constructors: constant-initialised at namespace scope (C++20
// checks it with constinit, which a non-trivial destructor does not stop).
#if __cplusplus >= 202002L
#define QLOCK_TEST_CONSTINIT constinit
#else
#define QLOCK_TEST_CONSTINIT
#endif
QLOCK_TEST_CONSTINIT qlock::mutex g_mutex;
QLOCK_TEST_CONSTINIT qlock::shared_mutex g_shared;
QLOCK_TEST_CONSTINIT qlock::spinlock g_spin;
QLOCK_TEST_CONSTINIT qlock::rwlock g_rw;
QLOCK_TEST_CONSTINIT qlock::rw_semaphore g_sem;
QLOCK_TEST_CONSTINIT qlock::condition_variable g_cv;
[[maybe_unused]] constexpr qlock::mutex k_mutex;
[[maybe_unused]] constexpr qlock::shared_mutex k_shared;
[[maybe_unused]] constexpr qlock::spinlock k_spin;
[[maybe_unused]] constexpr qlock::rwlock k_rw;
[[maybe_unused]] constexpr qlock::rw_semaphore k_sem;

// ---- helpers ------------------------------------------------------------------

// Run f on another thread while this one waits for it (join).
template <class F> static void on_other_thread(F f)
{
	std::thread t(f);
	t.join();
}

// A clock the library does not know: time points go through steady_clock.
struct other_clock {
	using duration = std::chrono::microseconds;
	using rep = duration::rep;
	using period = duration::period;
	using time_point = std::chrono::time_point<other_clock>;
	static constexpr bool is_steady = true;
	static time_point now()
	{
		return time_point(std::chrono::duration_cast<duration>(
			std::chrono::steady_clock::now().time_since_epoch() + 1h));
	}
};

// N threads each add ITER times to a plain counter under `guard`.
template <class Guard> static void count_under(int nthreads, int iters, Guard guard)
{
	long counter = 0;
	std::vector<std::thread> ts;
	for (int i = 0; i < nthreads; i++)
		ts.emplace_back([&] {
			for (int k = 0; k < iters; k++)
				guard([&] { counter++; });
		});
	for (auto &t : ts)
		t.join();
	CHECK(counter == long(nthreads) * iters);
}

// ---- Lockable / TimedLockable -------------------------------------------------

template <class L> static void lockable(L &l)
{
	{
		std::lock_guard<L> g(l);
		on_other_thread([&] { CHECK(!l.try_lock()); });
	}
	on_other_thread([&] {
		CHECK(l.try_lock());
		l.unlock();
	});
	{
		std::unique_lock<L> u(l, std::try_to_lock);
		CHECK(u.owns_lock());
		u.unlock();
		CHECK(!u.owns_lock());
	}
	count_under(4, 20000, [&](auto body) {
		std::lock_guard<L> g(l);
		body();
	});
}

template <class L> static void timed_lockable(L &l)
{
	{
		std::unique_lock<L> u(l);
		on_other_thread([&] {
			CHECK(!l.try_lock_for(1ms));
			CHECK(!l.try_lock_until(std::chrono::steady_clock::now() + 1ms));
			CHECK(!l.try_lock_until(std::chrono::system_clock::now() + 1ms));
			CHECK(!l.try_lock_until(other_clock::now() + 1ms));
			CHECK(!l.try_lock_for(-1s));
		});
	}
	// Free: taken whatever the deadline, even one long past or "never".
	CHECK(l.try_lock_for(0s));
	l.unlock();
	CHECK(l.try_lock_until(std::chrono::steady_clock::time_point::min()));
	l.unlock();
	CHECK(l.try_lock_until(std::chrono::system_clock::time_point{}));
	l.unlock();
	CHECK(l.try_lock_for(std::chrono::hours::max()));
	l.unlock();
	CHECK(l.try_lock_until(other_clock::now() - 1s));
	l.unlock();
	// A timed waiter gets the lock when it is released before its deadline.
	std::atomic<bool> waiting{false};
	l.lock();
	std::thread t([&] {
		waiting = true;
		CHECK(l.try_lock_for(std::chrono::hours(1)));
		l.unlock();
	});
	while (!waiting)
		std::this_thread::yield();
	l.unlock();
	t.join();
	std::unique_lock<L> u(l, 1s);
	CHECK(u.owns_lock());
}

// ---- SharedLockable / SharedTimedLockable ----------------------------------------

template <class L> static void shared_lockable(L &l)
{
	{
		std::shared_lock<L> r(l);
		on_other_thread([&] {
			std::shared_lock<L> r2(l, std::try_to_lock);
			CHECK(r2.owns_lock());
			CHECK(!l.try_lock());
		});
	}
	{
		std::unique_lock<L> w(l);
		on_other_thread([&] { CHECK(!l.try_lock_shared()); });
	}
	// Writers keep a == b; readers, many at once, check it.
	long a = 0, b = 0;
	std::atomic<bool> bad{false};
	std::vector<std::thread> ts;
	for (int i = 0; i < 4; i++)
		ts.emplace_back([&, i] {
			for (int k = 0; k < 5000; k++) {
				if (i % 2) {
					std::lock_guard<L> g(l);
					a++;
					b++;
				} else {
					std::shared_lock<L> g(l);
					if (a != b)
						bad = true;
				}
			}
		});
	for (auto &t : ts)
		t.join();
	CHECK(!bad && a == 10000 && b == 10000);
}

template <class L> static void shared_timed_lockable(L &l)
{
	{
		std::unique_lock<L> w(l);
		on_other_thread([&] {
			CHECK(!l.try_lock_shared_for(1ms));
			CHECK(!l.try_lock_shared_until(std::chrono::system_clock::now() + 1ms));
			CHECK(!l.try_lock_shared_until(other_clock::now() + 1ms));
		});
	}
	{
		std::shared_lock<L> r(l, 1s);
		CHECK(r.owns_lock());
		on_other_thread([&] {
			std::shared_lock<L> r2(l, std::chrono::steady_clock::now() + 1s);
			CHECK(r2.owns_lock());
			CHECK(!l.try_lock_for(1ms));
		});
	}
	CHECK(l.try_lock_shared_until(std::chrono::steady_clock::time_point{}));
	l.unlock_shared();
}

// ---- scoped_lock: several qlock types at once, in opposite orders ----------------

static void scoped_lock_many()
{
	qlock::mutex m;
	qlock::spinlock s;
	qlock::shared_mutex sm;
	long n = 0;
	std::thread t1([&] {
		for (int i = 0; i < 5000; i++) {
			std::scoped_lock g(m, s, sm);
			n++;
		}
	});
	std::thread t2([&] {
		for (int i = 0; i < 5000; i++) {
			std::scoped_lock g(sm, s, m);
			n++;
		}
	});
	t1.join();
	t2.join();
	CHECK(n == 10000);
}

// ---- condition variables -----------------------------------------------------

// A bounded queue: producers and consumers on one mutex and two conditions.
template <class Mutex, class Cond, class Lock> static void producer_consumer()
{
	Mutex m;
	Cond not_empty, not_full;
	std::vector<int> q;
	const int per = 3000, producers = 2, consumers = 2;
	long sum = 0;
	std::vector<std::thread> ts;
	for (int p = 0; p < producers; p++)
		ts.emplace_back([&] {
			for (int i = 1; i <= per; i++) {
				Lock lk(m);
				not_full.wait(lk, [&] { return q.size() < 8; });
				q.push_back(i);
				not_empty.notify_one();
			}
		});
	for (int c = 0; c < consumers; c++)
		ts.emplace_back([&] {
			for (int i = 0; i < per * producers / consumers; i++) {
				Lock lk(m);
				while (q.empty())
					not_empty.wait(lk);
				sum += q.back();
				q.pop_back();
				not_full.notify_all();
			}
		});
	for (auto &t : ts)
		t.join();
	CHECK(q.empty() && sum == long(producers) * per * (per + 1) / 2);
}

static void condition_variable_timeouts()
{
	qlock::mutex m;
	qlock::condition_variable cv;
	std::unique_lock<qlock::mutex> lk(m);
	(void)cv.wait_for(lk, 1ms); // timeout or a spurious wake-up
	CHECK(lk.owns_lock());
	CHECK(!cv.wait_for(lk, 1ms, [] { return false; }));
	CHECK(!cv.wait_until(lk, std::chrono::system_clock::now() + 1ms, [] { return false; }));
	CHECK(!cv.wait_until(lk, other_clock::now() + 1ms, [] { return false; }));
	CHECK(cv.wait_for(lk, 0s, [] { return true; }));
	CHECK(lk.owns_lock());

	// Waiting without the mutex is refused, not undefined.
	lk.unlock();
	bool threw = false;
	try {
		cv.wait(lk);
	} catch (const std::system_error &e) {
		threw = e.code() == std::errc::operation_not_permitted;
	}
	CHECK(threw);

	// A notify before the deadline ends a wait_for with the predicate true.
	bool ready = false;
	std::atomic<bool> waiting{false};
	std::thread t([&] {
		std::unique_lock<qlock::mutex> l2(m);
		waiting = true;
		CHECK(cv.wait_for(l2, std::chrono::hours(1), [&] { return ready; }));
	});
	while (!waiting)
		std::this_thread::yield();
	{
		std::lock_guard<qlock::mutex> g(m); // t is inside wait once we get m
		ready = true;
	}
	cv.notify_all();
	t.join();
}

// A wait on a condition variable whose C object was destroyed (what a
// thread still blocked when the destructor runs comes back to) is a
// misuse: reported, and thrown when the handler returns, instead of a
// silent return that would make a predicate loop spin.
static std::atomic<int> misuse_reports;
static void count_misuse(const char *, const char *, const void *)
{
	misuse_reports++;
}

static void condition_variable_wait_after_destroy()
{
	qlock::mutex m;
	qlock::condition_variable cv;
	std::unique_lock<qlock::mutex> lk(m);
	qlock_misuse_fn prev = qlock_set_misuse_handler(count_misuse);
	qlock_tp_cond_destroy(cv.native_handle());
	bool threw = false;
	try {
		cv.wait(lk, [] { return false; });
	} catch (const std::system_error &e) {
		threw = e.code() == std::errc::invalid_argument;
	}
	CHECK(threw && misuse_reports == 1 && lk.owns_lock());
	qlock_set_misuse_handler(prev);
	qlock_tp_cond_init(cv.native_handle()); // for cv's own destructor
}

int main()
{
	lockable(g_mutex);
	timed_lockable(g_mutex);
	lockable(g_spin);
	lockable(g_rw);
	shared_lockable(g_rw);
	lockable(g_shared);
	timed_lockable(g_shared);
	shared_lockable(g_shared);
	shared_timed_lockable(g_shared);
	lockable(g_sem);
	timed_lockable(g_sem);
	shared_lockable(g_sem);
	shared_timed_lockable(g_sem);
	{
		g_sem.lock();
		g_sem.downgrade();
		on_other_thread([] {
			CHECK(g_sem.try_lock_shared());
			g_sem.unlock_shared();
			CHECK(!g_sem.try_lock());
		});
		g_sem.unlock_shared();
	}
	scoped_lock_many();

	producer_consumer<qlock::mutex, qlock::condition_variable,
			  std::unique_lock<qlock::mutex>>();
	producer_consumer<qlock::mutex, std::condition_variable_any,
			  std::unique_lock<qlock::mutex>>();
	producer_consumer<qlock::spinlock, std::condition_variable_any,
			  std::unique_lock<qlock::spinlock>>();
	producer_consumer<qlock::shared_mutex, std::condition_variable_any,
			  std::unique_lock<qlock::shared_mutex>>();
	producer_consumer<qlock::rw_semaphore, std::condition_variable_any,
			  std::unique_lock<qlock::rw_semaphore>>();
	condition_variable_timeouts();
	condition_variable_wait_after_destroy();
	{
		// condition_variable_any with a shared lock: readers wait too.
		qlock::shared_mutex sm;
		std::condition_variable_any cv;
		bool go = false;
		std::atomic<int> waiting{0};
		std::vector<std::thread> ts;
		for (int i = 0; i < 3; i++)
			ts.emplace_back([&] {
				std::shared_lock<qlock::shared_mutex> r(sm);
				waiting++;
				cv.wait(r, [&] { return go; });
			});
		while (waiting < 3)
			std::this_thread::yield();
		{
			std::lock_guard<qlock::shared_mutex> w(sm);
			go = true;
		}
		cv.notify_all();
		for (auto &t : ts)
			t.join();
	}
	CHECK(std::string(qlock::version()) == QLOCK_VERSION_STRING);
	std::printf("qlock.hpp (C++%ld): all ok\n", __cplusplus / 100 % 100);
	return 0;
}
