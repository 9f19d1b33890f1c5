/* SPDX-License-Identifier: MIT */
/* The machine and command a run happened on, for the JSON "host" object
 * (host.c). */
#ifndef QLOCK_BENCH_HOST_H
#define QLOCK_BENCH_HOST_H

#include <stdio.h>

/* Remember the command line, for the "command" field. */
void lb_host_set_command(int argc, char **argv);
/* The "host" object. */
void lb_host_json(FILE *f);
/* The machine's load over the run: lb_host_load_begin() at its start, then
 * lb_host_load_json() writes the "load" object (load averages before and
 * after, the CPUs busy in all processes and in this one). */
void lb_host_load_begin(void);
void lb_host_load_json(FILE *f);

#endif /* QLOCK_BENCH_HOST_H */
