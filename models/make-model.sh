#!/bin/sh
# Regenerate the shipped GNN ensemble (models/default.json and the member
# models it names) from fixed seeds: simulate five kinds of fabric and three
# seeds under the lookahead teacher told only run-time predictions
# (lookahead+pred, docs/simulator.md: its forks replay predicted, not true,
# run times) with --emit-training (every heavy decision it weighs is a
# sample, labelled by its objective), then train one model per training
# seed on all the samples. The hold gate (default-hold.json) comes from the
# same fabrics and seeds under lookahead-model+pred, the teacher that
# weighs holding a job against starting it (--emit-holds), trained by
# topognn-train --holds. Same machine, same inputs -> the same bytes
# (docs/model-card.md). Runs two simulations at a time.
#
#   make-model.sh SIM TRAIN TRACES_DIR FABRIC_DIR OUT_DIR
set -eu
SIM=$1 TRAIN=$2 DATA=$3 FABRICS=$4 OUT=$5
KTH=$DATA/KTH-SP2-1996-2.1-cln.swf.gz
SEEDS="1 2 3"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/topognn-model.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
n=0
emit() { # graph and sim options; runs in the background
	n=$((n + 1))
	echo "make-model: samples $n: $*" >&2
	"$SIM" "$@" --policies lookahead+pred --train-every 1 \
		--emit-training "$WORK/s$n.json" >/dev/null 2>"$WORK/s$n.log" &
	SAMPLES="${SAMPLES:-} --samples $WORK/s$n.json"
}
h=0
holds() { # the same, for the hold gate's samples
	h=$((h + 1))
	echo "make-model: hold samples $h: $*" >&2
	"$SIM" "$@" --policies lookahead-model+pred --emit-holds "$WORK/h$h.txt" \
		>/dev/null 2>"$WORK/h$h.log" &
	HOLDS="${HOLDS:-} --holds $WORK/h$h.txt"
}
fabrics() { # $1: emit or holds, $2: seed
	$1 --ibnetdiscover "$FABRICS/dgx-h100-superpod.ibnetdiscover" --trace "$KTH" \
		--jobs 2000 --seed "$2"
	$1 --fattree groups=8,hosts=32,rails=4,oversub=2 --trace "$KTH" --jobs 1500 \
		--scale 4 --seed "$2"
	wait
	$1 --fattree groups=8,hosts=32,rails=4,oversub=4 --trace "$KTH" --jobs 1500 \
		--scale 2 --seed "$2"
	$1 --fattree groups=4,hosts=72,rails=4,oversub=1,gpus=4,nvl=18,spines=8 \
		--gpus-per-host 4 --trace "$KTH" --jobs 1500 --scale 2 --seed "$2"
	wait
	$1 --fattree groups=16,hosts=32,rails=1,oversub=2,spines=24,sharp=8 \
		--sharp-share 0.5 --trace "$KTH" --jobs 1500 --scale 4 --seed "$2"
}
for seed in $SEEDS; do
	fabrics emit "$seed"
	wait
done
for seed in $SEEDS; do
	fabrics holds "$seed"
	wait
done
for i in $(seq 1 $n); do
	test -s "$WORK/s$i.json" || { cat "$WORK/s$i.log" >&2; exit 1; }
done
for i in $(seq 1 $h); do
	test -s "$WORK/h$i.txt" || { cat "$WORK/h$i.log" >&2; exit 1; }
done
members=""
for seed in $SEEDS; do
	# shellcheck disable=SC2086
	"$TRAIN" $SAMPLES --out "$OUT/default-$seed.json" --epochs 30 --hidden 16 \
		--head-hidden 16 --layers 2 --loss rank --batch 16 --lr 0.003 --seed "$seed" \
		>/dev/null &
	members="$members${members:+, }\"default-$seed.json\""
	[ "$seed" = 2 ] && wait
done
wait
for seed in $SEEDS; do test -s "$OUT/default-$seed.json"; done
# shellcheck disable=SC2086
"$TRAIN" $HOLDS --out "$OUT/default-hold.json"
printf '{"format": "topognn-ensemble", "version": 1,\n "models": [%s],\n "agreement": 1,\n "hold": "default-hold.json"}\n' \
	"$members" >"$OUT/default.json"
echo "make-model: wrote $OUT/default.json ($(echo $SEEDS | wc -w) models)" >&2
