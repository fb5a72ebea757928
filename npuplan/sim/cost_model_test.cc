// The cost model's FLOP formulas for ONNX ops (issue 18, item 6): each op of
// the table in cost_model.cc, on shapes whose FLOPs are easy to count.
#include "npuplan/sim/cost_model.h"

#include <gtest/gtest.h>

#include "npuplan/testing/graph_testing.h"
#include "npuplan/testing/status_matchers.h"

namespace npuplan::sim {
namespace {

// x [1, 8, 16, 16], conv weight [32, 8, 3, 3] → [1, 32, 14, 14], and the other ops.
constexpr char kOps[] = R"json({"name": "ops", "nodes": [
  {"name": "x", "type": "Data", "outputs": [{"shape": [1, 8, 16, 16]}]},
  {"name": "w", "type": "Const", "outputs": [{"shape": [32, 8, 3, 3]}]},
  {"name": "conv", "type": "Conv", "inputs": ["x", "w"], "outputs": [{"shape": [1, 32, 14, 14]}]},
  {"name": "convint", "type": "ConvInteger", "inputs": ["x", "w"], "outputs": [{"shape": [1, 32, 14, 14], "dtype": "int32"}]},
  {"name": "s", "type": "Const", "outputs": [{"shape": []}]},
  {"name": "qconv", "type": "QLinearConv", "inputs": ["x", "s", "s", "w", "s", "s", "s", "s"],
   "outputs": [{"shape": [1, 32, 14, 14], "dtype": "uint8"}]},
  {"name": "wt", "type": "Const", "outputs": [{"shape": [8, 4, 2, 2]}]},
  {"name": "deconv", "type": "ConvTranspose", "inputs": ["x", "wt"], "outputs": [{"shape": [1, 4, 32, 32]}]},
  {"name": "a", "type": "Data", "outputs": [{"shape": [64, 128]}]},
  {"name": "b", "type": "Const", "outputs": [{"shape": [128, 256]}]},
  {"name": "c", "type": "Const", "outputs": [{"shape": [256]}]},
  {"name": "gemm", "type": "Gemm", "inputs": ["a", "b", "c"], "outputs": [{"shape": [64, 256]}]},
  {"name": "mmint", "type": "MatMulInteger", "inputs": ["a", "b"], "outputs": [{"shape": [64, 256], "dtype": "int32"}]},
  {"name": "qmm", "type": "QLinearMatMul", "inputs": ["a", "s", "s", "b", "s", "s", "s", "s"],
   "outputs": [{"shape": [64, 256], "dtype": "uint8"}]},
  {"name": "ln", "type": "LayerNormalization", "inputs": ["gemm"], "outputs": [{"shape": [64, 256]}]},
  {"name": "sm", "type": "Softmax", "inputs": ["gemm"], "outputs": [{"shape": [64, 256]}]},
  {"name": "h", "type": "Data", "outputs": [{"shape": [2, 16, 64]}]},
  {"name": "wqkv", "type": "Const", "outputs": [{"shape": [64, 192]}]},
  {"name": "att", "type": "Attention", "inputs": ["h", "wqkv"], "attrs": {"num_heads": 4}, "outputs": [{"shape": [2, 16, 64]}]},
  {"name": "relu", "type": "Relu", "inputs": ["conv"], "outputs": [{"shape": [1, 32, 14, 14]}]}
]})json";

class OnnxCostFormulaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = npuplan::testing::ParseVerifiedGraph(kOps);
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = std::move(*m);
  }
  double Flops(const char* name) { return NodeFlops(model_, model_.FindNode(name)); }
  Model model_;
};

TEST_F(OnnxCostFormulaTest, PricesConvolutionsByTheirMultiplyAdds) {
  const double conv = 2.0 * (32 * 14 * 14) * (8 * 3 * 3);  // 2·|Y|·C·kh·kw
  EXPECT_DOUBLE_EQ(Flops("conv"), conv);
  EXPECT_DOUBLE_EQ(Flops("convint"), conv);
  EXPECT_DOUBLE_EQ(Flops("qconv"), conv);                      // the weight is input 3
  EXPECT_DOUBLE_EQ(Flops("deconv"), 2.0 * (8 * 16 * 16) * (4 * 2 * 2));  // 2·|X|·|W|/C
  EXPECT_DOUBLE_EQ(Flops("relu"), 32 * 14 * 14);
}

TEST_F(OnnxCostFormulaTest, PricesMatrixProductsNormsSoftmaxAndAttention) {
  const double mm = 2.0 * 64 * 256 * 128;
  EXPECT_DOUBLE_EQ(Flops("gemm"), mm + 64 * 256);  // + the bias C
  EXPECT_DOUBLE_EQ(Flops("mmint"), mm);
  EXPECT_DOUBLE_EQ(Flops("qmm"), mm);
  EXPECT_DOUBLE_EQ(Flops("ln"), 8.0 * 64 * 256);
  EXPECT_DOUBLE_EQ(Flops("sm"), 5.0 * 64 * 256);
  // B=2, S=T=16, H=64, 3H'=192: projections + QKᵀ and PV + softmax.
  EXPECT_DOUBLE_EQ(Flops("att"), 2.0 * 2 * 16 * 64 * 192 + 4.0 * 2 * 16 * 16 * 64 + 5.0 * 2 * 4 * 16 * 16);
}

TEST_F(OnnxCostFormulaTest, AComputeBoundConvCostsItsFlopTime) {
  CostModelOptions o;
  const double bytes = NodeBytes(model_, model_.FindNode("conv"), o);
  const double expected = 2.0 + std::max(Flops("conv") / 1e8, bytes / 1e6);
  EXPECT_DOUBLE_EQ(NodeCost(model_, model_.FindNode("conv"), o), expected);
  EXPECT_GT(Flops("conv") / 1e8, 32 * 14 * 14 / 1e8 * 100);  // far more than one op per element
}

}  // namespace
}  // namespace npuplan::sim
