/* Uses the installed public API only. */
#include <qlock/qlock.h>
#include <qlock/qrwlock.h>
#include <qlock/qspinlock.h>
#include <qlock/rwsem.h>
#include <qlock/tp_mutex.h>
#include <stdio.h>

static qlock_spinlock_t spin = QLOCK_SPINLOCK_INIT;
static qlock_rwlock_t rw = QLOCK_RWLOCK_INIT;
static qlock_rwsem_t sem = QLOCK_RWSEM_INIT;
static qlock_tp_mutex_t mutex = QLOCK_TP_MUTEX_INIT;

int main(void)
{
	if (qlock_tune_set(QLOCK_TUNE_SPIN_LIMIT, 100) != 0 ||
	    qlock_tune_get(QLOCK_TUNE_SPIN_LIMIT) != 100)
		return 1;
	if (qlock_max_threads() < 1)
		return 1;
	qlock_spin_lock(&spin);
	if (qlock_spin_trylock(&spin))
		return 1;
	qlock_spin_unlock(&spin);
	qlock_read_lock(&rw);
	qlock_read_unlock(&rw);
	qlock_write_lock(&rw);
	qlock_write_unlock(&rw);
	qlock_down_write(&sem);
	qlock_up_write(&sem);
	qlock_tp_mutex_lock(&mutex);
	qlock_tp_mutex_unlock(&mutex);
	printf("qlock %s consumer ok\n", QLOCK_VERSION_STRING);
	return 0;
}
