/* SPDX-License-Identifier: MIT */
/* A library dlopen()ed by lockdep_cases: two static locks, taken in one
 * order by caselib_ab and in the other by caselib_ba. */
#include <pthread.h>

static pthread_mutex_t lib_first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lib_second = PTHREAD_MUTEX_INITIALIZER;

static void take(pthread_mutex_t *x, pthread_mutex_t *y)
{
	pthread_mutex_lock(x);
	pthread_mutex_lock(y);
	pthread_mutex_unlock(y);
	pthread_mutex_unlock(x);
}

void caselib_ab(void);
void caselib_ba(void);
void caselib_ab(void) { take(&lib_first, &lib_second); }
void caselib_ba(void) { take(&lib_second, &lib_first); }
