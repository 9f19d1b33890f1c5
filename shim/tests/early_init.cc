// SPDX-License-Identifier: MIT
// The traps of an LD_PRELOAD lock library (LiTL's list), as an ordinary
// program; output identical with and without the drop-in, a watchdog
// turns a hang into a failure.
//  - locks used by static constructors that run before the drop-in's
//    own: in a DT_NEEDED library (early_lib.cc) and in this program, a
//    registry filled under a mutex (gflags/protobuf style);
//  - pthread_create before main, from a constructor, and a thread that
//    waits on a condition variable from before main until after it;
//  - the C++ standard library's locks, whose inline code calls the
//    pthread functions from libstdc++ and from this program:
//    std::mutex, std::condition_variable (wait, wait_for, notify),
//    std::timed_mutex, std::recursive_mutex, std::shared_mutex,
//    std::condition_variable_any, std::call_once (pthread_once), and
//    exceptions thrown by several threads at once (the unwinder in
//    libgcc_s takes its object mutex through pthread_mutex_lock);
//  - dlopen() of a library that uses pthread locks (DLOPEN_LIB);
//  - dlopen() of libqlock-pthread.so itself (SHIM, RTLD_GLOBAL) while a
//    mutex is held and a thread waits on a condvar: objects created
//    before keep working (loaded a second time when preloaded).
//   early_init SHIM DLOPEN_LIB
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern "C" int earlylib_finish(void);

namespace {

void on_alarm(int)
{
	static const char msg[] = "FAIL: watchdog: a lock hangs\n";
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

struct Watchdog {
	Watchdog()
	{
		signal(SIGALRM, on_alarm);
		alarm(600);
	}
} watchdog __attribute__((init_priority(101)));

std::mutex &reg_mu()
{
	static std::mutex mu;
	return mu;
}

std::vector<std::string> &reg()
{
	static std::vector<std::string> v;
	return v;
}

struct Register {
	explicit Register(const char *n)
	{
		std::lock_guard<std::mutex> g(reg_mu());
		reg().emplace_back(n);
	}
};

Register r1("main.a"), r2("main.b");

// A thread started before main, waiting on a condvar until main wakes it.
pthread_mutex_t em = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t ec = PTHREAD_COND_INITIALIZER;
int early_state;
pthread_t early_thread;

void *early_wait(void *)
{
	pthread_mutex_lock(&em);
	early_state = 1;
	pthread_cond_broadcast(&ec);
	while (early_state != 2)
		pthread_cond_wait(&ec, &em);
	early_state = 3;
	pthread_mutex_unlock(&em);
	return nullptr;
}

__attribute__((constructor)) void start_before_main()
{
	pthread_create(&early_thread, nullptr, early_wait, nullptr);
	pthread_mutex_lock(&em);
	while (early_state != 1)
		pthread_cond_wait(&ec, &em);
	pthread_mutex_unlock(&em);
}

int bad;

void check(bool ok, const char *what)
{
	std::printf("%-52s %s\n", what, ok ? "ok" : "FAIL");
	if (!ok)
		bad = 1;
}

// The standard library's locks under contention.
void cxx_locks(const char *tag)
{
	std::mutex mu;
	std::condition_variable cv;
	std::timed_mutex tm;
	std::recursive_mutex rm;
	std::shared_mutex sm;
	std::condition_variable_any cva;
	std::once_flag once;
	long n = 0, shared_n = 0, turns = 0, turns_any = 0, once_runs = 0, caught = 0;
	int turn = 0, turn2 = 0;
	const int T = 4, R = 2000;
	std::vector<std::thread> ts;

	for (int id = 0; id < T; id++)
		ts.emplace_back([&, id] {
			std::call_once(once, [&] { once_runs++; });
			for (int i = 0; i < R; i++) {
				{
					std::unique_lock<std::mutex> l(mu);
					n++;
				}
				if (!tm.try_lock_for(std::chrono::seconds(30)))
					return;
				tm.unlock();
				{
					std::lock_guard<std::recursive_mutex> a(rm), b(rm);
				}
				{
					std::unique_lock<std::shared_mutex> w(sm);
					shared_n++;
				}
				{
					std::shared_lock<std::shared_mutex> r(sm);
				}
			}
			for (int i = 0; i < 100; i++) {
				try {
					throw std::runtime_error("unwind");
				} catch (const std::runtime_error &) {
					std::lock_guard<std::mutex> l(mu);
					caught++;
				}
			}
			// a round robin on std::condition_variable
			for (int i = 0; i < 200; i++) {
				std::unique_lock<std::mutex> l(mu);
				while (turn != id)
					cv.wait_for(l, std::chrono::milliseconds(50));
				turns++;
				turn = (turn + 1) % T;
				cv.notify_all();
			}
			// and on condition_variable_any with the shared_mutex
			// (its own count: a thread gets here while the others
			// still take their last turns above, under mu)
			for (int i = 0; i < 100; i++) {
				std::unique_lock<std::shared_mutex> l(sm);
				cva.wait(l, [&] { return turn2 == id; });
				turns_any++;
				turn2 = (turn2 + 1) % T;
				cva.notify_all();
			}
		});
	for (auto &t : ts)
		t.join();
	std::string w = std::string(tag) + ": std locks, 4 threads";
	check(n == T * R && shared_n == T * R && turns == T * 200 &&
		      turns_any == T * 100 && once_runs == 1 &&
		      caught == T * 100,
	      w.c_str());
}

} // namespace

int main(int argc, char **argv)
{
	setvbuf(stdout, nullptr, _IONBF, 0);
	if (argc < 3) {
		std::fprintf(stderr, "usage: early_init SHIM DLOPEN_LIB\n");
		return 2;
	}
	{
		std::lock_guard<std::mutex> g(reg_mu());
		check(reg().size() == 2, "registry filled by this program's constructors");
	}
	check(earlylib_finish() == 3, "registry and thread of a DT_NEEDED library");
	pthread_mutex_lock(&em);
	early_state = 2;
	pthread_cond_broadcast(&ec);
	pthread_mutex_unlock(&em);
	pthread_join(early_thread, nullptr);
	check(early_state == 3, "thread created before main, woken in main");

	cxx_locks("before dlopen");

	void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	long (*work)(int, long) = h ? (long (*)(int, long))dlsym(h, "dlopenlib_work") : nullptr;
	check(work && work(4, 5000) == 4 * 5000, "dlopen'ed library using pthread locks");

	// The drop-in itself, loaded while objects are in use.
	std::mutex held;
	std::mutex cm;
	std::condition_variable cv;
	bool go = false, woke = false;
	held.lock();
	std::thread waiter([&] {
		std::unique_lock<std::mutex> l(cm);
		while (!go)
			cv.wait(l);
		woke = true;
	});
	usleep(10000);
	void *s = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	check(s != nullptr, "dlopen of libqlock-pthread.so after start");
	{
		std::lock_guard<std::mutex> l(cm);
		go = true;
	}
	cv.notify_all();
	waiter.join();
	held.unlock();
	check(woke && held.try_lock(), "objects created before it still work");
	held.unlock();
	cxx_locks("after dlopen");
	if (h)
		dlclose(h);
	std::printf(bad ? "FAIL\n" : "ok\n");
	return bad;
}
