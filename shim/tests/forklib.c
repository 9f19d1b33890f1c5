/* SPDX-License-Identifier: MIT */
/*
 * A shared library with its own lock and its own pthread_atfork handlers,
 * registered by its constructor, as libraries do (a DT_NEEDED dependency
 * of fork_deplib; its constructor runs before a preloaded shim's).
 * Its child handler unlocks its mutex, the usual pattern.
 */
#include <pthread.h>

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static long lib_count;

static void lib_prepare(void) { pthread_mutex_lock(&lib_lock); }
static void lib_parent(void) { pthread_mutex_unlock(&lib_lock); }
static void lib_child(void) { pthread_mutex_unlock(&lib_lock); }

__attribute__((constructor)) static void lib_init(void)
{
	pthread_atfork(lib_prepare, lib_parent, lib_child);
}

void forklib_work(void);
void forklib_work(void)
{
	pthread_mutex_lock(&lib_lock);
	lib_count++;
	pthread_mutex_unlock(&lib_lock);
}
