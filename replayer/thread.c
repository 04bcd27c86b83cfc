// SPDX-License-Identifier: GPL-2.0-only
#include "thread.h"

#include <signal.h>

int rp_thread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	sigset_t stops, old;
	int err;

	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stops, &old); /* the new thread starts with this mask */
	err = pthread_create(th, attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}
