#!/usr/bin/env bash
# The layer map of docs/HACKING.md, checked: every "..." include of a source file names a file
# of its own directory or of a directory that the map lets it include. Nothing reaches upward
# (a tool into cli/, the library into the tools) or sideways (one tool into another); and
# libbiotape and libbiotape_interop (format/) stay under their own license.
. "${BIOTAPE_SRC:?}/tests/lib.sh" || exit 1
cd "$BIOTAPE_SRC" || fail "cd $BIOTAPE_SRC"
# directory: the directories below it that it may include, in search order
declare -A may=(
	[format]=""
	[format/interop]="format"
	[common]="format"
	[bpf]="bpf/vmlinux/x86_64"
	[recorder]="common format format/interop bpf"
	[replayer]="common format"
	[analyze]="common format format/interop"
	[cli]="recorder replayer analyze common format format/interop"
)
# interop stands on the public API: of format/ it may include only these
interop_from_format="btape.h btape_le.h"
n=0
for dir in "${!may[@]}"; do
	for f in "$dir"/*.[ch]; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		case "$dir" in format*)
			grep -q 'SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)' "$f" ||
				fail "$f: not under the library's license (LGPL-2.1 OR BSD-2-Clause)"
		esac
		while IFS= read -r inc; do
			[ -e "$dir/$inc" ] && continue
			ok=0
			for below in ${may[$dir]}; do
				[ -e "$below/$inc" ] || continue
				if [ "$dir" = format/interop ] && [ "$below" = format ] &&
				   [[ " $interop_from_format " != *" $inc "* ]]; then
					fail "$f includes format/$inc: interop uses libbiotape's public API only"
				fi
				ok=1
				break
			done
			[ $ok = 1 ] && continue
			where=$(find format common recorder replayer analyze cli bpf -name "$(basename "$inc")" \
				-path "*$inc" 2>/dev/null | head -1)
			# not in the source tree: generated at build time (the BPF skeleton)
			[ -n "$where" ] || continue
			fail "$f includes \"$inc\" ($where), which $dir/ may not include"
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
done
[ "$n" -gt 60 ] || fail "found only $n source files"
pass "$n sources: every include follows the layer map"
