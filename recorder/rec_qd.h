/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Queue depth at issue from the recorded issue and completion times, in user space: a
 * request's qd is the number of requests of its device issued before it (in the order the
 * file holds them) that had not completed at its issue, plus itself. This is what the BPF
 * programs count with a per-device atomic counter, without that counter: every I/O would
 * otherwise move its cache line between the CPU that issues and the CPU that completes.
 * It needs every request of the device in the trace, so the recorder uses it only when no
 * task filter (-p, --comm, --cgroup) drops some of them.
 */
#ifndef BIOTAPE_REC_QD_H
#define BIOTAPE_REC_QD_H

#include "btape.h"

struct rec_qd;

int rec_qd__new(struct rec_qd **qp);
void rec_qd__free(struct rec_qd *q);
/*
 * The writer's release hook (btape_writer__set_release_hook; CTX is the rec_qd): sets EV's qd
 * and BTAPE_HAS_QD (cleared for a device index past any table, or without memory). Events
 * must come in issue order per device. A late one (written after later-issued ones) gets
 * 1 + what its device had in flight at the device's latest issue, and the events released
 * before it never counted it.
 */
void rec_qd__fill(void *ctx, struct btape_event *ev);

#endif
