#pragma once
// One onnxlens per user session: a second launch (a double-click in the file manager while
// onnxlens runs) hands its files to the running instance over a local socket and exits.
#include <QObject>
#include <QStringList>

class QLocalServer;

namespace onnxlens::gui {

class SingleInstance : public QObject {
    Q_OBJECT
  public:
    // `name`: the socket's name; the default is per user ($ONNXLENS_INSTANCE_NAME overrides).
    explicit SingleInstance(QString name = defaultName(), QObject* parent = nullptr);
    ~SingleInstance() override;

    static QString defaultName();
    // True when a running instance took the files (then this process should exit).
    bool forwardToRunningInstance(const QStringList& files, int timeoutMs = 1000);
    // Becomes the running instance; false if the socket cannot be created.
    bool listen();

  signals:
    void filesReceived(const QStringList& files);

  private:
    QString name_;
    QLocalServer* server_ = nullptr;
};

}  // namespace onnxlens::gui
