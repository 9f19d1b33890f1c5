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
#include <sys/resource.h>
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

/* ---- the machine's load over the run ------------------------------------ */

struct lb_load_mark {
	double loadavg[3];
	bool has_loadavg, has_stat;
	double busy_s;          /* all CPUs' non-idle time, /proc/stat */
	double own_s;           /* this process's user + system time */
	uint64_t t_ns;
};

static struct lb_load_mark lb_load_start;

static double lb_tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void lb_load_mark(struct lb_load_mark *m)
{
	FILE *f = fopen("/proc/loadavg", "r");
	unsigned long long v[8] = { 0 };
	struct rusage ru;
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec ts;

	memset(m, 0, sizeof(*m));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	m->t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (f) {
		m->has_loadavg = fscanf(f, "%lf %lf %lf", &m->loadavg[0],
					&m->loadavg[1], &m->loadavg[2]) == 3;
		fclose(f);
	}
	/* cpu  user nice system idle iowait irq softirq steal */
	f = fopen("/proc/stat", "r");
	if (f && hz > 0) {
		m->has_stat = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu "
				     "%llu %llu", &v[0], &v[1], &v[2], &v[3],
				     &v[4], &v[5], &v[6], &v[7]) == 8;
		m->busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
			    (double)hz;
	}
	if (f)
		fclose(f);
	if (!getrusage(RUSAGE_SELF, &ru))
		m->own_s = lb_tv_s(ru.ru_utime) + lb_tv_s(ru.ru_stime);
}

void lb_host_load_begin(void)
{
	lb_load_mark(&lb_load_start);
}

static void lb_json_loadavg(FILE *f, const char *key,
			    const struct lb_load_mark *m)
{
	fprintf(f, "\"%s\": ", key);
	if (!m->has_loadavg) {
		fputs("null", f);
		return;
	}
	fprintf(f, "[%.2f, %.2f, %.2f]", m->loadavg[0], m->loadavg[1],
		m->loadavg[2]);
}

void lb_host_load_json(FILE *f)
{
	struct lb_load_mark end;
	const struct lb_load_mark *b = &lb_load_start;
	double wall, own, all;
	bool stat_ok;

	lb_load_mark(&end);
	wall = (double)(end.t_ns - b->t_ns) / 1e9;
	stat_ok = b->has_stat && end.has_stat && wall > 0;
	own = wall > 0 ? (end.own_s - b->own_s) / wall : 0;
	all = stat_ok ? (end.busy_s - b->busy_s) / wall : 0;
	fputs("{", f);
	lb_json_loadavg(f, "loadavg_before", b);
	fputs(", ", f);
	lb_json_loadavg(f, "loadavg_after", &end);
	fputs(", \"wall_s\": ", f);
	lb_json_num(f, wall, true);
	fputs(", \"busy_cpus\": ", f);
	lb_json_num(f, all, stat_ok);
	fputs(", \"own_busy_cpus\": ", f);
	lb_json_num(f, own, wall > 0);
	/* The clocks tick at different rates: a small negative is zero. */
	fputs(", \"other_busy_cpus\": ", f);
	lb_json_num(f, all > own ? all - own : 0, stat_ok);
	fputc('}', f);
}
