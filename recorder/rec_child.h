/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The COMMAND of `biotape record -- COMMAND`, run so that neither it nor anything it starts
 * outlives the recorder, even one killed with SIGKILL.
 *
 * The recorder forks a supervisor ("biotape-reaper"), a child subreaper
 * (PR_SET_CHILD_SUBREAPER) that forks and execs COMMAND: every process COMMAND starts that
 * loses its parent becomes the supervisor's child, so the supervisor can reach the whole tree
 * by signalling only its own children, whose pids cannot be reused before it reaps them. The
 * supervisor stops the tree (SIGTERM and SIGCONT to each child, again as orphans come up; then
 * SIGKILL after a grace period) when the recorder asks (__stop), when COMMAND has exited (what
 * it left running), and when the recorder is gone: its end of a socket pair closes however
 * it dies. COMMAND has PR_SET_PDEATHSIG SIGKILL for the case that the supervisor itself is
 * killed. Everything stays in the recorder's process group and session: a terminal's Ctrl-C
 * reaches COMMAND as before (the supervisor ignores it).
 */
#ifndef BIOTAPE_REC_CHILD_H
#define BIOTAPE_REC_CHILD_H

#include <stdint.h>

struct rec_child_opts {
	uint32_t stop_grace_ms;	  /* __stop, or COMMAND's leftovers: SIGKILL after (0: 5000) */
	uint32_t orphan_grace_ms; /* the recorder gone: SIGKILL after (0: 1000) */
	char *const *envp;	  /* COMMAND's environment (NULL: the recorder's) */
};

struct rec_child;

/* Starts CMD (argv, PATH searched) under a supervisor. Returns 0 or a negative errno. */
int rec_child__start(struct rec_child **cp, char *const *cmd, const struct rec_child_opts *opts);
/*
 * Never blocks: 1 once COMMAND has exited (*status: its wait status, as waitpid gives it; if
 * the supervisor died first, the supervisor's), 0 while it runs.
 */
int rec_child__poll(struct rec_child *c, int *status);
/*
 * Stops COMMAND and everything it started (if still running: SIGTERM, SIGKILL after the
 * grace period), waits for the supervisor to exit and frees. *status (may be NULL) as in
 * __poll. NULL-safe.
 */
void rec_child__stop(struct rec_child *c, int *status);

#endif
