/* SPDX-License-Identifier: MIT */
/* libgcc's unwinder, found where backtrace() loaded it: see unwinder.h. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#include "unwinder.h"

void shim_unwinder_find(struct shim_unwinder *u)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);

	u->backtrace = NULL;
	if (!h)
		return;
	u->get_ip = (_Unwind_Ptr (*)(struct _Unwind_Context *))dlsym(h, "_Unwind_GetIP");
	u->get_cfa = (_Unwind_Word (*)(struct _Unwind_Context *))dlsym(h, "_Unwind_GetCFA");
	if (u->get_ip && u->get_cfa)
		u->backtrace = (_Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void *))
			dlsym(h, "_Unwind_Backtrace");
}
