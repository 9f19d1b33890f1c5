/* SPDX-License-Identifier: MIT */
/* The library's own version, for programs that check the one they run with. */
#include "qlock/qlock.h"

QLOCK_API const char *qlock_version(void)
{
	return QLOCK_VERSION_STRING;
}
