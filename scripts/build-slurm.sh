#!/usr/bin/env bash
# build-slurm.sh: obtain, build and install the Slurm that topognn is tested against.
#
# Slurm 24.11.5 comes from Debian's source packages (suite trixie): the upstream
# .orig.tar.gz is downloaded with `apt-get source --download-only`, its sha256 is
# checked, and it is configured and built out of tree, then installed into a
# project-local prefix. The configured source and build trees are kept: the
# topology plugin compiles against them (-I$SLURM_SRC -I$SLURM_BUILD).
#
# A finished build is reused when its stamp (version + sha256) matches, so a
# re-run takes seconds. Pass --force to rebuild anyway.
#
# Environment:
#   TOPOGNN_SLURM_PREFIX   install prefix        (default <repo>/.local/slurm)
#   TOPOGNN_SLURM_SRCDIR   source/build/cache dir (default <repo>/.local/slurm-src)
#   TOPOGNN_DEBIAN_MIRROR  Debian mirror URL     (default http://deb.debian.org/debian)
#   TOPOGNN_MAKE_JOBS      parallel make jobs    (default 2)
#
# On success it prints the paths and writes them, shell-sourceable, to
# $TOPOGNN_SLURM_PREFIX/topognn-slurm.env (SLURM_PREFIX, SLURM_SRC, SLURM_BUILD).
set -euo pipefail

readonly SLURM_VERSION="24.11.5"
readonly SLURM_ORIG="slurm-wlm_${SLURM_VERSION}.orig.tar.gz"
readonly SLURM_SHA256="e1a5547edd212c38b5e3230a284133f777b32746551f094aaa81cc4af375e332"
readonly DEBIAN_SUITE="trixie"
readonly APT_LIST="/etc/apt/sources.list.d/topognn-trixie-src.list"
# What configure needs for auth/slurm (libjwt) and slurmrestd (http-parser,
# json-c, yaml), plus the toolchain. munge is not needed, but 24.11's configure
# fails when it is absent unless told --without-munge.
readonly BUILD_DEPS=(build-essential pkg-config python3 dpkg-dev
    libjwt-dev libjson-c-dev libhttp-parser-dev libyaml-dev libssl-dev zlib1g-dev)

log() { printf '[build-slurm] %s\n' "$*"; }
die() { printf '[build-slurm] ERROR: %s\n' "$*" >&2; exit 1; }

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/.." && pwd)

prefix=${TOPOGNN_SLURM_PREFIX:-$repo_root/.local/slurm}
srcroot=${TOPOGNN_SLURM_SRCDIR:-$repo_root/.local/slurm-src}
mirror=${TOPOGNN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
jobs=${TOPOGNN_MAKE_JOBS:-2}
force=0

for arg in "$@"; do
    case "$arg" in
        --force) force=1 ;;
        -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

# Values that end up in a file or a command line must look like what they are.
[[ "$mirror" =~ ^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$ ]] \
    || die "TOPOGNN_DEBIAN_MIRROR is not a plain http(s) URL: $mirror"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "TOPOGNN_MAKE_JOBS must be a positive integer: $jobs"
case "$prefix" in /*) ;; *) die "TOPOGNN_SLURM_PREFIX must be absolute: $prefix" ;; esac
case "$srcroot" in /*) ;; *) die "TOPOGNN_SLURM_SRCDIR must be absolute: $srcroot" ;; esac

cache_dir="$srcroot/cache"
src_dir="$srcroot/slurm-$SLURM_VERSION"
build_dir="$srcroot/build-$SLURM_VERSION"
stamp="$prefix/.topognn-slurm-stamp"
env_file="$prefix/topognn-slurm.env"
want_stamp="version=$SLURM_VERSION sha256=$SLURM_SHA256 src=$src_dir build=$build_dir"

# A prefix that already holds this release, built from another source tree
# (another checkout sharing the install), is adopted rather than rebuilt when
# TOPOGNN_SLURM_SRCDIR was not given: rebuilding would reinstall Slurm under
# the daemons another checkout may be running.
if [[ $force -eq 0 && -z "${TOPOGNN_SLURM_SRCDIR:-}" && -f "$stamp" ]]; then
    read -r have_version have_sha have_src have_build < "$stamp" || true
    if [[ "$have_version $have_sha" == "version=$SLURM_VERSION sha256=$SLURM_SHA256" &&
          -d "${have_src#src=}" && -d "${have_build#build=}" ]]; then
        src_dir=${have_src#src=}
        build_dir=${have_build#build=}
        want_stamp="version=$SLURM_VERSION sha256=$SLURM_SHA256 src=$src_dir build=$build_dir"
    fi
fi

print_result() {
    log "Slurm $SLURM_VERSION ready"
    log "  SLURM_PREFIX=$prefix"
    log "  SLURM_SRC=$src_dir"
    log "  SLURM_BUILD=$build_dir"
    log "  env file: $env_file"
}

installed_ok() {
    [[ -x "$prefix/sbin/slurmctld" && -x "$prefix/sbin/slurmd" &&
       -x "$prefix/sbin/slurmrestd" && -f "$prefix/lib/slurm/auth_slurm.so" &&
       -f "$build_dir/config.h" && -f "$src_dir/configure" ]]
}

# ---- fast path: reuse a finished build -------------------------------------
if [[ $force -eq 0 && -f "$stamp" ]] && [[ "$(cat -- "$stamp")" == "$want_stamp" ]] && installed_ok; then
    log "reusing finished build (stamp $stamp matches version $SLURM_VERSION)"
    print_result
    exit 0
fi

started=$(date +%s)
log "building Slurm $SLURM_VERSION into $prefix (source/build under $srcroot)"
[[ $(id -u) -eq 0 ]] || die "must run as root (apt-get is used for the source and build deps)"

# ---- build dependencies ----------------------------------------------------
apt_updated=0
apt_update() {
    if [[ $apt_updated -eq 0 ]]; then
        log "apt-get update"
        apt-get update -qq
        apt_updated=1
    fi
}

missing=()
for pkg in "${BUILD_DEPS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
        missing+=("$pkg")
    fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
    apt_update
    log "installing build dependencies: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    log "build dependencies already installed"
fi

# ---- source tarball --------------------------------------------------------
sha_ok() { [[ -f "$1" ]] && [[ "$(sha256sum -- "$1" | cut -d' ' -f1)" == "$SLURM_SHA256" ]]; }

mkdir -p -- "$cache_dir"
if sha_ok "$cache_dir/$SLURM_ORIG"; then
    log "cached $SLURM_ORIG has the expected sha256"
else
    want_line="deb-src $mirror $DEBIAN_SUITE main"
    if [[ ! -f "$APT_LIST" ]] || [[ "$(cat -- "$APT_LIST")" != "$want_line" ]]; then
        log "adding $APT_LIST: $want_line"
        printf '%s\n' "$want_line" > "$APT_LIST"
        apt_updated=0
    fi
    apt_update
    log "apt-get source --download-only slurm-wlm/$DEBIAN_SUITE (into $cache_dir)"
    # The Debian patch tarball may fail to download; only the orig tarball matters.
    if ! (cd -- "$cache_dir" && apt-get -o APT::Sandbox::User=root source --download-only -qq "slurm-wlm/$DEBIAN_SUITE"); then
        log "apt-get source reported an error; checking whether the orig tarball arrived"
    fi
    [[ -f "$cache_dir/$SLURM_ORIG" ]] \
        || die "$SLURM_ORIG was not downloaded (is slurm-wlm $SLURM_VERSION still in $DEBIAN_SUITE?)"
    sha_ok "$cache_dir/$SLURM_ORIG" \
        || die "sha256 mismatch for $cache_dir/$SLURM_ORIG (want $SLURM_SHA256)"
    log "sha256 verified: $SLURM_SHA256"
fi

# ---- unpack (fresh, so a half-unpacked tree never survives) ----------------
if [[ ! -f "$src_dir/configure" || ! -f "$src_dir/.topognn-unpacked" ]]; then
    log "unpacking into $src_dir"
    rm -rf -- "$src_dir" "$build_dir"
    mkdir -p -- "$src_dir"
    tar -xzf "$cache_dir/$SLURM_ORIG" -C "$src_dir" --strip-components=1
    touch -- "$src_dir/.topognn-unpacked"
else
    log "source tree present: $src_dir"
fi

# ---- configure (out of tree) -----------------------------------------------
rm -f -- "$stamp"
mkdir -p -- "$build_dir"
if [[ ! -f "$build_dir/config.status" ]]; then
    log "configure (log: $build_dir/configure.out)"
    if ! (cd -- "$build_dir" && "$src_dir/configure" \
            --prefix="$prefix" \
            --sysconfdir="$prefix/etc" \
            --enable-multiple-slurmd \
            --without-munge \
            --disable-dependency-tracking \
            > configure.out 2>&1); then
        tail -n 40 -- "$build_dir/configure.out" >&2
        die "configure failed (full log: $build_dir/configure.out)"
    fi
else
    log "already configured: $build_dir"
fi

# configure silently drops optional features; fail now instead of after make.
grep -q '^#define HAVE_JWT 1' "$build_dir/config.h" \
    || die "configure did not find libjwt (auth/slurm, slurmrestd need it)"

# ---- build and install -----------------------------------------------------
log "make -j$jobs (log: $build_dir/make.out)"
if ! make -C "$build_dir" -j"$jobs" > "$build_dir/make.out" 2>&1; then
    tail -n 40 -- "$build_dir/make.out" >&2
    die "make failed (full log: $build_dir/make.out)"
fi
log "make install (log: $build_dir/install.out)"
if ! make -C "$build_dir" install > "$build_dir/install.out" 2>&1; then
    tail -n 40 -- "$build_dir/install.out" >&2
    die "make install failed (full log: $build_dir/install.out)"
fi

installed_ok || die "install incomplete: need slurmctld, slurmd, slurmrestd and auth_slurm.so under $prefix"

# ---- record what was built -------------------------------------------------
{
    printf '# written by scripts/build-slurm.sh\n'
    printf 'SLURM_VERSION=%q\n' "$SLURM_VERSION"
    printf 'SLURM_PREFIX=%q\n' "$prefix"
    printf 'SLURM_SRC=%q\n' "$src_dir"
    printf 'SLURM_BUILD=%q\n' "$build_dir"
} > "$env_file"
printf '%s' "$want_stamp" > "$stamp"

log "build took $(( $(date +%s) - started ))s"
print_result
