/*
 * A program that happens to define functions named like qlock's
 * internals (qc_*), linked with the static library: both must keep
 * their own definitions (no "multiple definition", no hijacked calls).
 */
#include <qlock/qrwlock.h>
#include <qlock/rwsem.h>
#include <qlock/tp_mutex.h>
#include <stdio.h>

int qc_futex_wait(int x);
int qc_futex_wake(int x);
int qc_osq_lock(int x);
int qc_misuse(int x);

int qc_futex_wait(int x) { return x + 1; }
int qc_futex_wake(int x) { return x + 2; }
int qc_osq_lock(int x) { return x + 3; }
int qc_misuse(int x) { return x + 4; }

static qlock_tp_mutex_t m = QLOCK_TP_MUTEX_INIT;
static qlock_rwsem_t sem = QLOCK_RWSEM_INIT;
static qlock_rwlock_t rw = QLOCK_RWLOCK_INIT;

int main(void)
{
	qlock_tp_mutex_lock(&m);
	qlock_tp_mutex_unlock(&m);
	qlock_down_write(&sem);
	qlock_up_write(&sem);
	qlock_write_lock(&rw);
	qlock_write_unlock(&rw);
	if (qc_futex_wait(1) != 2 || qc_futex_wake(1) != 3 ||
	    qc_osq_lock(1) != 4 || qc_misuse(1) != 5)
		return 1;
	printf("static link beside the program's own qc_* names: ok\n");
	return 0;
}
