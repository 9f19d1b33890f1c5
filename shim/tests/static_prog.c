/* SPDX-License-Identifier: MIT */
/* A statically linked program (qlock_run.sh): no preload reaches it. */
int main(void)
{
	return 0;
}
