// SPDX-License-Identifier: MIT
//
// qlock for C++17 and later: the standard lock concepts over the C API,
// header-only (link libqlock as for C).
//
//   qlock::mutex               TP futex mutex      Lockable, TimedLockable
//   qlock::shared_mutex        TP futex rwlock     + SharedLockable, SharedTimedLockable
//   qlock::spinlock            qspinlock (4 bytes) Lockable
//   qlock::rwlock              qrwlock             Lockable, SharedLockable
//   qlock::rw_semaphore        rwsem               TimedLockable, SharedTimedLockable
//   qlock::condition_variable  TP condvar for std::unique_lock<qlock::mutex>
//
// Every type is non-copyable, non-movable (waiters hold its address) and
// has a constexpr default constructor, so a namespace-scope lock is
// constant-initialised (no static-init order problem).  The locks need no
// destructor; condition_variable has one (see there).  They work with std::lock_guard, std::unique_lock,
// std::shared_lock, std::scoped_lock and std::condition_variable_any.
//
// Deadlines on std::chrono::steady_clock and system_clock go to the C
// library as they are (CLOCK_MONOTONIC, CLOCK_REALTIME); any other clock
// is waited on through steady_clock and re-checked against its own now().
// Durations (try_lock_for, wait_for) are measured on steady_clock.
//
// Errors: the C calls report EINVAL for a malformed deadline or clock,
// which this header never passes, and for a wait on a destroyed condition
// variable (after the misuse handler returned); either is thrown as
// std::system_error, as the standard mutexes report theirs.
#ifndef QLOCK_QLOCK_HPP
#define QLOCK_QLOCK_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "qlock/qlock.hpp needs C++17 or later (C programs include the qlock/*.h headers)"
#endif

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <system_error>
#include <type_traits>
#include <time.h>

#include "qlock/qlock.h"
#include "qlock/qrwlock.h"
#include "qlock/qspinlock.h"
#include "qlock/rwsem.h"
#include "qlock/tp_cond.h"
#include "qlock/tp_mutex.h"
#include "qlock/tp_rwlock.h"

namespace qlock {

// The running library's version (QLOCK_VERSION_STRING is the header's).
inline const char *version() noexcept { return qlock_version(); }

namespace detail {

// Which C clock a std clock's time points are already on, if any.
template <class Clock> struct c_clock {
	static constexpr bool native = false;
};
template <> struct c_clock<std::chrono::steady_clock> {
	static constexpr bool native = true;
	static constexpr int id = CLOCK_MONOTONIC;
};
template <> struct c_clock<std::chrono::system_clock> {
	static constexpr bool native = true;
	static constexpr int id = CLOCK_REALTIME;
};

// Absolute deadline for the C API.  Times before the clock's epoch
// become 0 (already passed): the C calls reject negative seconds.
// Sub-nanosecond parts round up, so a wait never ends early.
template <class Clock, class Dur>
inline timespec to_timespec(const std::chrono::time_point<Clock, Dur> &t)
{
	using namespace std::chrono;
	timespec ts{};
	auto d = t.time_since_epoch();
	if (d <= Dur::zero())
		return ts;
	auto s = duration_cast<seconds>(d);
	ts.tv_sec = static_cast<time_t>(s.count());
	ts.tv_nsec = static_cast<long>(ceil<nanoseconds>(d - s).count());
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

// steady_clock::now() + d, saturating instead of overflowing for huge d
// (try_lock_for(std::chrono::hours::max()) waits "for ever").
template <class Rep, class Period>
inline std::chrono::steady_clock::time_point
steady_after(const std::chrono::duration<Rep, Period> &d)
{
	using namespace std::chrono;
	auto now = steady_clock::now();
	if (d <= d.zero())
		return now;
	if (duration<double>(d) >=
	    duration<double>(steady_clock::time_point::max() - now))
		return steady_clock::time_point::max();
	return now + ceil<steady_clock::duration>(d);
}

inline bool took(int err)
{
	if (err == 0)
		return true;
	if (err != ETIMEDOUT)
		throw std::system_error(err, std::generic_category(),
					"qlock timed wait");
	return false;
}

// Run a C timed call `op(const timespec *, int clk)` until deadline t:
// 0 when it succeeded, ETIMEDOUT once t has passed on t's own clock.
// A foreign clock is waited on through steady_clock and re-checked, since
// the two clocks may drift apart.
template <class Clock, class Dur, class Op>
inline int until(const std::chrono::time_point<Clock, Dur> &t, Op op)
{
	if constexpr (c_clock<Clock>::native) {
		timespec ts = to_timespec(t);
		return op(&ts, c_clock<Clock>::id);
	} else {
		for (;;) {
			timespec ts = to_timespec(steady_after(t - Clock::now()));
			int err = op(&ts, CLOCK_MONOTONIC);
			if (err != ETIMEDOUT || Clock::now() >= t)
				return err;
		}
	}
}

// The non-copyable, non-movable part every lock shares.
class lock_base {
public:
	lock_base(const lock_base &) = delete;
	lock_base &operator=(const lock_base &) = delete;

protected:
	constexpr lock_base() noexcept = default;
	~lock_base() = default;
};

} // namespace detail

// ---- the locks ------------------------------------------------------------
//
// Every lock is basic_lock<Traits>: Traits names the C type and calls, and
// says which concepts the lock meets beyond Lockable (timed: TimedLockable;
// shared: SharedLockable, and with timed SharedTimedLockable; downgrade)
// and whether its lock and unlock calls are noexcept (nothrow).  A member
// a lock does not have is not declared (not merely ill-formed to call), so
// a program that detects the concepts sees the right ones.

namespace detail {

// TP futex mutex (qlock/tp_mutex.h): 16 bytes, owner spinning, lock
// stealing bounded by a hand-off.  Not recursive; only the owner unlocks.
struct tp_mutex_traits {
	using native = qlock_tp_mutex_t;
	static constexpr bool nothrow = false, timed = true, shared = false,
			      downgrade = false;
	static void lock(native *l) { qlock_tp_mutex_lock(l); }
	static bool try_lock(native *l) noexcept { return qlock_tp_mutex_trylock(l); }
	static void unlock(native *l) { qlock_tp_mutex_unlock(l); }
	static int timed_lock(native *l, const timespec *ts, int clk)
	{
		return qlock_tp_mutex_timedlock(l, ts, clk);
	}
};

// TP futex rwlock (qlock/tp_rwlock.h): writer-preferring, hand-off bounded.
struct tp_rwlock_traits {
	using native = qlock_tp_rwlock_t;
	static constexpr bool nothrow = false, timed = true, shared = true,
			      downgrade = false;
	static void lock(native *l) { qlock_tp_rwlock_wrlock(l); }
	static bool try_lock(native *l) noexcept { return qlock_tp_rwlock_trywrlock(l); }
	static void unlock(native *l) { qlock_tp_rwlock_wrunlock(l); }
	static int timed_lock(native *l, const timespec *ts, int clk)
	{
		return qlock_tp_rwlock_timedwrlock(l, ts, clk);
	}
	static void lock_shared(native *l) { qlock_tp_rwlock_rdlock(l); }
	static bool try_lock_shared(native *l) noexcept { return qlock_tp_rwlock_tryrdlock(l); }
	static void unlock_shared(native *l) { qlock_tp_rwlock_rdunlock(l); }
	static int timed_lock_shared(native *l, const timespec *ts, int clk)
	{
		return qlock_tp_rwlock_timedrdlock(l, ts, clk);
	}
};

// Queued spinlock (qlock/qspinlock.h): 4 bytes; waiters spin a bounded
// time, then sleep.
struct qspinlock_traits {
	using native = qlock_spinlock_t;
	static constexpr bool nothrow = true, timed = false, shared = false,
			      downgrade = false;
	static void lock(native *l) noexcept { qlock_spin_lock(l); }
	static bool try_lock(native *l) noexcept { return qlock_spin_trylock(l); }
	static void unlock(native *l) noexcept { qlock_spin_unlock(l); }
};

// Queued rwlock (qlock/qrwlock.h): fair, 8 bytes; not recursive.
struct qrwlock_traits {
	using native = qlock_rwlock_t;
	static constexpr bool nothrow = true, timed = false, shared = true,
			      downgrade = false;
	static void lock(native *l) noexcept { qlock_write_lock(l); }
	static bool try_lock(native *l) noexcept { return qlock_write_trylock(l); }
	static void unlock(native *l) noexcept { qlock_write_unlock(l); }
	static void lock_shared(native *l) noexcept { qlock_read_lock(l); }
	static bool try_lock_shared(native *l) noexcept { return qlock_read_trylock(l); }
	static void unlock_shared(native *l) noexcept { qlock_read_unlock(l); }
};

// The kernel's rw_semaphore (qlock/rwsem.h): sleeping, spinning writers,
// reader batches, hand-off; downgrade() turns a write lock into a read
// lock.  Like the kernel's, it has no owner: another thread may unlock.
struct rwsem_traits {
	using native = qlock_rwsem_t;
	static constexpr bool nothrow = false, timed = true, shared = true,
			      downgrade = true;
	static void lock(native *l) { qlock_down_write(l); }
	static bool try_lock(native *l) noexcept { return qlock_down_write_trylock(l); }
	static void unlock(native *l) { qlock_up_write(l); }
	static int timed_lock(native *l, const timespec *ts, int clk)
	{
		return qlock_down_write_timed(l, ts, clk);
	}
	static void lock_shared(native *l) { qlock_down_read(l); }
	static bool try_lock_shared(native *l) noexcept { return qlock_down_read_trylock(l); }
	static void unlock_shared(native *l) { qlock_up_read(l); }
	static int timed_lock_shared(native *l, const timespec *ts, int clk)
	{
		return qlock_down_read_timed(l, ts, clk);
	}
	// Held for writing -> held for reading, no writer in between.
	static void downgrade_write(native *l) { qlock_downgrade_write(l); }
};

// Declares a member only where the lock has it (SFINAE on the traits).
template <bool B> using only_if = std::enable_if_t<B, int>;

template <class Traits> class basic_lock : lock_base {
public:
	using native_handle_type = typename Traits::native *;

	constexpr basic_lock() noexcept : l_{} {}

	// Lockable
	void lock() noexcept(Traits::nothrow) { Traits::lock(&l_); }
	bool try_lock() noexcept { return Traits::try_lock(&l_); }
	void unlock() noexcept(Traits::nothrow) { Traits::unlock(&l_); }

	// TimedLockable
	template <class Rep, class Period, class T = Traits, only_if<T::timed> = 0>
	bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
	{
		return try_lock_until(steady_after(d));
	}
	template <class Clock, class Dur, class T = Traits, only_if<T::timed> = 0>
	bool try_lock_until(const std::chrono::time_point<Clock, Dur> &t)
	{
		return took(until(t, [this](const timespec *ts, int clk) {
			return T::timed_lock(&l_, ts, clk);
		}));
	}

	// SharedLockable
	template <class T = Traits, only_if<T::shared> = 0>
	void lock_shared() noexcept(T::nothrow) { T::lock_shared(&l_); }
	template <class T = Traits, only_if<T::shared> = 0>
	bool try_lock_shared() noexcept { return T::try_lock_shared(&l_); }
	template <class T = Traits, only_if<T::shared> = 0>
	void unlock_shared() noexcept(T::nothrow) { T::unlock_shared(&l_); }

	// SharedTimedLockable
	template <class Rep, class Period, class T = Traits,
		  only_if<T::shared && T::timed> = 0>
	bool try_lock_shared_for(const std::chrono::duration<Rep, Period> &d)
	{
		return try_lock_shared_until(steady_after(d));
	}
	template <class Clock, class Dur, class T = Traits,
		  only_if<T::shared && T::timed> = 0>
	bool try_lock_shared_until(const std::chrono::time_point<Clock, Dur> &t)
	{
		return took(until(t, [this](const timespec *ts, int clk) {
			return T::timed_lock_shared(&l_, ts, clk);
		}));
	}

	// Held for writing -> held for reading, no writer in between.
	template <class T = Traits, only_if<T::downgrade> = 0>
	void downgrade() noexcept(T::nothrow) { T::downgrade_write(&l_); }

	native_handle_type native_handle() noexcept { return &l_; }

private:
	typename Traits::native l_;
};

} // namespace detail

using mutex = detail::basic_lock<detail::tp_mutex_traits>;
using shared_mutex = detail::basic_lock<detail::tp_rwlock_traits>;
using spinlock = detail::basic_lock<detail::qspinlock_traits>;
using rwlock = detail::basic_lock<detail::qrwlock_traits>;
using rw_semaphore = detail::basic_lock<detail::rwsem_traits>;

// TP condition variable (qlock/tp_cond.h) for std::unique_lock<qlock::mutex>;
// notify_all requeues the waiters onto the mutex instead of waking them
// all.  Waits may wake spuriously: use the predicate forms or a loop.  For
// any other lock type use std::condition_variable_any.
//
// As std::condition_variable, it may be destroyed as soon as every waiter
// has been notified: the destructor (qlock_tp_cond_destroy()) returns once
// the woken waiters no longer touch it; they may still be waiting for the
// mutex, which must outlive them.  A thread still blocked in a wait when
// the destructor runs (undefined in C++; e.g. a namespace-scope one at
// exit) is woken, and its next wait on it is a misuse (reported, see
// qlock_set_misuse_handler(); std::system_error if the handler returns).
class condition_variable : detail::lock_base {
public:
	using native_handle_type = qlock_tp_cond_t *;

	constexpr condition_variable() noexcept : c_{} {}
	~condition_variable() { qlock_tp_cond_destroy(&c_); }

	void notify_one() noexcept { qlock_tp_cond_signal(&c_); }
	void notify_all() noexcept { qlock_tp_cond_broadcast(&c_); }

	void wait(std::unique_lock<mutex> &lk)
	{
		int err = qlock_tp_cond_timedwait(&c_, held(lk), nullptr,
						  CLOCK_MONOTONIC);
		if (err) // after a misuse report whose handler returned
			throw std::system_error(err, std::generic_category(),
						"qlock::condition_variable::wait");
	}
	template <class Predicate>
	void wait(std::unique_lock<mutex> &lk, Predicate pred)
	{
		while (!pred())
			wait(lk);
	}

	template <class Clock, class Dur>
	std::cv_status wait_until(std::unique_lock<mutex> &lk,
				  const std::chrono::time_point<Clock, Dur> &t)
	{
		qlock_tp_mutex_t *m = held(lk);
		int err = detail::until(t, [this, m](const timespec *ts, int clk) {
			return qlock_tp_cond_timedwait(&c_, m, ts, clk);
		});
		return detail::took(err) ? std::cv_status::no_timeout
					 : std::cv_status::timeout;
	}
	template <class Clock, class Dur, class Predicate>
	bool wait_until(std::unique_lock<mutex> &lk,
			const std::chrono::time_point<Clock, Dur> &t, Predicate pred)
	{
		while (!pred())
			if (wait_until(lk, t) == std::cv_status::timeout)
				return pred();
		return true;
	}

	template <class Rep, class Period>
	std::cv_status wait_for(std::unique_lock<mutex> &lk,
				const std::chrono::duration<Rep, Period> &d)
	{
		return wait_until(lk, detail::steady_after(d));
	}
	template <class Rep, class Period, class Predicate>
	bool wait_for(std::unique_lock<mutex> &lk,
		      const std::chrono::duration<Rep, Period> &d, Predicate pred)
	{
		return wait_until(lk, detail::steady_after(d), std::move(pred));
	}

	native_handle_type native_handle() noexcept { return &c_; }

private:
	// Waiting needs the mutex held by this thread, as std::condition_variable.
	static qlock_tp_mutex_t *held(std::unique_lock<mutex> &lk)
	{
		if (!lk.owns_lock())
			throw std::system_error(
				std::make_error_code(std::errc::operation_not_permitted),
				"qlock::condition_variable: wait without the mutex");
		return lk.mutex()->native_handle();
	}

	qlock_tp_cond_t c_;
};

} // namespace qlock

#endif // QLOCK_QLOCK_HPP
