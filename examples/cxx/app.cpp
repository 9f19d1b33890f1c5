// SPDX-License-Identifier: MIT
//
// qlock from C++17: the wrappers of qlock/qlock.hpp with the standard
// lock types (std::lock_guard, std::unique_lock, std::shared_lock) and a
// qlock::condition_variable, built against an installed qlock.
//
// Build and run (qlock installed in PREFIX):
//
//   export PKG_CONFIG_PATH="PREFIX/lib/pkgconfig"
//   g++ -std=c++17 -o app app.cpp $(pkg-config --cflags --libs qlock) -Wl,-rpath,"PREFIX/lib"
//   ./app
//
// A consumer thread waits on the condition variable until main produces;
// then a reader's timed shared lock gives up while a writer holds the
// table and succeeds once it is free.  Exits 1 if any of that goes wrong.
#include <cstdio>
#include <thread>

#include <qlock/qlock.hpp>
#include <mutex>
#include <shared_mutex>

static qlock::mutex m;              // constant-initialised, no destructor
static qlock::condition_variable cv; // constant-initialised; its destructor waits for woken waiters to leave it
static qlock::shared_mutex table_lock;
static bool ready;

void produce()
{
	{
		std::lock_guard<qlock::mutex> g(m);
		ready = true;
	}
	cv.notify_one();
}

void consume()
{
	std::unique_lock<qlock::mutex> lk(m);
	cv.wait(lk, [] { return ready; });
}

bool lookup()
{
	std::shared_lock<qlock::shared_mutex> r(table_lock, std::chrono::milliseconds(5));
	return r.owns_lock();
}

int main()
{
	std::thread consumer(consume);
	produce();
	consumer.join();
	std::printf("qlock %s, C++%ld: the consumer saw ready = %s\n",
		    qlock_version(), __cplusplus / 100 % 100, ready ? "true" : "false");

	bool while_held = true;
	{
		std::unique_lock<qlock::shared_mutex> writer(table_lock);
		std::thread reader([&while_held] { while_held = lookup(); });
		reader.join();
	}
	bool when_free = lookup();
	std::printf("lookup() while a writer holds the table: %s; once it is free: %s\n",
		    while_held ? "got it" : "timed out after 5 ms",
		    when_free ? "got it" : "timed out");
	return ready && !while_held && when_free ? 0 : 1;
}
