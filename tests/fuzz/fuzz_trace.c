// SPDX-License-Identifier: GPL-2.0-only
/* A fuzz input as a trace: fuzz_trace.h. */
#include "fuzz_trace.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btape.h"

/* One event of a structured input, little-endian, packed; a short tail reads as zeros. */
struct rec {
	uint32_t gap;	   /* issue time after the previous event, ns, << (shift & 31) */
	uint8_t shift;	   /* bits 0-4: the gap's shift; 5-7: device (mod the devices) */
	uint8_t op;	   /* bits 0-3: op; 4-7: which of complete, pid, qd, comm are present */
	uint8_t sector[6]; /* first sector (48 bits) */
	uint32_t bytes;	   /* as given: 0, odd, or up to 4 GiB - 1 */
	uint32_t latency;  /* complete - issue, ns, << (shift & 15) */
	uint16_t pid;
	uint8_t qd;
	uint8_t flags; /* BTAPE_FLAG_* bits (low 8) */
} __attribute__((packed));

/* The structured input as a trace in fd: 1-4 devices (the first byte), then struct recs. */
static int write_events(int fd, const uint8_t *data, size_t size, unsigned int max_dev,
			const char *host)
{
	static const char *comms[] = {"postgres", "kworker/0:1", "a,b \"q\"\nc",
				      "\xc3\xa9t\xe9 \x1b[0m"};
	struct btape_meta meta = {0};
	struct btape_device dev = {.dev_t_major = 7, .logical_block = 512, .physical_block = 4096};
	struct btape_writer *w = NULL;
	char msg[BTAPE_ERRMSG_LEN];
	unsigned int ndev = (size ? (data[0] & 3) : 0) % max_dev + 1;
	uint64_t t = 1000000000ull;
	int err = 0;

	snprintf(meta.tool, sizeof(meta.tool), "fuzz");
	snprintf(meta.source, sizeof(meta.source), "synthetic");
	snprintf(meta.hostname, sizeof(meta.hostname), "%s", host);
	for (unsigned int d = 0; d < ndev; d++) {
		snprintf(dev.name, sizeof(dev.name), "loop%u", d);
		dev.dev_t_minor = d;
		/* a known size on even devices, as small as 1 MiB from the first byte */
		dev.size_bytes = d % 2 ? 0 : (1ull << 20) << (size ? data[0] >> 2 & 31 : 0);
		if (btape_meta_add_device(&meta, &dev) < 0) {
			btape_meta_free(&meta);
			return -1;
		}
	}
	if (btape_writer__open_fd(&w, fd, &meta, NULL, msg, sizeof(msg))) {
		btape_meta_free(&meta);
		return -1;
	}
	for (size_t off = 1; off < size && !err; off += sizeof(struct rec)) {
		struct rec r = {0};
		struct btape_event ev = {0};
		uint64_t sector = 0;

		memcpy(&r, data + off, size - off < sizeof(r) ? size - off : sizeof(r));
		memcpy(&sector, r.sector, sizeof(r.sector));
		t += (uint64_t)r.gap << (r.shift & 31);
		ev.issue_ns = t;
		ev.dev = (r.shift >> 5) % ndev;
		ev.op = r.op & 15;
		ev.sector = sector;
		ev.bytes = r.bytes;
		if (!btape_extent_ok(ev.sector, ev.bytes))
			continue;
		ev.present = BTAPE_HAS_FLAGS;
		ev.flags = r.flags;
		if (r.op & 0x10) {
			ev.present |= BTAPE_HAS_COMPLETE;
			ev.complete_ns = t + ((uint64_t)r.latency << (r.shift & 15));
		}
		if (r.op & 0x20) {
			ev.present |= BTAPE_HAS_PID | BTAPE_HAS_TID;
			ev.pid = ev.tid = r.pid;
		}
		if (r.op & 0x40) {
			ev.present |= BTAPE_HAS_QD;
			ev.qd = r.qd;
		}
		if (r.op & 0x80) {
			ev.present |= BTAPE_HAS_COMM;
			ev.comm = comms[r.pid & 3];
		}
		err = btape_writer__add(w, &ev);
	}
	if (btape_writer__close(w, msg, sizeof(msg)))
		err = -1;
	btape_meta_free(&meta);
	return err ? -1 : 0;
}

int fuzz_trace(const uint8_t *data, size_t size, unsigned int max_dev, const char *host, char *path,
	       size_t len)
{
	size_t off = 0;
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	snprintf(path, len, "/proc/self/fd/%d", fd);
	if (size >= 4 && memcmp(data, "\x28\xb5\x2f\xfd", 4) != 0 &&
	    memcmp(data, "\x5a\x2a\x4d\x18", 4) != 0) {
		if (write_events(fd, data, size, max_dev ? max_dev : 1, host ? host : "fuzz") == 0)
			return fd;
		close(fd);
		return -1;
	}
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);

		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	return fd;
}

long long fuzz_scan(const char *path, uint64_t *max_bytes)
{
	struct btape_reader *r = NULL;
	struct btape_event ev;
	char msg[BTAPE_ERRMSG_LEN];
	long long n = 0;
	int rc;

	*max_bytes = 0;
	if (btape_reader__open(&r, path, msg, sizeof(msg)))
		return -1;
	while ((rc = btape_reader__next(r, &ev)) != 0) { /* errors are resumable */
		if (rc < 0)
			continue;
		n++;
		if (ev.bytes > *max_bytes)
			*max_bytes = ev.bytes;
	}
	btape_reader__close(r);
	return n;
}

int fuzz_run(int (*cmd)(int, char **), ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, cmd);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	return cmd(argc, argv);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	(void)argc;
	(void)argv;
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	return 0;
}
