/* Uses the installed public API only. */
#include <qlock/qlock.h>
#include <stdio.h>

int main(void)
{
	if (qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 100) != 0 ||
	    qlock_tune_get(QLOCK_TUNE_SPIN_LIMIT) != 100)
		return 1;
	if (qlock_max_threads() < 1)
		return 1;
	printf("qlock %s consumer ok\n", QLOCK_VERSION_STRING);
	return 0;
}
