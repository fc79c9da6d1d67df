#!/bin/sh
# Regenerate the shipped GNN model (models/default.json) from fixed seeds:
# simulate several fabrics and seeds with --emit-training, then train on all
# the samples. Same machine, same inputs -> the same bytes (docs/model-card.md).
#
#   make-model.sh SIM TRAIN TRACES_DIR FABRIC_DIR OUT
set -eu
SIM=$1 TRAIN=$2 DATA=$3 FABRICS=$4 OUT=$5
KTH=$DATA/KTH-SP2-1996-2.1-cln.swf.gz
WORK=$(mktemp -d "${TMPDIR:-/tmp}/topognn-model.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
n=0
emit() { # name, graph options..., then sim options
	n=$((n + 1))
	echo "make-model: samples $n: $*" >&2
	"$SIM" "$@" --policies model --train-every 2 --emit-training "$WORK/s$n.json" >/dev/null
	SAMPLES="${SAMPLES:-} --samples $WORK/s$n.json"
}
for seed in 1 2 3; do
	emit --ibnetdiscover "$FABRICS/dgx-h100-superpod.ibnetdiscover" --trace "$KTH" \
		--jobs 2000 --seed $seed
	emit --fattree groups=8,hosts=32,rails=4,oversub=2 --trace "$KTH" --jobs 1500 \
		--scale 4 --seed $seed
	emit --fattree groups=8,hosts=32,rails=4,oversub=4 --trace "$KTH" --jobs 1500 \
		--scale 2 --seed $seed
done
# shellcheck disable=SC2086
"$TRAIN" $SAMPLES --out "$OUT" --epochs 40 --hidden 16 --head-hidden 16 --layers 2 \
	--loss rank --batch 16 --lr 0.003 --seed 1
