#pragma once
// The engine's headers for Qt code. Qt defines `slots` as a macro (Q_SLOTS), and the engine,
// which never sees Qt, names a member `slots` (Frame::slots in Session.h): included after any
// Qt header, Session.h would not compile. Widgets include the engine through this file.
#pragma push_macro("slots")
#undef slots
#include "onnxlens/engine/BenchmarkRunner.h"
#include "onnxlens/engine/DynamicAxesCheck.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/InputPreparation.h"
#include "onnxlens/engine/LatencyStatistics.h"
#include "onnxlens/engine/ReferenceRun.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorStatistics.h"
#include "onnxlens/engine/Value.h"
#pragma pop_macro("slots")
