# Writes the function of msamp-gpu-group-adam-updates-per-copy.test: a run
# of Adam updates of f32 parameters, argv[1] copies of a layer of argv[2]
# parameters; parameter k of a layer has tensor<(k % argv[3] + 1)xf32>, so
# with argv[3] < argv[2] a layer is itself copies of a shorter block.
import sys

copies, per_layer, distinct = (int(a) for a in sys.argv[1:4])
n = copies * per_layer
types = [f"tensor<{k % distinct + 1}xf32>" for k in range(per_layer)] * copies
args = ", ".join(f"%w{i}: {t}, %g{i}: {t}, %m{i}: {t}, %v{i}: {t}"
                 for i, t in enumerate(types))
lines = [f"func.func @updates({args}, %lr: tensor<f32>, %step: tensor<i64>) {{"]
for i, t in enumerate(types):
    lines.append(
        f"  %w{i}n, %m{i}n, %v{i}n = msamp.adam_update param %w{i} : {t}, "
        f"grad %g{i} : {t}, exp_avg %m{i} : {t}, exp_avg_sq %v{i} : {t}, "
        f"lr %lr, step %step {{beta1 = 0.9 : f64, beta2 = 0.999 : f64, "
        f"eps = 1.0e-08 : f64, weight_decay = 0.01 : f64, decoupled}}")
lines += ["  return", "}"]
print("\n".join(lines))
