/* SPDX-License-Identifier: GPL-2.0-only */
/* The replay's helper threads: started so that its stop signals reach the main thread. */
#ifndef BIOTAPE_REPLAYER_THREAD_H
#define BIOTAPE_REPLAYER_THREAD_H

#include <pthread.h>

/*
 * pthread_create, the new thread with SIGINT and SIGTERM blocked: the replay's stop signals
 * reach the thread that installed their handler and checks the flag it sets. Delivered to a
 * helper thread (the decoder, the result writer) one could land just after that thread's last
 * check before the first I/O, and the replay ran instead of stopping with nothing written.
 */
int rp_thread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);

#endif
