#ifndef SL_ARTIFACT_INT_H
#define SL_ARTIFACT_INT_H
/* Shared by the files of src/artifact/ only. */
#include "artifact/artifact.h"

int artifact_oid_cmp(const void *a, const void *b); /* for qsort and bsearch */

#endif
