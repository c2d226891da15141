#!/bin/sh
GOMAXPROCS=1 exec /tmp/pgcpu-g1/sqlfwd-cur "$@"
