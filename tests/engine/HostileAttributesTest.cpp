// Every operator the engine registers, compiled and run with hostile attribute values (0, -1,
// huge, NaN, empty and wrong-length lists) and hostile input shapes (zero-size dims, rank 0,
// rank 8), with graph inputs and with constant inputs the optimizer folds at compile time. Each
// case must end in an error value or a result: a division by zero, an out-of-bounds read or an
// abort here kills the window that opens such a model. The same cases, drawn from bytes, are the
// fuzz target tests/fuzz/FuzzOperatorAttributes.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "OperatorCases.h"

namespace onnxlens::testing {
namespace {

struct FamilyParam {
    std::size_t operatorIndex;
    std::string name;
};

std::vector<FamilyParam> allOperators() {
    std::vector<FamilyParam> out;
    const auto ops = registeredOperators();
    for (std::size_t i = 0; i < ops.size(); ++i) {
        std::string name = (ops[i].domain.empty() ? "" : ops[i].domain + "_") + ops[i].opType +
                           "_" + std::to_string(ops[i].sinceVersion);
        for (char& ch : name)
            if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        out.push_back({i, name});
    }
    return out;
}

class HostileAttributes : public ::testing::TestWithParam<FamilyParam> {};

// Runs one case; a crash ends the test binary with the case's label printed just before.
void runCase(const std::vector<engine::KernelRegistry::Entry>& ops, const CaseChoices& choices,
             int& ran, int& rejected) {
    const OperatorCase c = buildOperatorCase(ops, choices);
    if (std::getenv("ONNXLENS_HOSTILE_VERBOSE")) fprintf(stderr, "case %s\n", c.label.c_str());
    const std::string error = runOperatorCase(c);
    ++ran;
    if (!error.empty()) ++rejected;
}

TEST_P(HostileAttributes, EveryValueOfEveryAttributeIsAnErrorOrAResult) {
    const auto ops = registeredOperators();
    const std::size_t index = GetParam().operatorIndex;
    const std::size_t inputs = caseInputCount(schemaOf(ops[index]));
    int ran = 0, rejected = 0;
    for (bool constant : {false, true}) {
        // Defaults with each hostile shape on every input.
        for (std::uint32_t s = 0; s < hostileShapes().size(); ++s) {
            CaseChoices choices;
            choices.operatorIndex = index;
            choices.inputShapes.assign(inputs, s);
            choices.inputsAsInitializers = constant;
            runCase(ops, choices, ran, rejected);
        }
        // Each attribute alone with each hostile value, on the plain shape and on a zero-size one.
        for (const auto& attr : declaredAttributes(ops[index])) {
            for (std::uint32_t v = 0; v < hostileValueCount(attr.type); ++v) {
                for (std::uint32_t s : {0u, 1u}) {
                    CaseChoices choices;
                    choices.operatorIndex = index;
                    choices.inputShapes.assign(inputs, s);
                    choices.inputsAsInitializers = constant;
                    AttributeChoice a = attr;
                    a.valueIndex = v;
                    choices.attributes.push_back(a);
                    runCase(ops, choices, ran, rejected);
                }
            }
        }
    }
    EXPECT_GT(ran, 0);
    RecordProperty("cases", ran);
    RecordProperty("rejected", rejected);
}

INSTANTIATE_TEST_SUITE_P(EveryOperator, HostileAttributes, ::testing::ValuesIn(allOperators()),
                         [](const ::testing::TestParamInfo<FamilyParam>& info) {
                             return info.param.name;
                         });

}  // namespace
}  // namespace onnxlens::testing
