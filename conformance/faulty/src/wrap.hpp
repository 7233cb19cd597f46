// The wrapper's internals shared by wrap.cpp and exports.cpp.
#pragma once

#include "ndkct/provider.h"

namespace ndkct::faulty {

// Points an object the reference made at the wrapped copy of its table (idempotent).
void wrap(NDK_OBJECT_HEADER* object);

// A newly opened adapter: remembers its information and wraps it.
void opened(NDK_ADAPTER* adapter);

}  // namespace ndkct::faulty
