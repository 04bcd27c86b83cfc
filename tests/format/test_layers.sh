#!/usr/bin/env bash
# libbiotape stands alone under its own license: every source file under format/ says
# (LGPL-2.1 OR BSD-2-Clause), and every "..." include there names a file of format/ itself, so
# the library never reaches up into the tools' GPL-2.0-only code (common/, analyze/, ...).
# libbiotape_interop (format/interop/) includes only its own files, btape.h and btape_le.h (the
# public API and the byte-order helper), and libbiotape includes nothing of interop.
. "$BIOTAPE_SRC/tests/lib.sh"
lib=$BIOTAPE_SRC/format
n=0
while IFS= read -r f; do
	n=$((n + 1))
	grep -q 'SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)' "$f" ||
		fail "${f#"$BIOTAPE_SRC"/}: not under the library's license (LGPL-2.1 OR BSD-2-Clause)"
	while IFS= read -r inc; do
		case "$f" in
		"$lib"/interop/*)
			# libbiotape_interop is built on libbiotape's public API alone: its own
			# files, btape.h and the byte-order helper, never btape_internal.h
			[ -e "$lib/interop/$inc" ] || [ "$inc" = btape.h ] || [ "$inc" = btape_le.h ] ||
				fail "${f#"$BIOTAPE_SRC"/}: includes \"$inc\" (interop: its own" \
				     "files, btape.h and btape_le.h only)"
			;;
		*)
			# libbiotape itself knows nothing of the importers above it
			[ -e "$(dirname "$f")/$inc" ] ||
				fail "${f#"$BIOTAPE_SRC"/}: includes \"$inc\", which is not part of the library"
			;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find "$lib" -name '*.[ch]')
[ "$n" -gt 10 ] || fail "found only $n source files under $lib"
pass "$n library sources: the library's license, includes of the library only, interop on the public API"
