// commands_fast_register.cpp: NdkFastRegister commands beyond commands.cpp's FastRegister.
#include "commands_fast_register.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

FencedFastRegister::FencedFastRegister(const World& w) : FastRegister(w) {
    // FR-FLG-01: READ_FENCE with whatever rights FastRegister chose, and 1 in 3 silent too.
    flags |= NDK_OP_FLAG_READ_FENCE;
    if (*gen::inRange(0, 3) == 0) flags |= NDK_OP_FLAG_SILENT_SUCCESS;
}

}  // namespace ndkct::properties
