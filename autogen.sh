#!/bin/sh
# Regenerate the autotools build system (configure, Makefile.in, libtool glue).
set -e
cd "$(dirname "$0")"
autoreconf --force --install --warnings=all
