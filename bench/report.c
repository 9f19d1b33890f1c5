/* SPDX-License-Identifier: MIT */
/*
 * `lockbench report FILE.json... -o DIR`: renders the seed reproduction
 * report (docs/bench-report.md) from saved `--json` output.  The report
 * (tables beside the patches' published ones, verdicts, plots) is made by
 * bench/report/qlock_report.py with matplotlib; lockbench only finds the
 * script and an interpreter and hands its arguments over.
 *
 * Interpreter: $QLOCK_PYTHON, else Debian's /usr/bin/python3 (where
 * python3-matplotlib installs; a python3 earlier on PATH, e.g. a pyenv
 * shim, usually lacks it), else python3 from PATH.
 * Script directory: $QLOCK_REPORT_DIR, else the source tree's bench/report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb.h"

#ifndef LB_REPORT_DIR
#define LB_REPORT_DIR "bench/report"
#endif

static const char *lb_report_python(void)
{
	const char *env = getenv("QLOCK_PYTHON");

	if (env && *env)
		return env;
	if (!access("/usr/bin/python3", X_OK))
		return "/usr/bin/python3";
	return "python3";
}

int lb_report_main(int argc, char **argv, int first)
{
	const char *dir = getenv("QLOCK_REPORT_DIR");
	const char *py = lb_report_python();
	char script[4096];
	char **args = calloc((size_t)(argc - first) + 3, sizeof(*args));
	int n = 0;

	if (!args)
		return LB_EXIT_RUNTIME;
	snprintf(script, sizeof(script), "%s/qlock_report.py",
		 dir && *dir ? dir : LB_REPORT_DIR);
	if (access(script, R_OK)) {
		fprintf(stderr, "lockbench: report generator %s: %s (set "
			"QLOCK_REPORT_DIR to the source tree's bench/report)\n",
			script, strerror(errno));
		free(args);
		return LB_EXIT_RUNTIME;
	}
	args[n++] = (char *)py;
	args[n++] = script;
	for (int i = first; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(NULL);
	execvp(py, args);
	fprintf(stderr, "lockbench: cannot run %s: %s (install python3, or set "
		"QLOCK_PYTHON)\n", py, strerror(errno));
	free(args);
	return LB_EXIT_RUNTIME;
}
