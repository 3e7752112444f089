/* module reviewer: see reviewer.h */
