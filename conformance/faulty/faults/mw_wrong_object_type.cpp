// Memory windows are handed out with Header.ObjectType = NdkObjectTypeMr (GEN-CREATE-06).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables&) {}

void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType == NdkObjectTypeMw) object->ObjectType = NdkObjectTypeMr;  // the fault
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("memory windows carry Header.ObjectType NdkObjectTypeMr", ndkct::faulty::install,
                   ndkct::faulty::on_object);
