#pragma once
// The engine headers the widgets layer uses, included with Qt's `slots` keyword macro switched
// off: engine::Frame has a member named `slots`, and a Qt header included first would turn it
// into nothing. Include engine session headers in widgets through this file.
#pragma push_macro("slots")
#undef slots
#include "onnxlens/engine/DynamicAxesCheck.h"
#include "onnxlens/engine/InputPreparation.h"
#include "onnxlens/engine/ReferenceRun.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorStatistics.h"
#pragma pop_macro("slots")
