/* TEMPORARY: replaced by the real format library. */
#include "btape.h"
#include <errno.h>
#define STUB(ret, name, args) __attribute__((visibility("default"))) ret name args { return -ENOSYS; }
const char *btape_op_name(unsigned int op) { return "?"; }
STUB(int, btape_op_parse, (const char *n))
const char *btape_flags_str(uint32_t f, char *b, size_t l) { return ""; }
STUB(int, btape_meta__copy, (struct btape_meta *d, const struct btape_meta *s))
void btape_meta__free(struct btape_meta *m) {}
STUB(int, btape_meta__add_device, (struct btape_meta *m, const struct btape_device *d))
STUB(int, btape_meta__add_tag, (struct btape_meta *m, const char *k, const char *v))
STUB(int, btape_writer__open, (struct btape_writer **w, const char *p, const struct btape_meta *m, const struct btape_writer_opts *o))
STUB(int, btape_writer__open_direct, (struct btape_writer **w, const char *p, const struct btape_meta *m, const struct btape_writer_opts *o))
STUB(int, btape_writer__open_fd, (struct btape_writer **w, int fd, const struct btape_meta *m, const struct btape_writer_opts *o))
STUB(int, btape_writer__add, (struct btape_writer *w, const struct btape_event *e))
STUB(int, btape_writer__advance, (struct btape_writer *w, uint64_t n))
STUB(int, btape_writer__flush, (struct btape_writer *w))
void btape_writer__add_lost(struct btape_writer *w, uint64_t a, uint64_t b, uint64_t c) {}
uint64_t btape_writer__bytes(const struct btape_writer *w) { return 0; }
uint64_t btape_writer__events(const struct btape_writer *w) { return 0; }
STUB(int, btape_writer__close, (struct btape_writer *w))
void btape_writer__abort(struct btape_writer *w) {}
const char *btape_writer__errmsg(const struct btape_writer *w) { return "not implemented"; }
STUB(int, btape_reader__open, (struct btape_reader **r, const char *p, const char **e))
void btape_reader__close(struct btape_reader *r) {}
const struct btape_meta *btape_reader__meta(const struct btape_reader *r) { return 0; }
STUB(int, btape_reader__summary, (struct btape_reader *r, struct btape_summary *s))
STUB(int, btape_reader__next, (struct btape_reader *r, struct btape_event *e))
STUB(int, btape_reader__next_batch, (struct btape_reader *r, const struct btape_event **e))
STUB(int, btape_reader__seek, (struct btape_reader *r, uint64_t n))
STUB(int, btape_reader__verify, (struct btape_reader *r))
const char *btape_reader__errmsg(const struct btape_reader *r) { return "not implemented"; }
