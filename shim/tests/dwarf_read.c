/* SPDX-License-Identifier: MIT */
/*
 * The lock doctor's reader of inlined calls (shim/doctor/dwarf_inline.c)
 * on an ELF file, outside a process: for COUNT addresses evenly spread
 * over the file's .text (every one when it is smaller), the inlined calls
 * around it, outermost first, each as
 * "function file:line" (its call site), then the line table's row, in
 * the form `addr2line -i` gives them (innermost first there).  Built
 * twice (dwarf_read.sh): with the reader's limits, and with tiny ones
 * (a unit's table holds 64 ranges, 2 units kept, 40 KB in all), so that
 * its other paths run (a unit walked again at each look-up, tables
 * dropped): both must print the same.  At every address, the line table's
 * row read from the address's unit alone must be the one every unit's
 * walk in turn finds, and the function symbol found through the symbol
 * table's index the one a scan of the whole table finds (exit status 1
 * when not).
 *   dwarf_read ELF-FILE [COUNT]
 */
#include "symbolize.c"

int main(int argc, char **argv)
{
	struct elf_file f;
	struct dwarf d;
	unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 0) : 1000, lines = 0, differ = 0;

	if (argc < 2 || !count || !elf_open(&f, argv[1])) {
		fprintf(stderr, "usage: dwarf_read ELF-FILE [COUNT]\n");
		return 2;
	}
	dwarf_of(&f, &d);
	unsigned idx = UINT_MAX;
	(void)elf_sec(&f, ".text", &idx);
	if (idx >= f.shnum)
		return 2;
	uint64_t lo = f.sh[idx].sh_addr, hi = lo + f.sh[idx].sh_size;
	uint64_t step = (hi - lo) / count ? (hi - lo) / count : 1;
	for (uint64_t a = lo; a < hi; a += step) {
		const char *file = "??";
		unsigned line = 0;
		struct shim_inline in;
		char row[300];

		const char *file_all = "??";
		unsigned line_all = 0;

		struct sym_hit hit = { NULL, 0, 0, false, 0 }, scan = hit;
		unsigned ti;
		struct sec tab = elf_sec(&f, ".symtab", &ti);

		sym_lookup(&f, ".symtab", a, &hit);
		if (tab.p) {
			struct sec str = elf_sec_at(&f, f.sh[ti].sh_link);

			for (size_t i = 0; str.p && i < tab.size / sizeof(ElfW(Sym)); i++)
				sym_consider((const ElfW(Sym) *)(const void *)tab.p, i, str, a, &scan, false);
		}
		if (hit.name != scan.name || hit.value != scan.value || hit.size != scan.size ||
		    hit.covers != scan.covers) {
			if (differ++ < 10)
				fprintf(stderr, "dwarf_read: 0x%llx: symbol %s from the index, %s from a scan\n",
					(unsigned long long)a, hit.name ? hit.name : "-",
					scan.name ? scan.name : "-");
		}
		if (!line_lookup(&d, a, &file, &line))
			file = "??", line = 0;
		if (!line_lookup_all(&d, a, &file_all, &line_all))
			file_all = "??", line_all = 0;
		if (strcmp(file, file_all) != 0 || line != line_all) {
			if (differ++ < 10)
				fprintf(stderr, "dwarf_read: 0x%llx: %s:%u from its unit, %s:%u from all\n",
					(unsigned long long)a, file, line, file_all, line_all);
		}
		snprintf(row, sizeof(row), "%s:%u", file, line);
		if (!shim_dwarf_inline(&d, a, &in))
			continue;
		printf("0x%016llx", (unsigned long long)a);
		for (unsigned k = 0; k < in.n; k++) {
			const char *cf = line_file_at(&d, in.stmt_list, in.call[k].file);

			printf(" | %s:%u %s", cf ? cf : "??", in.call[k].line,
			       in.call[k].name ? in.call[k].name : "??");
		}
		if (in.more)
			printf(" | ...");
		else
			printf(" | %s", row);
		printf("\n");
		lines++;
	}
	fprintf(stderr, "dwarf_read: every %llu bytes, %lu addresses in inlined code\n",
		(unsigned long long)step, lines);
	if (differ)
		fprintf(stderr, "dwarf_read: %lu addresses' lines or symbols differ\n", differ);
	return differ ? 1 : 0;
}
