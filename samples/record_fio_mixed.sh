#!/bin/bash
# samples/fio-mixed.btape: a mixed random workload (70% reads; 4k/16k/64k; QD 8; 1750 + 750 IOPS for
# 10 s) from fio on a 256 MiB loop device, recorded at the request layer.
. "$(dirname "$0")/sample_lib.sh"
sample_loop 256
"$BIOTAPE" record -o "$HERE/fio-mixed.btape" -d "$LOOP" -- \
	fio --name=mixed --filename="$LOOP" --rw=randrw --rwmixread=70 \
	--bssplit=4k/60:16k/30:64k/10 --iodepth=8 --ioengine=io_uring --direct=1 \
	--rate_iops=1750,750 --time_based --runtime=10 --size=256M --norandommap \
	--output-format=terse >/dev/null
"$BIOTAPE" info "$HERE/fio-mixed.btape"
