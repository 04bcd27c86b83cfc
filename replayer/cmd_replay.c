// SPDX-License-Identifier: GPL-2.0-only
/* biotape replay: reissue a trace against other storage (see the usage text). */
#include "cli.h"
#include "cmd_replay.h"

#include "btape.h"
#include "clock.h"
#include "cluster.h"
#include "cluster_replay.h"
#include "devmap.h"
#include "order.h"
#include "engine.h"
#include "fidelity.h"
#include "outq.h"
#include "report.h"
#include "scheduler.h"
#include "source.h"
#include "target.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define BUF_BYTES (64 * 1024) /* registered buffer per slot; bigger I/Os get their own */
#define BIG_BUFS_MAX (256ull << 20) /* the most made ahead for them (make_big_bufs) */
#define SPIN_NS 40000ull      /* default: spin this long before a deadline (docs/REPLAY.md) */
#define RT_SPIN_NS 10000ull   /* ... real-time: its wake-ups are prompt */
#define CAUSAL_SPIN_NS 0ull   /* ... --order causal: most I/Os follow completions, and the
			       * spin took the CPU of the device's own workers (REPLAY.md) */
#define SPIN_AUTO UINT_MAX    /* --spin-us not given */
#define TICK_NS 1000000000ull /* progress line refresh */
#define PREFETCH_BLOCK_EVENTS 8192
#define PREFETCH_BLOCKS 8	/* 8 x 8192 x ~96 B: ~6 MiB of decoded events at most */
#define DEFAULT_DEPTH_TIMED 128 /* original and load timing: cap only */
#define DEFAULT_DEPTH_AFAP 32
#define IODEPTH_MAX 4096 /* --iodepth's largest */
#define OUTQ_EVENTS 65536 /* result events queued for the writer thread (~6 MiB) */
#define MAX_SWEEP 32
#define MAX_TRACES 1024 /* cluster replay: traces dealt to the ranks */

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t signalled; /* a cluster's waits on other ranks shrink */

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
	signalled = 1;
}

/* A signal before the first I/O (alone: a cluster rank stops at the first step, with all). */
static bool stopped_early(const struct rp_cluster *rc)
{
	if (!stop_flag || rc)
		return false;
	cli_err("replay: stopped by a signal before the first I/O (nothing written)");
	return true;
}

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: biotape replay FILE (--target PATH | --map SRC=DST...) [options]\n"
		"       mpirun -n N [-H HOSTS] biotape replay FILE... (--target PATH | --map ...) [...]\n"
		"\n"
		"Reissue the I/Os of a trace against other storage: with their original timing, as fast as\n"
		"possible, or at their recorded queue depth; N copies at once to find where it saturates.\n"
		"\n"
		"targets:\n"
		"  --target PATH          the one target of a single-device trace (block device or file)\n"
		"  --map SRC=DST          recorded device SRC (index or name, e.g. 0 or loop3; #0: the index\n"
		"                         whatever the names) onto DST; repeat for each device (unmapped\n"
		"                         devices' I/Os are counted, skipped)\n"
		"  --fit error|wrap|scale offsets past the target's end: refuse (default, names the first\n"
		"                         such I/O), wrap around, or scale the address space down\n"
		"  --buffered             go through the page cache (default: O_DIRECT)\n"
		"  --create SIZE|auto     make a missing file target of SIZE (\"1G\"), or auto: the size\n"
		"                         the trace needs; never in /dev (without it a missing target\n"
		"                         is an error)\n"
		"timing:\n"
		"  --timing original|afap|load\n"
		"                         original (default): open loop on absolute deadlines; afap: as\n"
		"                         fast as possible; load: keep the recorded number in flight\n"
		"  --speed F              original timing F times faster (0.5 = half speed)\n"
		"  --order MODE           original timing: what waits for what, inferred from the\n"
		"                         recording (each mode includes the ones before it):\n"
		"                         none (default): open loop, every I/O at its deadline;\n"
		"                         conflict: an I/O waits for unfinished overlapping I/Os\n"
		"                         when either writes; barrier: + a flush/FUA/preflush waits\n"
		"                         for the writes that completed before it, and an I/O for the\n"
		"                         flushes that completed before it; causal: + an I/O goes at\n"
		"                         the replayed completion of its thread's I/O that completed\n"
		"                         within --think-window before it, plus the recorded think\n"
		"                         time (before its deadline on faster storage); the thread's\n"
		"                         other I/Os shift with it, and it never has more I/Os\n"
		"                         unfinished than the most it had in flight there so far\n"
		"                         (docs/REPLAY.md)\n"
		"  --flushes-apart        a flush recorded after the previous one had completed waits\n"
		"                         for it, so that each reaches the device (by default it goes\n"
		"                         at its deadline, and the block layer folds flushes pending\n"
		"                         together into one: the summary counts them)\n"
		"  --think-window D       --order causal: the longest think time that is a dependency\n"
		"                         (default 1ms)\n"
		"  --cross-thread off|barrier|any|wake\n"
		"                         --order causal: an I/O may also follow another thread's I/O\n"
		"                         on its device that completed within --think-window before\n"
		"                         it, while its own thread had nothing in flight (an fdatasync\n"
		"                         waiting on the journal thread's commit): a barrier (flush,\n"
		"                         FUA, preflush), any I/O, or off; wake: an I/O follows the\n"
		"                         completion its thread was woken for, of any thread, as\n"
		"                         recorded by record --waits (the default for such a trace;\n"
		"                         else off)\n"
		"  --iodepth N|recorded   most I/Os in flight per copy (afap: %d; else a cap: %d);\n"
		"                         recorded: the most the recording had in flight at once,\n"
		"                         from its completion times (where the application waited,\n"
		"                         the replay waits: device times closer to the recording's\n"
		"                         when the replay falls behind, more I/Os late). Without it\n"
		"                         (original timing, order none) an I/O past that many waits\n"
		"                         for a completion, at most %llu us (docs/REPLAY.md, Timing)\n"
		"  --engine NAME          io_uring (default), psync or null\n"
		"  --null-latency D       --engine null: complete each I/O D after submission (default 0)\n"
		"scaling:\n"
		"  --scale N              replay N copies at once\n"
		"  --layout shard|overlay each copy in its own region of the target (default), or all over\n"
		"                         the same region\n"
		"  --sweep 1,2,4,8        one run per scale factor: IOPS, MB/s, p50/p99 per op, the knee\n"
		"  --html OUT             an HTML page: a run's fidelity, IOPS and QD per window recorded\n"
		"                         against replayed; with --sweep, IOPS versus latency per step\n"
		"                         (OUT -: the page on stdout, the summary on stderr)\n"
		"writes (they destroy data on the target):\n"
		"  --write                replay writes, discards and write-zeroes; refuses a target whose\n"
		"                         data is in use (mounted, swap, held, claimed, or reached that\n"
		"                         way through loop devices; a file backing a loop device), or\n"
		"                         one with a filesystem/partition signature\n"
		"  --force                ... accept the signature (data in use is always refused)\n"
		"  --writes-as-reads      replay writes as reads of the same blocks\n"
		"  --payload zero|random|compressible:R   write data (default random); R = ratio (2 = 2:1)\n"
		"  --dedupe R             about 1 - 1/R of written blocks are duplicates\n"
		"run:\n"
		"  --duration S           stop after S (\"30s\", \"2m\"); with --loops 0, loop until then\n"
		"  --loops N              passes over the trace (default 1; 0 = until --duration)\n"
		"  --warmup S             replay but do not measure the first S\n"
		"  --no-progress          no live progress line (shown on a terminal)\n"
		"  --rt-priority N        run the issuing thread SCHED_FIFO at priority N (root): fewer\n"
		"                         late I/Os when other programs load the CPUs, more when only the\n"
		"                         target's own kernel workers compete (docs/REPLAY.md); default 0,\n"
		"                         the normal class\n"
		"  --spin-us N            sleep until N us before each deadline, then spin (default %llu,\n"
		"                         %llu with a real-time issuing thread, %llu with --order causal);\n"
		"                         0 leaves more CPU to a target that this host's CPUs serve (a\n"
		"                         loop device), at a price in issue times; 1000 keeps it from\n"
		"                         waking late between deadlines where they do not (real\n"
		"                         storage, CPUs to spare) (docs/REPLAY.md)\n"
		"results (a single run's summary ends with its fidelity: issue lateness, recorded vs\n"
		"replayed inter-arrival/size/QD KS, latency demerit, IOPS and QD per window, a verdict):\n"
		"  --json                 the summary as JSON on stdout\n"
		"  -o RESULT.btape        a trace of the replayed I/Os with their new times and latencies,\n"
		"                         the fidelity section in its footer (biotape info shows it;\n"
		"                         outputs must be regular files: see docs/SAFETY.md)\n"
		"\n"
		"examples:\n"
		"  biotape replay db.btape --target /dev/nvme1n1 --writes-as-reads\n"
		"  biotape replay db.btape --map 0=/dev/sdb --map 1=/dev/sdc --write --speed 2 -o new.btape\n"
		"  biotape replay vm.btape --target /dev/vg/test --write --sweep 1,2,4,8 --html knee.html\n"
		"\n"
		"cluster (under mpirun or srun; docs/CLUSTER.md): rank r replays FILE number r mod the\n"
		"number of FILEs (no more FILEs than ranks); %%h (host), %%r (rank) and %%%% expand in FILE,\n"
		"--target, --map DST and -o; --scale N is the total, N / ranks copies each (the first\n"
		"N %% ranks one more), numbered as on one host: copy k gets shard region k of N whichever\n"
		"rank runs it; --sweep factors are per rank, all ranks step together. Every rank\n"
		"passes its checks or none writes; all start at one instant on clocks corrected to rank\n"
		"0's (real-time from 2 ms before it to 200 us after, where allowed). Traces of one\n"
		"cluster recording keep its timeline (original timing): each rank's first I/O comes as\n"
		"long after the earliest as it did when recorded. Rank 0 prints the cluster's merged\n"
		"results, a row per rank and the start skew; each rank's fidelity is its own, against\n"
		"its own trace (its -o result keeps it), and rank 0 merges them.\n"
		"\n"
		"Exit status: 0 done, 1 failed (I/O errors, target refused), 2 bad usage or input.\n",
		DEFAULT_DEPTH_AFAP, DEFAULT_DEPTH_TIMED, RP_HOLD_NS / 1000, SPIN_NS / 1000,
		RT_SPIN_NS / 1000, CAUSAL_SPIN_NS / 1000);
}

struct opts {
	const char *trace;
	char *traces[MAX_TRACES]; /* more than one: cluster replay */
	unsigned int ntraces;
	bool scale_given;
	const char *target;
	struct rp_map_arg maps[RP_MAX_MAPS];
	unsigned int nmaps;
	const char *engine;
	enum rp_timing timing;
	double speed;
	unsigned int iodepth;
	bool iodepth_recorded; /* --iodepth recorded: iodepth is the trace's most in flight */
	bool iodepth_given;
	unsigned int scale;
	enum rp_layout layout;
	enum rp_fit fit;
	unsigned int sweep[MAX_SWEEP];
	unsigned int nsweep;
	unsigned int max_scale; /* the largest of sweep[] */
	const char *html;
	uint64_t create_size; /* --create SIZE (0: none) */
	bool create_auto;     /* --create auto */
	bool buffered, write, force, writes_as_reads, json, no_progress, flushes_apart;
	int payload;
	double compress, dedupe;
	uint64_t duration_ns, warmup_ns;
	unsigned int loops;
	unsigned int rt_priority;
	unsigned int spin_us;
	int order;		  /* enum rp_order_mode */
	uint64_t think_ns;	  /* --think-window (0: not given) */
	int xthread;		  /* --cross-thread: enum rp_xthread + 1 (0: not given) */
	bool xthread_given;	  /* ... was given (else its default follows the trace) */
	uint64_t null_latency_ns; /* --null-latency */
	const char *out;
};

static const char *const timing_names[] = {"original", "afap", "load"};

/*
 * The issuing thread's scheduling class (docs/REPLAY.md, "Where the time goes"): the normal
 * class by default; --rt-priority N is SCHED_FIFO at N (an error when refused). Real-time is
 * not the default: on an otherwise idle machine it takes the CPU from the target's own kernel
 * workers and the replay falls further behind. Fills in the spin's default by the class and
 * the order.
 * Returns 0 or -errno (reported).
 */
static int set_issuer_class(struct opts *o)
{
	struct sched_param sp;

	if (o->rt_priority) {
		sp.sched_priority = (int)o->rt_priority;
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
			int err = -errno;

			cli_err("replay: --rt-priority %u: %s", o->rt_priority, strerror(-err));
			return err;
		}
	}
	if (o->spin_us == SPIN_AUTO)
		o->spin_us = (unsigned int)((o->rt_priority		   ? RT_SPIN_NS
					     : o->order == RP_ORDER_CAUSAL ? CAUSAL_SPIN_NS
									   : SPIN_NS) /
					    1000);
	return 0;
}
static const char *const layout_names[] = {"shard", "overlay"};
static const char *const fit_names[] = {"error", "wrap", "scale"};

static int pick(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0)
			return i;
	}
	return -1;
}

static int parse_uint(const char *opt, const char *s, unsigned int min, unsigned int max,
		      unsigned int *v)
{
	uint64_t u;

	if (cli_parse_u64(s, &u) || u < min || u > max) {
		cli_err("replay: %s: '%s' is not a number from %u to %u", opt, s, min, max);
		return -EINVAL;
	}
	*v = (unsigned int)u;
	return 0;
}

enum {
	OPT_TARGET = 256,
	OPT_MAP,
	OPT_ENGINE,
	OPT_TIMING,
	OPT_SPEED,
	OPT_IODEPTH,
	OPT_SCALE,
	OPT_LAYOUT,
	OPT_SWEEP,
	OPT_HTML,
	OPT_FIT,
	OPT_BUFFERED,
	OPT_WRITE,
	OPT_FORCE,
	OPT_WAR,
	OPT_PAYLOAD,
	OPT_DEDUPE,
	OPT_DURATION,
	OPT_LOOPS,
	OPT_WARMUP,
	OPT_JSON,
	OPT_NOPROG,
	OPT_RT,
	OPT_SPIN,
	OPT_CREATE,
	OPT_ORDER,
	OPT_THINK,
	OPT_XTHREAD,
	OPT_NULL_LAT,
	OPT_FLUSHES_APART,
};

static const struct option long_opts[] = {
	{"target", required_argument, NULL, OPT_TARGET},
	{"map", required_argument, NULL, OPT_MAP},
	{"engine", required_argument, NULL, OPT_ENGINE},
	{"timing", required_argument, NULL, OPT_TIMING},
	{"speed", required_argument, NULL, OPT_SPEED},
	{"iodepth", required_argument, NULL, OPT_IODEPTH},
	{"scale", required_argument, NULL, OPT_SCALE},
	{"layout", required_argument, NULL, OPT_LAYOUT},
	{"sweep", required_argument, NULL, OPT_SWEEP},
	{"html", required_argument, NULL, OPT_HTML},
	{"fit", required_argument, NULL, OPT_FIT},
	{"buffered", no_argument, NULL, OPT_BUFFERED},
	{"write", no_argument, NULL, OPT_WRITE},
	{"force", no_argument, NULL, OPT_FORCE},
	{"writes-as-reads", no_argument, NULL, OPT_WAR},
	{"payload", required_argument, NULL, OPT_PAYLOAD},
	{"dedupe", required_argument, NULL, OPT_DEDUPE},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"loops", required_argument, NULL, OPT_LOOPS},
	{"warmup", required_argument, NULL, OPT_WARMUP},
	{"json", no_argument, NULL, OPT_JSON},
	{"no-progress", no_argument, NULL, OPT_NOPROG},
	{"rt-priority", required_argument, NULL, OPT_RT},
	{"spin-us", required_argument, NULL, OPT_SPIN},
	{"create", required_argument, NULL, OPT_CREATE},
	{"order", required_argument, NULL, OPT_ORDER},
	{"think-window", required_argument, NULL, OPT_THINK},
	{"cross-thread", required_argument, NULL, OPT_XTHREAD},
	{"null-latency", required_argument, NULL, OPT_NULL_LAT},
	{"flushes-apart", no_argument, NULL, OPT_FLUSHES_APART},
	{"output", required_argument, NULL, 'o'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int parse_args(int argc, char **argv, struct opts *o)
{
	int c, v;
	uint64_t u;

	memset(o, 0, sizeof(*o));
	o->engine = "io_uring";
	o->speed = 1;
	o->scale = 1;
	o->loops = 1;
	o->payload = RP_PAYLOAD_RANDOM;
	o->compress = 1;
	o->dedupe = 1;
	o->spin_us = SPIN_AUTO;
	o->rt_priority = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_TARGET:
			o->target = optarg;
			break;
		case OPT_MAP: {
			char why[RP_DEVMAP_WHY_MAX];

			if (rp_map_arg_add(o->maps, &o->nmaps, optarg, why, sizeof(why)) < 0) {
				cli_err("replay: %s", why);
				return -EINVAL;
			}
			break;
		}
		case OPT_ENGINE:
			o->engine = optarg;
			break;
		case OPT_TIMING:
			v = pick(optarg, timing_names, 3);
			if (v < 0) {
				cli_err("replay: --timing '%s': expected original, afap or load",
					optarg);
				return -EINVAL;
			}
			o->timing = (enum rp_timing)v;
			break;
		case OPT_SPEED:
			if (cli_parse_double(optarg, &o->speed) || o->speed <= 0 ||
			    o->speed > 1e6) {
				cli_err("replay: --speed '%s': expected a positive factor", optarg);
				return -EINVAL;
			}
			break;
		case OPT_IODEPTH:
			o->iodepth_given = true;
			o->iodepth_recorded = strcmp(optarg, "recorded") == 0;
			if (o->iodepth_recorded)
				break; /* set from the trace (rp_trace_scan) */
			if (cli_parse_u64(optarg, &u) || u < 1 || u > IODEPTH_MAX) {
				cli_err("replay: --iodepth '%s': expected a number from 1 to %u, "
					"or recorded",
					optarg, IODEPTH_MAX);
				return -EINVAL;
			}
			o->iodepth = (unsigned int)u;
			break;
		case OPT_SCALE:
			if (parse_uint("--scale", optarg, 1, 1024, &o->scale))
				return -EINVAL;
			o->scale_given = true;
			break;
		case OPT_LAYOUT:
			v = pick(optarg, layout_names, 2);
			if (v < 0) {
				cli_err("replay: --layout '%s': expected shard or overlay", optarg);
				return -EINVAL;
			}
			o->layout = (enum rp_layout)v;
			break;
		case OPT_SWEEP: {
			char *s = optarg, *tok, *save = NULL;

			o->nsweep = 0;
			for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (o->nsweep >= MAX_SWEEP) {
					cli_err("replay: --sweep: at most %d steps", MAX_SWEEP);
					return -EINVAL;
				}
				if (parse_uint("--sweep", tok, 1, 1024, &o->sweep[o->nsweep]))
					return -EINVAL;
				o->nsweep++;
			}
			if (!o->nsweep) {
				cli_err("replay: --sweep: expected factors like 1,2,4,8");
				return -EINVAL;
			}
			break;
		}
		case OPT_HTML:
			o->html = optarg;
			break;
		case OPT_FIT:
			v = pick(optarg, fit_names, 3);
			if (v < 0) {
				cli_err("replay: --fit '%s': expected error, wrap or scale",
					optarg);
				return -EINVAL;
			}
			o->fit = (enum rp_fit)v;
			break;
		case OPT_BUFFERED:
			o->buffered = true;
			break;
		case OPT_CREATE:
			if (strcmp(optarg, "auto") == 0) {
				o->create_auto = true;
				o->create_size = 0;
			} else if (cli_parse_size(optarg, &o->create_size) || !o->create_size ||
				   o->create_size > (uint64_t)INT64_MAX) {
				cli_err("replay: --create '%s': expected a size like 1G, or auto",
					optarg);
				return -EINVAL;
			} else {
				o->create_auto = false;
			}
			break;
		case OPT_WRITE:
			o->write = true;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_WAR:
			o->writes_as_reads = true;
			break;
		case OPT_FLUSHES_APART:
			o->flushes_apart = true;
			break;
		case OPT_PAYLOAD:
			if (strcmp(optarg, "zero") == 0) {
				o->payload = RP_PAYLOAD_ZERO;
			} else if (strcmp(optarg, "random") == 0) {
				o->payload = RP_PAYLOAD_RANDOM;
			} else if (strncmp(optarg, "compressible:", 13) == 0 &&
				   !cli_parse_double(optarg + 13, &o->compress) &&
				   o->compress >= 1 && o->compress <= 256) {
				o->payload = RP_PAYLOAD_COMPRESSIBLE;
			} else {
				cli_err("replay: --payload '%s': expected zero, random or "
					"compressible:R (R from 1 to 256)",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_DEDUPE:
			if (cli_parse_double(optarg, &o->dedupe) || o->dedupe < 1 ||
			    o->dedupe > 1e6) {
				cli_err("replay: --dedupe '%s': expected a ratio >= 1", optarg);
				return -EINVAL;
			}
			break;
		case OPT_DURATION:
		case OPT_WARMUP:
			if (cli_parse_duration_ns(optarg, c == OPT_DURATION ? &o->duration_ns
									    : &o->warmup_ns)) {
				cli_err("replay: %s '%s': expected a duration like 30s or 500ms",
					c == OPT_DURATION ? "--duration" : "--warmup", optarg);
				return -EINVAL;
			}
			break;
		case OPT_ORDER:
			o->order = rp_order_mode_parse(optarg);
			if (o->order < 0) {
				cli_err("replay: --order '%s': expected none, conflict, barrier or "
					"causal",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_XTHREAD:
			o->xthread = rp_xthread_parse(optarg) + 1;
			if (!o->xthread) {
				cli_err("replay: --cross-thread '%s': expected off, barrier, any or wake",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_THINK:
		case OPT_NULL_LAT:
			if (cli_parse_duration_ns(optarg, c == OPT_THINK ? &o->think_ns
									 : &o->null_latency_ns) ||
			    (c == OPT_THINK && !o->think_ns)) {
				cli_err("replay: %s '%s': expected a duration like 1ms or 200us",
					c == OPT_THINK ? "--think-window" : "--null-latency",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_LOOPS:
			if (parse_uint("--loops", optarg, 0, 1000000000, &o->loops))
				return -EINVAL;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_NOPROG:
			o->no_progress = true;
			break;
		case OPT_SPIN:
			if (parse_uint("--spin-us", optarg, 0, 10000, &o->spin_us))
				return -EINVAL;
			break;
		case OPT_RT:
			if (parse_uint("--rt-priority", optarg, 0, 99, &o->rt_priority))
				return -EINVAL;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			if (optopt && optopt < 256)
				cli_err("replay: unknown option '-%c' (see biotape replay --help)",
					optopt);
			else
				cli_err("replay: unknown or incomplete option '%s' (see biotape replay "
					"--help)",
					argv[optind - 1]);
			return -EINVAL;
		}
	}
	for (; optind < argc; optind++) {
		if (o->ntraces && !cl_launched()) {
			cli_err("replay: unexpected argument '%s' (one trace file)", argv[optind]);
			return -EINVAL;
		}
		if (o->ntraces == MAX_TRACES) {
			cli_err("replay: at most %d trace files", MAX_TRACES);
			return -EINVAL;
		}
		o->traces[o->ntraces++] = argv[optind];
	}
	o->trace = o->ntraces ? o->traces[0] : NULL;
	if (!o->trace) {
		cli_err("replay: no trace file given (see biotape replay --help)");
		return -EINVAL;
	}
	if (!o->target && !o->nmaps) {
		cli_err("replay: no target: give --target PATH or --map SRC=DST");
		return -EINVAL;
	}
	if (o->target && o->nmaps) {
		cli_err("replay: --target and --map exclude each other");
		return -EINVAL;
	}
	if (o->write && o->writes_as_reads) {
		cli_err("replay: --write and --writes-as-reads exclude each other");
		return -EINVAL;
	}
	if (o->out && o->nsweep) {
		cli_err("replay: -o cannot be combined with --sweep (one result trace per run)");
		return -EINVAL;
	}
	if (o->html && !strcmp(o->html, "-") && (o->json || (o->out && !strcmp(o->out, "-")))) {
		cli_err("replay: --html - and %s both write to standard output",
			o->json ? "--json" : "-o -");
		return -EINVAL;
	}
	if (o->loops == 0 && !o->duration_ns) {
		cli_err("replay: --loops 0 (endless) needs --duration");
		return -EINVAL;
	}
	if (o->speed != 1 && o->timing != RP_TIMING_ORIGINAL) {
		cli_err("replay: --speed only applies to --timing original");
		return -EINVAL;
	}
	if (o->order != RP_ORDER_NONE && o->timing != RP_TIMING_ORIGINAL) {
		cli_err("replay: --order only applies to --timing original");
		return -EINVAL;
	}
	if (o->order != RP_ORDER_NONE && (o->scale > 1 || o->nsweep)) {
		cli_err("replay: --order replays one copy: not with --scale or --sweep");
		return -EINVAL;
	}
	if (o->think_ns && o->order != RP_ORDER_CAUSAL) {
		cli_err("replay: --think-window only applies to --order causal");
		return -EINVAL;
	}
	if (o->xthread && o->order != RP_ORDER_CAUSAL) {
		cli_err("replay: --cross-thread only applies to --order causal");
		return -EINVAL;
	}
	if (!o->think_ns)
		o->think_ns = RP_THINK_WINDOW_NS;
	o->xthread_given = o->xthread != 0;
	o->xthread = o->xthread ? o->xthread - 1 : RP_XTHREAD_DEFAULT;
	if (o->null_latency_ns && strcmp(o->engine, "null")) {
		cli_err("replay: --null-latency only applies to --engine null");
		return -EINVAL;
	}
	if (!rp_engine_find(o->engine)) {
		cli_err("replay: --engine '%s': expected io_uring, psync or null", o->engine);
		return -EINVAL;
	}
	if (!o->iodepth && !o->iodepth_recorded)
		o->iodepth = o->timing == RP_TIMING_AFAP ? DEFAULT_DEPTH_AFAP : DEFAULT_DEPTH_TIMED;
	if (!o->nsweep) {
		o->sweep[0] = o->scale;
		o->nsweep = 1;
	}
	o->max_scale = 1;
	for (unsigned int i = 0; i < o->nsweep; i++)
		o->max_scale = o->sweep[i] > o->max_scale ? o->sweep[i] : o->max_scale;
	return 0;
}

/* ---- devices (replayer/devmap.h) ---- */

struct setup {
	struct opts *o;
	const struct btape_meta *meta;
	struct rp_devices_opts dvo;
	struct rp_devices dv;
	struct btape_summary sum;
	uint64_t destructive;
};

/* ---- result trace ---- */

struct out_ctx {
	struct btape_writer *w;
	struct rp_outq *q;
	int err;
	struct opts *o;
	uint64_t last_completed;
	uint64_t last_tick;
	uint64_t total_ns;
	uint64_t first_issue; /* the step's earliest issue time (cluster: the start skew) */
	bool progress;
	struct rp_fidelity *fid; /* the fidelity section's replayed side, or NULL */
	const struct rp_stats *st;
};

static const uint8_t io_to_btape_op[RP_IO__COUNT] = {BTAPE_OP_READ, BTAPE_OP_WRITE, BTAPE_OP_FLUSH,
						     BTAPE_OP_DISCARD, BTAPE_OP_WRITE_ZEROES};

static void out_done(void *ctx, const struct rp_io *io)
{
	struct out_ctx *c = ctx;
	struct btape_event ev;

	if (!c->first_issue || io->issue_ns < c->first_issue)
		c->first_issue = io->issue_ns;
	if (c->fid)
		rp_fidelity__add(c->fid, io, c->st);
	if (!c->q)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.issue_ns = io->issue_ns;
	ev.complete_ns = io->complete_ns;
	ev.sector = io->offset / 512;
	ev.bytes = io->bytes;
	ev.dev = io->dev;
	ev.op = io_to_btape_op[io->op];
	ev.qd = io->qd;
	ev.error = io->res < 0 ? (int32_t)io->res : 0;
	ev.present = BTAPE_HAS_COMPLETE | BTAPE_HAS_QD | BTAPE_HAS_ERROR;
	rp_outq__push(c->q, &ev);
}

static void out_watermark(void *ctx, uint64_t ns)
{
	struct out_ctx *c = ctx;

	if (c->q)
		rp_outq__watermark(c->q, ns);
}

static void on_tick(void *ctx, const struct rp_stats *st, uint64_t now)
{
	struct out_ctx *c = ctx;
	double el = (double)(now - st->start_ns) / 1e9;
	double dt = (double)(now - c->last_tick) / 1e9;
	uint64_t bytes = 0;

	if (!c->progress)
		return;
	for (unsigned int i = 0; i < RP_IO__COUNT; i++)
		bytes += st->bytes[i];
	if (!c->last_tick) {
		dt = el;
		c->last_completed = 0;
	}
	fprintf(stderr, "\r  %7.1f s", el);
	if (c->total_ns)
		fprintf(stderr, " / %.1f s", (double)c->total_ns / 1e9);
	fprintf(stderr, "  %9.0f IOPS  %8.1f MB/s  late %" PRIu64 "   ",
		dt > 0 ? (double)(st->completed - c->last_completed) / dt : 0.0,
		el > 0 ? (double)bytes / el / 1e6 : 0.0, st->late);
	c->last_completed = st->completed;
	c->last_tick = now;
}

static int open_output(struct setup *s, struct out_ctx *c)
{
	struct btape_meta m;
	struct btape_writer_opts wo = {.sz = sizeof(wo), .zstd_level = 1, .chunk_events = 16384};
	struct utsname un;
	struct timespec rt;
	char why[BTAPE_ERRMSG_LEN];
	int err;

	memset(&m, 0, sizeof(m));
	if (s->meta) {
		err = btape_meta_copy(&m, s->meta);
		if (err < 0) {
			cli_err("replay: -o %s: cannot copy the metadata: %s", s->o->out,
				strerror(-err));
			return err;
		}
	}
	snprintf(m.tool, sizeof(m.tool), "biotape %s", BIOTAPE_VERSION);
	snprintf(m.source, sizeof(m.source), "replay");
	if (uname(&un) == 0) {
		snprintf(m.hostname, sizeof(m.hostname), "%s", un.nodename);
		snprintf(m.kernel, sizeof(m.kernel), "%s", un.release);
	}
	snprintf(m.capture, sizeof(m.capture), "replay of %s: engine %s, timing %s x%g, iodepth %u",
		 s->o->trace, s->o->engine, timing_names[s->o->timing], s->o->speed, s->o->iodepth);
	m.clock_mono_ns = rp_mono_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	m.clock_real_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	if (!m.ndevices) {
		struct btape_device d = {.rotational = -1};

		err = btape_meta_add_device(&m, &d);
		if (err < 0) {
			btape_meta_free(&m);
			cli_err("replay: -o %s: %s", s->o->out, strerror(-err));
			return err;
		}
	}
	for (uint32_t d = 0; d < m.ndevices && d < s->dv.ndev; d++) {
		struct btape_device *dv = &m.devices[d];
		const struct rp_target *t;
		const char *base;

		if (s->dv.devs[d].target == RP_NO_TARGET)
			continue;
		t = &s->dv.targets[s->dv.devs[d].target];
		base = strrchr(t->path, '/');
		snprintf(dv->name, sizeof(dv->name), "%s", base ? base + 1 : t->path);
		dv->model[0] = '\0';
		dv->dev_t_major = t->dev_major;
		dv->dev_t_minor = t->dev_minor;
		dv->size_bytes = t->size;
		dv->logical_block = t->lbs;
		dv->physical_block = 0;
		dv->rotational = -1;
	}
	btape_meta_add_tag(&m, "replay.trace", s->o->trace);
	btape_meta_add_tag(&m, "replay.timing", timing_names[s->o->timing]);
	btape_meta_add_tag(&m, "replay.order",
			    rp_order_mode_name((enum rp_order_mode)s->o->order));
	err = btape_writer__open(&c->w, s->o->out, &m, &wo, why, sizeof(why));
	btape_meta_free(&m);
	if (err < 0) {
		cli_err("replay: -o: %s", why);
		c->w = NULL;
	}
	return err;
}

/* ---- main ---- */

/* A reader's message names the trace already; a bare errno does not. */
static void trace_err(const char *trace, const char *reader_msg, int err)
{
	if (reader_msg)
		cli_err("replay: %s", reader_msg);
	else
		cli_err("replay: %s: %s", trace, strerror(-err));
}

/*
 * The buffers of the I/Os larger than the registered ones (rp_sched_cfg.big_bufs), made and
 * touched now, before the clock starts: one per slot (depth), as fio makes one per I/O it
 * can have out, at most BIG_BUFS_MAX bytes in all; each the trace's largest such I/O (scan).
 * Fewer left the lazy ones to be made at deadlines, where their page faults stalled the
 * replay (docs/REPLAY.md, "Engine"). None when the trace has no I/O over BUF_BYTES. 0,
 * -ENOMEM, or -EFBIG (why).
 */
static int make_big_bufs(const struct rp_trace_scan *b, unsigned int depth,
			 struct rp_sched_cfg *cfg, void ***bigs, void **bigmem, char *why,
			 size_t whylen)
{
	uint64_t n, bytes;

	if (!b->big)
		return 0;
	/* block requests are a few MiB; a crafted trace's 4 GiB reads once made a buffer that
	 * size per slot (64 GiB at afap's depth) */
	if (b->big_max_bytes > RP_OWN_BUFS_MAX) {
		snprintf(why, whylen,
			 "the trace holds a read or write of %" PRIu64 " bytes: more than the %llu "
			 "MiB a replay gives one I/O",
			 b->big_max_bytes, RP_OWN_BUFS_MAX >> 20);
		return -EFBIG;
	}
	bytes = (b->big_max_bytes + 4095) & ~4095ull;
	n = depth;
	if (n * bytes > BIG_BUFS_MAX)
		n = BIG_BUFS_MAX / bytes;
	if (!n)
		return 0;
	*bigs = calloc(n, sizeof(**bigs));
	if (!*bigs || posix_memalign(bigmem, 4096, n * bytes))
		return -ENOMEM;
	memset(*bigmem, 0, n * bytes);
	for (uint64_t i = 0; i < n; i++)
		(*bigs)[i] = (char *)*bigmem + i * bytes;
	cfg->big_bufs = *bigs;
	cfg->nbig = (unsigned int)n;
	cfg->big_bytes = bytes;
	return 0;
}

/* Completes the result trace (-o), if any: 0 or -errno (printed). */
/* Writes the result trace out; cut_short marks it interrupted (its footer, biotape info). */
static void fid_recorded(void *ctx, const struct btape_event *evs, size_t n)
{
	rp_fidelity__add_recorded(ctx, evs, n);
}

/* Closes the result trace, with the fidelity section FID (may be NULL) in its footer. */
static int finish_output(struct out_ctx *oc, bool cut_short, const struct rp_fid *fid)
{
	char msg[BTAPE_ERRMSG_LEN];
	const char *why;
	char *tag = NULL;
	size_t len = 0;
	int err;

	if (!oc->w)
		return 0;
	if (cut_short)
		btape_writer__set_interrupted(oc->w);
	err = rp_outq__finish(oc->q);
	oc->q = NULL;
	why = btape_writer__errmsg(oc->w);
	if (!err && fid) {
		err = rp_fid_pack(fid, &tag, &len);
		if (!err)
			err = btape_writer__set_footer_tag(oc->w, BTAPE_TAG_FIDELITY, tag, len);
		else
			why = "the fidelity section: out of memory";
		free(tag);
	}
	if (err) {
		cli_err("replay: -o %s: %s", oc->o->out, why);
		btape_writer__abort(oc->w);
		oc->w = NULL;
		return err;
	}
	err = btape_writer__close(oc->w, msg, sizeof(msg));
	oc->w = NULL;
	if (err < 0)
		cli_err("replay: -o %s: %s", oc->o->out, msg);
	return err;
}

/* The cluster's JSON summary: today's, with a "cluster" member added at its end. */
static void report_json_cluster(const struct rp_cluster *rc, const struct rp_run_info *info,
				const struct rp_stats *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp) {
		rp_report_json(stdout, info, st);
		return;
	}
	rp_report_json(fp, info, st);
	fclose(fp);
	char *end = buf ? strrchr(buf, '}') : NULL;
	if (!end) {
		fputs(buf ? buf : "", stdout);
		free(buf);
		return;
	}
	fwrite(buf, 1, (size_t)(end - buf), stdout);
	fputc(',', stdout);
	rp_cluster__report_json(rc, stdout);
	fputs(end, stdout);
	free(buf);
}

static int replay(int argc, char **argv, struct rp_cluster *rc);

int cmd_replay(int argc, char **argv)
{
	struct rp_cluster *rc;

	/* under an MPI launcher: one rank of a cluster replay (cluster_replay.h) */
	if (rp_cluster__open(&rc) < 0)
		return BTAPE_EXIT_FAIL;
	return rp_cluster__close(rc, replay(argc, argv, rc));
}

static int replay(int argc, char **argv, struct rp_cluster *rc)
{
	struct opts o;
	struct setup s;
	struct rp_prefetch *pf = NULL;
	const struct rp_engine_ops *eng;
	struct rp_engine *e = NULL;
	struct rp_sched_cfg cfg;
	struct rp_payload payload;
	struct rp_clock clk;
	struct rp_stats *st = NULL;
	struct rp_step steps[MAX_SWEEP];
	struct out_ctx oc = {0};
	const struct rp_fid *own_fid = NULL; /* a cluster rank's own fidelity section */
	struct rp_run_info info;
	struct rp_trace_scan scan;
	unsigned int hold_depth = 0; /* rp_sched_cfg.hold_depth */
	struct sigaction sa, old_int, old_term;
	void **bufs = NULL, **bigs = NULL;
	void *bufmem = NULL, *bigmem = NULL;
	char msg[BTAPE_ERRMSG_LEN];
	char why[RP_DEVMAP_WHY_MAX];
	unsigned int depth;
	int err, ret = BTAPE_EXIT_FAIL;
	bool sigs = false, issued = false;

	memset(&s, 0, sizeof(s));
	err = parse_args(argc, argv, &o);
	if (err > 0)
		return BTAPE_EXIT_OK;
	if (err < 0)
		return BTAPE_EXIT_USAGE;
	/* cluster --scale: all ranks' copies and this rank's first (0: a single host's scale) */
	unsigned int copies = o.scale, copy_base = 0;

	if (rp_cluster__assign(rc, o.traces, o.ntraces, &o.trace, &o.target, o.maps, o.nmaps,
			       &o.out, &o.scale, o.scale_given, &copy_base) < 0)
		return BTAPE_EXIT_USAGE;
	if (rc && o.scale_given && o.nsweep == 1)
		o.sweep[0] = o.max_scale = o.scale;
	else
		copies = 0;
	if (o.html && o.nsweep == 1 && rp_cluster__multi(rc)) {
		cli_err("replay: --html of a cluster run needs --sweep (a single run's page is "
			"one host's)");
		return BTAPE_EXIT_USAGE;
	}
	s.o = &o;
	eng = rp_engine_find(o.engine);
	/* outputs are refused before any work (and checked again when written) */
	char *trace = (char *)o.trace;
	unsigned int nins = 1; /* the traces read on this host: a cluster's other ranks' too */
	char *const *ins = rc ? rp_cluster__host_traces(rc, &nins) : &trace;
	unsigned int nothers = 0; /* those and the other ranks' results: never a target */
	char *const *others = rp_cluster__host_files(rc, &nothers);

	if ((ret = cli_out_check("replay: -o", o.out)) ||
	    (ret = cli_out_check("replay: --html", o.html)) ||
	    (ret = cli_out_check_inputs("replay: -o", o.out, ins, (int)nins)) ||
	    (ret = cli_out_check_inputs("replay: --html", o.html, ins, (int)nins)))
		return ret;
	if (o.out && o.html && cli_same_file(o.out, o.html)) {
		if (strcmp(o.out, o.html) == 0)
			cli_err("replay: -o and --html name the same file %s", o.out);
		else
			cli_err("replay: -o %s and --html %s name the same file", o.out, o.html);
		return BTAPE_EXIT_USAGE;
	}
	ret = BTAPE_EXIT_FAIL;

	err = rp_prefetch__open(&pf, o.trace, PREFETCH_BLOCK_EVENTS, PREFETCH_BLOCKS, msg,
				sizeof(msg));
	if (err < 0) {
		cli_err("replay: %s", msg);
		return cli_exit_status(err);
	}
	s.meta = rp_prefetch__meta(pf);
	if (o.order == RP_ORDER_CAUSAL) {
		if (!o.xthread_given)
			o.xthread = rp_xthread_default(s.meta->capture);
		if (o.xthread == RP_XTHREAD_WAKE && rp_xthread_default(s.meta->capture) !=
							     RP_XTHREAD_WAKE) {
			cli_err("replay: --cross-thread wake: %s was not recorded with --waits",
				o.trace);
			ret = BTAPE_EXIT_USAGE;
			goto cleanup;
		}
	}
	s.sum.sz = sizeof(s.sum);
	err = rp_prefetch__summary(pf, &s.sum);
	if (err < 0) {
		trace_err(o.trace, rp_prefetch__errmsg(pf), err);
		ret = BTAPE_EXIT_USAGE;
		goto cleanup;
	}
	if (s.sum.lost_events)
		cli_info(0,
			 "replay: the recorder lost %" PRIu64 " events of %s: their I/Os are not "
			 "in it, and not replayed (the load is lower than recorded)",
			 s.sum.lost_events, o.trace);
	s.destructive = s.sum.count_by_op[BTAPE_OP_WRITE] + s.sum.count_by_op[BTAPE_OP_DISCARD] +
			s.sum.count_by_op[BTAPE_OP_WRITE_ZEROES] +
			s.sum.count_by_op[BTAPE_OP_SECURE_ERASE] +
			s.sum.count_by_op[BTAPE_OP_ZONE_APPEND];
	if (s.destructive && !o.write && !o.writes_as_reads) {
		cli_err("replay: %s holds %" PRIu64 " writes/discards: refusing without --write "
			"(destroys data on the target) or --writes-as-reads",
			o.trace, s.destructive);
		ret = BTAPE_EXIT_USAGE;
		goto cleanup;
	}
	/* one pass before any target is touched: big I/Os' buffers, the recording's depth */
	bool hold = o.timing == RP_TIMING_ORIGINAL && o.order == RP_ORDER_NONE && !o.iodepth_given;

	msg[0] = '\0';
	err = rp_trace_scan(o.trace, BUF_BYTES, IODEPTH_MAX, o.iodepth_recorded || hold, &scan, msg,
			    sizeof(msg));
	if (err < 0) {
		trace_err(o.trace, msg[0] ? msg : NULL, err);
		ret = cli_exit_status(err);
		goto cleanup;
	}
	if (o.iodepth_recorded) {
		if (!scan.timed) {
			cli_err("replay: --iodepth recorded: %s has no completion times to count "
				"I/Os in flight by (give --iodepth N)",
				o.trace);
			ret = BTAPE_EXIT_USAGE;
			goto cleanup;
		}
		o.iodepth = scan.max_inflight;
	}
	/* by default an I/O past the recording's most in flight (as many more at --speed 2)
	 * waits up to RP_HOLD_NS for a completion: docs/REPLAY.md, "Timing" */
	if (hold && scan.timed) {
		double d = (double)scan.max_inflight * (o.speed > 1 ? o.speed : 1);

		hold_depth = d < (double)o.iodepth ? (unsigned int)d : 0;
		hold_depth += hold_depth && (double)hold_depth < d; /* rounded up */
	}
	s.dvo = (struct rp_devices_opts){.trace = o.trace,
					 .others = others,
					 .nothers = nothers,
					 .out = o.out,
					 .html = o.html,
					 .target = o.target,
					 .maps = o.maps,
					 .nmaps = o.nmaps,
					 .max_scale = copies ? copies : o.max_scale,
					 .layout = o.layout,
					 .write = o.write && s.destructive > 0,
					 .force = o.force,
					 .buffered = o.buffered,
					 .create_size = o.create_size,
					 .create_auto = o.create_auto};
	if (rp_devices__map(&s.dv, s.meta, &s.dvo, why, sizeof(why)) < 0) {
		cli_err("replay: %s", why);
		ret = BTAPE_EXIT_USAGE;
		goto cleanup;
	}
	for (uint32_t d = 0; d < s.dv.ndev; d++) {
		char b[300];

		if (s.dv.devs[d].target == RP_NO_TARGET)
			cli_info(0,
				 "replay: recorded device %s has no --map: its I/Os are skipped "
				 "(counted)",
				 rp_dev_label(s.meta, d, b, sizeof(b)));
	}
	if (rp_devices__scan(&s.dv, why, sizeof(why)) < 0) {
		cli_err("replay: %s", why);
		ret = BTAPE_EXIT_USAGE;
		goto cleanup;
	}
	/*
	 * From the first file made (--create's target, -o's temporary) a signal stops the replay
	 * rather than kill it, so that cleanup removes them; before the first I/O it ends the
	 * command (a cluster rank goes on to the first step, which all ranks leave together).
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C kills at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigs = true;
	err = rp_devices__open(&s.dv, why, sizeof(why));
	if (err < 0) {
		cli_err("replay: %s", why);
		ret = err == -EINVAL ? BTAPE_EXIT_USAGE : BTAPE_EXIT_FAIL;
		goto cleanup;
	}

	rp_payload_init(&payload, o.payload, o.compress, o.dedupe,
			(uint64_t)getpid() ^ rp_mono_ns());
	memset(&cfg, 0, sizeof(cfg));
	cfg.timing = o.timing;
	cfg.speed = o.speed;
	cfg.order = o.order;
	cfg.flushes_apart = o.flushes_apart;
	cfg.think_ns = o.think_ns;
	cfg.xthread = o.xthread;
	cfg.iodepth = o.iodepth;
	cfg.hold_depth = hold_depth;
	cfg.hold_ns = RP_HOLD_NS;
	cfg.scale = o.max_scale;
	cfg.copy_base = copy_base;
	cfg.copies = copies;
	cfg.layout = o.layout;
	cfg.fit = o.fit;
	cfg.loops = o.loops;
	cfg.duration_ns = o.duration_ns;
	cfg.warmup_ns = o.warmup_ns;
	cfg.allow_writes = o.write && s.destructive > 0;
	cfg.writes_as_reads = o.writes_as_reads;
	cfg.ndev = s.dv.ndev;
	cfg.devs = s.dv.devs;
	cfg.targets = s.dv.targets;
	cfg.ntargets = s.dv.ntargets;
	cfg.payload = &payload;
	cfg.stop = &stop_flag;
	cfg.ctx = &oc;
	cfg.on_tick = on_tick;
	cfg.tick_ns = TICK_NS;
	err = rp_devices__check_fit(&s.dv, &cfg, why, sizeof(why));
	if (err < 0) {
		cli_err("replay: %s", why);
		ret = err == -ERANGE ? BTAPE_EXIT_USAGE : BTAPE_EXIT_FAIL;
		goto cleanup;
	}
	if (stopped_early(rc))
		goto cleanup;

	depth = o.iodepth * o.max_scale;
	bufs = calloc(depth, sizeof(*bufs));
	st = malloc(sizeof(*st));
	if (!bufs || !st || posix_memalign(&bufmem, 4096, (size_t)depth * BUF_BYTES)) {
		cli_err("replay: out of memory for %u buffers of %d KiB", depth, BUF_BYTES / 1024);
		goto cleanup;
	}
	memset(bufmem, 0, (size_t)depth * BUF_BYTES);
	for (unsigned int i = 0; i < depth; i++)
		bufs[i] = (char *)bufmem + (size_t)i * BUF_BYTES;
	cfg.bufs = bufs;
	cfg.buf_bytes = BUF_BYTES;
	why[0] = '\0';
	err = make_big_bufs(&scan, depth, &cfg, &bigs, &bigmem, why, sizeof(why));
	if (err < 0) {
		if (err == -ENOMEM)
			cli_err("replay: out of memory for the buffers of I/Os over %d KiB",
				BUF_BYTES / 1024);
		else
			trace_err(o.trace, why, err);
		goto cleanup;
	}

	if (rc) /* the start skew: every rank's first issue */
		cfg.on_done = out_done;
	if (o.out) {
		if (open_output(&s, &oc) < 0)
			goto cleanup;
		err = rp_outq__start(&oc.q, oc.w, OUTQ_EVENTS);
		if (err < 0) {
			cli_err("replay: -o %s: cannot start the writer: %s", o.out,
				strerror(-err));
			goto cleanup;
		}
		cfg.on_done = out_done;
		cfg.on_watermark = out_watermark;
	}
	if (stopped_early(rc))
		goto cleanup;
	/* the fidelity section of a single run (not a sweep's steps); in a cluster each rank's
	 * own, against its own trace, and rank 0's report merges them */
	if (o.nsweep == 1) {
		err = rp_fidelity__new(&oc.fid, &s.sum, &cfg);
		if (err < 0) {
			cli_err("replay: the fidelity section: %s", strerror(-err));
			goto cleanup;
		}
		/* its recorded side: the trace as the source decodes it, no read of its own */
		rp_prefetch__set_first_pass_hook(pf, fid_recorded, oc.fid);
		oc.st = st;
		cfg.on_done = out_done;
	}
	oc.o = &o;
	oc.progress = !o.no_progress && isatty(STDERR_FILENO);
	if (o.timing == RP_TIMING_ORIGINAL && s.sum.last_issue_ns > s.sum.first_issue_ns)
		oc.total_ns =
			(uint64_t)((double)(s.sum.last_issue_ns - s.sum.first_issue_ns) / o.speed) *
			(o.loops ? o.loops : 1);
	if (o.duration_ns && (!oc.total_ns || o.duration_ns < oc.total_ns))
		oc.total_ns = o.duration_ns;

	rp_prefetch__set_loop_ahead(pf, o.loops != 1 || o.nsweep > 1);
	if (set_issuer_class(&o) < 0)
		goto cleanup;
	rp_clock_init_real(&clk, (uint64_t)o.spin_us * 1000);
	info = (struct rp_run_info){.trace = o.trace,
				    .engine = eng->name,
				    .timing = timing_names[o.timing],
				    .layout = layout_names[o.layout],
				    .speed = o.speed,
				    .order = rp_order_mode_name((enum rp_order_mode)o.order),
				    .think_ns = o.order == RP_ORDER_CAUSAL ? o.think_ns : 0,
				    .xthread = o.order == RP_ORDER_CAUSAL
						       ? rp_xthread_name((enum rp_xthread)o.xthread)
						       : NULL,
				    .iodepth = o.iodepth,
				    .iodepth_recorded = o.iodepth_recorded,
				    .hold_depth = hold_depth,
				    .rt_priority = o.rt_priority,
				    .spin_us = o.spin_us,
				    .scale = o.scale,
				    .targets = s.dv.tpaths,
				    .ntargets = s.dv.ntargets,
				    .topen = s.dv.targets};
	/* every rank passed its checks, or none issues any I/O */
	if (rp_cluster__agree(rc))
		goto cleanup;
	/* the traces of one cluster recording keep its timeline: who started when */
	if (o.timing == RP_TIMING_ORIGINAL &&
	    rp_cluster__timeline(rc, &s.meta->cluster, s.sum.events ? s.sum.first_issue_ns : UINT64_MAX,
				 &cfg.lead_ns))
		goto cleanup;
	if (oc.total_ns && o.timing == RP_TIMING_ORIGINAL)
		oc.total_ns += (uint64_t)((double)cfg.lead_ns / o.speed);
	for (unsigned int i = 0; i < o.nsweep; i++) {
		struct rp_engine_cfg ec = {.targets = s.dv.targets,
					   .ntargets = s.dv.ntargets,
					   .depth = o.iodepth * o.sweep[i],
					   .bufs = bufs,
					   .buf_bytes = BUF_BYTES,
					   .clock = &clk,
					   .null_latency_ns = o.null_latency_ns};
		struct rp_source *src = rp_prefetch__source(pf);

		if (i && (err = src->rewind(src)) < 0) {
			trace_err(o.trace, rp_prefetch__errmsg(pf), err);
			goto cleanup;
		}
		rp_prefetch__fill(pf);
		cfg.scale = o.sweep[i];
		err = eng->open(&e, &ec);
		if (err < 0) {
			cli_err("replay: engine %s: cannot start: %s", eng->name, strerror(-err));
			goto cleanup;
		}
		oc.last_tick = 0;
		oc.first_issue = 0;
		/* original timing: the cluster's start instant is the scheduler's first deadline;
		 * the other timings start when step_begin returns at it */
		if (rp_cluster__step_begin(rc, &stop_flag, &signalled, st,
					   o.timing != RP_TIMING_ORIGINAL,
					   &cfg.start_ns))
			goto cleanup;
		if (!issued) {
			/* tests/replayer/replay_cli.sh: a signal at the last moment before the
			 * first I/O, without a race */
			if (getenv("BIOTAPE_TEST_STOP_BEFORE_IO"))
				raise(SIGSTOP);
			if (stopped_early(rc))
				goto cleanup;
		}
		issued = true;
		err = rp_sched_run(&cfg, eng, e, rp_cluster__clock(rc, &clk), src, st);
		eng->close(e);
		e = NULL;
		if (oc.progress)
			fprintf(stderr, "\r%78s\r", "");
		if (rc) {
			char fail[160];

			/* a cluster's result traces are complete before the merge: when a rank
			 * dies, the launcher kills the others soon after. Each keeps its rank's
			 * own fidelity section, from its own stats (st is the cluster's after
			 * the merge at rank 0). */
			if (oc.fid) {
				rp_prefetch__stop(pf); /* the recorded side is complete, and still */
				own_fid = rp_fidelity__finish(oc.fid, st);
				rp_cluster__set_fidelity(rc, own_fid);
			}
			if (finish_output(&oc, stop_flag || err < 0, own_fid) < 0)
				goto cleanup;

			if (err < 0)
				snprintf(fail, sizeof(fail), "replay failed: %s", strerror(-err));
			else if (st->errors)
				snprintf(fail, sizeof(fail), "%" PRIu64 " I/Os failed (first: %s)",
					 st->errors, strerror(-st->first_error));
			/* the skew: how far each rank's timeline started from the instant */
			uint64_t lead = (uint64_t)((double)cfg.lead_ns / o.speed);

			if (rp_cluster__step_end(rc, st, o.sweep[i],
						 oc.first_issue > lead ? oc.first_issue - lead : 0,
						 err < 0 || st->errors ? fail : NULL) < 0)
				stop_flag = 1;
		}
		if (err == -ERANGE) {
			cli_err("replay: an I/O does not fit its target (use --fit wrap|scale)");
			ret = BTAPE_EXIT_USAGE;
			goto cleanup;
		}
		if (err < 0) {
			if (rp_prefetch__errmsg(pf)) {
				trace_err(o.trace, rp_prefetch__errmsg(pf), err);
				ret = BTAPE_EXIT_USAGE; /* a damaged trace */
			} else {
				cli_err("replay: engine %s: %s", eng->name, strerror(-err));
			}
			goto cleanup;
		}
		rp_step_from_stats(&steps[i],
				   rp_cluster__multi(rc) ? rp_cluster__copies(rc) : o.sweep[i], st);
		if (o.nsweep > 1 && !o.json && rp_cluster__reports(rc)) {
			fprintf(stderr, "  scale %u: %.0f IOPS, p99 %.1f us\n", steps[i].factor,
				steps[i].iops, (double)steps[i].p99_all / 1e3);
		}
		if (stop_flag)
			break;
	}
	unsigned int nsteps = o.nsweep;

	for (unsigned int i = 0; i < o.nsweep; i++) {
		if (stop_flag && i > 0 && !steps[i].ios) {
			nsteps = i;
			break;
		}
	}
	/* --html -: the page alone on standard output, the summary on standard error */
	FILE *sum = o.html && !strcmp(o.html, "-") ? stderr : stdout;

	if (!rp_cluster__reports(rc)) {
		/* rank 0 reports the cluster */
	} else if (o.nsweep > 1) {
		struct cli_out ho;

		rp_steps_mark_knee(steps, nsteps);
		if (o.json) {
			rp_report_sweep_json(stdout, &info, steps, nsteps);
		} else {
			rp_cluster__report_head(rc, sum);
			rp_report_sweep_text(sum, &info, steps, nsteps);
		}
		if (o.html) {
			if (cli_out_open(&ho, o.html) < 0) {
				cli_err("replay: --html: %s", ho.why);
				goto cleanup;
			}
			rp_report_sweep_html(ho.fp, &info, steps, nsteps);
			if (cli_out_commit(&ho) < 0) {
				cli_err("replay: --html: %s", ho.why);
				goto cleanup;
			}
		}
	} else {
		info.scale = o.sweep[0];
		if (rp_cluster__multi(rc)) {
			info.fid = rp_cluster__fidelity(rc); /* the ranks' merged */
		} else if (rc) {
			info.fid = own_fid; /* one rank, or rank 0 lost: this rank's own */
		} else if (oc.fid) {
			rp_prefetch__stop(pf); /* the recorded side is complete, and still */
			info.fid = rp_fidelity__finish(oc.fid, st);
		}
		if (rp_cluster__multi(rc))
			info.scale = rp_cluster__copies(rc);
		if (o.json && rp_cluster__has_report(rc))
			report_json_cluster(rc, &info, st);
		else if (o.json)
			rp_report_json(stdout, &info, st);
		else {
			rp_cluster__report_head(rc, sum);
			rp_report_text(sum, &info, st);
			rp_cluster__report_text(rc, sum);
		}
		if (o.html) {
			struct cli_out ho;

			if (cli_out_open(&ho, o.html) < 0) {
				cli_err("replay: --html: %s", ho.why);
				goto cleanup;
			}
			rp_report_html(ho.fp, &info, st);
			if (cli_out_commit(&ho) < 0) {
				cli_err("replay: --html: %s", ho.why);
				goto cleanup;
			}
		}
	}
	fflush(stdout);
	if (finish_output(&oc, stop_flag, info.fid) < 0)
		goto cleanup;
	ret = st->errors ? BTAPE_EXIT_FAIL : BTAPE_EXIT_OK;
	if (st->errors)
		cli_err("replay: %" PRIu64 " I/Os failed (first: %s)", st->errors,
			strerror(-st->first_error));
cleanup:
	if (sigs) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	rp_outq__finish(oc.q);
	if (oc.w)
		btape_writer__abort(oc.w);
	if (e)
		eng->close(e);
	rp_prefetch__close(pf);
	rp_cluster__set_fidelity(rc, NULL); /* a rank leaving mid-step sends none (close) */
	rp_fidelity__free(oc.fid);
	if (!issued) /* refused before the first I/O: a file --create made goes too */
		rp_devices__discard_created(&s.dv);
	rp_devices__free(&s.dv);
	free(bufs);
	free(bufmem);
	free(bigs);
	free(bigmem);
	free(st);
	return ret;
}
