/* module merge: see merge.h */
