// SPDX-License-Identifier: MIT
// A shared library (DT_NEEDED by early_init, so its static constructors
// run before the drop-in's own) whose constructors use pthread locks the
// way gflags/protobuf registries do: a global registry filled under a
// mutex from static constructors, and a thread started from a constructor
// that waits on a condition variable until main() stops it.
#include <pthread.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Registry {
	std::mutex mu;
	std::vector<std::string> names;
};

Registry &registry()
{
	static Registry r; // a function-local static: guarded initialisation
	return r;
}

struct Register {
	explicit Register(const char *name)
	{
		std::lock_guard<std::mutex> g(registry().mu);
		registry().names.emplace_back(name);
	}
};

Register reg_a("lib.a"), reg_b("lib.b"), reg_c("lib.c");

pthread_mutex_t lm = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t lc = PTHREAD_COND_INITIALIZER;
int state; // 0 new, 1 thread running, 2 stop asked
long ticks;
pthread_t waiter;

void *wait_for_stop(void *)
{
	pthread_mutex_lock(&lm);
	state = 1;
	pthread_cond_broadcast(&lc);
	while (state != 2) {
		ticks++;
		pthread_cond_wait(&lc, &lm);
	}
	pthread_mutex_unlock(&lm);
	return nullptr;
}

struct StartThread {
	StartThread()
	{
		pthread_create(&waiter, nullptr, wait_for_stop, nullptr);
		pthread_mutex_lock(&lm);
		while (state != 1)
			pthread_cond_wait(&lc, &lm);
		pthread_mutex_unlock(&lm);
	}
} start_thread;

} // namespace

// Names registered; stops and joins the constructor's thread.
extern "C" __attribute__((visibility("default"))) int earlylib_finish(void)
{
	pthread_mutex_lock(&lm);
	state = 2;
	pthread_cond_broadcast(&lc);
	pthread_mutex_unlock(&lm);
	pthread_join(waiter, nullptr);
	std::lock_guard<std::mutex> g(registry().mu);
	return (int)registry().names.size();
}
