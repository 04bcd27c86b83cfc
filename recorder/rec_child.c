// SPDX-License-Identifier: GPL-2.0-only
/*
 * The recorder's COMMAND under a supervisor that stops its whole process tree with or after
 * the recorder (rec_child.h). The supervisor is forked from a threaded process and never
 * execs: it uses system calls only (no malloc, no stdio) and leaves with _exit().
 */
#include "rec_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STOP_GRACE_MS 5000   /* __stop: SIGTERM, then SIGKILL after this */
#define ORPHAN_GRACE_MS 1000 /* the recorder gone: SIGKILL after this */
#define GIVE_UP_MS 2000	     /* after SIGKILL: children still there are unkillable (D state) */
#define ROUND_MS 20	     /* while stopping: look for new orphans this often */
#define TERMED_MAX 256	     /* children sent SIGTERM already (not again) */
#define MSG_STOP 'T'

struct rec_child {
	pid_t pid; /* the supervisor */
	int sock;
	bool have_status, reaped;
	int status;
};

static const int ignored[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the supervisor (runs in the forked child) -------------------------------------------- */

struct reaper {
	pid_t self, cmd;
	int sock, sfd;
	bool cmd_alive, recorder_gone;
	int sig;	   /* 0 running, SIGTERM or SIGKILL: stopping */
	uint64_t deadline; /* SIGTERM: when SIGKILL follows; SIGKILL: when to give up */
	pid_t termed[TERMED_MAX];
	uint32_t ntermed;
};

/* PID's parent from /proc/PID/stat ("pid (comm) state ppid ..."), or -1. */
static pid_t proc_ppid(const char *pid)
{
	char path[64] = "/proc/", buf[512], *p;
	size_t n = strlen(path), l = strlen(pid);
	ssize_t got;
	pid_t pp = 0;
	int fd;

	if (n + l + sizeof("/stat") > sizeof(path))
		return -1;
	memcpy(path + n, pid, l);
	memcpy(path + n + l, "/stat", sizeof("/stat"));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	for (p += 4; *p >= '0' && *p <= '9'; p++)
		pp = pp * 10 + (*p - '0');
	return pp;
}

static bool termed(struct reaper *r, pid_t pid, bool add)
{
	for (uint32_t i = 0; i < r->ntermed; i++)
		if (r->termed[i] == pid)
			return true;
	if (add && r->ntermed < TERMED_MAX)
		r->termed[r->ntermed++] = pid;
	return false;
}

static void forget(struct reaper *r, pid_t pid)
{
	for (uint32_t i = 0; i < r->ntermed; i++) {
		if (r->termed[i] == pid) {
			r->termed[i] = r->termed[--r->ntermed];
			return;
		}
	}
}

static void send_sig(struct reaper *r, pid_t pid)
{
	if (r->sig == SIGKILL) {
		kill(pid, SIGKILL);
	} else if (!termed(r, pid, true)) {
		kill(pid, SIGTERM);
		kill(pid, SIGCONT); /* a stopped process acts on SIGTERM only when continued */
	}
}

struct dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int dec(const char *s)
{
	int v = 0;

	if (!*s)
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	return *s ? -1 : v;
}

/*
 * Closes the file descriptors that an exec would close (FD_CLOEXEC: everything the recorder
 * opened, BPF links and the trace among them) but KEEP: the programs must detach when the
 * recorder lets go of them. Those without it were passed on to COMMAND and stay.
 */
static void close_cloexec(int keep)
{
	char buf[4096];
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (dfd < 0) {
		for (int fd = 3; fd < 65536; fd++) {
			int fl = fcntl(fd, F_GETFD);

			if (fl >= 0 && (fl & FD_CLOEXEC) && fd != keep)
				close(fd);
		}
		return;
	}
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			int fd = dec(d->d_name), fl;

			off += d->d_reclen;
			if (fd < 3 || fd == keep || fd == dfd)
				continue;
			fl = fcntl(fd, F_GETFD);
			if (fl >= 0 && (fl & FD_CLOEXEC))
				close(fd);
		}
	}
	close(dfd);
}

/*
 * Signals every child of this process: COMMAND and the orphans of its tree (a subreaper's
 * children). They stay our children, their pids unused by anyone else, until we reap them, so
 * a pid read from /proc here is still that process when it is signalled.
 */
static void signal_children(struct reaper *r)
{
	char buf[4096];
	int fd;
	long n;

	if (r->cmd_alive)
		send_sig(r, r->cmd);
	fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			pid_t pid = dec(d->d_name);

			off += d->d_reclen;
			if (pid <= 0 || pid == r->cmd || pid == r->self)
				continue;
			if (proc_ppid(d->d_name) == r->self)
				send_sig(r, pid);
		}
	}
	close(fd);
}

static void start_stop(struct reaper *r, uint32_t grace_ms)
{
	uint64_t until = mono_ms() + grace_ms;

	if (!r->sig) {
		r->sig = SIGTERM;
		r->deadline = until;
	} else if (r->sig == SIGTERM && until < r->deadline) {
		r->deadline = until;
	}
}

static void send_status(struct reaper *r, int status)
{
	if (!r->recorder_gone)
		(void)!send(r->sock, &status, sizeof(status), MSG_NOSIGNAL);
}

__attribute__((noreturn)) static void reaper_main(int sock, char *const *cmd,
						  const struct rec_child_opts *o)
{
	struct sigaction old[sizeof(ignored) / sizeof(ignored[0])];
	struct sigaction ign = {.sa_handler = SIG_IGN};
	struct reaper r = {.sock = sock, .cmd_alive = true};
	sigset_t chld, none;
	int status;

	close_cloexec(sock);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &ign, &old[i]);
	sigemptyset(&none);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	r.sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	prctl(PR_SET_NAME, "biotape-reaper");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	r.self = getpid();

	r.cmd = fork();
	if (r.cmd == 0) {
		/* COMMAND: dies with the supervisor; the signals as the recorder got them */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != r.self)
			_exit(127); /* the supervisor is already gone */
		for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
			if (ignored[i] == SIGHUP || ignored[i] == SIGQUIT)
				sigaction(ignored[i], &old[i], NULL);
			else
				signal(ignored[i], SIG_DFL);
		}
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (o->envp)
			execvpe(cmd[0], cmd, o->envp);
		else
			execvp(cmd[0], cmd);
		dprintf(STDERR_FILENO, "biotape: record: cannot run '%s': %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	if (r.cmd < 0) {
		dprintf(STDERR_FILENO, "biotape: record: fork: %s\n", strerror(errno));
		send_status(&r, W_EXITCODE(127, 0));
		_exit(1);
	}

	for (;;) {
		struct pollfd pfd[2] = {{r.sock, POLLIN, 0}, {r.sfd, POLLIN, 0}};
		uint64_t now;
		pid_t pid;
		int timeout = -1;

		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			forget(&r, pid);
			if (pid == r.cmd) {
				r.cmd_alive = false;
				send_status(&r, status);
				start_stop(&r, o->stop_grace_ms); /* what it left running */
			}
		}
		if (pid < 0 && errno == ECHILD)
			_exit(0); /* COMMAND and all it started are gone */
		now = mono_ms();
		if (r.sig == SIGTERM && now >= r.deadline) {
			r.sig = SIGKILL;
			r.deadline = now + GIVE_UP_MS;
		} else if (r.sig == SIGKILL && now >= r.deadline) {
			_exit(1);
		}
		if (r.sig) {
			signal_children(&r);
			timeout = ROUND_MS;
		}
		if (r.recorder_gone)
			pfd[0].fd = -1;
		if (poll(pfd, 2, timeout) < 0 && errno != EINTR)
			_exit(1);
		if (pfd[0].revents) {
			char m;
			ssize_t n = read(r.sock, &m, 1);

			if (n == 1 && m == MSG_STOP) {
				start_stop(&r, o->stop_grace_ms);
			} else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
				r.recorder_gone = true; /* however it ended: stop everything */
				start_stop(&r, o->orphan_grace_ms);
			}
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			while (read(r.sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
		}
	}
}

/* ---- the recorder's side ------------------------------------------------------------------ */

int rec_child__start(struct rec_child **cp, char *const *cmd, const struct rec_child_opts *opts)
{
	struct rec_child_opts o = {STOP_GRACE_MS, ORPHAN_GRACE_MS, NULL};
	struct rec_child *c;
	int sv[2], err;

	*cp = NULL;
	if (opts && opts->stop_grace_ms)
		o.stop_grace_ms = opts->stop_grace_ms;
	if (opts && opts->orphan_grace_ms)
		o.orphan_grace_ms = opts->orphan_grace_ms;
	if (opts)
		o.envp = opts->envp;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		free(c);
		return err;
	}
	c->pid = fork();
	if (c->pid == 0) {
		close(sv[0]);
		reaper_main(sv[1], cmd, &o);
	}
	err = -errno;
	close(sv[1]);
	if (c->pid < 0) {
		close(sv[0]);
		free(c);
		return err;
	}
	c->sock = sv[0];
	*cp = c;
	return 0;
}

/* Reads the status if it came (BLOCK: waits for it); false when the supervisor is gone. */
static bool read_status(struct rec_child *c, bool block)
{
	ssize_t n;

	if (c->have_status)
		return true;
	do
		n = recv(c->sock, &c->status, sizeof(c->status),
			 block ? MSG_WAITALL : MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(c->status)) {
		c->have_status = true;
		return true;
	}
	if (n < 0 && errno == EAGAIN)
		return true;
	/* gone without a word (killed): its own status stands for COMMAND's */
	while (!c->reaped && waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	c->reaped = c->have_status = true;
	return false;
}

int rec_child__poll(struct rec_child *c, int *status)
{
	read_status(c, false);
	if (!c->have_status)
		return 0;
	*status = c->status;
	return 1;
}

void rec_child__stop(struct rec_child *c, int *status)
{
	const char m = MSG_STOP;

	if (!c)
		return;
	read_status(c, false);
	if (!c->have_status) {
		(void)!send(c->sock, &m, 1, MSG_NOSIGNAL);
		read_status(c, true);
	}
	/* after COMMAND, what it left running: the supervisor exits when that is gone too */
	while (!c->reaped && waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(c->sock);
	if (status)
		*status = c->status;
	free(c);
}
