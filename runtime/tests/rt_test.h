/* rt_test.h: a tiny test harness shared by the runtime's test programs:
 * CHECK prints "ok"/"FAIL" lines with the location, and rt_test_summary ends
 * the run with "N passed, N failed" and the exit status. */
#ifndef RT_TEST_H
#define RT_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int rt_test_passed, rt_test_failed;

#define CHECK(cond, ...)                                                    \
  do {                                                                      \
    if (cond) {                                                             \
      rt_test_passed++;                                                     \
    } else {                                                                \
      rt_test_failed++;                                                     \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                \
      printf(__VA_ARGS__);                                                  \
      printf("\n");                                                         \
      fflush(stdout);                                                       \
    }                                                                       \
  } while (0)

/* Check a status and show the message when it is not the expected one. */
#define CHECK_STATUS(call, expected)                                        \
  do {                                                                      \
    GpucStatus rt_s_ = (call);                                              \
    CHECK(rt_s_ == (expected), "%s returned %s, expected %s; last error: %s", #call, \
          gpuc_status_name(rt_s_), gpuc_status_name(expected), gpuc_last_error()); \
  } while (0)

static inline int rt_test_summary(const char *name) {
  printf("%s: %d passed, %d failed\n", name, rt_test_passed, rt_test_failed);
  return rt_test_failed ? 1 : 0;
}

#endif
