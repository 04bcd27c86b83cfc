#!/bin/bash
. "$BIOTAPE_SRC/tests/lib.sh"
skip "not written yet"
