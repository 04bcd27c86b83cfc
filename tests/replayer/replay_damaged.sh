#!/bin/bash
# biotape replay of a damaged trace (issue #15, item 12): whatever `biotape info` rejects, a
# replay refuses too, with one line and exit 2, before its first I/O: a footer that does not
# match the frames (rewritten with valid checksums), a damaged trailer, a chunk checksum. A
# cut-short trace (no footer) is no damage: info and replay both accept it. Then a sample of
# random mutants: replay rejects exactly those info rejects. File targets only (no root).
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
t_gen
command -v python3 >/dev/null || skip "needs python3"
command -v zstd >/dev/null || skip "needs zstd"
D=$(t_tmpdir) || exit 1

# 4 chunks, 30 % writes, one device of 8 MiB
"$GEN" -o "$D/t.btape" -n 200000 -r 200000 -p mix:70 -S $((8 << 20)) || fail "gen"

# mutate KIND IN OUT: rewrites the footer with a wrong total (valid checksums everywhere), or
# flips a byte in the trailer's checksum or in the first chunk's payload
mutate() {
	PYTHONPATH="$BIOTAPE_SRC/tests" PYTHONDONTWRITEBYTECODE=1 python3 - "$@" <<'PY'
import struct, subprocess, sys
from btape_frame import frame
kind, src, dst = sys.argv[1:4]
d = bytearray(open(src, 'rb').read())

foff = struct.unpack_from('<Q', d, len(d) - 24)[0]
clen, rlen = struct.unpack_from('<II', d, foff + 12)
if kind in ('events', 'count'):
    raw = bytearray(subprocess.run(['zstd', '-dcq'], input=bytes(d[foff + 28:foff + 28 + clen]),
                                   capture_output=True, check=True).stdout)
    if kind == 'events':
        at = raw.index(b'\xa6events') + 7          # the first key: the event total
    else:
        at = raw.index(b'\xabcount_by_op') + 12    # [reads, writes, ...]
        assert raw[at] == 0xdc or raw[at] & 0xf0 == 0x90
        at += 3 if raw[at] == 0xdc else 1
    assert raw[at] == 0xce, hex(raw[at])           # a uint32: add one
    struct.pack_into('>I', raw, at + 1, struct.unpack_from('>I', raw, at + 1)[0] + 1)
    comp = subprocess.run(['zstd', '-cq', '-3'], input=bytes(raw), capture_output=True,
                          check=True).stdout
    d = d[:foff] + frame(3, comp, len(raw)) + d[len(d) - 32:]  # same offset: trailer valid
elif kind == 'trailer':
    d[len(d) - 12] ^= 0x01
elif kind == 'chunk':
    off = 24 + 28 + struct.unpack_from('<I', d, 24 + 12)[0]  # after the metadata frame
    d[off + 28 + 100] ^= 0x10
open(dst, 'wb').write(d)
PY
}

# the trace is intact: info and replay accept it
"$BIOTAPE" info "$D/t.btape" >/dev/null || fail "info of the intact trace"
"$BIOTAPE" replay "$D/t.btape" --target "$D/null" --create auto --engine null --timing afap --no-progress \
	--writes-as-reads >/dev/null || fail "replay of the intact trace"

# a real write replay onto this file must not touch it when it refuses
head -c $((8 << 20)) /dev/zero | tr '\0' 'k' >"$D/keep"
sum=$(cksum <"$D/keep")

for kind in events count trailer chunk; do
	m=$D/$kind.btape
	mutate $kind "$D/t.btape" "$m" || fail "$kind: mutate"
	err=$("$BIOTAPE" info "$m" 2>&1 >/dev/null) && fail "$kind: info accepts the damage"
	case $kind in
	events | count) grep -q "footer does not match the frames" <<<"$err" ||
		fail "$kind: info: $err" ;;
	esac
	# replay: the null engine, and a real write replay (psync, through the page cache)
	for args in "--engine null --writes-as-reads" "--engine psync --write --buffered"; do
		rc=0
		err=$("$BIOTAPE" replay "$m" --target "$D/keep" $args --timing afap --no-progress \
			-o "$D/res.btape" 2>&1 >/dev/null) || rc=$?
		[ $rc = 2 ] || fail "$kind: replay $args: exit $rc, want 2 ($err)"
		[ "$(wc -l <<<"$err")" = 1 ] || fail "$kind: replay $args: want one line, got: $err"
		grep -q "^biotape: replay: " <<<"$err" || fail "$kind: replay: message format: $err"
		case $kind in
		events | count) grep -q "damaged trace: .*footer does not match the frames" \
			<<<"$err" || fail "$kind: replay: $err" ;;
		trailer) grep -q "damaged trace: .*trailer .*checksum mismatch" <<<"$err" ||
			fail "$kind: replay: $err" ;;
		chunk) grep -q "frame 1 at offset .*checksum mismatch" <<<"$err" ||
			fail "$kind: replay: $err" ;;
		esac
		[ "$(cksum <"$D/keep")" = "$sum" ] || fail "$kind: replay $args wrote to the target"
		[ ! -e "$D/res.btape" ] || fail "$kind: replay $args left a result trace"
		[ ! -e "$D/new" ] || fail "$kind: replay created a target"
	done
	# nor is a missing target created
	"$BIOTAPE" replay "$m" --target "$D/new" --create auto --buffered --writes-as-reads --no-progress \
		>/dev/null 2>&1 && fail "$kind: replay onto a new file accepts the damage"
	[ ! -e "$D/new" ] || fail "$kind: a refused replay created its target"
done

# cut short (a killed recorder: no footer): recovered, not damaged
size=$(stat -c %s "$D/t.btape")
head -c $((size - 2000)) "$D/t.btape" >"$D/cut.btape"
"$BIOTAPE" info "$D/cut.btape" >/dev/null || fail "info rejects a cut-short trace"
"$BIOTAPE" replay "$D/cut.btape" --target "$D/null" --engine null --timing afap \
	--no-progress --writes-as-reads >/dev/null || fail "replay rejects a cut-short trace"

# random single-bit flips (a third of them in the footer and trailer) and cuts: replay
# refuses exactly what info refuses, always with one line
python3 - "$D/t.btape" "$D/mut" <<'PY' || fail "mutants"
import random, sys
random.seed(15)
d = open(sys.argv[1], 'rb').read()
for i in range(24):
    b = bytearray(d)
    r = random.random()
    if r < 0.85:
        pos = random.randrange(len(b)) if r < 0.5 else len(b) - 1 - random.randrange(600)
        b[pos] ^= 1 << random.randrange(8)
    else:
        b = b[:random.randrange(len(b))]
    open('%s.%02d' % (sys.argv[2], i), 'wb').write(b)
PY
rejected=0
for m in "$D"/mut.*; do
	irc=0 rrc=0
	"$BIOTAPE" info "$m" >/dev/null 2>&1 || irc=$?
	err=$("$BIOTAPE" replay "$m" --target "$D/null" --engine null --timing afap --no-progress \
		--writes-as-reads 2>&1 >/dev/null) || rrc=$?
	[ $irc = 0 ] || rejected=$((rejected + 1))
	if [ $irc = 0 ]; then
		[ $rrc = 0 ] || fail "$(basename "$m"): info accepts, replay exit $rrc: $err"
	else
		[ $rrc = 2 ] || fail "$(basename "$m"): info exit $irc, replay exit $rrc"
		[ "$(wc -l <<<"$err")" = 1 ] || fail "$(basename "$m"): replay: more than a line: $err"
	fi
done
[ $rejected -ge 12 ] || fail "only $rejected of 24 mutants are damaged: the sample tests little"
pass
