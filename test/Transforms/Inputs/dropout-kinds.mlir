// msamp.export of `drop(x) + drop_path(lin(x)) + 0.1 * torch.rand_like(.)` with
// nn.Dropout(0.3), timm DropPath(0.2), lin = nn.Linear(8, 8), F.mse_loss
// (torch-mlir 20261001): two dropouts and one draw that is not one.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1) -> (d0, 0)>
#map4 = affine_map<() -> ()>
#map5 = affine_map<(d0, d1) -> (0, d1)>
module attributes {msamp.optimizer = {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, kind = "adamw", lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64}} {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @fwd_bwd(%arg0: tensor<8x8xf32> {msamp.name = "lin.weight", msamp.role = "param"}, %arg1: tensor<8xf32> {msamp.name = "lin.bias", msamp.role = "param"}, %arg2: tensor<4x8xf32> {msamp.name = "x", msamp.role = "input"}, %arg3: tensor<4x8xf32> {msamp.name = "y", msamp.role = "target"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<8x8xf32> {msamp.name = "lin.weight", msamp.role = "grad"}, tensor<8xf32> {msamp.name = "lin.bias", msamp.role = "grad"}) attributes {msamp.kind = "forward_backward"} {
    %c32_i64 = arith.constant 32 : i64
    %c2_i64 = arith.constant 2 : i64
    %c8_i64 = arith.constant 8 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<1.000000e+00> : tensor<f32>
    %cst_1 = arith.constant dense<8.000000e-01> : tensor<f64>
    %cst_2 = arith.constant 0.000000e+00 : f64
    %cst_3 = arith.constant dense<0.69999999999999996> : tensor<f64>
    %cst_4 = arith.constant 1.000000e-01 : f64
    %cst_5 = arith.constant 8.000000e-01 : f64
    %cst_6 = arith.constant 0.69999999999999996 : f64
    %cst_7 = arith.constant 5.4210107999999998E-20 : f64
    %cst_8 = arith.constant 3.200000e+01 : f32
    %cst_9 = arith.constant 6.250000e-02 : f32
    %c6364136223846793005_i64 = arith.constant 6364136223846793005 : i64
    %c1442695040888963407_i64 = arith.constant 1442695040888963407 : i64
    %global_seed = ml_program.global_load @global_seed : tensor<i64>
    %extracted = tensor.extract %global_seed[] : tensor<i64>
    %0 = arith.muli %extracted, %c6364136223846793005_i64 : i64
    %1 = arith.addi %0, %c1442695040888963407_i64 : i64
    %inserted = tensor.insert %1 into %global_seed[] : tensor<i64>
    ml_program.global_store @global_seed = %inserted : tensor<i64>
    %2 = tensor.empty() : tensor<4x8xf64>
    %3 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%2 : tensor<4x8xf64>) {
    ^bb0(%out: f64):
      %45 = linalg.index 0 : index
      %46 = arith.index_cast %45 : index to i64
      %47 = linalg.index 1 : index
      %48 = arith.index_cast %47 : index to i64
      %49 = arith.muli %46, %c8_i64 : i64
      %50 = arith.addi %49, %48 : i64
      %51 = arith.muli %50, %1 : i64
      %52 = arith.addi %51, %1 : i64
      %53 = arith.muli %51, %51 : i64
      %54 = arith.addi %53, %51 : i64
      %55 = arith.shli %54, %c32_i64 : i64
      %56 = arith.shrui %54, %c32_i64 : i64
      %57 = arith.ori %55, %56 : i64
      %58 = arith.muli %57, %57 : i64
      %59 = arith.addi %58, %52 : i64
      %60 = arith.shli %59, %c32_i64 : i64
      %61 = arith.shrui %59, %c32_i64 : i64
      %62 = arith.ori %60, %61 : i64
      %63 = arith.muli %62, %62 : i64
      %64 = arith.addi %63, %51 : i64
      %65 = arith.shli %64, %c32_i64 : i64
      %66 = arith.shrui %64, %c32_i64 : i64
      %67 = arith.ori %65, %66 : i64
      %68 = arith.muli %67, %67 : i64
      %69 = arith.addi %68, %52 : i64
      %70 = arith.shli %69, %c32_i64 : i64
      %71 = arith.shrui %69, %c32_i64 : i64
      %72 = arith.ori %70, %71 : i64
      %73 = arith.muli %72, %72 : i64
      %74 = arith.addi %73, %51 : i64
      %75 = arith.shrui %74, %c32_i64 : i64
      %76 = arith.xori %69, %75 : i64
      %77 = arith.uitofp %76 : i64 to f64
      %78 = arith.mulf %77, %cst_7 : f64
      %79 = arith.addf %78, %cst_2 : f64
      linalg.yield %79 : f64
    } -> tensor<4x8xf64>
    %4 = tensor.empty() : tensor<4x8xi1>
    %5 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %cst_3 : tensor<4x8xf64>, tensor<f64>) outs(%4 : tensor<4x8xi1>) {
    ^bb0(%in: f64, %in_17: f64, %out: i1):
      %45 = arith.cmpf olt, %in, %in_17 : f64
      linalg.yield %45 : i1
    } -> tensor<4x8xi1>
    %6 = tensor.empty() : tensor<4x8xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<4x8xi1>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: i1, %out: f32):
      %45 = arith.uitofp %in : i1 to f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_6 : f64 to f32
      %46 = arith.divf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<4x8xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg2, %8 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %45 = arith.mulf %in, %in_17 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %10 = tensor.empty() : tensor<8x8xf32>
    %transposed = linalg.transpose ins(%arg0 : tensor<8x8xf32>) outs(%10 : tensor<8x8xf32>) permutation = [1, 0] 
    %11 = linalg.fill ins(%cst : f32) outs(%6 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %12 = linalg.matmul ins(%arg2, %transposed : tensor<4x8xf32>, tensor<8x8xf32>) outs(%11 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %13 = linalg.generic {indexing_maps = [#map2, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg1, %12 : tensor<8xf32>, tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %45 = arith.addf %in, %in_17 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %global_seed_10 = ml_program.global_load @global_seed : tensor<i64>
    %extracted_11 = tensor.extract %global_seed_10[] : tensor<i64>
    %14 = arith.muli %extracted_11, %c6364136223846793005_i64 : i64
    %15 = arith.addi %14, %c1442695040888963407_i64 : i64
    %inserted_12 = tensor.insert %15 into %global_seed_10[] : tensor<i64>
    ml_program.global_store @global_seed = %inserted_12 : tensor<i64>
    %16 = tensor.empty() : tensor<4x1xf64>
    %17 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%16 : tensor<4x1xf64>) {
    ^bb0(%out: f64):
      %45 = linalg.index 0 : index
      %46 = arith.index_cast %45 : index to i64
      %47 = arith.muli %46, %15 : i64
      %48 = arith.addi %47, %15 : i64
      %49 = arith.muli %47, %47 : i64
      %50 = arith.addi %49, %47 : i64
      %51 = arith.shli %50, %c32_i64 : i64
      %52 = arith.shrui %50, %c32_i64 : i64
      %53 = arith.ori %51, %52 : i64
      %54 = arith.muli %53, %53 : i64
      %55 = arith.addi %54, %48 : i64
      %56 = arith.shli %55, %c32_i64 : i64
      %57 = arith.shrui %55, %c32_i64 : i64
      %58 = arith.ori %56, %57 : i64
      %59 = arith.muli %58, %58 : i64
      %60 = arith.addi %59, %47 : i64
      %61 = arith.shli %60, %c32_i64 : i64
      %62 = arith.shrui %60, %c32_i64 : i64
      %63 = arith.ori %61, %62 : i64
      %64 = arith.muli %63, %63 : i64
      %65 = arith.addi %64, %48 : i64
      %66 = arith.shli %65, %c32_i64 : i64
      %67 = arith.shrui %65, %c32_i64 : i64
      %68 = arith.ori %66, %67 : i64
      %69 = arith.muli %68, %68 : i64
      %70 = arith.addi %69, %47 : i64
      %71 = arith.shrui %70, %c32_i64 : i64
      %72 = arith.xori %65, %71 : i64
      %73 = arith.uitofp %72 : i64 to f64
      %74 = arith.mulf %73, %cst_7 : f64
      %75 = arith.addf %74, %cst_2 : f64
      linalg.yield %75 : f64
    } -> tensor<4x1xf64>
    %18 = tensor.empty() : tensor<4x1xi1>
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%17, %cst_1 : tensor<4x1xf64>, tensor<f64>) outs(%18 : tensor<4x1xi1>) {
    ^bb0(%in: f64, %in_17: f64, %out: i1):
      %45 = arith.cmpf olt, %in, %in_17 : f64
      linalg.yield %45 : i1
    } -> tensor<4x1xi1>
    %20 = tensor.empty() : tensor<4x1xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%19 : tensor<4x1xi1>) outs(%20 : tensor<4x1xf32>) {
    ^bb0(%in: i1, %out: f32):
      %45 = arith.uitofp %in : i1 to f32
      linalg.yield %45 : f32
    } -> tensor<4x1xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%21 : tensor<4x1xf32>) outs(%20 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_5 : f64 to f32
      %46 = arith.divf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<4x1xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel"]} ins(%13, %22 : tensor<4x8xf32>, tensor<4x1xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %45 = arith.mulf %in, %in_17 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %24 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %23 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %45 = arith.addf %in, %in_17 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %global_seed_13 = ml_program.global_load @global_seed : tensor<i64>
    %extracted_14 = tensor.extract %global_seed_13[] : tensor<i64>
    %25 = arith.muli %extracted_14, %c6364136223846793005_i64 : i64
    %26 = arith.addi %25, %c1442695040888963407_i64 : i64
    %inserted_15 = tensor.insert %26 into %global_seed_13[] : tensor<i64>
    ml_program.global_store @global_seed = %inserted_15 : tensor<i64>
    %27 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%6 : tensor<4x8xf32>) {
    ^bb0(%out: f32):
      %45 = linalg.index 0 : index
      %46 = arith.index_cast %45 : index to i64
      %47 = linalg.index 1 : index
      %48 = arith.index_cast %47 : index to i64
      %49 = arith.muli %46, %c8_i64 : i64
      %50 = arith.addi %49, %48 : i64
      %51 = arith.muli %50, %26 : i64
      %52 = arith.addi %51, %26 : i64
      %53 = arith.muli %51, %51 : i64
      %54 = arith.addi %53, %51 : i64
      %55 = arith.shli %54, %c32_i64 : i64
      %56 = arith.shrui %54, %c32_i64 : i64
      %57 = arith.ori %55, %56 : i64
      %58 = arith.muli %57, %57 : i64
      %59 = arith.addi %58, %52 : i64
      %60 = arith.shli %59, %c32_i64 : i64
      %61 = arith.shrui %59, %c32_i64 : i64
      %62 = arith.ori %60, %61 : i64
      %63 = arith.muli %62, %62 : i64
      %64 = arith.addi %63, %51 : i64
      %65 = arith.shli %64, %c32_i64 : i64
      %66 = arith.shrui %64, %c32_i64 : i64
      %67 = arith.ori %65, %66 : i64
      %68 = arith.muli %67, %67 : i64
      %69 = arith.addi %68, %52 : i64
      %70 = arith.shli %69, %c32_i64 : i64
      %71 = arith.shrui %69, %c32_i64 : i64
      %72 = arith.ori %70, %71 : i64
      %73 = arith.muli %72, %72 : i64
      %74 = arith.addi %73, %51 : i64
      %75 = arith.shrui %74, %c32_i64 : i64
      %76 = arith.xori %69, %75 : i64
      %77 = arith.uitofp %76 : i64 to f64
      %78 = arith.mulf %77, %cst_7 : f64
      %79 = arith.addf %78, %cst_2 : f64
      %80 = arith.truncf %79 : f64 to f32
      linalg.yield %80 : f32
    } -> tensor<4x8xf32>
    %28 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%27 : tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.truncf %cst_4 : f64 to f32
      %46 = arith.mulf %in, %45 : f32
      linalg.yield %46 : f32
    } -> tensor<4x8xf32>
    %29 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%24, %28 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %45 = arith.addf %in, %in_17 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %30 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%29, %arg3 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %45 = arith.subf %in, %in_17 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %31 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%30 : tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = math.fpowi %in, %c2_i64 : f32, i64
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %32 = tensor.empty() : tensor<f32>
    %33 = linalg.fill ins(%cst : f32) outs(%32 : tensor<f32>) -> tensor<f32>
    %34 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%31 : tensor<4x8xf32>) outs(%33 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.addf %in, %out : f32
      linalg.yield %45 : f32
    } -> tensor<f32>
    %35 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = []} ins(%34 : tensor<f32>) outs(%32 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.divf %in, %cst_8 : f32
      linalg.yield %45 : f32
    } -> tensor<f32>
    %36 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%30 : tensor<4x8xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.mulf %in, %cst_9 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %37 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%36, %cst_0 : tensor<4x8xf32>, tensor<f32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %45 = arith.mulf %in, %in_17 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %38 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel"]} ins(%37, %22 : tensor<4x8xf32>, tensor<4x1xf32>) outs(%6 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %45 = arith.mulf %in, %in_17 : f32
      linalg.yield %45 : f32
    } -> tensor<4x8xf32>
    %39 = tensor.empty() : tensor<8x4xf32>
    %transposed_16 = linalg.transpose ins(%38 : tensor<4x8xf32>) outs(%39 : tensor<8x4xf32>) permutation = [1, 0] 
    %40 = linalg.fill ins(%cst : f32) outs(%10 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %41 = linalg.matmul ins(%transposed_16, %arg2 : tensor<8x4xf32>, tensor<4x8xf32>) outs(%40 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %42 = tensor.empty() : tensor<1x8xf32>
    %43 = linalg.fill ins(%cst : f32) outs(%42 : tensor<1x8xf32>) -> tensor<1x8xf32>
    %44 = linalg.generic {indexing_maps = [#map, #map5], iterator_types = ["reduction", "parallel"]} ins(%38 : tensor<4x8xf32>) outs(%43 : tensor<1x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %45 = arith.addf %in, %out : f32
      linalg.yield %45 : f32
    } -> tensor<1x8xf32>
    %collapsed = tensor.collapse_shape %44 [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
    return %35, %41, %collapsed : tensor<f32>, tensor<8x8xf32>, tensor<8xf32>
  }
}
