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
 * Script directory: $QLOCK_REPORT_DIR; else, for an installed lockbench,
 * the copy installed with it (<prefix>/share/qlock/report, found from this
 * executable's location); else the source tree's bench/report.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lb.h"

#ifndef LB_REPORT_DIR
#define LB_REPORT_DIR "bench/report"
#endif
/* From the installed lockbench's directory to the installed scripts. */
#ifndef LB_BIN_TO_REPORT
#define LB_BIN_TO_REPORT "../share/qlock/report"
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

/* The installed scripts' qlock_report.py next to this executable, if
 * there is one. */
static int lb_report_installed(char *script, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 0;
	self[n] = 0;
	snprintf(script, size, "%s/" LB_BIN_TO_REPORT "/qlock_report.py",
		 dirname(self));
	return !access(script, R_OK);
}

int lb_report_main(int argc, char **argv, int first)
{
	const char *dir = getenv("QLOCK_REPORT_DIR");
	const char *py = lb_report_python();
	char script[PATH_MAX + 64];
	char **args = calloc((size_t)(argc - first) + 3, sizeof(*args));
	int n = 0;

	if (!args)
		return LB_EXIT_RUNTIME;
	if (dir && *dir)
		snprintf(script, sizeof(script), "%s/qlock_report.py", dir);
	else if (!lb_report_installed(script, sizeof(script)))
		snprintf(script, sizeof(script), "%s/qlock_report.py",
			 LB_REPORT_DIR);
	if (access(script, R_OK)) {
		fprintf(stderr, "lockbench: report generator %s: %s (set "
			"QLOCK_REPORT_DIR to the directory of qlock_report.py: "
			"bench/report in the source tree, share/qlock/report "
			"in an install)\n", script, strerror(errno));
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
