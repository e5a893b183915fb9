#!/bin/bash
# A/B: LoRA on the top 16 layers for 2 epochs vs the demo's SFT (top 12, 2 epochs); run.sh with its three settings changed
cd /work/scratch/top8
W=/work/main/.venv/bin/webrl
S=/work/demo-fc/runs/demo/sft
PG=$(cat pg)
kill -STOP -$PG
start=$(date +%s)
$W sft --preset cpu --top-layers 16 --epochs 2 --out /work/scratch/top8/sft16 --threads 2 --no-progress > sft16.log 2>&1
echo "sft secs=$(( $(date +%s) - start ))" >> sft16.log
ck=/work/scratch/top8/sft16/final
$W eval-demos --agent $ck --demos $S/demos.jsonl --tasks $S/trained_tasks.json --no-fit --threads 2 --out top16-trained.json --no-progress > top16-trained.log 2>&1
$W eval-demos --agent $ck --demos heldout_demos.jsonl --no-fit --threads 2 --out top16-heldout.json --no-progress > top16-heldout.log 2>&1
kill -CONT -$PG
echo "all secs=$(( $(date +%s) - start ))" >> sft16.log
