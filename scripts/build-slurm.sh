#!/usr/bin/env bash
# build-slurm.sh: obtain, build and install a Slurm release topognn is tested against.
#
# Usage: scripts/build-slurm.sh [--version 24.11.5|25.11.7|26.05.3] [--force]
#
# Slurm 24.11.5 (the default) comes from Debian's source packages (suite
# trixie): the upstream .orig.tar.gz is downloaded with `apt-get source
# --download-only` and its sha256 checked.
# Slurm 25.11.7 and 26.05.3 come from a local tarball when
# TOPOGNN_SLURM_TARBALL names one, or a directory holding it (with an optional
# SHA256SUMS file): SchedMD's release tarball slurm-VER.tar.bz2, or a `git
# archive` snapshot of the release tag (slurm-26-05-3-1.tar.gz). Without it
# the official tarball is downloaded from download.schedmd.com. Either way its
# sha256 must be one recorded below (or TOPOGNN_SLURM_SHA256); offline, the
# error says which tarball to provide.
# Each release is configured and built out of tree and installed into its own
# prefix. The configured source and build trees are kept: the plugins compile
# against them (-I$SLURM_SRC -I$SLURM_BUILD). For the 25.11 and 26.05
# releases only what a test cluster runs is built and installed (src/: the
# daemons, commands and plugins; not the man pages or contribs).
#
# A finished build is reused when its stamp (version + sha256) matches, so a
# re-run takes seconds. Pass --force to rebuild anyway.
#
# Environment:
#   TOPOGNN_SLURM_VERSION  release, as --version   (default 24.11.5)
#   TOPOGNN_SLURM_PREFIX   install prefix          (default <repo>/.local/slurm for
#                          24.11.5, <repo>/.local/slurm-VER for the others)
#   TOPOGNN_SLURM_SRCDIR   source/build/cache dir  (default <repo>/.local/slurm-src)
#   TOPOGNN_SLURM_TARBALL  tarball, or directory of tarballs (25.11.7, 26.05.3)
#   TOPOGNN_SLURM_SHA256   also accept this sha256 (e.g. SchedMD's tarball,
#                          checked against SchedMD's published sum)
#   TOPOGNN_DEBIAN_MIRROR  Debian mirror URL       (default http://deb.debian.org/debian)
#   TOPOGNN_MAKE_JOBS      parallel make jobs      (default 2)
#
# On success it prints the paths and writes them, shell-sourceable, to
# $TOPOGNN_SLURM_PREFIX/topognn-slurm.env (SLURM_VERSION, SLURM_PREFIX,
# SLURM_SRC, SLURM_BUILD).
set -euo pipefail

readonly SUPPORTED_VERSIONS="24.11.5 25.11.7 26.05.3"
# The sha256 of each tarball accepted. 24.11.5: Debian's orig tarball. 25.11.7
# and 26.05.3: the `git archive` snapshots of SchedMD's tags slurm-25-11-7-1
# and slurm-26-05-3-1 (they include the generated configure, as SchedMD's git
# does). SchedMD's release tarballs are accepted with TOPOGNN_SLURM_SHA256
# until their sums are recorded here: they cannot be yet, the project was
# built offline and has never downloaded them (docs/admin-guide.md).
declare -A TARBALL_SHA256=(
    [24.11.5]="e1a5547edd212c38b5e3230a284133f777b32746551f094aaa81cc4af375e332"
    [25.11.7]="2041f9e7007dfb60e2a299aa6d81e005dfb2862951de54f759066ae921777598"
    [26.05.3]="83222a5dc8c58643751bb46704860017282148d086d2b3ca9e30599536365c28"
)
readonly SCHEDMD_URL="https://download.schedmd.com/slurm"
readonly DEBIAN_SUITE="trixie"
readonly APT_LIST="/etc/apt/sources.list.d/topognn-trixie-src.list"
# What configure needs for auth/slurm (libjwt) and slurmrestd (http-parser,
# json-c, yaml), plus the toolchain. munge is not needed, but 24.11's configure
# fails when it is absent unless told --without-munge.
readonly BUILD_DEPS=(build-essential pkg-config python3 dpkg-dev curl bzip2
    libjwt-dev libjson-c-dev libhttp-parser-dev libyaml-dev libssl-dev zlib1g-dev)

log() { printf '[build-slurm] %s\n' "$*"; }
die() { printf '[build-slurm] ERROR: %s\n' "$*" >&2; exit 1; }

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/.." && pwd)

SLURM_VERSION=${TOPOGNN_SLURM_VERSION:-24.11.5}
force=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --force) force=1 ;;
        --version)
            [[ $# -ge 2 ]] || die "--version needs a release (one of: $SUPPORTED_VERSIONS)"
            SLURM_VERSION=$2
            shift ;;
        --version=*) SLURM_VERSION=${1#--version=} ;;
        -h|--help) sed -n '2,37p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done
case " $SUPPORTED_VERSIONS " in
    *" $SLURM_VERSION "*) ;;
    *) die "Slurm release '$SLURM_VERSION' is not one this script builds (one of: $SUPPORTED_VERSIONS)" ;;
esac
readonly SLURM_VERSION
from_debian=0
[[ "$SLURM_VERSION" == 24.11.* ]] && from_debian=1

accepted_sha=${TARBALL_SHA256[$SLURM_VERSION]}
if [[ -n "${TOPOGNN_SLURM_SHA256:-}" ]]; then
    [[ "$TOPOGNN_SLURM_SHA256" =~ ^[0-9a-f]{64}$ ]] \
        || die "TOPOGNN_SLURM_SHA256 is not a sha256 (64 lowercase hex digits): $TOPOGNN_SLURM_SHA256"
    accepted_sha="$accepted_sha $TOPOGNN_SLURM_SHA256"
fi

if [[ $from_debian -eq 1 ]]; then
    prefix=${TOPOGNN_SLURM_PREFIX:-$repo_root/.local/slurm}
else
    prefix=${TOPOGNN_SLURM_PREFIX:-$repo_root/.local/slurm-$SLURM_VERSION}
fi
srcroot=${TOPOGNN_SLURM_SRCDIR:-$repo_root/.local/slurm-src}
mirror=${TOPOGNN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
jobs=${TOPOGNN_MAKE_JOBS:-2}
tarball_src=${TOPOGNN_SLURM_TARBALL:-}

# Values that end up in a file or a command line must look like what they are.
[[ "$mirror" =~ ^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$ ]] \
    || die "TOPOGNN_DEBIAN_MIRROR is not a plain http(s) URL: $mirror"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "TOPOGNN_MAKE_JOBS must be a positive integer: $jobs"
case "$prefix" in /*) ;; *) die "TOPOGNN_SLURM_PREFIX must be absolute: $prefix" ;; esac
case "$srcroot" in /*) ;; *) die "TOPOGNN_SLURM_SRCDIR must be absolute: $srcroot" ;; esac
if [[ -n "$tarball_src" && ! -e "$tarball_src" ]]; then
    die "TOPOGNN_SLURM_TARBALL does not exist: $tarball_src"
fi

cache_dir="$srcroot/cache"
src_dir="$srcroot/slurm-$SLURM_VERSION"
build_dir="$srcroot/build-$SLURM_VERSION"
stamp="$prefix/.topognn-slurm-stamp"
env_file="$prefix/topognn-slurm.env"
# The tag snapshot's name: 26.05.3 -> slurm-26-05-3-1.tar.gz.
snapshot_name="slurm-${SLURM_VERSION//./-}-1.tar.gz"
official_name="slurm-$SLURM_VERSION.tar.bz2"

sha_of() { sha256sum -- "$1" | cut -d' ' -f1; }
sha_accepted() {
    local sum
    [[ -f "$1" ]] || return 1
    sum=$(sha_of "$1")
    case " $accepted_sha " in *" $sum "*) return 0 ;; esac
    return 1
}

# The stamp names the release and the sha256 of the tarball it was built
# from; any accepted tarball of the release matches.
stamp_matches() {
    local have_version have_sha
    [[ -f "$stamp" ]] || return 1
    read -r have_version have_sha _ < "$stamp" || true
    [[ "$have_version" == "version=$SLURM_VERSION" ]] || return 1
    case " $accepted_sha " in *" ${have_sha#sha256=} "*) return 0 ;; esac
    return 1
}

# Each release has its own prefix: never install over another release.
if [[ -f "$stamp" ]]; then
    read -r have_version _ < "$stamp" || true
    [[ "$have_version" == "version=$SLURM_VERSION" ]] \
        || die "$prefix holds Slurm ${have_version#version=}, not $SLURM_VERSION: give each release its own TOPOGNN_SLURM_PREFIX (e.g. $(dirname -- "$prefix")/slurm-$SLURM_VERSION)"
fi

# A prefix that already holds this release, built from another source tree
# (another checkout sharing the install), is adopted rather than rebuilt when
# TOPOGNN_SLURM_SRCDIR was not given: rebuilding would reinstall Slurm under
# the daemons another checkout may be running.
if [[ $force -eq 0 && -z "${TOPOGNN_SLURM_SRCDIR:-}" ]] && stamp_matches; then
    read -r _ _ have_src have_build < "$stamp" || true
    if [[ -d "${have_src#src=}" && -d "${have_build#build=}" ]]; then
        src_dir=${have_src#src=}
        build_dir=${have_build#build=}
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
       -x "$prefix/bin/srun" && -x "$prefix/bin/scontrol" &&
       -f "$build_dir/config.h" && -f "$build_dir/slurm/slurm_version.h" &&
       -f "$src_dir/configure" ]]
}

# ---- fast path: reuse a finished build -------------------------------------
if [[ $force -eq 0 ]] && stamp_matches; then
    read -r _ _ have_src have_build < "$stamp" || true
    if [[ "${have_src#src=}" == "$src_dir" && "${have_build#build=}" == "$build_dir" ]] && installed_ok; then
        log "reusing finished build (stamp $stamp matches version $SLURM_VERSION)"
        print_result
        exit 0
    fi
fi

started=$(date +%s)
log "building Slurm $SLURM_VERSION into $prefix (source/build under $srcroot)"

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
    [[ $(id -u) -eq 0 ]] || die "must run as root to install the build dependencies: ${missing[*]}"
    apt_update
    log "installing build dependencies: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    log "build dependencies already installed"
fi

mkdir -p -- "$cache_dir"

# ---- source tarball: Debian (24.11) ----------------------------------------
fetch_debian() {
    local orig="slurm-wlm_${SLURM_VERSION}.orig.tar.gz" want_line
    tarball="$cache_dir/$orig"
    if sha_accepted "$tarball"; then
        log "cached $orig has the expected sha256"
        return
    fi
    [[ $(id -u) -eq 0 ]] || die "must run as root (apt-get source is used for $orig)"
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
    [[ -f "$tarball" ]] \
        || die "$orig was not downloaded (is slurm-wlm $SLURM_VERSION still in $DEBIAN_SUITE?)"
    sha_accepted "$tarball" \
        || die "sha256 mismatch for $tarball (want ${TARBALL_SHA256[$SLURM_VERSION]})"
    log "sha256 verified: $(sha_of "$tarball")"
}

# ---- source tarball: local or SchedMD (25.11, 26.05) -----------------------
need_tarball_msg() {
    printf 'provide Slurm %s as a local tarball: TOPOGNN_SLURM_TARBALL=FILE or DIR holding %s (sha256 %s, a git archive of SchedMD tag slurm-%s-1) or %s (SchedMD release tarball; set TOPOGNN_SLURM_SHA256 to its published sha256)' \
        "$SLURM_VERSION" "$snapshot_name" "${TARBALL_SHA256[$SLURM_VERSION]}" \
        "${SLURM_VERSION//./-}" "$official_name"
}

fetch_release() {
    local cand=() f sums sum name
    if [[ -n "$tarball_src" ]]; then
        if [[ -d "$tarball_src" ]]; then
            for name in "$snapshot_name" "$official_name"; do
                [[ -f "$tarball_src/$name" ]] && cand+=("$tarball_src/$name")
            done
            [[ ${#cand[@]} -gt 0 ]] \
                || die "TOPOGNN_SLURM_TARBALL=$tarball_src holds neither $snapshot_name nor $official_name; $(need_tarball_msg)"
            sums="$tarball_src/SHA256SUMS"
        else
            cand=("$tarball_src")
            sums=
        fi
        for f in "${cand[@]}"; do
            sum=$(sha_of "$f")
            # A SHA256SUMS beside the tarball must agree with it too.
            if [[ -n "$sums" && -f "$sums" ]] &&
               grep -q "  $(basename -- "$f")\$" "$sums" &&
               ! grep -q "^$sum  $(basename -- "$f")\$" "$sums"; then
                die "$f does not match its line in $sums (sha256 $sum)"
            fi
            if sha_accepted "$f"; then
                tarball="$cache_dir/$(basename -- "$f")"
                [[ "$f" -ef "$tarball" ]] || cp -- "$f" "$tarball"
                log "tarball $f: sha256 verified ($sum)"
                return
            fi
            log "tarball $f: sha256 $sum is not one recorded for Slurm $SLURM_VERSION"
        done
        die "no tarball with an accepted sha256 in $tarball_src; $(need_tarball_msg)"
    fi
    for name in "$snapshot_name" "$official_name"; do
        if sha_accepted "$cache_dir/$name"; then
            tarball="$cache_dir/$name"
            log "cached $name has an accepted sha256"
            return
        fi
    done
    tarball="$cache_dir/$official_name"
    log "downloading $SCHEDMD_URL/$official_name"
    if ! curl -fsSL --connect-timeout 20 --max-time 600 -o "$tarball.part" \
            "$SCHEDMD_URL/$official_name"; then
        rm -f -- "$tarball.part"
        die "cannot download $SCHEDMD_URL/$official_name (offline?); $(need_tarball_msg)"
    fi
    sum=$(sha_of "$tarball.part")
    if ! case " $accepted_sha " in *" $sum "*) true ;; *) false ;; esac; then
        rm -f -- "$tarball.part"
        die "downloaded $official_name has sha256 $sum, which is not recorded for Slurm $SLURM_VERSION; check it against SchedMD's published sum and rerun with TOPOGNN_SLURM_SHA256=$sum"
    fi
    mv -- "$tarball.part" "$tarball"
    log "sha256 verified: $sum"
}

tarball=
if [[ $from_debian -eq 1 ]]; then
    fetch_debian
else
    fetch_release
fi
tarball_sha=$(sha_of "$tarball")
want_stamp="version=$SLURM_VERSION sha256=$tarball_sha src=$src_dir build=$build_dir"

# ---- unpack (fresh, so a half-unpacked tree never survives) ----------------
# .topognn-unpacked records the tarball's sha256: another tarball of the
# same release (snapshot vs. SchedMD's) unpacks afresh.
# An empty marker (written by earlier versions of this script) stands for the
# one tarball they used, which the stamp then names.
unpacked_ok() {
    local mark="$src_dir/.topognn-unpacked"
    [[ -f "$src_dir/configure" && -f "$mark" ]] || return 1
    [[ ! -s "$mark" || "$(cat -- "$mark")" == "$tarball_sha" ]]
}
if ! unpacked_ok; then
    log "unpacking $(basename -- "$tarball") into $src_dir"
    rm -rf -- "$src_dir" "$build_dir"
    mkdir -p -- "$src_dir"
    case "$tarball" in
        *.bz2) tar -xjf "$tarball" -C "$src_dir" --strip-components=1 ;;
        *) tar -xzf "$tarball" -C "$src_dir" --strip-components=1 ;;
    esac
    printf '%s\n' "$tarball_sha" > "$src_dir/.topognn-unpacked"
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
# 24.11 builds and installs everything, as before. The newer releases build
# and install src/ (daemons, commands, libraries, plugins) and the public
# headers only: no man pages, HTML or contribs, which no test uses.
if [[ $from_debian -eq 1 ]]; then
    make_dirs=("$build_dir")
    install_targets=()
else
    make_dirs=("$build_dir/src")
    install_targets=(install-pkgincludeHEADERS)
fi
t0=$(date +%s)
log "make -j$jobs in ${make_dirs[*]} (log: $build_dir/make.out)"
if ! make -C "${make_dirs[0]}" -j"$jobs" > "$build_dir/make.out" 2>&1; then
    tail -n 40 -- "$build_dir/make.out" >&2
    die "make failed (full log: $build_dir/make.out)"
fi
log "make took $(( $(date +%s) - t0 ))s"
log "make install (log: $build_dir/install.out)"
if ! { make -C "${make_dirs[0]}" install &&
       { [[ ${#install_targets[@]} -eq 0 ]] ||
         make -C "$build_dir" "${install_targets[@]}"; }; } > "$build_dir/install.out" 2>&1; then
    tail -n 40 -- "$build_dir/install.out" >&2
    die "make install failed (full log: $build_dir/install.out)"
fi

installed_ok || die "install incomplete: need slurmctld, slurmd, slurmrestd, srun, scontrol and auth_slurm.so under $prefix"

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
