/*
 * topognn-train: what its sources share.
 */
#ifndef TOPOGNN_TRAIN_H
#define TOPOGNN_TRAIN_H

/* Train the hold gate from hold sample files into `out`
 * (topognn-train-hold.c); the exit status: 0 written, 1 not. */
int train_hold_gate(const char *const *files, int nfiles, const char *out);

#endif
