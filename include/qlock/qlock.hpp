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

// TP futex mutex (qlock/tp_mutex.h): 16 bytes, owner spinning, lock
// stealing bounded by a hand-off.  Not recursive; only the owner unlocks.
class mutex : detail::lock_base {
public:
	using native_handle_type = qlock_tp_mutex_t *;

	constexpr mutex() noexcept : m_{} {}

	void lock() { qlock_tp_mutex_lock(&m_); }
	bool try_lock() noexcept { return qlock_tp_mutex_trylock(&m_); }
	void unlock() { qlock_tp_mutex_unlock(&m_); }

	template <class Rep, class Period>
	bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
	{
		return try_lock_until(detail::steady_after(d));
	}
	template <class Clock, class Dur>
	bool try_lock_until(const std::chrono::time_point<Clock, Dur> &t)
	{
		return detail::took(detail::until(t, [this](const timespec *ts, int clk) {
			return qlock_tp_mutex_timedlock(&m_, ts, clk);
		}));
	}

	native_handle_type native_handle() noexcept { return &m_; }

private:
	qlock_tp_mutex_t m_;
};

// TP futex rwlock (qlock/tp_rwlock.h): writer-preferring, hand-off bounded.
class shared_mutex : detail::lock_base {
public:
	using native_handle_type = qlock_tp_rwlock_t *;

	constexpr shared_mutex() noexcept : rw_{} {}

	void lock() { qlock_tp_rwlock_wrlock(&rw_); }
	bool try_lock() noexcept { return qlock_tp_rwlock_trywrlock(&rw_); }
	void unlock() { qlock_tp_rwlock_wrunlock(&rw_); }
	template <class Rep, class Period>
	bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
	{
		return try_lock_until(detail::steady_after(d));
	}
	template <class Clock, class Dur>
	bool try_lock_until(const std::chrono::time_point<Clock, Dur> &t)
	{
		return detail::took(detail::until(t, [this](const timespec *ts, int clk) {
			return qlock_tp_rwlock_timedwrlock(&rw_, ts, clk);
		}));
	}

	void lock_shared() { qlock_tp_rwlock_rdlock(&rw_); }
	bool try_lock_shared() noexcept { return qlock_tp_rwlock_tryrdlock(&rw_); }
	void unlock_shared() { qlock_tp_rwlock_rdunlock(&rw_); }
	template <class Rep, class Period>
	bool try_lock_shared_for(const std::chrono::duration<Rep, Period> &d)
	{
		return try_lock_shared_until(detail::steady_after(d));
	}
	template <class Clock, class Dur>
	bool try_lock_shared_until(const std::chrono::time_point<Clock, Dur> &t)
	{
		return detail::took(detail::until(t, [this](const timespec *ts, int clk) {
			return qlock_tp_rwlock_timedrdlock(&rw_, ts, clk);
		}));
	}

	native_handle_type native_handle() noexcept { return &rw_; }

private:
	qlock_tp_rwlock_t rw_;
};

// Queued spinlock (qlock/qspinlock.h): 4 bytes; waiters spin a bounded
// time, then sleep.
class spinlock : detail::lock_base {
public:
	using native_handle_type = qlock_spinlock_t *;

	constexpr spinlock() noexcept : l_{} {}

	void lock() noexcept { qlock_spin_lock(&l_); }
	bool try_lock() noexcept { return qlock_spin_trylock(&l_); }
	void unlock() noexcept { qlock_spin_unlock(&l_); }

	native_handle_type native_handle() noexcept { return &l_; }

private:
	qlock_spinlock_t l_;
};

// Queued rwlock (qlock/qrwlock.h): fair, 8 bytes; not recursive.
class rwlock : detail::lock_base {
public:
	using native_handle_type = qlock_rwlock_t *;

	constexpr rwlock() noexcept : l_{} {}

	void lock() noexcept { qlock_write_lock(&l_); }
	bool try_lock() noexcept { return qlock_write_trylock(&l_); }
	void unlock() noexcept { qlock_write_unlock(&l_); }

	void lock_shared() noexcept { qlock_read_lock(&l_); }
	bool try_lock_shared() noexcept { return qlock_read_trylock(&l_); }
	void unlock_shared() noexcept { qlock_read_unlock(&l_); }

	native_handle_type native_handle() noexcept { return &l_; }

private:
	qlock_rwlock_t l_;
};

// The kernel's rw_semaphore (qlock/rwsem.h): sleeping, spinning writers,
// reader batches, hand-off; downgrade() turns a write lock into a read
// lock.  Like the kernel's, it has no owner: another thread may unlock.
class rw_semaphore : detail::lock_base {
public:
	using native_handle_type = qlock_rwsem_t *;

	constexpr rw_semaphore() noexcept : s_{} {}

	void lock() { qlock_down_write(&s_); }
	bool try_lock() noexcept { return qlock_down_write_trylock(&s_); }
	void unlock() { qlock_up_write(&s_); }
	template <class Rep, class Period>
	bool try_lock_for(const std::chrono::duration<Rep, Period> &d)
	{
		return try_lock_until(detail::steady_after(d));
	}
	template <class Clock, class Dur>
	bool try_lock_until(const std::chrono::time_point<Clock, Dur> &t)
	{
		return detail::took(detail::until(t, [this](const timespec *ts, int clk) {
			return qlock_down_write_timed(&s_, ts, clk);
		}));
	}

	void lock_shared() { qlock_down_read(&s_); }
	bool try_lock_shared() noexcept { return qlock_down_read_trylock(&s_); }
	void unlock_shared() { qlock_up_read(&s_); }
	template <class Rep, class Period>
	bool try_lock_shared_for(const std::chrono::duration<Rep, Period> &d)
	{
		return try_lock_shared_until(detail::steady_after(d));
	}
	template <class Clock, class Dur>
	bool try_lock_shared_until(const std::chrono::time_point<Clock, Dur> &t)
	{
		return detail::took(detail::until(t, [this](const timespec *ts, int clk) {
			return qlock_down_read_timed(&s_, ts, clk);
		}));
	}

	// Held for writing -> held for reading, no writer in between.
	void downgrade() { qlock_downgrade_write(&s_); }

	native_handle_type native_handle() noexcept { return &s_; }

private:
	qlock_rwsem_t s_;
};

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
