// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of the recorder's command supervisor (recorder/rec_child.c): the command's exit
 * status, a stop that takes the whole tree (also one that ignores SIGTERM, and what the
 * command left running), a recorder that dies without a word, a supervisor that is killed,
 * and that the supervisor holds none of the recorder's close-on-exec descriptors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rec_child.h"

static char dir[64];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* Reaps whatever was orphaned to us (we are a subreaper: supervisors of dead "recorders"). */
static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Gone: no such process, or a zombie nobody has reaped yet. */
static bool gone(pid_t pid)
{
	char path[64], buf[256];
	FILE *fp;
	bool z = false;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "r");
	if (!fp)
		return true;
	while (fgets(buf, sizeof(buf), fp))
		if (!strncmp(buf, "State:", 6))
			z = strchr(buf, 'Z') != NULL;
	fclose(fp);
	return z;
}

static bool gone_within(pid_t pid, unsigned int ms)
{
	uint64_t end = now_ms() + ms;

	while (!gone(pid)) {
		if (now_ms() >= end)
			return false;
		sleep_ms(10);
	}
	return true;
}

/* Fails if PID is still there after MS, killing it first: a failed test leaves nothing behind
 * (a leftover holding ctest's output pipe would stall it). */
static void assert_gone(pid_t pid, unsigned int ms)
{
	if (gone_within(pid, ms))
		return;
	kill(pid, SIGKILL);
	fail_msg("process %d is still running", (int)pid);
}

/* The pid the command wrote to dir/NAME (waits for it). */
static pid_t read_pid(const char *name)
{
	char path[128];
	uint64_t end = now_ms() + 5000;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (now_ms() < end) {
		FILE *fp = fopen(path, "r");

		if (fp) {
			int ok = fscanf(fp, "%d\n", &pid);

			fclose(fp);
			if (ok == 1 && pid > 0) {
				unlink(path);
				return pid;
			}
		}
		sleep_ms(10);
	}
	fail_msg("the command did not write %s", name);
	return -1;
}

/* sh -c SCRIPT, with $D the test directory. */
static struct rec_child *start_sh(const char *script, const struct rec_child_opts *o)
{
	char *argv[] = {"sh", "-c", (char *)script, "sh", dir, NULL};
	struct rec_child *c;

	assert_int_equal(rec_child__start(&c, argv, o), 0);
	return c;
}

/* Polls until the command exits (5 s at most): it must have exited with CODE. */
static void wait_exit(struct rec_child *c, int code)
{
	uint64_t end = now_ms() + 5000;
	int st = 0;

	while (rec_child__poll(c, &st) == 0 && now_ms() < end)
		sleep_ms(5);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), code);
}

static void test_exit_status(void **state)
{
	struct rec_child *c = start_sh("exit 3", NULL);
	int st = 0;

	(void)state;
	wait_exit(c, 3);
	rec_child__stop(c, &st);
	assert_int_equal(WEXITSTATUS(st), 3);

	c = start_sh("kill -USR1 $$", NULL);
	rec_child__stop(c, &st); /* whichever comes first, the command's status */
	assert_true(WIFSIGNALED(st));
	assert_true(WTERMSIG(st) == SIGUSR1 || WTERMSIG(st) == SIGTERM);
}

/* A stop takes the command and its children: SIGTERM to the command, its orphans after it. */
static void test_stop_tree(void **state)
{
	struct rec_child *c = start_sh("sleep 1000 & echo $! > $1/p; wait", NULL);
	pid_t grandchild = read_pid("p");
	int st = 0;

	(void)state;
	assert_int_equal(rec_child__poll(c, &st), 0);
	rec_child__stop(c, &st);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	assert_gone(grandchild, 0);
}

/* A tree that ignores SIGTERM gets SIGKILL after the grace period. */
static void test_stop_ignores_term(void **state)
{
	struct rec_child_opts o = {.stop_grace_ms = 300};
	struct rec_child *c = start_sh("trap '' TERM; sleep 1000 & echo $! > $1/p; wait", &o);
	pid_t grandchild = read_pid("p");
	uint64_t t0 = now_ms();
	int st = 0;

	(void)state;
	rec_child__stop(c, &st);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	assert_true(now_ms() - t0 >= 300);
	assert_true(now_ms() - t0 < 3000);
	assert_gone(grandchild, 0);
}

/* What the command leaves running when it exits is stopped too. */
static void test_leftovers(void **state)
{
	struct rec_child *c = start_sh("sleep 1000 & echo $! > $1/p; exit 4", NULL);
	pid_t left = read_pid("p");
	int st = 0;

	(void)state;
	wait_exit(c, 4);
	assert_gone(left, 2000); /* before any __stop */
	rec_child__stop(c, &st);
	assert_int_equal(WEXITSTATUS(st), 4);
}

/* A "recorder" killed with SIGKILL: its command and the command's child go within a second. */
static void test_recorder_killed(void **state)
{
	pid_t rec, cmd, grandchild;
	int st;

	(void)state;
	rec = fork();
	assert_true(rec >= 0);
	if (rec == 0) {
		char *argv[] = {"sh", "-c", "echo $$ > $1/c; sleep 1000 & echo $! > $1/p; wait",
				"sh", dir,  NULL};
		struct rec_child *c;

		if (rec_child__start(&c, argv, NULL))
			_exit(3);
		for (;;)
			pause();
	}
	cmd = read_pid("c");
	grandchild = read_pid("p");
	assert_false(gone(cmd));
	kill(rec, SIGKILL);
	assert_int_equal(waitpid(rec, &st, 0), rec);
	if (!gone_within(cmd, 2000))
		kill(cmd, SIGKILL);
	assert_gone(grandchild, 2000);
	assert_gone(cmd, 0);
}

/* A supervisor killed with SIGKILL takes its command along (PR_SET_PDEATHSIG). */
static void test_supervisor_killed(void **state)
{
	struct rec_child *c = start_sh("echo $$ > $1/c; exec sleep 1000", NULL);
	pid_t cmd = read_pid("c"), sup = 0;
	char path[64];
	FILE *fp;
	int st = 0;

	(void)state;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)cmd);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%*d (%*[^)]) %*c %d", &sup), 1);
	fclose(fp);
	assert_true(sup > 1 && sup != getpid());
	kill(sup, SIGKILL);
	assert_gone(cmd, 2000);
	rec_child__stop(c, &st);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
}

/* The supervisor keeps none of the recorder's close-on-exec descriptors (BPF links must go). */
static void test_no_cloexec_fds(void **state)
{
	struct rec_child *c;
	struct pollfd pfd;
	int p[2], st;
	char *argv[] = {"sleep", "1000", NULL};

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(rec_child__start(&c, argv, NULL), 0);
	sleep_ms(100);
	close(p[1]);
	pfd = (struct pollfd){p[0], POLLIN, 0};
	assert_int_equal(poll(&pfd, 1, 2000), 1); /* the last write end is gone: hang-up */
	assert_true(pfd.revents & POLLHUP);
	close(p[0]);
	rec_child__stop(c, &st);
	assert_int_equal(WTERMSIG(st), SIGTERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status),	  cmocka_unit_test(test_stop_tree),
		cmocka_unit_test(test_stop_ignores_term), cmocka_unit_test(test_leftovers),
		cmocka_unit_test(test_recorder_killed),	  cmocka_unit_test(test_supervisor_killed),
		cmocka_unit_test(test_no_cloexec_fds),
	};
	int ret;

	snprintf(dir, sizeof(dir), "/tmp/test_rec_child.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* orphaned supervisors come back to us to be reaped */
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	reap();
	rmdir(dir);
	return ret;
}
