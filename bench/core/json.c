/* SPDX-License-Identifier: MIT */
/* JSON values for lockbench's documents (json.h). */
#include <math.h>

#include "json.h"

void lb_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void lb_json_num(FILE *f, double v, bool present)
{
	if (present && isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f);
}

void lb_json_kv_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, ", \"%s\": ", key);
	if (v && *v)
		lb_json_str(f, v);
	else
		fputs("null", f);
}

void lb_json_kv_count(FILE *f, const char *key, unsigned v)
{
	if (v)
		fprintf(f, ", \"%s\": %u", key, v);
	else
		fprintf(f, ", \"%s\": null", key);
}
