import sys, shutil
from pathlib import Path
from safetensors.torch import load_file, save_file
out = Path(sys.argv[1]); srcs = sys.argv[2:]
sds = [load_file(f"{s}/model.safetensors") for s in srcs]
avg = {k: sum(sd[k].float() for sd in sds) / len(sds) for k in sds[0]}
if out.exists(): shutil.rmtree(out)
shutil.copytree(srcs[-1], out, ignore=shutil.ignore_patterns("trainer_state.pt", "model.safetensors"))
save_file({k: v.contiguous() for k, v in avg.items()}, str(out / "model.safetensors"))
print("averaged", srcs, "->", out)
