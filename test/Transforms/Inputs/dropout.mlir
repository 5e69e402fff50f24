#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1) -> (0, d1)>
module attributes {msamp.optimizer = {kind = "sgd", lr = 1.000000e+00 : f64, momentum = 0.000000e+00 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64}} {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @fwd_bwd(%arg0: tensor<4x64xf32> {msamp.name = "w", msamp.role = "param"}, %arg1: tensor<64x64xf32> {msamp.name = "lin.weight", msamp.role = "param"}, %arg2: tensor<64xf32> {msamp.name = "lin.bias", msamp.role = "param"}, %arg3: tensor<4x64xf32> {msamp.name = "x", msamp.role = "input"}, %arg4: tensor<4x64xf32> {msamp.name = "y", msamp.role = "target"}) -> (tensor<f32> {msamp.role = "loss"}, tensor<4x64xf32> {msamp.name = "w", msamp.role = "grad"}, tensor<64x64xf32> {msamp.name = "lin.weight", msamp.role = "grad"}, tensor<64xf32> {msamp.name = "lin.bias", msamp.role = "grad"}) attributes {msamp.kind = "forward_backward"} {
    %c64_i64 = arith.constant 64 : i64
    %c32_i64 = arith.constant 32 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<1.000000e+00> : tensor<4x64xf32>
    %cst_1 = arith.constant dense<5.000000e-01> : tensor<f64>
    %cst_2 = arith.constant 0.000000e+00 : f64
    %cst_3 = arith.constant dense<7.500000e-01> : tensor<f64>
    %cst_4 = arith.constant 5.4210107999999998E-20 : f64
    %cst_5 = arith.constant 7.500000e-01 : f32
    %cst_6 = arith.constant 5.000000e-01 : f32
    %c6364136223846793005_i64 = arith.constant 6364136223846793005 : i64
    %c1442695040888963407_i64 = arith.constant 1442695040888963407 : i64
    %0 = tensor.empty() : tensor<4x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg3 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.addf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %global_seed = ml_program.global_load @global_seed : tensor<i64>
    %extracted = tensor.extract %global_seed[] : tensor<i64>
    %2 = arith.muli %extracted, %c6364136223846793005_i64 : i64
    %3 = arith.addi %2, %c1442695040888963407_i64 : i64
    %inserted = tensor.insert %3 into %global_seed[] : tensor<i64>
    ml_program.global_store @global_seed = %inserted : tensor<i64>
    %4 = tensor.empty() : tensor<4x64xf64>
    %5 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%4 : tensor<4x64xf64>) {
    ^bb0(%out: f64):
      %36 = linalg.index 0 : index
      %37 = arith.index_cast %36 : index to i64
      %38 = linalg.index 1 : index
      %39 = arith.index_cast %38 : index to i64
      %40 = arith.muli %37, %c64_i64 : i64
      %41 = arith.addi %40, %39 : i64
      %42 = arith.muli %41, %3 : i64
      %43 = arith.addi %42, %3 : i64
      %44 = arith.muli %42, %42 : i64
      %45 = arith.addi %44, %42 : i64
      %46 = arith.shli %45, %c32_i64 : i64
      %47 = arith.shrui %45, %c32_i64 : i64
      %48 = arith.ori %46, %47 : i64
      %49 = arith.muli %48, %48 : i64
      %50 = arith.addi %49, %43 : i64
      %51 = arith.shli %50, %c32_i64 : i64
      %52 = arith.shrui %50, %c32_i64 : i64
      %53 = arith.ori %51, %52 : i64
      %54 = arith.muli %53, %53 : i64
      %55 = arith.addi %54, %42 : i64
      %56 = arith.shli %55, %c32_i64 : i64
      %57 = arith.shrui %55, %c32_i64 : i64
      %58 = arith.ori %56, %57 : i64
      %59 = arith.muli %58, %58 : i64
      %60 = arith.addi %59, %43 : i64
      %61 = arith.shli %60, %c32_i64 : i64
      %62 = arith.shrui %60, %c32_i64 : i64
      %63 = arith.ori %61, %62 : i64
      %64 = arith.muli %63, %63 : i64
      %65 = arith.addi %64, %42 : i64
      %66 = arith.shrui %65, %c32_i64 : i64
      %67 = arith.xori %60, %66 : i64
      %68 = arith.uitofp %67 : i64 to f64
      %69 = arith.mulf %68, %cst_4 : f64
      %70 = arith.addf %69, %cst_2 : f64
      linalg.yield %70 : f64
    } -> tensor<4x64xf64>
    %6 = tensor.empty() : tensor<4x64xi1>
    %7 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_3 : tensor<4x64xf64>, tensor<f64>) outs(%6 : tensor<4x64xi1>) {
    ^bb0(%in: f64, %in_11: f64, %out: i1):
      %36 = arith.cmpf olt, %in, %in_11 : f64
      linalg.yield %36 : i1
    } -> tensor<4x64xi1>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%7 : tensor<4x64xi1>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: i1, %out: f32):
      %36 = arith.uitofp %in : i1 to f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.divf %in, %cst_5 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %9 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.mulf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %11 = tensor.empty() : tensor<64x64xf32>
    %transposed = linalg.transpose ins(%arg1 : tensor<64x64xf32>) outs(%11 : tensor<64x64xf32>) permutation = [1, 0] 
    %12 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x64xf32>) -> tensor<4x64xf32>
    %13 = linalg.matmul ins(%arg3, %transposed : tensor<4x64xf32>, tensor<64x64xf32>) outs(%12 : tensor<4x64xf32>) -> tensor<4x64xf32>
    %14 = linalg.generic {indexing_maps = [#map2, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg2, %13 : tensor<64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.addf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %global_seed_7 = ml_program.global_load @global_seed : tensor<i64>
    %extracted_8 = tensor.extract %global_seed_7[] : tensor<i64>
    %15 = arith.muli %extracted_8, %c6364136223846793005_i64 : i64
    %16 = arith.addi %15, %c1442695040888963407_i64 : i64
    %inserted_9 = tensor.insert %16 into %global_seed_7[] : tensor<i64>
    ml_program.global_store @global_seed = %inserted_9 : tensor<i64>
    %17 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%4 : tensor<4x64xf64>) {
    ^bb0(%out: f64):
      %36 = linalg.index 0 : index
      %37 = arith.index_cast %36 : index to i64
      %38 = linalg.index 1 : index
      %39 = arith.index_cast %38 : index to i64
      %40 = arith.muli %37, %c64_i64 : i64
      %41 = arith.addi %40, %39 : i64
      %42 = arith.muli %41, %16 : i64
      %43 = arith.addi %42, %16 : i64
      %44 = arith.muli %42, %42 : i64
      %45 = arith.addi %44, %42 : i64
      %46 = arith.shli %45, %c32_i64 : i64
      %47 = arith.shrui %45, %c32_i64 : i64
      %48 = arith.ori %46, %47 : i64
      %49 = arith.muli %48, %48 : i64
      %50 = arith.addi %49, %43 : i64
      %51 = arith.shli %50, %c32_i64 : i64
      %52 = arith.shrui %50, %c32_i64 : i64
      %53 = arith.ori %51, %52 : i64
      %54 = arith.muli %53, %53 : i64
      %55 = arith.addi %54, %42 : i64
      %56 = arith.shli %55, %c32_i64 : i64
      %57 = arith.shrui %55, %c32_i64 : i64
      %58 = arith.ori %56, %57 : i64
      %59 = arith.muli %58, %58 : i64
      %60 = arith.addi %59, %43 : i64
      %61 = arith.shli %60, %c32_i64 : i64
      %62 = arith.shrui %60, %c32_i64 : i64
      %63 = arith.ori %61, %62 : i64
      %64 = arith.muli %63, %63 : i64
      %65 = arith.addi %64, %42 : i64
      %66 = arith.shrui %65, %c32_i64 : i64
      %67 = arith.xori %60, %66 : i64
      %68 = arith.uitofp %67 : i64 to f64
      %69 = arith.mulf %68, %cst_4 : f64
      %70 = arith.addf %69, %cst_2 : f64
      linalg.yield %70 : f64
    } -> tensor<4x64xf64>
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%17, %cst_1 : tensor<4x64xf64>, tensor<f64>) outs(%6 : tensor<4x64xi1>) {
    ^bb0(%in: f64, %in_11: f64, %out: i1):
      %36 = arith.cmpf olt, %in, %in_11 : f64
      linalg.yield %36 : i1
    } -> tensor<4x64xi1>
    %19 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%18 : tensor<4x64xi1>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: i1, %out: f32):
      %36 = arith.uitofp %in : i1 to f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%19 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.divf %in, %cst_6 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%14, %20 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.mulf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%10, %21 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.addf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%22, %arg4 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.mulf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %24 = tensor.empty() : tensor<f32>
    %25 = linalg.fill ins(%cst : f32) outs(%24 : tensor<f32>) -> tensor<f32>
    %26 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%23 : tensor<4x64xf32>) outs(%25 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.addf %in, %out : f32
      linalg.yield %36 : f32
    } -> tensor<f32>
    %27 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%cst_0, %arg4 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.mulf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %28 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%27, %20 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.mulf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    %29 = tensor.empty() : tensor<64x4xf32>
    %transposed_10 = linalg.transpose ins(%28 : tensor<4x64xf32>) outs(%29 : tensor<64x4xf32>) permutation = [1, 0] 
    %30 = linalg.fill ins(%cst : f32) outs(%11 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %31 = linalg.matmul ins(%transposed_10, %arg3 : tensor<64x4xf32>, tensor<4x64xf32>) outs(%30 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %32 = tensor.empty() : tensor<1x64xf32>
    %33 = linalg.fill ins(%cst : f32) outs(%32 : tensor<1x64xf32>) -> tensor<1x64xf32>
    %34 = linalg.generic {indexing_maps = [#map, #map3], iterator_types = ["reduction", "parallel"]} ins(%28 : tensor<4x64xf32>) outs(%33 : tensor<1x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.addf %in, %out : f32
      linalg.yield %36 : f32
    } -> tensor<1x64xf32>
    %collapsed = tensor.collapse_shape %34 [[0, 1]] : tensor<1x64xf32> into tensor<64xf32>
    %35 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%27, %9 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.mulf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<4x64xf32>
    return %26, %35, %31, %collapsed : tensor<f32>, tensor<4x64xf32>, tensor<64x64xf32>, tensor<64xf32>
  }
}

