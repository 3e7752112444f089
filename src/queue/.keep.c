/* module queue: see queue.h */
