#!/bin/bash
# A/B: LoRA on the top 8 layers (more of the model in the frozen-layer cache) for 3 epochs vs the demo's SFT (top 12, 2 epochs)
cd /work/scratch/top8
W=/work/main/.venv/bin/webrl
S=/work/demo-fc/runs/demo/sft
PG=$(cat pg)
kill -STOP -$PG
start=$(date +%s)
$W sft --preset cpu --top-layers 8 --epochs 3 --out /work/scratch/top8/sft --threads 2 --no-progress > sft.log 2>&1
echo "sft secs=$(( $(date +%s) - start ))" >> sft.log
ck=/work/scratch/top8/sft/final
$W eval-demos --agent $ck --demos $S/demos.jsonl --tasks $S/trained_tasks.json --no-fit --threads 2 --out top8-trained.json --no-progress > top8-trained.log 2>&1
$W eval-demos --agent $ck --demos heldout_demos.jsonl --no-fit --threads 2 --out top8-heldout.json --no-progress > top8-heldout.log 2>&1
kill -CONT -$PG
echo "all secs=$(( $(date +%s) - start ))" >> sft.log
