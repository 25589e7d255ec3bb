# Desktop integration: `cmake --install` puts the .desktop file, the application/x-onnx MIME type
# and the hicolor icons under the prefix (GNUInstallDirs). A post-install step refreshes the MIME
# and desktop databases of that prefix when the tools are there (packagers run them themselves).
set(ONNXLENS_DESKTOP_DIR ${CMAKE_CURRENT_LIST_DIR}/desktop)
set(ONNXLENS_ICON_DIR ${CMAKE_CURRENT_LIST_DIR}/icons)
install(FILES ${ONNXLENS_DESKTOP_DIR}/onnxlens.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${ONNXLENS_DESKTOP_DIR}/onnxlens-mime.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME onnxlens.xml)
install(FILES ${ONNXLENS_ICON_DIR}/onnxlens.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES ${ONNXLENS_ICON_DIR}/application-x-onnx.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/mimetypes)
install(CODE "
  set(data \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}\")
  find_program(UPDATE_MIME update-mime-database)
  find_program(UPDATE_DESKTOP update-desktop-database)
  if(UPDATE_MIME AND NOT DEFINED ENV{DESTDIR})
    execute_process(COMMAND \${UPDATE_MIME} \"\${data}/mime\")
  endif()
  if(UPDATE_DESKTOP AND NOT DEFINED ENV{DESTDIR})
    execute_process(COMMAND \${UPDATE_DESKTOP} \"\${data}/applications\")
  endif()
")
# The PyTorch exporter: onnxlens and onnxlens-cli look for it in share/onnxlens/exporter beside
# their bin folder (see engine/ExporterCommand.h). Data, not commands: they are run as
# `python3 -u SCRIPT`, with the interpreter the user chose.
install(FILES ${CMAKE_CURRENT_LIST_DIR}/exporter/onnxlens_export.py
                 ${CMAKE_CURRENT_LIST_DIR}/exporter/onnxlens_sklearn_export.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/onnxlens/exporter)
