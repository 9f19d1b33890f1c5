/* SPDX-License-Identifier: MIT */
/*
 * The machine a run happened on, for the JSON "host" object: a report
 * rendered later, or on another machine, must say where its numbers come
 * from (CPU model, cores, NUMA nodes, kernel, glibc, compiler, the exact
 * command and when it ran).  Read from /proc and /sys; a field that cannot
 * be read is written as null, never guessed.
 */
#include <dirent.h>
#include <gnu/libc-version.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "json.h"
#include "lb.h"

#define LB_HOST_CMD_MAX 1024

static char lb_host_cmd[LB_HOST_CMD_MAX];

void lb_host_set_command(int argc, char **argv)
{
	size_t o = 0;

	for (int i = 0; i < argc && o < sizeof(lb_host_cmd); i++)
		o += (size_t)snprintf(lb_host_cmd + o, sizeof(lb_host_cmd) - o,
				      "%s%s", i ? " " : "", argv[i]);
}

/* The value of the first "key : value" line of /proc/cpuinfo, or "". */
static void lb_cpuinfo_value(const char *key, char *out, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	size_t klen = strlen(key);

	*out = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon || strncmp(line, key, klen) ||
		    strspn(line + klen, " \t") != (size_t)(colon - line) - klen)
			continue;
		snprintf(out, n, "%s", colon + 1 + strspn(colon + 1, " \t"));
		out[strcspn(out, "\n")] = 0;
		break;
	}
	fclose(f);
}

/* Distinct (physical id, core id) pairs: physical cores; 0 if unknown. */
static unsigned lb_physical_cores(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	long pkg = -1, seen[LB_MAX_THREADS];
	unsigned n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		long key;
		unsigned i;

		if (!colon)
			continue;
		if (!strncmp(line, "physical id", 11))
			pkg = strtol(colon + 1, NULL, 10);
		if (strncmp(line, "core id", 7) || pkg < 0)
			continue;
		key = pkg * 65536 + strtol(colon + 1, NULL, 10);
		for (i = 0; i < n && seen[i] != key; i++)
			;
		if (i == n && n < LB_MAX_THREADS)
			seen[n++] = key;
	}
	fclose(f);
	return n;
}

static unsigned lb_count_dir_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;
	size_t plen = strlen(prefix);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, plen) &&
		    de->d_name[plen] >= '0' && de->d_name[plen] <= '9')
			n++;
	closedir(d);
	return n;
}

/* The compiler that built lockbench (and, in one build, the library). */
static const char *lb_compiler(char *buf, size_t n)
{
	size_t len;

#ifdef __clang__
	snprintf(buf, n, "clang %s", __clang_version__);
#else
	snprintf(buf, n, "gcc %s", __VERSION__);
#endif
	len = strlen(buf);
	while (len && buf[len - 1] == ' ') /* clang's version ends in one */
		buf[--len] = 0;
	return buf;
}

void lb_host_json(FILE *f)
{
	char model[256], kernel[sizeof(((struct utsname *)0)->release) * 2 + 2];
	char date[32], compiler[128];
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;

	fprintf(f, "{\"online_cpus\": %ld", sysconf(_SC_NPROCESSORS_ONLN));
	lb_cpuinfo_value("model name", model, sizeof(model));
	lb_json_kv_str(f, "cpu_model", model);
	lb_json_kv_count(f, "physical_cores", lb_physical_cores());
	lb_json_kv_count(f, "numa_nodes",
			 lb_count_dir_entries("/sys/devices/system/node", "node"));
	*kernel = 0;
	if (!uname(&u))
		snprintf(kernel, sizeof(kernel), "%s %s", u.release, u.machine);
	lb_json_kv_str(f, "kernel", kernel);
	lb_json_kv_str(f, "glibc", gnu_get_libc_version());
	lb_json_kv_str(f, "compiler", lb_compiler(compiler, sizeof(compiler)));
	lb_json_kv_str(f, "command", lb_host_cmd);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	lb_json_kv_str(f, "date", date);
	fputc('}', f);
}
