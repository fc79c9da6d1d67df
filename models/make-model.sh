#!/bin/sh
# Regenerate the shipped GNN ensemble (models/default.json and the member
# models it names) from fixed seeds: simulate five kinds of fabric and three
# seeds under the lookahead teacher told only run-time predictions
# (lookahead+pred, docs/simulator.md: its forks replay predicted, not true,
# run times) with --emit-training (every heavy decision it weighs is a
# sample, labelled by its objective), then train one model per training
# seed on all the samples. Same machine, same inputs -> the same bytes
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
for seed in $SEEDS; do
	emit --ibnetdiscover "$FABRICS/dgx-h100-superpod.ibnetdiscover" --trace "$KTH" \
		--jobs 2000 --seed "$seed"
	emit --fattree groups=8,hosts=32,rails=4,oversub=2 --trace "$KTH" --jobs 1500 \
		--scale 4 --seed "$seed"
	wait
	emit --fattree groups=8,hosts=32,rails=4,oversub=4 --trace "$KTH" --jobs 1500 \
		--scale 2 --seed "$seed"
	wait
	emit --fattree groups=4,hosts=72,rails=4,oversub=1,gpus=4,nvl=18,spines=8 \
		--gpus-per-host 4 --trace "$KTH" --jobs 1500 --scale 2 --seed "$seed"
	emit --fattree groups=16,hosts=32,rails=1,oversub=2,spines=24,sharp=8 --sharp-share 0.5 \
		--trace "$KTH" --jobs 1500 --scale 4 --seed "$seed"
	wait
done
wait
for i in $(seq 1 $n); do
	test -s "$WORK/s$i.json" || { cat "$WORK/s$i.log" >&2; exit 1; }
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
printf '{"format": "topognn-ensemble", "version": 1,\n "models": [%s],\n "agreement": 1}\n' \
	"$members" >"$OUT/default.json"
echo "make-model: wrote $OUT/default.json ($(echo $SEEDS | wc -w) models)" >&2
