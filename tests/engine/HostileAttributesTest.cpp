// Every operator the engine registers, compiled and run with hostile attribute values (0, -1,
// huge, NaN, empty and wrong-length lists) and hostile input shapes (zero-size dims, rank 0,
// rank 8), with graph inputs and with constant inputs the optimizer folds at compile time. Each
// case must end in an error value or a result: a division by zero, an out-of-bounds read or an
// abort here kills the window that opens such a model. The same cases, drawn from bytes, are the
// fuzz target tests/fuzz/FuzzOperatorAttributes.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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

std::vector<FamilyParam> operatorsWithTemplates() {
    std::vector<FamilyParam> out;
    const auto ops = registeredOperators();
    for (const auto& p : allOperators())
        if (!templatesOf(ops[p.operatorIndex]).empty()) out.push_back(p);
    return out;
}

class HostileAttributes : public ::testing::TestWithParam<FamilyParam> {};

// Runs one case; a crash ends the test binary with the case's label printed just before.
void runCase(const std::vector<engine::KernelRegistry::Entry>& ops, const CaseChoices& choices,
             int& ran, int& rejected) {
    const OperatorCase c = buildOperatorCase(ops, choices);
    const bool verbose = std::getenv("ONNXLENS_HOSTILE_VERBOSE") != nullptr;
    if (verbose) fprintf(stderr, "case %s\n", c.label.c_str());
    const std::string error = runOperatorCase(c);
    if (verbose) fprintf(stderr, "  -> %s\n", error.empty() ? "ran" : error.c_str());
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

// The sweep above proves something past a kernel's first shape check only where its template
// runs: each template, unchanged, as graph inputs and as constants, gives outputs.
TEST(OperatorTemplates, EachTemplateRunsWithItsOwnAttributes) {
    const auto ops = registeredOperators();
    int checked = 0;
    for (std::size_t index = 0; index < ops.size(); ++index) {
        const auto templates = templatesOf(ops[index]);
        for (std::size_t t = 0; t < templates.size(); ++t) {
            for (bool constant : {false, true}) {
                CaseChoices choices;
                choices.operatorIndex = index;
                choices.templateIndex = static_cast<int>(t);
                choices.inputsAsInitializers = constant;
                const OperatorCase c = buildOperatorCase(ops, choices);
                EXPECT_EQ(runOperatorCase(c), "") << c.label;
                ++checked;
            }
        }
    }
    EXPECT_EQ(checked, 2 * static_cast<int>(operatorTemplates().size()));
}

// The operators issue 29 names (and the rest of com.microsoft) each have a template.
TEST(OperatorTemplates, EveryMicrosoftOperatorHasOne) {
    for (const auto& entry : registeredOperators()) {
        if (entry.domain != "com.microsoft") continue;
        EXPECT_FALSE(templatesOf(entry).empty()) << entry.opType;
    }
    for (const char* op : {"LayerNormalization", "SimplifiedLayerNormalization"}) {
        const engine::KernelRegistry::Entry entry{"", op, 1, 1};
        EXPECT_FALSE(templatesOf(entry).empty()) << op;
    }
}

// Each input of tests/fuzz/regressions/operator_attributes/ still builds the operator it was
// written for (listed in regressions/operator_attributes.operators): its first bytes index the
// registered operators, and a newly registered operator shifts the index (three inputs had come to
// replay MatMulNBits and QLinearSoftmax cases instead of QGemm and SkipLayerNormalization ones).
TEST(HostileAttributesRegressions, RegressionInputsStillBuildTheirOperators) {
    const std::filesystem::path folder =
        std::filesystem::path(ONNXLENS_SOURCE_DIR) / "tests/fuzz/regressions/operator_attributes";
    std::ifstream list(folder.string() + ".operators");
    ASSERT_TRUE(list) << "no " << folder.string() << ".operators";
    const auto ops = registeredOperators();
    std::string line;
    int checked = 0;
    while (std::getline(list, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string file, expected;
        fields >> file >> expected;
        std::ifstream in(folder / file, std::ios::binary);
        ASSERT_TRUE(in) << file;
        const std::string bytes((std::istreambuf_iterator<char>(in)), {});
        ByteChoices source(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        const CaseChoices choices = drawCaseChoices(ops, source);
        const std::string label = buildOperatorCase(ops, choices).label;
        EXPECT_EQ(label.substr(0, label.find(' ')), expected) << file << ": " << label;
        ++checked;
    }
    // Every input of the folder is listed.
    int inputs = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++inputs;
    EXPECT_EQ(checked, inputs);
}

INSTANTIATE_TEST_SUITE_P(EveryOperator, HostileAttributes, ::testing::ValuesIn(allOperators()),
                         [](const ::testing::TestParamInfo<FamilyParam>& info) {
                             return info.param.name;
                         });

// The same from each valid input template of an operator (OperatorTemplates.h), whose unchanged
// case runs (OperatorTemplates.EachTemplateRunsWithItsOwnAttributes): each attribute alone with
// each hostile value, as graph inputs and as constants; then each input alone with each
// perturbation (NaN / -1, extreme and zero values, left out or fed, retyped, each hostile
// shape). Here a hostile value reaches the code past the kernel's first shape check.
class HostileAttributesFromTemplates : public ::testing::TestWithParam<FamilyParam> {};

TEST_P(HostileAttributesFromTemplates, EveryChangeOfAValidCaseIsAnErrorOrAResult) {
    const auto ops = registeredOperators();
    const std::size_t index = GetParam().operatorIndex;
    int ran = 0, rejected = 0;
    const auto templates = templatesOf(ops[index]);
    ASSERT_FALSE(templates.empty());
    for (std::size_t t = 0; t < templates.size(); ++t) {
        for (bool constant : {false, true}) {
            for (const auto& attr : declaredAttributes(ops[index])) {
                for (std::uint32_t v = 0; v < hostileValueCount(attr.type); ++v) {
                    CaseChoices choices;
                    choices.operatorIndex = index;
                    choices.templateIndex = static_cast<int>(t);
                    choices.inputsAsInitializers = constant;
                    AttributeChoice a = attr;
                    a.valueIndex = v;
                    choices.attributes.push_back(a);
                    runCase(ops, choices, ran, rejected);
                }
            }
        }
        for (std::size_t i = 0; i < templates[t]->inputs.size(); ++i) {
            for (std::uint32_t p = 1; p < templatePerturbationCount(); ++p) {
                CaseChoices choices;
                choices.operatorIndex = index;
                choices.templateIndex = static_cast<int>(t);
                choices.templateInputs.assign(templates[t]->inputs.size(), kAsTemplate);
                choices.templateInputs[i] = p;
                runCase(ops, choices, ran, rejected);
            }
        }
    }
    RecordProperty("cases", ran);
    RecordProperty("rejected", rejected);
}

INSTANTIATE_TEST_SUITE_P(EveryOperator, HostileAttributesFromTemplates,
                         ::testing::ValuesIn(operatorsWithTemplates()),
                         [](const ::testing::TestParamInfo<FamilyParam>& info) {
                             return info.param.name;
                         });

}  // namespace
}  // namespace onnxlens::testing
