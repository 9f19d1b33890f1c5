/* placeholder smoke test; replaced by the test rig */
#include "core/atomic.h"
#include "core/futex.h"
#include "core/slot.h"
#include "core/spin.h"
#include <assert.h>
#include <errno.h>
int main(void)
{
	uint32_t w = 0x11223344;
	assert(qa_u8_read(&w, 0) == 0x44);
	assert(qa_u8_read(&w, 24) == 0x11);
	assert(qa_u16_read(&w, 16) == 0x1122);
	qa_u8_write_release(&w, 8, 0xaa);
	assert(w == 0x1122aa44);
	assert(qa_u16_xchg_relaxed(&w, 16, 0x5566) == 0x1122);
	assert(w == 0x5566aa44);
	assert(qa_u8_cmpxchg_acquire(&w, 0, 0x44, 0x01) == 0x44);
	assert(w == 0x5566aa01);
	assert(qc_slot_self() >= 0);
	qc_event_inc(QC_CLASS_ww_mutex, QC_EV_sleep);
	struct qc_class_stats st;
	qc_stats_read(QC_CLASS_ww_mutex, &st);
	assert(st.ev[QC_EV_sleep] == 1);
	struct timespec d = qc_deadline_in(1000000);
	assert(qc_futex_wait(&w, w, &d, CLOCK_MONOTONIC, QC_CLASS_other, QC_OP_LOCK) == ETIMEDOUT);
	return 0;
}
