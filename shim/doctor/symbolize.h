/* SPDX-License-Identifier: MIT */
/*
 * Call sites for the drop-in's reports (--profile, the deadlock report):
 * capture a return address on the lock path (one instruction), turn it
 * into "function (file:line)" at report time.  Self-contained: libc only
 * (dl_iterate_phdr, open/mmap); ELF and DWARF are read here.
 *
 * What shim_symbolize() prints, best first:
 *   "function (file.c:42)"        the module has .debug_line (DWARF 2-5),
 *                                 in itself or in a separate debug file
 *                                 found by build-id under /usr/lib/debug
 *   "function+0x1f (module)"      no line table, but a symbol covers the
 *                                 address: .symtab (every function, static
 *                                 ones included, as addr2line finds them) or,
 *                                 in a stripped module, .dynsym (exported
 *                                 functions only: -rdynamic adds them all)
 *   "module+0x1234"               neither: the offset is the module's own
 *                                 virtual address, which `addr2line -f -e
 *                                 module 0x1234` accepts
 *   "0x7f12..."                   the address is in no loaded module
 * file is the line table's file name without its directory; in code
 * inlined into the function, file:line is the function's line that calls
 * the inlined code (.debug_info, DWARF 4 and 5: dwarf.h).  C++ names are
 * demangled when the program has __cxa_demangle (libstdc++ loaded).
 */
#ifndef QLOCK_SHIM_SYMBOLIZE_H
#define QLOCK_SHIM_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The call site of the function this is written in: the address its caller
 * returns to.  Write it in the exported entry point itself (or in code
 * always inlined into it).  What it names:
 *   - a C caller: the caller's line (the call instruction's);
 *   - a caller that tail-calls the entry point (`return pthread_mutex_
 *     lock(m);` compiled as a jump): that caller's own caller;
 *   - C++ std::mutex & co.: the user's function when libstdc++'s inline
 *     wrappers were inlined (-O1 and up), else the out-of-line wrapper
 *     (std::mutex::lock, in the program) -- one frame only, no unwinding.
 */
#define SHIM_CALLER() __builtin_return_address(0)

/*
 * Describe `ra`, a return address as SHIM_CALLER() gives it (the line and
 * function are looked up at ra - 1, inside the call instruction), into buf
 * as above.  Returns the length of the description (snprintf's convention:
 * buf holds at most len - 1 characters and a NUL when len > 0).  Thread-safe
 * (serialised internally), not async-signal-safe: it opens and maps files
 * and caches them, and each address's description, for the life of the
 * process.  Never call it on a lock
 * path: at exit or from a watchdog thread only.
 */
int shim_symbolize(const void *ra, char *buf, size_t len);

/* The function around return address ra alone: its (demangled) name into
 * name ("" when no symbol covers it), its symbol's size (0 if unknown)
 * and the module's file name.  Returns whether a symbol was found.  Same
 * rules as shim_symbolize(). */
int shim_symbolize_func(const void *ra, char *name, size_t len, unsigned long *size,
			char *module, size_t mlen);

/* A data address (a static lock): "symbol (module)", "symbol+0x8
 * (module)" inside a larger object, "module+0x1234" without a symbol
 * (.symtab, then .dynsym), or the bare address outside every module. */
int shim_symbolize_data(const void *addr, char *buf, size_t len);

/* The same description's parts, unformatted (for the stacks' outputs,
 * stacks.h).  False when ra is in no loaded module (all parts empty).
 * Code inlined into func at ra: ninlined frames, outermost first, each
 * called from the one before it (inlined[0] from func, at file:line),
 * each at the line of its call of the next one, the last at the line
 * table's row (as `addr2line -i` lists them, innermost first). */
#define SHIM_SYM_INLINED 6
struct shim_sym {
	char func[512];            /* the function, demangled; "" when no symbol covers ra */
	char file[256];            /* the line table's file, without its directory; "" none */
	unsigned line;
	char module[256];          /* the module's file name */
	unsigned long offset;      /* ra as the module's own virtual address */
	unsigned long func_offset; /* ra - the function's start */
	unsigned long size;        /* the function's symbol's size; 0 unknown */
	unsigned ninlined;
	struct {
		char func[256];    /* demangled; "" when its name is unknown */
		char file[128];
		unsigned line;
	} inlined[SHIM_SYM_INLINED];
};
bool shim_symbolize_sym(const void *ra, struct shim_sym *s);
/* Its parts that need no line table (func, module, offset, func_offset,
 * size; file, line and the inlined calls left empty): what a frame's
 * name and whether it is a wrapper need, without reading the module's
 * debug information.  Same rules as shim_symbolize_sym(). */
bool shim_symbolize_sym_func(const void *ra, struct shim_sym *s);

#endif /* QLOCK_SHIM_SYMBOLIZE_H */
