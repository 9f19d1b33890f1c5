/* SPDX-License-Identifier: MIT */
/* The model build's thread index (core/model.h); empty in the library. */
#include "model.h"

#ifdef QLOCK_MODEL

#include <assert.h>
#include <pthread.h>

#include "atomic.h"

#ifdef QLOCK_UNDER_GENMC

unsigned qc_model_steps[QC_MODEL_THREADS];

/* GenMC numbers threads in creation order (main is 0), the same in every
 * execution, so the index costs no shared access. */
int qc_model_self(void)
{
	int i = (int)pthread_self();

	assert(i >= 0 && i < QC_MODEL_THREADS);
	return i;
}

#else

static int model_threads;
static __thread int model_index_plus1;

int qc_model_self(void)
{
	int i = model_index_plus1 - 1;

	if (i < 0) {
		i = qa_fetch_add_relaxed(&model_threads, 1);
		model_index_plus1 = i + 1;
	}
	assert(i < QC_MODEL_THREADS);
	return i;
}

#endif /* QLOCK_UNDER_GENMC */
#endif /* QLOCK_MODEL */
