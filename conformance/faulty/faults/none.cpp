// The control: the wrapper with no fault. Every object is wrapped and every table copied, and
// nothing is changed: this provider must pass the whole suite (conformance.bites.control_no_fault).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables&) {}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("no fault: the wrapper alone", ndkct::faulty::install);
