#!/usr/bin/env bash
# A trace is input: its names (a comm, a device id, a host) are whatever its maker put there.
# One with ESC sequences in them (here from a CSV: a device id that retitles the terminal, a
# comm that clears it and turns it red) had dump, info, analyze, compare and profile write the
# sequences to the terminal as they were, and an error naming the device to stderr. Text for a
# person now has every control byte but newline and tab as '?' (cli_text_stream(), and
# cli_err() for one-line messages); CSV keeps every byte (it must come back), JSON escapes them.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
D=$(t_tmpdir) || exit 1
ESC=$'\033' BEL=$'\a'
printf 'issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,flags,error,pid,tid,comm,cgroup,cpu,qd\n1000,2000,,\033]0;pwned\007dev,8,4096,read,,,5,5,\033[2J\033[31mevil,,,\n2000,3000,,\033]0;pwned\007dev,16,4096,write,,,5,5,\033[2J\033[31mevil,,,\n' >"$D/esc.csv"
"$BIOTAPE" convert -q "$D/esc.csv" "$D/esc.btape" || fail "convert"
clean() { # WHAT FILE: no ESC or BEL in FILE, and the name is there, sanitized
	! grep -aq "[$ESC$BEL]" "$2" || fail "$1: a control byte reached the output: $(od -c "$2" | head -5)"
}
"$BIOTAPE" dump "$D/esc.btape" >"$D/dump.txt" || fail "dump"
clean dump "$D/dump.txt"
grep -q '?\]0;pwned?dev' "$D/dump.txt" && grep -q '?\[2J?\[31mevil' "$D/dump.txt" ||
	fail "dump: the names are not there as '?': $(cat "$D/dump.txt")"
"$BIOTAPE" info "$D/esc.btape" >"$D/info.txt" || fail "info"
clean info "$D/info.txt"
grep -q '?\]0;pwned?dev' "$D/info.txt" || fail "info: no device row: $(cat "$D/info.txt")"
"$BIOTAPE" analyze "$D/esc.btape" >"$D/an.txt" || fail "analyze"
clean analyze "$D/an.txt"
grep -q '?\[2J?\[31mevil' "$D/an.txt" || fail "analyze: no process row: $(cat "$D/an.txt")"
"$BIOTAPE" compare "$D/esc.btape" "$D/esc.btape" >"$D/cmp.txt" || fail "compare"
clean compare "$D/cmp.txt"
grep -q 'B = .*esc.btape (2 events)' "$D/cmp.txt" || fail "compare: no header: $(cat "$D/cmp.txt")"
"$BIOTAPE" profile --per-process "$D/esc.btape" >"$D/p.fio" 2>/dev/null || fail "profile"
clean profile "$D/p.fio"
grep -q '^\[pid5-__2J__31mevil\]$' "$D/p.fio" || fail "profile: job name: $(grep '^\[' "$D/p.fio")"
# a job name is a line of the job file: a comm holding newlines (a CSV record across lines)
# added a line of its own ("filename=/a": a comm keeps 16 bytes), which sends the job to
# another file than the TARGET the user names
printf '%s\n' 'issue_ns,complete_ns,insert_ns,dev,sector,bytes,op,flags,error,pid,tid,comm,cgroup,cpu,qd' \
	'1000,2000,,0,8,4096,write,,,5,5,"x]' 'filename=/a' '[",,,' >"$D/inject.csv"
"$BIOTAPE" convert -q "$D/inject.csv" "$D/inject.btape" || fail "convert inject"
"$BIOTAPE" profile --per-process "$D/inject.btape" >"$D/inj.fio" 2>/dev/null || fail "profile inject"
! grep -q '^filename=/' "$D/inj.fio" || fail "profile: a comm added a line: $(cat "$D/inj.fio")"
grep -q '^\[pid5-x__filename__a__\]$' "$D/inj.fio" || fail "profile: $(grep '^\[' "$D/inj.fio")"
# an error line naming the device: one line, no control byte
truncate -s 4096 "$D/tiny.img"
"$BIOTAPE" replay "$D/esc.btape" --target "$D/tiny.img" --writes-as-reads --no-progress >/dev/null \
	2>"$D/err" &&
	fail "replay past the end of a 4 KiB target: exit 0"
clean "replay's error" "$D/err"
grep -q 'pwned' "$D/err" || fail "replay's error does not name the device: $(cat "$D/err")"
# CSV gives every byte back; JSON escapes them
"$BIOTAPE" dump --csv "$D/esc.btape" | tail -n +2 | cut -d, -f12 >"$D/back.comm"
tail -n +2 "$D/esc.csv" | cut -d, -f12 | cmp -s - "$D/back.comm" ||
	fail "csv: the comms did not come back byte for byte"
"$BIOTAPE" dump --json "$D/esc.btape" >"$D/d.json" || fail "dump --json"
clean "dump --json" "$D/d.json"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$D/d.json" 2>/dev/null ||
	! command -v python3 >/dev/null || fail "dump --json: not JSON lines"
pass "names with control bytes reach no terminal; CSV keeps them"
