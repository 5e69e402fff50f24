// The enum-valued recipe options of --msamp-o0..o3, --msamp-te and
// --msamp-amp (include/MSAMP/Transforms/RecipeEnums.td, declared once in
// RecipeOptions.h): every spelling of docs/Interfaces.md 3 is accepted and
// reaches the passes (the step's msamp.recipe records it), an unknown one is
// an error naming the option and the value, and each pipeline accepts the
// same set of option names as before.
//
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2 | FileCheck %s --check-prefix=O2DEFAULT
// O2DEFAULT: msamp.recipe = {amax_compute_algo = "max", amax_history_len = 16 : i64, {{.*}}fp8_format = "hybrid", {{.*}}scale_kind = "pow2", scaling = "delayed", warmup = true}
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o1="fp8-format=e4m3 scaling=current scale-kind=exact amax-compute-algo=most_recent" | FileCheck %s --check-prefix=O1OTHER
// O1OTHER: msamp.recipe = {amax_compute_algo = "most_recent", amax_history_len = 16 : i64, {{.*}}fp8_format = "e4m3", {{.*}}scale_kind = "exact", scaling = "current", warmup = true}
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o3="fp8-format=hybrid scaling=delayed scale-kind=pow2 amax-compute-algo=max world-size=2 rank=1" | FileCheck %s --check-prefix=O2DEFAULT
//
// --msamp-te: the same recipe options with Transformer Engine's defaults.
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-te | FileCheck %s --check-prefix=TEDEFAULT
// TEDEFAULT: msamp.recipe = {amax_compute_algo = "max", amax_history_len = 1024 : i64, {{.*}}fp8_format = "hybrid", {{.*}}scale_kind = "exact", scaling = "delayed", warmup = false}
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-te="fp8-format=e4m3 scaling=current amax-compute-algo=most_recent amax-history-len=8" | FileCheck %s --check-prefix=TEOTHER
// TEOTHER: msamp.recipe = {amax_compute_algo = "most_recent", amax_history_len = 8 : i64, {{.*}}fp8_format = "e4m3", {{.*}}scale_kind = "exact", scaling = "current", warmup = false}
//
// --msamp-amp: dtype and loss-scale (auto: dynamic with fp16 only).
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-amp="dtype=fp16" | FileCheck %s --check-prefix=SCALED
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-amp="dtype=fp16 loss-scale=dynamic" | FileCheck %s --check-prefix=SCALED
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-amp="dtype=fp16 loss-scale=none" | FileCheck %s --check-prefix=UNSCALED
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-amp="dtype=bf16 loss-scale=auto" | FileCheck %s --check-prefix=UNSCALED
// SCALED: msamp.role = "loss_scale"
// SCALED-SAME: msamp.level = "amp-fp16"
// UNSCALED: func.func @train_step
// UNSCALED-NOT: msamp.role = "loss_scale"
//
// optimizer (OptimizerKind): a kind overrides the module's msamp.optimizer
// (adamw in mlp.mlir) in @train_step's, the empty spelling keeps it.
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2="optimizer=sgd" | FileCheck %s --check-prefix=OPTSGD
// OPTSGD: func.func @train_step
// OPTSGD-SAME: msamp.level = {{.*}}msamp.optimizer = {{{.*}}kind = "sgd"
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-te="optimizer=adam" | FileCheck %s --check-prefix=OPTADAM
// OPTADAM: func.func @train_step
// OPTADAM-SAME: msamp.level = {{.*}}msamp.optimizer = {{{.*}}kind = "adam"
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-amp="optimizer=adamw" | FileCheck %s --check-prefix=OPTADAMW
// RUN: msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o1="optimizer=" | FileCheck %s --check-prefix=OPTADAMW
// OPTADAMW: func.func @train_step
// OPTADAMW-SAME: msamp.level = {{.*}}msamp.optimizer = {{{.*}}kind = "adamw"
//
// Unknown values: refused by the option parser (EnumParser, RecipeEnums.h),
// naming the option, the value and the accepted spellings.
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2="scale-kind=" 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: for the --scale-kind option: '' is not one of: pow2, exact
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2="fp8-format=e5m2" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-te="fp8-format=e5m2" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: for the --fp8-format option: 'e5m2' is not one of: hybrid, e4m3
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o1="scaling=sometimes" 2>&1 | FileCheck %s --check-prefix=SCALING
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-te="scaling=sometimes" 2>&1 | FileCheck %s --check-prefix=SCALING
// SCALING: for the --scaling option: 'sometimes' is not one of: delayed, current
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2="scale-kind=Pow2" 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: for the --scale-kind option: 'Pow2' is not one of: pow2, exact
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2="amax-compute-algo=mean" 2>&1 | FileCheck %s --check-prefix=ALGO
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-te="amax-compute-algo=mean" 2>&1 | FileCheck %s --check-prefix=ALGO
// ALGO: for the --amax-compute-algo option: 'mean' is not one of: max, most_recent
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-amp="dtype=f16" 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: for the --dtype option: 'f16' is not one of: bf16, fp16
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-amp="dtype=fp16 loss-scale=static" 2>&1 | FileCheck %s --check-prefix=LOSSSCALE
// LOSSSCALE: for the --loss-scale option: 'static' is not one of: auto, dynamic, none
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: for the --optimizer option: 'lamb' is not one of: sgd, adam, adamw{{$}}
//
// Each pipeline keeps its own option names: the MS-AMP levels' knobs are
// not --msamp-te's, nor --msamp-te's Linear filters the levels'.
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-te="scale-kind=pow2" 2>&1 | FileCheck %s --check-prefix=TEKIND
// TEKIND: no such option scale-kind
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-te="warmup=true" 2>&1 | FileCheck %s --check-prefix=TEWARMUP
// TEWARMUP: no such option warmup
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-o2="keep-first-last=true" 2>&1 | FileCheck %s --check-prefix=O2KEEP
// O2KEEP: no such option keep-first-last
// RUN: not msamp-opt %S/../Transforms/Inputs/mlp.mlir --msamp-amp="fp8-format=hybrid" 2>&1 | FileCheck %s --check-prefix=AMPFORMAT
// AMPFORMAT: no such option fp8-format
