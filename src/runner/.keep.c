/* module runner: see runner.h */
