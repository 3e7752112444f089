#ifndef SL_CORE_BANNED_H
#define SL_CORE_BANNED_H
/*
 * Functions banned from src/, as git bans them (its banned.h): too easy to
 * misuse, and even when used right they make every audit read the buffer
 * sizes again. CMakeLists.txt puts this header before every file of src/
 * (-include), so a use is a compile error naming the function:
 * "sorry_strcpy_is_a_banned_function". What to use instead:
 *
 *   strcpy, strcat, strncpy, strncat   snprintf (its return says whether it fit),
 *                                      sl_buf_*, asprintf, memcpy with a size
 *   sprintf, vsprintf                  snprintf, vsnprintf, asprintf, sl_buf_addf
 *   strtok, strtok_r                   strspn/strcspn, or a parser of the format
 *   gmtime, localtime, ctime,          gmtime_r, localtime_r, strftime
 *   asctime (and _r of the last two)
 *   mktemp                             mkstemp, mkdtemp
 *   atoi, atol, atoll, atof            strtol, strtoll, strtod with their checks
 *                                      (end pointer, errno, range)
 *
 * The system headers that declare them come first, so that their own
 * declarations (and _FORTIFY_SOURCE's inline wrappers) are read before the
 * names become macros. scripts/shape.py checks the same list (rule banned),
 * with file and line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef strtok_r
#define strtok_r(x, y, z) BANNED(strtok_r)

#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)

#undef gmtime
#define gmtime(t) BANNED(gmtime)
#undef localtime
#define localtime(t) BANNED(localtime)
#undef ctime
#define ctime(t) BANNED(ctime)
#undef ctime_r
#define ctime_r(t, buf) BANNED(ctime_r)
#undef asctime
#define asctime(t) BANNED(asctime)
#undef asctime_r
#define asctime_r(t, buf) BANNED(asctime_r)

#undef mktemp
#define mktemp(x) BANNED(mktemp)

#undef atoi
#define atoi(x) BANNED(atoi)
#undef atol
#define atol(x) BANNED(atol)
#undef atoll
#define atoll(x) BANNED(atoll)
#undef atof
#define atof(x) BANNED(atof)

#endif
