/* SPDX-License-Identifier: MIT */
/*
 * lockbench: runs the registered locks side by side and prints tables
 * laid out like the kernel patches' (docs/lockbench.md).
 */
#include <string.h>

#include "host.h"
#include "lb.h"

int main(int argc, char **argv)
{
	lb_host_set_command(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return lb_report_main(argc, argv, 2);
	if (argc > 1 && !strcmp(argv[1], "seed"))
		return lb_preset_main(argc, argv, 2);
	if (argc > 1 && !strcmp(argv[1], "map"))
		return lb_map_main(argc, argv, 2);
	return lb_main_cli(argc, argv);
}
