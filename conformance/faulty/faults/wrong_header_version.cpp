// Objects are stamped with Header.Version 1.2 whatever version the adapter negotiated (VER-03).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables&) {}

void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeAdapter)
        object->Version = NDK_VERSION{1, 2};  // the fault
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("objects carry Header.Version 1.2 on a 2.1 adapter", ndkct::faulty::install,
                   ndkct::faulty::on_object);
