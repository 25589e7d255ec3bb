// What the Benchmark and Decode panels say about the threads their runs used.
#include <gtest/gtest.h>

#include "widgets/panels/ThreadsText.h"

namespace onnxlens::widgets {
namespace {

TEST(ThreadsText, EveryRunOnTheThreadsAskedForSaysJustTheCount) {
    for (auto form : {ThreadsTextForm::Full, ThreadsTextForm::Status})
        EXPECT_EQ(threadsText(2, 0, 50, 2, form), QStringLiteral("2 threads"));
    EXPECT_EQ(threadsText(1, 0, 50, 1, ThreadsTextForm::Full), QStringLiteral("1 thread"));
    EXPECT_EQ(threadsText(4, 0, 50, 4, ThreadsTextForm::Cell), QStringLiteral("4"));
}

TEST(ThreadsText, RunsOnFewerThreadsSayHowManyAndWhy) {
    EXPECT_EQ(threadsText(2, 38, 50, 1, ThreadsTextForm::Full),
              QStringLiteral("2 threads (1 thread in 38 of 50 runs: other programs kept the cores "
                             "busy)"));
    EXPECT_EQ(threadsText(16, 3, 40, 4, ThreadsTextForm::Full),
              QStringLiteral("16 threads (4 threads in 3 of 40 runs: other programs kept the "
                             "cores busy)"));
    EXPECT_EQ(threadsText(2, 38, 50, 1, ThreadsTextForm::Status),
              QStringLiteral("2 threads, 38 of 50 runs on 1: cores busy"));
    // A table's value column is sized to its values: the cell stays short.
    EXPECT_EQ(threadsText(2, 38, 50, 1, ThreadsTextForm::Cell),
              QStringLiteral("2 (1 in 38 of 50 runs)"));
}

}  // namespace
}  // namespace onnxlens::widgets
