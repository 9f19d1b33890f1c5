/* SPDX-License-Identifier: MIT */
/*
 * Takes a few locks, prints its pid, closes stderr and exits, as xz and
 * sort do: the drop-in's QLOCK_STATS report must still reach its file.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
	for (int i = 0; i < 10; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	close(STDERR_FILENO);
	return 0;
}
