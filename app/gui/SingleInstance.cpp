#include "SingleInstance.h"

#include <QDataStream>
#include <QDir>
#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>

namespace onnxlens::gui {

SingleInstance::SingleInstance(QString name, QObject* parent)
    : QObject(parent), name_(std::move(name)) {}

SingleInstance::~SingleInstance() = default;

QString SingleInstance::defaultName() {
    QString fromEnvironment = qEnvironmentVariable("ONNXLENS_INSTANCE_NAME");
    if (!fromEnvironment.isEmpty()) return fromEnvironment;
    QString user = qEnvironmentVariable("USER", QStringLiteral("user"));
    return QStringLiteral("onnxlens-") + user;
}

bool SingleInstance::forwardToRunningInstance(const QStringList& files, int timeoutMs) {
    QLocalSocket socket;
    socket.connectToServer(name_);
    if (!socket.waitForConnected(timeoutMs)) return false;
    QStringList absolute;
    for (const auto& f : files) absolute << QFileInfo(f).absoluteFilePath();
    QByteArray message;
    QDataStream out(&message, QIODevice::WriteOnly);
    out << absolute;
    socket.write(message);
    if (!socket.waitForBytesWritten(timeoutMs)) return false;
    // The running instance answers once it has the files, so they are never lost in between.
    if (!socket.waitForReadyRead(timeoutMs)) return false;
    return socket.readAll().startsWith("ok");
}

bool SingleInstance::listen() {
    server_ = new QLocalServer(this);
    server_->setSocketOptions(QLocalServer::UserAccessOption);
    if (!server_->listen(name_)) {
        // A crashed instance leaves its socket file behind.
        QLocalServer::removeServer(name_);
        if (!server_->listen(name_)) return false;
    }
    connect(server_, &QLocalServer::newConnection, this, [this] {
        while (QLocalSocket* socket = server_->nextPendingConnection()) {
            connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
            connect(socket, &QLocalSocket::readyRead, this, [this, socket] {
                QDataStream in(socket);
                in.startTransaction();
                QStringList files;
                in >> files;
                if (!in.commitTransaction()) return;  // wait for the rest
                socket->write("ok");
                socket->flush();
                emit filesReceived(files);
            });
        }
    });
    return true;
}

}  // namespace onnxlens::gui
