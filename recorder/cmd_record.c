// SPDX-License-Identifier: GPL-2.0-only
/* biotape record: capture every block request of this system with eBPF. */
#include "cli.h"
#include "cluster.h"
#include "cmd_record.h"
#include "btape.h"
#include "rec_child.h"
#include "rec_cluster.h"
#include "rec_core.h"
#include "rec_dev.h"
#include "rec_qd.h"
#ifdef BIOTAPE_HAVE_BPF
#include "rec_bpf.h"
#endif

#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 50                        /* ring poll timeout */
#define WATERMARK_INTERVAL_NS 100000000ull /* in-flight scan: every 100 ms */
#define WATERMARK_SAFETY_NS 1000000ull    /* margin for an issue racing the scan */
#define STALE_INFLIGHT_NS 30000000000ull  /* in flight longer than 30 s: ignored by the scan */
#define STATUS_INTERVAL_NS 1000000000ull
#define DRAIN_GRACE_MS 5                  /* after detach: programs still running finish */
#define DRAIN_MAX_MS 500                  /* final drain gives up after this */
#define LINGER_QUIET_MS 20                /* at stop: record until the devices are idle this long */
#define LINGER_MAX_MS 1000                /* ... or this long */
#define LINGER_POLL_MS 5
#define MAX_DEVICES 4096
#define INFLIGHT_SLACK 1024               /* in-flight map: beyond the request pools ... */
#define INFLIGHT_MIN 4096                 /* ... at least ... */
#define INFLIGHT_MAX (1u << 20)           /* ... at most */

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

struct rec_opts {
	const char *out;
	const char *devs[64];
	int ndevs;
	uint32_t pid;
	const char *cgroup;
	const char *comm;
	uint64_t duration_ns;
	uint64_t max_events;
	uint64_t max_size;
	bool bio_layer;
	bool waits; /* --waits */
	uint32_t ring_kb;
	uint32_t inflight_max;
	uint32_t queue_batches;
	uint64_t reorder_events; /* test knob: the writer's reorder limit (0: its default) */
	bool raw_tp_only;
	uint32_t pause_ms; /* test knob: a consumer that sleeps this long between drains */
	char **cmd;
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: biotape record -o FILE [-d DEV]... [-p PID] [--cgroup PATH] [--comm NAME]\n"
		"                      [--duration S] [--max-events N] [--max-size BYTES]\n"
		"                      [--layer rq|bio] [--waits] [-v] [-- COMMAND ARGS...]\n\n"
		"Records every block request (one event per completed request: insert, issue and\n"
		"completion times, device, sector, size, op and flags, error, queue depth, CPU, and\n"
		"the submitting pid/tid/comm/cgroup) with eBPF until interrupted (Ctrl-C, SIGTERM,\n"
		"or SIGHUP when the terminal closes), the duration or a limit is reached, or COMMAND\n"
		"exits. Needs root (CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n\n"
		"  -o, --output FILE   trace to write (readable up to its last chunk even if killed)\n"
		"  -d, --device DEV    record only DEV: /dev/sdb, nvme0n1, or 8:16 (repeatable;\n"
		"                      a partition means its whole disk); default: every disk\n"
		"  -p, --pid PID       only I/O submitted by process PID\n"
		"      --cgroup PATH   only I/O submitted from cgroup v2 PATH (or below it)\n"
		"      --comm NAME     only I/O submitted by processes named NAME\n"
		"      --duration S    stop after S (e.g. 30s, 5m)\n"
		"      --max-events N  stop after N events\n"
		"      --max-size B    stop once the trace is B bytes (e.g. 100M)\n"
		"      --layer L       rq: requests as devices see them (default);\n"
		"                      bio: bios as submitted, before merging and splitting\n"
		"      --waits         also note, per I/O, when its thread last woke from a sleep\n"
		"                      and how long it slept (replay --order causal follows them)\n"
		"  -v, --verbose       more detail (libbpf's messages; -vv: libbpf debug)\n"
		"  -- COMMAND ARGS     run COMMAND and record until it exits (filters still apply)\n\n"
		"With a pid, comm or cgroup filter, I/O that the kernel submits on a task's behalf\n"
		"(e.g. page-cache writeback from kworkers) is not attributed to it and not recorded.\n\n"
		"COMMAND and everything it starts do not outlive the recorder: when recording stops\n"
		"(or COMMAND exits, for what it left running) they get SIGTERM, and SIGKILL 5 s\n"
		"later; if the recorder dies, even by SIGKILL, the same with 1 s. COMMAND stays in\n"
		"the terminal's foreground (Ctrl-C reaches it too). When COMMAND ends by itself,\n"
		"biotape exits with its status (128+N when killed by signal N), as time(1) does;\n"
		"a recording that failed exits 1 whatever COMMAND did.\n\n"
		"If the disk fills up, recording stops; the trace keeps what was written before,\n"
		"with a footer that counts the rest as lost.\n\n"
		"Cluster (under mpirun or srun; docs/CLUSTER.md): every rank records its own trace\n"
		"(%%h host, %%r rank in -o and -d); all ranks attach before any starts, or none\n"
		"records; COMMAND runs on every rank from one instant; they stop together; each trace\n"
		"stores its clock offset to rank 0 at start and stop, so that biotape analyze puts\n"
		"the traces on one timeline. Rank 0 prints a line per host and the cluster total.\n\n"
		"examples:\n"
		"  biotape record -o boot.btape --duration 30s\n"
		"  biotape record -o pg.btape -d /dev/nvme0n1 -- pgbench -T 60 bench\n"
		"  mpirun -n 3 -H a,b,c biotape record -o trace-%%h.btape -d nvme0n1 --duration 60s\n");
}

static int parse_args(int argc, char **argv, struct rec_opts *o)
{
	enum { OPT_CGROUP = 256, OPT_COMM, OPT_DURATION, OPT_MAX_EVENTS, OPT_MAX_SIZE, OPT_LAYER,
	       OPT_RING_KB, OPT_INFLIGHT_MAX, OPT_QUEUE_BATCHES, OPT_PROG_TYPE,
	       OPT_PAUSE_MS, OPT_REORDER_EVENTS, OPT_WAITS };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "device", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "max-events", required_argument, NULL, OPT_MAX_EVENTS },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "layer", required_argument, NULL, OPT_LAYER },
		{ "waits", no_argument, NULL, OPT_WAITS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		/* Test and tuning knobs, not in --help. */
		{ "ring-size-kb", required_argument, NULL, OPT_RING_KB },
		{ "inflight-max", required_argument, NULL, OPT_INFLIGHT_MAX },
		{ "queue-batches", required_argument, NULL, OPT_QUEUE_BATCHES },
		{ "prog-type", required_argument, NULL, OPT_PROG_TYPE },
		{ "consumer-pause-ms", required_argument, NULL, OPT_PAUSE_MS },
		{ "reorder-events", required_argument, NULL, OPT_REORDER_EVENTS },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:d:p:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'd':
			if (o->ndevs == (int)(sizeof(o->devs) / sizeof(o->devs[0]))) {
				cli_err("record: too many -d options (at most 64)");
				return -EINVAL;
			}
			o->devs[o->ndevs++] = optarg;
			break;
		case 'p':
			if (cli_parse_u64(optarg, &v) || v == 0 || v > INT_MAX) {
				cli_err("record: -p '%s': not a process id", optarg);
				return -EINVAL;
			}
			o->pid = (uint32_t)v;
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case OPT_COMM:
			if (!*optarg || strlen(optarg) >= BIOTAPE_COMM_LEN) {
				cli_err("record: --comm '%s': a process name has 1 to %d characters",
					optarg, BIOTAPE_COMM_LEN - 1);
				return -EINVAL;
			}
			o->comm = optarg;
			break;
		case OPT_DURATION:
			if (cli_parse_duration_ns(optarg, &o->duration_ns) || !o->duration_ns) {
				cli_err("record: --duration '%s': not a duration (e.g. 30s, 5m)",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_MAX_EVENTS:
			if (cli_parse_u64(optarg, &o->max_events) || !o->max_events) {
				cli_err("record: --max-events '%s': not a positive number", optarg);
				return -EINVAL;
			}
			break;
		case OPT_MAX_SIZE:
			if (cli_parse_size(optarg, &o->max_size) || !o->max_size) {
				cli_err("record: --max-size '%s': not a size (e.g. 100M)", optarg);
				return -EINVAL;
			}
			break;
		case OPT_WAITS:
			o->waits = true;
			break;
		case OPT_LAYER:
			if (strcmp(optarg, "rq") == 0) {
				o->bio_layer = false;
			} else if (strcmp(optarg, "bio") == 0) {
				o->bio_layer = true;
			} else {
				cli_err("record: --layer '%s': expected rq or bio", optarg);
				return -EINVAL;
			}
			break;
		case OPT_RING_KB:
			if (cli_parse_u64(optarg, &v) || v < 4 || v > (1u << 21) || (v & (v - 1))) {
				cli_err("record: --ring-size-kb '%s': a power of two >= 4", optarg);
				return -EINVAL;
			}
			o->ring_kb = (uint32_t)v;
			break;
		case OPT_INFLIGHT_MAX:
			if (cli_parse_u64(optarg, &v) || v < 16 || v > (1u << 24)) {
				cli_err("record: --inflight-max '%s': 16 to 16777216", optarg);
				return -EINVAL;
			}
			o->inflight_max = (uint32_t)v;
			break;
		case OPT_QUEUE_BATCHES:
			if (cli_parse_u64(optarg, &v) || v < 1 || v > 4096) {
				cli_err("record: --queue-batches '%s': 1 to 4096", optarg);
				return -EINVAL;
			}
			o->queue_batches = (uint32_t)v;
			break;
		case OPT_REORDER_EVENTS:
			if (cli_parse_u64(optarg, &v) || v < 1 || v > (1u << 31)) {
				cli_err("record: --reorder-events '%s': 1 to 2147483648", optarg);
				return -EINVAL;
			}
			o->reorder_events = v;
			break;
		case OPT_PAUSE_MS:
			if (cli_parse_u64(optarg, &v) || v > 10000) {
				cli_err("record: --consumer-pause-ms '%s': 0 to 10000", optarg);
				return -EINVAL;
			}
			o->pause_ms = (uint32_t)v;
			break;
		case OPT_PROG_TYPE:
			if (strcmp(optarg, "raw_tp") != 0 && strcmp(optarg, "auto") != 0) {
				cli_err("record: --prog-type '%s': expected auto or raw_tp", optarg);
				return -EINVAL;
			}
			o->raw_tp_only = strcmp(optarg, "raw_tp") == 0;
			break;
		case 'v':
			cli_verbose++;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			if (optopt && optopt < 256)
				cli_err("record: option '-%c' %s (see biotape record --help)", optopt,
					strchr("odp", optopt) ? "needs an argument" : "is unknown");
			else
				cli_err("record: bad option '%s' (see biotape record --help)",
					argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0) {
			cli_err("record: unexpected argument '%s' (a command goes after --)",
				argv[optind]);
			return -EINVAL;
		}
		o->cmd = &argv[optind];
	}
	if (!o->out) {
		cli_err("record: no output file (-o FILE)");
		return -EINVAL;
	}
	return 0;
}

#ifndef BIOTAPE_HAVE_BPF

int cmd_record(int argc, char **argv)
{
	struct rec_opts o = { 0 };
	int err = parse_args(argc, argv, &o);

	if (err)
		return err > 0 ? BTAPE_EXIT_OK : BTAPE_EXIT_USAGE;
	cli_err("record: built without eBPF support (rebuild with clang, bpftool and libbpf-dev "
		"installed, or -DBIOTAPE_BPF=ON)");
	return BTAPE_EXIT_FAIL;
}

#else

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Which of CAP_BPF / CAP_PERFMON are missing (CAP_SYS_ADMIN stands in for both). */
static int check_caps(char *missing, size_t len)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = { { 0 } };
	bool bpf, perfmon, admin;

	missing[0] = '\0';
	if (syscall(SYS_capget, &hdr, data) != 0)
		return 0; /* cannot tell: let the load fail with the kernel's reason */
#define HAS(cap) (!!(data[(cap) / 32].effective & (1u << ((cap) % 32))))
	bpf = HAS(CAP_BPF);
	perfmon = HAS(CAP_PERFMON);
	admin = HAS(CAP_SYS_ADMIN);
#undef HAS
	if (admin || (bpf && perfmon))
		return 0;
	snprintf(missing, len, "%s%s%s", bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		 perfmon ? "" : "CAP_PERFMON");
	return -EPERM;
}

struct rec_run {
	struct rec_core *core;
	uint64_t max_events;
	uint64_t accepted;
	bool limit_hit;
};

static int on_event(void *ctx, const struct biotape_rq_event *ev)
{
	struct rec_run *r = ctx;

	if (r->max_events && r->accepted >= r->max_events) {
		r->limit_hit = true;
		return 1;
	}
	r->accepted++;
	rec_core__push(r->core, ev);
	if (r->max_events && r->accepted >= r->max_events)
		r->limit_hit = true;
	return 0;
}

static void build_capture(const struct rec_opts *o, const struct btape_meta *meta, char *buf,
			  size_t len)
{
	size_t n = 0;

#define ADD(...)                                                             \
	do {                                                                 \
		if (n < len)                                                 \
			n += snprintf(buf + n, len - n, __VA_ARGS__);        \
	} while (0)
	ADD("--layer %s", o->bio_layer ? "bio" : "rq");
	if (o->ndevs) {
		for (uint32_t i = 0; i < meta->ndevices; i++)
			ADD(" -d %s", meta->devices[i].name);
	}
	if (o->pid)
		ADD(" -p %u", o->pid);
	if (o->cgroup)
		ADD(" --cgroup %s", o->cgroup);
	if (o->comm)
		ADD(" --comm %s", o->comm);
	if (o->waits)
		ADD(" --waits");
	if (o->duration_ns)
		ADD(" --duration %" PRIu64 "ms", o->duration_ns / 1000000);
	if (o->max_events)
		ADD(" --max-events %" PRIu64, o->max_events);
	if (o->max_size)
		ADD(" --max-size %" PRIu64, o->max_size);
	if (o->cmd) {
		ADD(" --");
		for (char **a = o->cmd; *a; a++)
			ADD(" %s", *a);
	}
#undef ADD
	if (n >= len && len > 4)
		strcpy(buf + len - 4, "...");
}

static int fill_devices(const struct rec_opts *o, struct btape_meta *meta)
{
	struct btape_device d;
	int err;

	if (!o->ndevs) {
		err = rec_dev_add_all("/sys", meta);
		if (err < 0) {
			cli_err("record: listing block devices in /sys/block: %s", strerror(-err));
			return BTAPE_EXIT_FAIL;
		}
		if (err == 0) {
			cli_err("record: no block devices found in /sys/block");
			return BTAPE_EXIT_FAIL;
		}
		return 0;
	}
	for (int i = 0; i < o->ndevs; i++) {
		uint32_t ma, mi;
		bool dup = false;

		err = rec_dev_resolve("/sys", o->devs[i], &ma, &mi);
		if (err) {
			cli_err("record: device '%s': %s", o->devs[i],
				err == -ENOTBLK ? "not a block device" :
				err == -EINVAL	? "expected /dev/NAME, NAME or MAJOR:MINOR" :
						  "no such block device");
			return BTAPE_EXIT_USAGE;
		}
		for (uint32_t j = 0; j < meta->ndevices; j++)
			dup |= meta->devices[j].dev_t_major == ma && meta->devices[j].dev_t_minor == mi;
		if (dup)
			continue;
		err = rec_dev_describe("/sys", ma, mi, &d);
		if (!err)
			err = btape_meta_add_device(meta, &d);
		if (err < 0) {
			cli_err("record: device '%s': %s", o->devs[i], strerror(-err));
			return BTAPE_EXIT_FAIL;
		}
	}
	return 0;
}

static void fill_meta(struct btape_meta *meta, const struct rec_opts *o)
{
	struct utsname u;
	uint64_t m1, r, m2;

	snprintf(meta->tool, sizeof(meta->tool), "biotape %s", BIOTAPE_VERSION);
	gethostname(meta->hostname, sizeof(meta->hostname) - 1);
	if (uname(&u) == 0)
		snprintf(meta->kernel, sizeof(meta->kernel), "%s", u.release);
	snprintf(meta->source, sizeof(meta->source), "%s", o->bio_layer ? "ebpf:bio" : "ebpf:rq");
	build_capture(o, meta, meta->capture, sizeof(meta->capture));
	/* Read the two clocks together: the anchor is the midpoint of two monotonic reads. */
	m1 = now_ns(CLOCK_MONOTONIC);
	r = now_ns(CLOCK_REALTIME);
	m2 = now_ns(CLOCK_MONOTONIC);
	meta->clock_mono_ns = m1 + (m2 - m1) / 2;
	meta->clock_real_ns = r;
}

/* PATH as given, else relative to the cgroup v2 mount (/sys/fs/cgroup or .../unified). */
static int open_cgroup(const char *path)
{
	char buf[PATH_MAX], mnt[PATH_MAX], type[64];
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = -errno;
	FILE *fp;

	if (fd >= 0 || path[0] == '/')
		return fd >= 0 ? fd : err;
	fp = fopen("/proc/self/mounts", "r");
	if (!fp)
		return err;
	while (fscanf(fp, "%*s %4095s %63s %*[^\n]", mnt, type) == 2) {
		if (strcmp(type, "cgroup2") != 0)
			continue;
		if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", mnt, path) >= sizeof(buf))
			continue;
		fd = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			break;
	}
	fclose(fp);
	return fd >= 0 ? fd : err;
}

/*
 * Requests the kernel has in flight on the recorded disks whose count it keeps (sysfs
 * "inflight", which stays 0 with queue/iostats off); sets counted[i] for those disks. At the
 * bio layer nothing is trusted to the kernel's count (bios held above the request layer, by
 * throttling or a tag wait, are not in it).
 */
static uint64_t kernel_inflight(const struct btape_meta *meta, bool bio_layer, bool *counted)
{
	uint64_t sum = 0, n;

	for (uint32_t i = 0; i < meta->ndevices; i++) {
		const struct btape_device *d = &meta->devices[i];

		counted[i] = !bio_layer &&
			     !rec_dev_inflight("/sys", d->dev_t_major, d->dev_t_minor, &n);
		if (counted[i])
			sum += n;
	}
	return sum;
}

/*
 * Before stopping: keep recording until the recorded devices are quiet: nothing in flight and
 * no new issue for LINGER_QUIET_MS (at most LINGER_MAX_MS). A command can exit with its I/O
 * still on the way (fio's io_uring jobs: requests issued by the kernel after the process
 * is gone), and requests already at the device at Ctrl-C complete after it: without this
 * they were silently missing (1 to iodepth requests per run). "In flight" is the kernel's own
 * count where it keeps one, so that an entry of ours whose completion the kernel never showed
 * us does not hold the stop back (it is sent without a completion time), plus what that count
 * does not show (flushes, requeued requests, devices without it: see rec_bpf__pending).
 */
static void linger_inflight(struct rec_bpf *bpf, struct rec_run *run,
			    const struct btape_meta *meta, bool bio_layer)
{
	uint64_t stop = now_ns(CLOCK_MONOTONIC), last = stop, t0 = stop, issued, prev;
	bool *counted = calloc(meta->ndevices ? meta->ndevices : 1, sizeof(*counted));

	if (!counted)
		return;
	prev = rec_bpf__issued(bpf);
	while (!run->limit_hit) {
		bool busy = kernel_inflight(meta, bio_layer, counted) > 0;

		t0 = now_ns(CLOCK_MONOTONIC);
		if (!busy && rec_bpf__pending(bpf, counted, meta->ndevices, STALE_INFLIGHT_NS, &busy))
			break;
		issued = rec_bpf__issued(bpf);
		if (issued != prev || busy) {
			prev = issued;
			last = t0;
		} else if (t0 - last >= LINGER_QUIET_MS * 1000000ull) {
			break;
		}
		if (t0 - stop >= LINGER_MAX_MS * 1000000ull) {
			cli_info(1, "record: the devices are still busy %u ms after the stop",
				 LINGER_MAX_MS);
			break;
		}
		if (rec_bpf__poll(bpf, LINGER_POLL_MS) < 0)
			break;
	}
	free(counted);
}

/*
 * Final drain after detach. Detaching does not wait for programs already running on other
 * CPUs, and a record being written stops consumption of its ring (busy bit): wait a grace
 * period, then consume until the rings are empty and every record BPF counted as sent has
 * been read (or DRAIN_MAX_MS passed).
 */
static void drain_rings(struct rec_bpf *bpf, struct rec_core *core, struct rec_run *run)
{
	struct timespec grace = { 0, DRAIN_GRACE_MS * 1000000L };
	uint64_t emitted, lrb, lif, deadline;
	struct rec_stats st;

	nanosleep(&grace, NULL);
	deadline = now_ns(CLOCK_MONOTONIC) + DRAIN_MAX_MS * 1000000ull;
	for (;;) {
		while (!run->limit_hit && rec_bpf__poll(bpf, 0) > 0)
			;
		if (run->limit_hit || now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		rec_bpf__counters(bpf, &emitted, &lrb, &lif);
		rec_core__stats(core, &st);
		if (emitted <= st.pushed)
			break;
		nanosleep(&grace, NULL);
	}
}

static void print_status(struct rec_core *core, uint64_t lost, uint64_t start, uint64_t now,
			 uint64_t *last_n, uint64_t *last_t)
{
	struct rec_stats s;
	char b1[32];
	double rate;

	rec_core__stats(core, &s);
	rate = now > *last_t ? (double)(s.pushed - *last_n) * 1e9 / (double)(now - *last_t) : 0;
	fprintf(stderr, "\r\033[Krecording %.0f s: %.1fk events/s, %" PRIu64 " events, %s, %.1f B/event, %" PRIu64 " lost",
		(double)(now - start) / 1e9, rate / 1000, s.written,
		cli_fmt_bytes(s.sink_bytes, b1, sizeof(b1)),
		s.written ? (double)s.sink_bytes / (double)s.written : 0.0,
		lost + s.dropped_writer);
	*last_n = s.pushed;
	*last_t = now;
}

/* One recording: what the steps of cmd_record() share. Resources are freed in cmd_record(). */
struct rec_state {
	struct rec_opts o;
	struct btape_meta meta;
	struct btape_writer *w; /* NULL once closed */
	struct rec_bpf *bpf;
	struct rec_core *core;
	struct rec_qd *qd;
	struct rec_child *child;
	struct rec_run run;
	uint32_t *kdevs, *tag_queues, *tag_depth;
	int cgroup_fd;
	bool user_qd;  /* queue depth derived from the recorded times (rec_qd.h) */
	bool disk_err; /* the trace could not be written in full: exit 1 */
	int child_status;
	uint64_t start, end; /* recording time, CLOCK_MONOTONIC */
	/* counted by drain(), printed by print_summary() */
	struct rec_stats st;
	struct btape_summary fsum;
	uint64_t emitted, lost_rb, lost_if, lost_wr, open_at_exit, late;
	/* cluster recording (rec_cluster.h; NULL without a launcher) */
	struct rec_cluster *rc;
	bool cluster;	      /* more than one rank: the ranks stop together */
	bool child_done;      /* the command has exited */
	bool child_alone;     /* ... by itself, not stopped by the recorder */
	int64_t shift;	      /* test clock shift added to every time */
	struct rec_shift_sink ssink;
	char out_buf[4096];   /* -o with %h and %r expanded */
	char dev_buf[64][256]; /* -d likewise */
};

/*
 * The output path, checked without opening it: a path that cannot take the trace should not
 * cost a BPF load, and the open (which empties an existing trace) comes only after the
 * programs are attached. Returns 0 or an exit code.
 */
static int check_output(const char *path)
{
	char why[BTAPE_ERRMSG_LEN], dir[PATH_MAX];
	const char *slash;
	int ret;

	ret = btape_output_check(path, why, sizeof(why));
	if (ret < 0) {
		cli_err("record: cannot write the trace: %s", why);
		return BTAPE_EXIT_FAIL;
	}
	if (ret == 1 || access(path, F_OK) == 0) { /* the null device, or an existing file */
		if (ret == 1 || access(path, W_OK) == 0)
			return 0;
		cli_err("record: cannot write the trace: create %s: %s", path, strerror(errno));
		return BTAPE_EXIT_FAIL;
	}
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (access(dir, W_OK | X_OK) == 0)
		return 0;
	cli_err("record: cannot write the trace: create %s: %s", path, strerror(errno));
	return BTAPE_EXIT_FAIL;
}

/*
 * An ELF program's loader (PT_INTERP), into interp; false when it has none or is not an ELF of
 * this program's own class, byte order and machine (ElfW: <link.h>). Any other (a 32-bit
 * program, an arm64 one through binfmt_misc and qemu with its loader in a sysroot) is left to
 * the kernel.
 */
static bool elf_interp(int fd, char *interp, size_t len)
{
	static const unsigned char me[EI_NIDENT] = {
		ELFMAG0,
		ELFMAG1,
		ELFMAG2,
		ELFMAG3,
		sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32,
		__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB};
	ElfW(Ehdr) self, eh;
	int sfd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	bool same;

	same = sfd >= 0 && pread(sfd, &self, sizeof(self), 0) == (ssize_t)sizeof(self);
	if (sfd >= 0)
		close(sfd);
	if (!same || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, me, EI_DATA + 1) || eh.e_machine != self.e_machine ||
	    eh.e_phentsize != sizeof(ElfW(Phdr)))
		return false;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		ElfW(Phdr) ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			return false;
		if (ph.p_type != PT_INTERP)
			continue;
		return ph.p_filesz >= 2 && ph.p_filesz <= len &&
		       pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz &&
		       !interp[ph.p_filesz - 1];
	}
	return false;
}

/*
 * Whether COMMAND can be run: a path that is an executable file, or a name found so in PATH
 * (as execvp() searches it), and what the kernel runs for it: a script's "#!" interpreter
 * (followed as the kernel does: five scripts deep, a sixth is ELOOP), an ELF program's loader.
 * Checked before the output is opened: `-o old.btape -- mistyped` used to empty the older trace
 * into one with no events before the exec failed, and so did a script whose interpreter is missing.
 */
enum { RUN_OK, RUN_NOT_EXEC, RUN_NO_INTERP };

static int runnable_at(const char *file, int depth)
{
	char line[256], interp[PATH_MAX];
	struct stat sb;
	int ret = RUN_OK;
	ssize_t n;
	int fd;

	if (access(file, X_OK) || stat(file, &sb) || !S_ISREG(sb.st_mode))
		return RUN_NOT_EXEC;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return RUN_OK; /* execute-only: the exec will tell */
	n = pread(fd, line, sizeof(line) - 1, 0);
	if (n >= 2 && line[0] == '#' && line[1] == '!') {
		char *p = line + 2;

		line[n] = '\0';
		p += strspn(p, " \t");
		p[strcspn(p, " \t\n")] = '\0';
		/* no interpreter named: ENOEXEC, and execvp() hands the file to /bin/sh */
		if (*p && (depth >= 5 || runnable_at(p, depth + 1) != RUN_OK))
			ret = RUN_NO_INTERP;
	} else if (elf_interp(fd, interp, sizeof(interp))) {
		if (access(interp, X_OK) || stat(interp, &sb) || !S_ISREG(sb.st_mode))
			ret = RUN_NO_INTERP;
	}
	close(fd);
	return ret;
}

static int check_command(const char *name)
{
	const char *path = getenv("PATH"), *why = "not found in PATH";
	char found[PATH_MAX] = "";

	if (strchr(name, '/')) {
		int r = runnable_at(name, 0);

		if (r == RUN_OK)
			return 0;
		cli_err("record: command '%s': %s (nothing recorded)", name,
			r == RUN_NO_INTERP   ? "its interpreter (#! line or ELF loader) is missing"
			: access(name, F_OK) ? strerror(errno)
					     : "not an executable file");
		return 127;
	}
	if (!path) /* execvp's default */
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		char file[PATH_MAX];
		/* an empty entry is the current directory */
		int n = end == p ? snprintf(file, sizeof(file), "%s", name)
				 : snprintf(file, sizeof(file), "%.*s/%s", (int)(end - p), p, name);

		if (n > 0 && (size_t)n < sizeof(file)) {
			int r = runnable_at(file, 0);

			if (r == RUN_OK)
				return 0;
			if (r == RUN_NO_INTERP && !*found) {
				snprintf(found, sizeof(found), "%s", file);
				why = "its interpreter (#! line or ELF loader) is missing";
			}
		}
		if (!*end)
			break;
		p = end;
	}
	if (*found)
		cli_err("record: command '%s': %s: %s (nothing recorded)", name, found, why);
	else
		cli_err("record: command '%s': %s (nothing recorded)", name, why);
	return 127;
}

/* What can be checked before anything is created; returns 0 or an exit code. */
static int preflight(struct rec_state *s)
{
	const struct rec_opts *o = &s->o;
	char missing[64];
	struct statfs sfs;
	int ret;

	if (check_caps(missing, sizeof(missing))) {
		if (geteuid() != 0)
			cli_err("record: needs root (or CAP_BPF and CAP_PERFMON): missing %s",
				missing);
		else
			cli_err("record: missing %s (running as root without it: a restricted "
				"container?)", missing);
		return BTAPE_EXIT_FAIL;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		cli_err("record: the kernel has no BTF (/sys/kernel/btf/vmlinux): it needs "
			"CONFIG_DEBUG_INFO_BTF=y");
		return BTAPE_EXIT_FAIL;
	}
	if (o->pid && kill((pid_t)o->pid, 0) != 0 && errno == ESRCH) {
		cli_err("record: -p %u: no such process", o->pid);
		return BTAPE_EXIT_USAGE;
	}
	if (o->cmd && o->cmd[0] && (ret = check_command(o->cmd[0])))
		return ret;
	ret = check_output(o->out);
	if (ret)
		return ret;
	ret = fill_devices(o, &s->meta);
	if (ret)
		return ret;
	if (s->meta.ndevices > MAX_DEVICES) {
		cli_err("record: %u block devices: at most %d (use -d)", s->meta.ndevices,
			MAX_DEVICES);
		return BTAPE_EXIT_FAIL;
	}
	if (!o->cgroup)
		return 0;
	s->cgroup_fd = open_cgroup(o->cgroup);
	if (s->cgroup_fd < 0) {
		cli_err("record: --cgroup '%s': %s", o->cgroup, strerror(-s->cgroup_fd));
		return BTAPE_EXIT_USAGE;
	}
	if (fstatfs(s->cgroup_fd, &sfs) != 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		cli_err("record: --cgroup '%s': not a cgroup v2 directory", o->cgroup);
		return BTAPE_EXIT_USAGE;
	}
	return 0;
}

/* The trace file, the queue-depth hook and the writer thread; returns 0 or -errno. */
static int setup_output(struct rec_state *s)
{
	struct btape_writer_opts wopts = { .sz = sizeof(wopts) };
	struct rec_core_opts co = { 0 };
	struct rec_sink sink;
	char why[BTAPE_ERRMSG_LEN];
	int err;

	fill_meta(&s->meta, &s->o);
	s->meta.clock_mono_ns += (uint64_t)s->shift; /* the trace's clock (test shift: 0) */
	wopts.flush_interval_ns = 1000000000ull;
	/*
	 * The trace's own pages go to disk as the writer thread's I/O (filtered out with our
	 * pid), not a flusher thread's, which would be recorded when the output is on a recorded
	 * disk (the default records every disk).
	 */
	wopts.writeback = true;
	wopts.reorder_max_events = s->o.reorder_events;
	/* a full disk leaves a trace with a footer that counts what did not fit as lost */
	wopts.footer_reserve = true;
	err = btape_writer__open_direct(&s->w, s->o.out, &s->meta, &wopts, why, sizeof(why));
	if (err) {
		cli_err("record: cannot write the trace: %s", why);
		return err;
	}

	if (s->user_qd) {
		err = rec_qd__new(&s->qd);
		if (err) {
			cli_err("record: out of memory");
			return err;
		}
		btape_writer__set_release_hook(s->w, rec_qd__fill, s->qd);
	}

	s->run.max_events = s->o.max_events;
	rec_sink_writer(&sink, s->w);
	if (s->shift) {
		s->ssink = (struct rec_shift_sink){.in = sink, .shift = s->shift};
		rec_sink_shift(&sink, &s->ssink);
	}
	co.ndevices = s->meta.ndevices;
	co.queue_batches = s->o.queue_batches;
	err = rec_core__new(&s->core, &sink, &co);
	if (err) {
		cli_err("record: starting the writer thread: %s", strerror(-err));
		return err;
	}
	s->run.core = s->core;
	return 0;
}

/* Loads and attaches the programs; returns 0 or -errno. */
static int setup_bpf(struct rec_state *s)
{
	const struct rec_opts *o = &s->o;
	const struct btape_meta *meta = &s->meta;
	struct rec_bpf_opts bo = { 0 };
	char why[512];
	int err;

	bo.bio_layer = o->bio_layer;
	bo.ring_kb = o->ring_kb;
	bo.inflight_max = o->inflight_max;
	if (!bo.inflight_max) {
		/* One slot per request structure of the recorded disks (slots are reused). */
		uint64_t n = INFLIGHT_SLACK;

		for (uint32_t i = 0; i < meta->ndevices; i++)
			n += rec_dev_max_requests("/sys", meta->devices[i].dev_t_major,
						  meta->devices[i].dev_t_minor);
		bo.inflight_max = n < INFLIGHT_MIN ? INFLIGHT_MIN :
				  n > INFLIGHT_MAX ? INFLIGHT_MAX : (uint32_t)n;
	}
	bo.ndevices = meta->ndevices;
	bo.kdevs = s->kdevs;
	/* --inflight-max sizes the one table requests are kept in: the hash map, no slots */
	for (uint32_t i = 0; i < meta->ndevices && !o->bio_layer && !o->inflight_max; i++) {
		if (rec_dev_tag_space("/sys", meta->devices[i].dev_t_major,
				      meta->devices[i].dev_t_minor, &s->tag_queues[i],
				      &s->tag_depth[i]))
			s->tag_queues[i] = s->tag_depth[i] = 0;
	}
	bo.tag_queues = s->tag_queues;
	bo.tag_depth = s->tag_depth;
	/*
	 * Queue depth: derived from the recorded times as events are written, unless a task
	 * filter leaves some of a device's requests out of the trace (rec_qd.h).
	 */
	s->user_qd = !o->pid && !o->comm && s->cgroup_fd < 0;
	bo.user_qd = s->user_qd;
	bo.waits = o->waits;
	bo.pid = o->pid;
	bo.comm = o->comm;
	bo.cgroup_fd = s->cgroup_fd;
	bo.self_pid = (uint32_t)getpid();
	bo.raw_tp_only = o->raw_tp_only;
	err = rec_bpf__open(&s->bpf, &bo, on_event, &s->run, why, sizeof(why));
	if (err) {
		cli_err("record: %s%s", why,
			cli_verbose ? "" : " (run with -v for libbpf's reason)");
		return err;
	}
	return 0;
}

/*
 * The programs, loaded and attached before the output is opened: opening empties an existing
 * trace, so it waits until every rank holds its programs (a failed load must not cost an
 * older recording). Events wait in the ring buffers until the first poll. Returns 0 or an
 * exit code.
 */
static int setup_programs(struct rec_state *s)
{
	const struct btape_meta *meta = &s->meta;

	s->kdevs = calloc(meta->ndevices, sizeof(*s->kdevs));
	s->tag_queues = calloc(meta->ndevices, sizeof(*s->tag_queues));
	s->tag_depth = calloc(meta->ndevices, sizeof(*s->tag_depth));
	if (!s->kdevs || !s->tag_queues || !s->tag_depth) {
		cli_err("record: out of memory");
		return BTAPE_EXIT_FAIL;
	}
	for (uint32_t i = 0; i < meta->ndevices; i++)
		s->kdevs[i] = rec_kdev(meta->devices[i].dev_t_major, meta->devices[i].dev_t_minor);

	return setup_bpf(s) ? BTAPE_EXIT_FAIL : 0;
}

/*
 * SIGINT, SIGTERM and SIGHUP stop the recording, from the start of the command: a signal
 * before the output is open ends the run without one (setup()), one after it stops the
 * recording. Installed before anything else, not when the recording starts: a background job
 * of a script inherits SIGINT ignored, so a SIGINT sent as soon as the programs were
 * attached, before the handler, was lost and the recorder ran on (record_filters.sh hung in
 * 1 of 10-25 runs on a loaded machine). A closed terminal stops it like Ctrl-C: buffered
 * events and the footer are written, not lost with the process.
 */
static void catch_stop_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * The output (preflight checked its path), unless a stop signal came first. Returns 0 or an
 * exit code; on failure the output stays open in s->w for cmd_record() to discard (a failed
 * start leaves no trace that looks valid). "programs attached" (-v) says the recorder is
 * ready: a signal after it stops a recording.
 */
static int setup(struct rec_state *s)
{
	if (stop_signal) {
		cli_err("record: stopped by signal %d before the recording started",
			(int)stop_signal);
		return BTAPE_EXIT_FAIL;
	}
	if (setup_output(s))
		return BTAPE_EXIT_FAIL;
	cli_info(1, "record: %s programs attached, %u ring(s), %u device(s)", rec_bpf__mode(s->bpf),
		 rec_bpf__nr_rings(s->bpf), s->meta.ndevices);
	return 0;
}

/* The command, once recording has started (in a cluster: at the common instant). */
static int start_command(struct rec_state *s)
{
	struct rec_child_opts co = { 0 };
	extern char **environ;
	char rank[32], size[32];
	char **env = NULL;
	size_t n = 0;
	int err;

	if (!s->o.cmd)
		return 0;
	/*
	 * Under an MPI launcher COMMAND runs outside the job: with the launcher's variables, a
	 * biotape or MPI program it starts would take itself for this rank and fail in its
	 * MPI_Init. It learns its rank from BIOTAPE_RANK and BIOTAPE_RANKS (docs/CLUSTER.md).
	 */
	if (cl_launched()) {
		for (char **e = environ; *e; e++)
			n++;
		env = calloc(n + 3, sizeof(*env));
		if (!env) {
			cli_err("record: out of memory");
			return BTAPE_EXIT_FAIL;
		}
		n = 0;
		for (char **e = environ; *e; e++)
			if (!cl_launcher_var(*e) && strncmp(*e, "BIOTAPE_RANK", 12))
				env[n++] = *e;
		snprintf(rank, sizeof(rank), "BIOTAPE_RANK=%d", rec_cluster__rank(s->rc));
		snprintf(size, sizeof(size), "BIOTAPE_RANKS=%d", rec_cluster__size(s->rc));
		env[n++] = rank;
		env[n++] = size;
		co.envp = env;
	}
	err = rec_child__start(&s->child, s->o.cmd, &co);
	free(env); /* the supervisor holds its own copy since the fork */
	if (err) {
		cli_err("record: starting the command: %s", strerror(-err));
		return BTAPE_EXIT_FAIL;
	}
	return 0;
}

/* Whether to stop now: alone, at once; in a cluster, all ranks together (rec_cluster.h). */
static bool stop_now(struct rec_state *s, bool hard)
{
	if (!s->cluster)
		return hard || s->child_done;
	return rec_cluster__should_stop(s->rc, hard || stop_signal || s->run.limit_hit,
					!s->o.cmd || s->child_done, s->o.cmd != NULL);
}

/* -o and -d with %h (host) and %r (rank) expanded (cluster recording); 0 or an exit code. */
static int expand_paths(struct rec_state *s)
{
	struct rec_opts *o = &s->o;
	char why[CL_REASON_MAX];
	int r;

	if (!s->rc)
		return 0;
	int bad = rec_cluster__expand(s->rc, o->out, s->out_buf, sizeof(s->out_buf));
	bool out_stdout = strcmp(o->out, "-") == 0 && rec_cluster__size(s->rc) > 1;

	/* two ranks of one host writing one file in place: a damaged trace, one rank's lost. Every
	 * rank takes part in the exchange, one with a bad pattern too (it names no file). */
	r = rec_cluster__out_clash(s->rc, bad || out_stdout ? NULL : s->out_buf);
	if (out_stdout) { /* every rank's stream would meet in the launcher's */
		cli_err("record: -o -: the ranks of a cluster cannot share standard output (give "
			"each its file: -o trace-%%h-%%r.btape)");
		return BTAPE_EXIT_USAGE;
	}
	if (bad) {
		cli_err("record: -o '%s': bad pattern (%%h host, %%r rank, %%%% a %%)", o->out);
		return BTAPE_EXIT_USAGE;
	}
	if (r == -2)
		return BTAPE_EXIT_FAIL;
	if (r >= 0) {
		cli_err("record: -o '%s': %s", o->out,
			rec_cluster__clash_why(s->rc, r, why, sizeof(why)));
		return BTAPE_EXIT_USAGE;
	}
	o->out = s->out_buf;
	for (int i = 0; i < o->ndevs; i++) {
		if (rec_cluster__expand(s->rc, o->devs[i], s->dev_buf[i], sizeof(s->dev_buf[i]))) {
			cli_err("record: -d '%s': bad pattern", o->devs[i]);
			return BTAPE_EXIT_USAGE;
		}
		o->devs[i] = s->dev_buf[i];
	}
	return 0;
}

/* Records until a stop condition, then until the devices are idle (linger_inflight). */
static void record_loop(struct rec_state *s)
{
	const struct rec_opts *o = &s->o;
	uint64_t now, next_wm, next_status, last_n = 0, last_t, emitted, lost_rb, lost_if;
	bool tty = isatty(STDERR_FILENO);
	struct rec_stats st;
	int err;

	s->start = last_t = now_ns(CLOCK_MONOTONIC);
	next_wm = s->start + WATERMARK_INTERVAL_NS;
	next_status = s->start + STATUS_INTERVAL_NS;
	while (s->cluster || (!stop_signal && !s->run.limit_hit)) {
		if (o->pause_ms) {
			struct timespec ts = { o->pause_ms / 1000,
					       (long)(o->pause_ms % 1000) * 1000000 };

			nanosleep(&ts, NULL);
		}
		err = rec_bpf__poll(s->bpf, o->pause_ms ? 0 : POLL_MS);
		if (err < 0 && err != -EINTR) {
			cli_err("record: reading the ring buffers: %s", strerror(-err));
			break;
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (now >= next_wm) {
			uint64_t wm;

			/* Scan first, then drain: whatever the scan did not see is in the rings. */
			if (rec_bpf__watermark(s->bpf, STALE_INFLIGHT_NS, &wm) == 0) {
				rec_bpf__poll(s->bpf, 0);
				rec_core__mark(s->core, wm > WATERMARK_SAFETY_NS ?
								wm - WATERMARK_SAFETY_NS : 0);
			}
			next_wm = now + WATERMARK_INTERVAL_NS;
		}
		rec_core__stats(s->core, &st);
		if (st.sink_err)
			s->disk_err = true;
		if (s->child && !s->child_done && rec_child__poll(s->child, &s->child_status) == 1)
			s->child_done = true;
		if (stop_now(s, s->disk_err || (o->max_size && st.sink_bytes >= o->max_size) ||
					(o->duration_ns && now - s->start >= o->duration_ns)))
			break;
		if (tty && now >= next_status) {
			rec_bpf__counters(s->bpf, &emitted, &lost_rb, &lost_if);
			print_status(s->core, lost_rb + lost_if, s->start, now, &last_n, &last_t);
			next_status = now + STATUS_INTERVAL_NS;
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (!s->run.limit_hit && !s->disk_err)
		linger_inflight(s->bpf, &s->run, &s->meta, o->bio_layer);
}

/*
 * Stops the probes, reads what the rings still hold, writes out and closes the trace with
 * its loss counts, then stops the command. Fills the counts print_summary() prints.
 */
static void drain(struct rec_state *s)
{
	uint64_t bpf_ns, lost_disk, seen;
	int err, werr;

	/* Stop producing, then drain what the rings hold. */
	rec_bpf__detach(s->bpf);
	bpf_ns = rec_bpf__prog_stats(s->bpf);
	rec_core__stats(s->core, &s->st);
	if (bpf_ns && s->st.pushed)
		cli_info(1, "record: BPF time %.0f ns per recorded event (the programs also "
			 "run, and return early, for I/O of unrecorded devices)",
			 (double)bpf_ns / (double)s->st.pushed);
	drain_rings(s->bpf, s->core, &s->run);
	if (!s->run.limit_hit) {
		int64_t n = rec_bpf__flush_open(s->bpf);

		if (n < 0)
			cli_err("record: reading the in-flight map at exit: %s", strerror((int)-n));
		else
			s->open_at_exit = (uint64_t)n;
	}
	rec_bpf__counters(s->bpf, &s->emitted, &s->lost_rb, &s->lost_if);
	s->emitted += s->open_at_exit;
	seen = s->emitted + s->lost_rb + s->lost_if;
	rec_core__stats(s->core, &s->st);
	if (!s->run.limit_hit && s->emitted > s->st.pushed) {
		/* Sent by BPF but never read back: say so rather than lose them silently. */
		cli_info(0, "record: %" PRIu64 " records left in the rings at exit (counted as lost)",
			 s->emitted - s->st.pushed);
		s->lost_rb += s->emitted - s->st.pushed;
	}
	err = rec_core__finish(s->core);
	if (err)
		s->disk_err = true;
	rec_core__stats(s->core, &s->st);
	/*
	 * Everything accepted goes into the file now, so that what it holds is known before the
	 * footer is written: with the disk full, the events the writer held for ordering or had
	 * in the chunk that did not fit are not in it, and count as lost (writer).
	 */
	werr = btape_writer__flush(s->w); /* after a failed write: that error */
	s->fsum.sz = sizeof(s->fsum);
	btape_writer__file_summary(s->w, &s->fsum);
	lost_disk = s->st.written > s->fsum.events ? s->st.written - s->fsum.events : 0;
	s->lost_wr = s->st.dropped_writer + lost_disk;
	cli_info(1, "record: BPF sent %" PRIu64 " records, %" PRIu64 " consumed, %" PRIu64
		 " accepted by the writer, %" PRIu64 " in the file, %" PRIu64 " malformed; the "
		 "probes saw %" PRIu64 " events", s->emitted, s->st.pushed, s->st.written,
		 s->fsum.events, s->st.bad_records, seen);
	btape_writer__add_lost(s->w, s->lost_rb, s->lost_if, s->lost_wr);
	s->late = btape_writer__order_violations(s->w);
	err = btape_writer__close(s->w, NULL, 0); /* its errno is reported below */
	s->w = NULL;
	if (werr) {
		cli_err("record: writing '%s': %s: recording stopped; the trace holds the %" PRIu64
			" events written before, %s; the events that did not fit are counted as "
			"lost (writer)", s->o.out, strerror(-werr), s->fsum.events,
			err ? "without a footer" : "with a footer");
		s->disk_err = true;
	} else if (err) {
		cli_err("record: finishing '%s': %s", s->o.out, strerror(-err));
		s->disk_err = true;
	}

	/* the command and whatever it started (rec_child.h); its shutdown is not recording time */
	s->end = now_ns(CLOCK_MONOTONIC);
	s->child_alone = s->child_done ||
			 (s->child && rec_child__poll(s->child, &s->child_status) == 1);
	rec_child__stop(s->child, &s->child_status);
	s->child = NULL;
}

static void print_summary(const struct rec_state *s)
{
	const uint64_t *by_op = s->fsum.count_by_op;
	uint64_t lost = s->lost_rb + s->lost_if + s->lost_wr;
	uint64_t nc = rec_bpf__orphaned(s->bpf) + s->open_at_exit;
	uint64_t fbytes, events = s->fsum.events;
	char b1[32], b2[32];
	struct stat sb;

	fbytes = stat(s->o.out, &sb) == 0 ? (uint64_t)sb.st_size : s->st.sink_bytes;
	fprintf(stderr,
		"biotape: recorded %" PRIu64 " events in %s (read %" PRIu64 ", write %" PRIu64
		", flush %" PRIu64 ", discard %" PRIu64 ", other %" PRIu64 ") to %s: %s, "
		"%.2f B/event\n",
		events, cli_fmt_ns(s->end - s->start, b1, sizeof(b1)), by_op[BTAPE_OP_READ],
		by_op[BTAPE_OP_WRITE], by_op[BTAPE_OP_FLUSH], by_op[BTAPE_OP_DISCARD],
		events - by_op[BTAPE_OP_READ] - by_op[BTAPE_OP_WRITE] - by_op[BTAPE_OP_FLUSH] -
			by_op[BTAPE_OP_DISCARD],
		s->o.out, cli_fmt_bytes(fbytes, b2, sizeof(b2)),
		events ? (double)fbytes / (double)events : 0.0);
	fprintf(stderr,
		"biotape: lost %" PRIu64 " events (ring buffer full %" PRIu64
		", in-flight map full %" PRIu64 ", writer queue full %" PRIu64 ")\n",
		lost, s->lost_rb, s->lost_if, s->lost_wr);
	if (s->late)
		fprintf(stderr,
			"biotape: %" PRIu64 " event%s written out of issue order (in flight "
			"past the reorder window: 30 s, or more events than the writer "
			"holds)%s\n",
			s->late, s->late == 1 ? " was" : "s were",
			s->user_qd ? ": the queue depths around them are approximate" : "");
	if (nc)
		fprintf(stderr,
			"biotape: %" PRIu64 " event%s no completion time: completion not seen "
			"(%" PRIu64 " found when their request or bio was reused, %" PRIu64
			" still open at the stop)\n",
			nc, nc == 1 ? " has" : "s have", nc - s->open_at_exit, s->open_at_exit);
	if (s->o.cmd) {
		if (WIFEXITED(s->child_status))
			fprintf(stderr, "biotape: command exited with status %d\n",
				WEXITSTATUS(s->child_status));
		else if (WIFSIGNALED(s->child_status))
			fprintf(stderr, "biotape: command killed by signal %d\n",
				WTERMSIG(s->child_status));
	}
}

/* A recording that worked exits as COMMAND did when it ended by itself (time(1)'s rule). */
static int command_exit(const struct rec_state *s)
{
	if (!s->o.cmd || !s->child_alone)
		return BTAPE_EXIT_OK;
	if (WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	if (WIFSIGNALED(s->child_status))
		return 128 + WTERMSIG(s->child_status);
	return BTAPE_EXIT_OK;
}

/* Rank 0's line per host and the cluster total (more than one rank). */
static void cluster_summary(const struct rec_state *s)
{
	struct rec_cluster_row row = {0};
	struct stat sb;

	if (!s->cluster)
		return;
	row.events = s->fsum.events;
	row.lost = s->lost_rb + s->lost_if + s->lost_wr;
	row.file_bytes = stat(s->o.out, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	row.duration_ns = s->end - s->start;
	row.failed = s->disk_err;
	snprintf(row.out, sizeof(row.out), "%s", s->o.out);
	rec_cluster__summary(s->rc, &row);
}

int cmd_record(int argc, char **argv)
{
	struct rec_state s = { .cgroup_fd = -1 };
	int ret, err;

	err = parse_args(argc, argv, &s.o);
	if (err)
		return err > 0 ? BTAPE_EXIT_OK : BTAPE_EXIT_USAGE;
	catch_stop_signals();
	if (rec_cluster__open(&s.rc) < 0)
		return BTAPE_EXIT_FAIL;
	catch_stop_signals(); /* again, in case the MPI library set its own */
	s.cluster = s.rc && rec_cluster__size(s.rc) > 1;
	/* in a cluster every step is agreed: all ranks go on, or none records anything */
	ret = expand_paths(&s);
	if (!ret)
		ret = preflight(&s);
	ret = rec_cluster__agree(s.rc, ret);
	if (!ret)
		ret = rec_cluster__clock_start(s.rc, &s.meta.cluster, &s.shift);
	if (!ret)
		ret = rec_cluster__agree(s.rc, setup_programs(&s));
	if (!ret)
		ret = rec_cluster__agree(s.rc, setup(&s));
	if (!ret)
		ret = rec_cluster__start(s.rc);
	if (!ret)
		ret = start_command(&s);
	if (ret)
		goto cleanup;
	record_loop(&s);
	if (rec_cluster__broken(s.rc)) /* a peer died: this trace ends early, and says so */
		btape_writer__set_interrupted(s.w);
	if (s.rc) {
		struct btape_clock_sync y;

		if (rec_cluster__clock_stop(s.rc, &y) == 0)
			btape_writer__set_clock_stop(s.w, &y);
	}
	drain(&s);
	print_summary(&s);
	ret = s.disk_err ? BTAPE_EXIT_FAIL : command_exit(&s);
	cluster_summary(&s);

cleanup:
	rec_child__stop(s.child, NULL);
	rec_bpf__close(s.bpf);
	/* the writer thread before its output, which is still open only if setup failed */
	rec_core__free(s.core);
	btape_writer__discard(s.w); /* removes o.out only if this run created it */
	rec_qd__free(s.qd);
	if (s.cgroup_fd >= 0)
		close(s.cgroup_fd);
	free(s.kdevs);
	free(s.tag_queues);
	free(s.tag_depth);
	btape_meta_free(&s.meta);
	return rec_cluster__close(s.rc, ret);
}

#endif
