#ifndef SLUICE_TRAIN_INT_H
#define SLUICE_TRAIN_INT_H
/* Shared inside the train module only. */

/* *dst = a copy of src (NULL: none); -1 out of memory (*dst kept). */
int train__set_str(char **dst, const char *src);

#endif
