#!/bin/bash
cd /work/scratch/recap
W=/work/main/.venv/bin/webrl
S=/work/demo-fc/runs/demo/sft
kill -STOP -20424
start=$(date +%s)
$W sft --preset cpu --recap --out /work/scratch/recap/sft --threads 2 --no-progress > sft.log 2>&1
echo "sft secs=$(( $(date +%s) - start ))" >> sft.log
for arm in recap:/work/scratch/recap/sft/final demo:$S/final; do
  n=${arm%%:*}; ck=${arm#*:}
  $W eval-demos --agent $ck --demos $S/demos.jsonl --tasks $S/trained_tasks.json --no-fit --threads 2 --out $n-trained.json --no-progress > $n-trained.log 2>&1
  $W eval-demos --agent $ck --demos heldout_demos.jsonl --no-fit --threads 2 --out $n-heldout.json --no-progress > $n-heldout.log 2>&1
done
kill -CONT -20424
echo "all secs=$(( $(date +%s) - start ))" >> sft.log
