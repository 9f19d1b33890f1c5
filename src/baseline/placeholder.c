/* placeholder */
int qlock_baseline_placeholder_;
