#pragma once
// The engine's headers for Qt code. Qt defines `slots` as a macro (Q_SLOTS), and the engine,
// which never sees Qt, names a member `slots` (Frame::slots in Session.h): included after any
// Qt header, Session.h would not compile. Widgets include the engine through this file.
#pragma push_macro("slots")
#undef slots
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/DynamicAxesCheck.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/workflows/LatencyStatistics.h"
#include "onnxlens/workflows/ReferenceRun.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/workflows/TensorStatistics.h"
#include "onnxlens/engine/Value.h"
#pragma pop_macro("slots")
