#!/bin/sh
# layout core speed: every exact decision on a 256x256 fragment over 256
# threads must take under 5 ms (tilec layout bench prints the medians).
TILEC=${TILEC:-build/tilec}
exec "$TILEC" layout bench 21
