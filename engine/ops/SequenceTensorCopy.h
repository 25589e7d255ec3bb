#pragma once
// Moving blocks of elements between tensors of any element type, and the slicing, stacking and
// concatenation along one axis that Loop, Scan, SequenceMap, SplitToSequence and
// ConcatFromSequence share.
#include <onnx/onnx_pb.h>

#include <cstring>
#include <string>
#include <vector>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Tensor.h"

namespace onnxlens::engine::ops {

// Copies `count` elements from src[srcOffset...] to dst[dstOffset...]; both of the same type.
inline void copyElements(const Tensor& src, std::int64_t srcOffset, Tensor& dst,
                         std::int64_t dstOffset, std::int64_t count) {
    if (count <= 0) return;
    if (src.dtype() == DataType::String) {
        const std::string* from = src.data<std::string>() + srcOffset;
        std::string* to = dst.data<std::string>() + dstOffset;
        for (std::int64_t i = 0; i < count; ++i) to[i] = from[i];
        return;
    }
    const std::size_t size = dataTypeSize(src.dtype());
    std::memcpy(static_cast<char*>(dst.raw()) + dstOffset * size,
                static_cast<const char*>(src.raw()) + srcOffset * size, count * size);
}

inline std::int64_t productOfDims(const Shape& shape, std::size_t begin, std::size_t end) {
    std::int64_t n = 1;
    for (std::size_t i = begin; i < end; ++i) n *= shape[i];
    return n;
}

// Elements [start, start + length) along `axis` (already normalized), as a new tensor.
inline Tensor sliceAlongAxis(const Tensor& input, std::size_t axis, std::int64_t start,
                             std::int64_t length) {
    const Shape& shape = input.shape();
    Shape outShape = shape;
    outShape[axis] = length;
    Tensor out(input.dtype(), outShape);
    const std::int64_t outer = productOfDims(shape, 0, axis);
    const std::int64_t inner = productOfDims(shape, axis + 1, shape.size());
    for (std::int64_t o = 0; o < outer; ++o)
        copyElements(input, (o * shape[axis] + start) * inner, out, o * length * inner,
                     length * inner);
    return out;
}

// The sub-tensor at `index` along `axis`, without that axis (rank one less).
inline Tensor takeAlongAxis(const Tensor& input, std::size_t axis, std::int64_t index) {
    Tensor slice = sliceAlongAxis(input, axis, index, 1);
    Shape shape = input.shape();
    shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
    return slice.reshaped(std::move(shape));
}

// Concatenation along `axis` (normalized); every part has the same rank, type and other dims.
inline Tensor concatAlongAxis(const std::vector<Tensor>& parts, std::size_t axis) {
    require(!parts.empty(), "cannot concatenate zero tensors");
    const Tensor& first = parts.front();
    require(axis < first.shape().size(), "concatenation axis out of range");
    Shape outShape = first.shape();
    outShape[axis] = 0;
    for (const Tensor& part : parts) {
        if (part.dtype() != first.dtype())
            fail(std::string("cannot concatenate ") + dataTypeName(part.dtype()) + " with " +
                 dataTypeName(first.dtype()));
        bool compatible = part.rank() == first.rank();
        for (std::size_t d = 0; compatible && d < outShape.size(); ++d)
            if (d != axis && part.shape()[d] != first.shape()[d]) compatible = false;
        if (!compatible)
            fail("cannot concatenate shapes " + shapeToString(first.shape()) + " and " +
                 shapeToString(part.shape()) + " along axis " + std::to_string(axis));
        outShape[axis] += part.shape()[axis];
    }
    Tensor out(first.dtype(), outShape);
    const std::int64_t outer = productOfDims(outShape, 0, axis);
    const std::int64_t inner = productOfDims(outShape, axis + 1, outShape.size());
    const std::int64_t outRow = outShape[axis] * inner;
    std::int64_t columnOffset = 0;
    for (const Tensor& part : parts) {
        const std::int64_t partRow = part.shape()[axis] * inner;
        for (std::int64_t o = 0; o < outer; ++o)
            copyElements(part, o * partRow, out, o * outRow + columnOffset, partRow);
        columnOffset += partRow;
    }
    return out;
}

// Stacks equally shaped tensors along a new axis at position `axis` (0..rank).
inline Tensor stackAlongNewAxis(const std::vector<Tensor>& parts, std::size_t axis) {
    require(!parts.empty(), "cannot stack zero tensors");
    std::vector<Tensor> expanded;
    expanded.reserve(parts.size());
    for (const Tensor& part : parts) {
        if (part.shape() != parts.front().shape())
            fail("cannot stack shapes " + shapeToString(parts.front().shape()) + " and " +
                 shapeToString(part.shape()));
        Shape shape = part.shape();
        shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), 1);
        expanded.push_back(part.reshaped(std::move(shape)));
    }
    return concatAlongAxis(expanded, axis);
}

// The tensor element type a graph input/output declares (Undefined when not a tensor or unknown).
inline DataType declaredTensorType(const onnx::TypeProto& type) {
    if (type.has_tensor_type() && type.tensor_type().elem_type() != 0)
        return dataTypeFromOnnx(type.tensor_type().elem_type());
    return DataType::Undefined;
}

// The element type of a declared sequence (or optional sequence) type; Undefined when unknown.
inline DataType declaredSequenceElementType(const onnx::TypeProto& type) {
    if (type.has_sequence_type()) return declaredTensorType(type.sequence_type().elem_type());
    if (type.has_optional_type())
        return declaredSequenceElementType(type.optional_type().elem_type());
    return DataType::Undefined;
}

}  // namespace onnxlens::engine::ops
