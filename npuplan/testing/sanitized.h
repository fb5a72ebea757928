// NPUPLAN_TEST_SANITIZED is defined in sanitized builds (CI's ASan/UBSan and
// TSan stages), where tests may skip or shrink long searches: they test a
// search's result, not memory safety, and take minutes there instead of
// seconds (docs/reliability.md, "Sanitizers").
#ifndef NPUPLAN_TESTING_SANITIZED_H_
#define NPUPLAN_TESTING_SANITIZED_H_

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NPUPLAN_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(undefined_behavior_sanitizer)
#define NPUPLAN_TEST_SANITIZED 1
#endif
#endif

#endif  // NPUPLAN_TESTING_SANITIZED_H_
