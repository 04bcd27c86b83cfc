#!/usr/bin/env bash
# cmake --install puts the binary, both libraries, libbiotape_interop.a, the headers, the
# pkg-config files and the man page in place, and programs build against the installed libraries
# through pkg-config alone.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
build=$1
sanitize=${2:-OFF}
d=$(t_tmpdir) || exit 1
cmake --install "$build" --prefix "$d/usr" >/dev/null || fail "cmake --install"
libdir=$(ls -d "$d"/usr/lib*/ | head -1)
for f in usr/bin/biotape usr/include/biotape/btape.h usr/share/man/man1/biotape.1; do
	[ -e "$d/$f" ] || fail "not installed: $f"
done
# The library's public headers only, under its license; nothing of the tools' GPL-2.0-only
# common/ (libbiotape_common, hist.h, inflight.h, ...) is installed.
[ "$(cd "$d/usr/include/biotape" && echo *)" = "btape.h btape_interop.h" ] ||
	fail "installed headers: $(cd "$d/usr/include/biotape" && echo *)"
! grep -L 'SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)' "$d"/usr/include/biotape/* | grep -q . ||
	fail "an installed header is not under the library's license"
[ -z "$(find "$d" -name '*common*')" ] || fail "installed: $(find "$d" -name '*common*')"
ls "$libdir"/libbiotape.a "$libdir"/libbiotape.so* >/dev/null 2>&1 || \
	ls "$libdir"/*/libbiotape.a "$libdir"/*/libbiotape.so* >/dev/null 2>&1 || fail "libraries not installed"
pc=$(find "$d/usr" -name libbiotape.pc | head -1)
[ -n "$pc" ] || fail "libbiotape.pc not installed"
# zlib is the importers' (gzip input): libbiotape needs zstd and msgpack only.
! grep -q zlib "$pc" || fail "libbiotape.pc requires zlib: $(grep zlib "$pc")"
ls "$libdir"/libbiotape_interop.a >/dev/null 2>&1 || ls "$libdir"/*/libbiotape_interop.a \
	>/dev/null 2>&1 || fail "libbiotape_interop.a not installed"
ipc=$(find "$d/usr" -name libbiotape_interop.pc | head -1)
[ -n "$ipc" ] || fail "libbiotape_interop.pc not installed"
"$d/usr/bin/biotape" --version | grep -q '^biotape ' || fail "installed biotape --version"
man -l "$d/usr/share/man/man1/biotape.1" >/dev/null 2>&1 || command -v man >/dev/null || true
# The soname carries the library's ABI version (format/CMakeLists.txt), not the tool's.
so=$(find "$d/usr" -name 'libbiotape.so' | head -1)
soname=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = libbiotape.so.3 ] || fail "soname: '$soname', want libbiotape.so.3"
grep -q '^Version: 3\.' "$pc" || fail "libbiotape.pc: $(grep '^Version' "$pc")"
# The error rule of btape.h: a failed open writes its message into the caller's buffer.
cat > "$d/use.c" <<'C'
#include <btape.h>
#include <stdio.h>
int main(void)
{
	struct btape_reader *r;
	char msg[BTAPE_ERRMSG_LEN];

	if (btape_reader__open(&r, "/nonexistent.btape", msg, sizeof(msg)) >= 0)
		return 1;
	printf("%s %s\n", btape_op_name(BTAPE_OP_WRITE), msg);
	return 0;
}
C
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-prefix --cflags --libs libbiotape) || fail "pkg-config"
# A sanitized build installs a sanitized library: its users must load the same runtime.
case "$sanitize" in ON|on|1|TRUE|true) flags="-fsanitize=address,undefined $flags" ;; esac
cc "$d/use.c" -o "$d/use" $flags -Wl,-rpath,"$(dirname "$(find "$d/usr" -name 'libbiotape.so' | head -1)")" \
	|| fail "cannot build against the installed library"
[ "$("$d/use")" = "write /nonexistent.btape: No such file or directory" ] ||
	fail "program linked to the installed library misbehaves: $("$d/use")"
# The importers' library on top of it, through its own pkg-config file.
cat > "$d/use_interop.c" <<'C'
#include <btape_interop.h>
#include <stdio.h>
int main(void) { printf("%s\n", btape_fmt_name(BTAPE_FMT_BLKTRACE)); return 0; }
C
iflags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --define-prefix --static --cflags --libs \
	libbiotape_interop) || fail "pkg-config libbiotape_interop"
case "$sanitize" in ON|on|1|TRUE|true) iflags="-fsanitize=address,undefined $iflags" ;; esac
cc "$d/use_interop.c" -o "$d/use_interop" $iflags \
	-Wl,-rpath,"$(dirname "$(find "$d/usr" -name 'libbiotape.so' | head -1)")" \
	|| fail "cannot build against the installed interop library"
[ "$("$d/use_interop")" = blktrace ] || fail "program linked to the interop library misbehaves"
pass
