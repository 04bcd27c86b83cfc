#!/bin/bash
# samples/untar-sync.btape: a file-system workload: extract a tarball of /usr/include (many
# small files) onto ext4 on a 1 GiB loop device, then sync. Most writes are page-cache
# writeback and journal commits (kworker, jbd2), so the trace is recorded without a pid filter.
. "$(dirname "$0")/sample_lib.sh"
tar -C /usr -cf "$WORK/include.tar" include
sample_loop 1024
sample_ext4
sync
"$BIOTAPE" record -o "$HERE/untar-sync.btape" -d "$LOOP" -- \
	sh -c "tar -C '$MNT' -xf '$WORK/include.tar' && sync"
"$BIOTAPE" info "$HERE/untar-sync.btape"
