// QPs are handed out with Header.ObjectType = NdkObjectTypeSrq: the vendor's QP and SRQ share a
// queue object whose header it fills from one constructor (CQP-OBJ-01: the NDK_QP's
// Header.ObjectType is NdkObjectTypeQp; GEN-CREATE-06).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables&) {}

void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType == NdkObjectTypeQp) object->ObjectType = NdkObjectTypeSrq;  // the fault
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("QPs carry Header.ObjectType NdkObjectTypeSrq", ndkct::faulty::install,
                   ndkct::faulty::on_object);
