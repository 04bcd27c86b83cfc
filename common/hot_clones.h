/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * HOT_CLONES before a hot function: gcc compiles it twice, for x86-64-v3 (AVX2, BMI2, LZCNT)
 * and for the baseline, and the loader picks one for the CPU (an ifunc, as zstd does with its
 * BMI2 paths). The results are the same either way: the analyzer's statistics (analyze/stats.c)
 * are built without floating-point contraction (FMA; analyze/CMakeLists.txt). Empty elsewhere.
 * For the tools (common/, not libbiotape); the library's decoder has its own BTAPE_HOT_CLONES
 * (format/btape_internal.h), under the library's license, with the same condition.
 */
#ifndef BIOTAPE_HOT_CLONES_H
#define BIOTAPE_HOT_CLONES_H

#include <limits.h> /* glibc: defines __GLIBC__ */

/* target_clones needs an ifunc (glibc) and, for "arch=x86-64-v3", gcc 11 or later; not under
 * ThreadSanitizer, whose runtime is not set up yet when the ifunc resolver runs */
#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__GNUC__) && \
	!defined(__clang__) && __GNUC__ >= 11 && !defined(BIOTAPE_NO_CLONES) && \
	!defined(__SANITIZE_THREAD__)
#define HOT_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define HOT_CLONES
#endif

#endif
