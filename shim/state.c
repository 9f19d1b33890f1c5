/* SPDX-License-Identifier: MIT */
/* The drop-in's process-wide state (state.h). */
#include <string.h>

#include "state.h"

struct shim_real real;

enum shim_malg shim_malg = MALG_QSPINLOCK;
enum shim_ralg shim_ralg = RALG_GLIBC;
enum shim_salg shim_salg = SALG_QSPINLOCK;

const char *const shim_malg_names[MALG_NR] = {
	[MALG_GLIBC] = "glibc", [MALG_QSPINLOCK] = "qspinlock", [MALG_TP] = "tp",
};
const char *const shim_ralg_names[RALG_NR] = {
	[RALG_GLIBC] = "glibc", [RALG_QRWLOCK] = "qrwlock",
	[RALG_RWSEM] = "rwsem", [RALG_TP] = "tp",
};
const char *const shim_salg_names[SALG_NR] = {
	[SALG_GLIBC] = "glibc", [SALG_QSPINLOCK] = "qspinlock",
};

const char *shim_alg_name(const char *what)
{
	if (strcmp(what, "mutex") == 0)
		return shim_malg_names[shim_malg];
	if (strcmp(what, "rwlock") == 0)
		return shim_ralg_names[shim_ralg];
	if (strcmp(what, "spin") == 0)
		return shim_salg_names[shim_salg];
	if (strcmp(what, "cond") == 0)
		return "qlock";
	return NULL;
}

int shim_state;
uint8_t shim_mutex_fast;
uint8_t shim_rwlock_fast;
uint8_t shim_rwlock_bias;
bool shim_stats_on;
bool shim_verbose;
__thread uint64_t shim_self_cache __attribute__((tls_model("initial-exec")));
