// A second launch hands its files to the running instance.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QUuid>
#include <atomic>
#include <thread>

#include "GuiTestSupport.h"
#include "SingleInstance.h"

namespace onnxlens {
namespace {

TEST(SingleInstance, ASecondInstanceForwardsItsFiles) {
    const QString name =
        QStringLiteral("onnxlens-test-") + QUuid::createUuid().toString(QUuid::Id128);
    gui::SingleInstance running(name);
    ASSERT_TRUE(running.listen());
    QSignalSpy received(&running, &gui::SingleInstance::filesReceived);

    // The second instance blocks on its socket, so it lives on another thread here.
    std::atomic<int> forwarded{-1};
    std::thread second([&] {
        gui::SingleInstance launcher(name);
        forwarded =
            launcher.forwardToRunningInstance({"/tmp/a.onnx", "relative/b.onnx"}, 5000) ? 1 : 0;
    });
    ASSERT_TRUE(testing::waitFor([&] { return received.count() == 1 && forwarded >= 0; }, 10000));
    second.join();
    EXPECT_EQ(forwarded, 1);
    const QStringList files = received.at(0).at(0).toStringList();
    ASSERT_EQ(files.size(), 2);
    EXPECT_EQ(files[0], "/tmp/a.onnx");
    EXPECT_TRUE(files[1].endsWith("/relative/b.onnx"));
    EXPECT_TRUE(QFileInfo(files[1]).isAbsolute());
}

TEST(SingleInstance, WithoutARunningInstanceNothingIsForwarded) {
    gui::SingleInstance launcher(QStringLiteral("onnxlens-test-nobody-") +
                                 QUuid::createUuid().toString(QUuid::Id128));
    EXPECT_FALSE(launcher.forwardToRunningInstance({"/tmp/a.onnx"}, 300));
}

}  // namespace
}  // namespace onnxlens
