// conformance/faulty: deliberately faulty providers, to prove that the suite bites.
//
// A faulty provider is the reference provider (adapters/model) seen through copies of its
// dispatch tables in which a fault replaces a few entries. The wrapper interposes on every
// object the reference hands out: the adapter at open, and every created object in the create
// functions, their completion callbacks and the listener's connect events. It points the
// object's Dispatch at the wrapped copy of its table before the consumer sees it (a provider
// never reads Dispatch after handing the object out, GEN-CREATE-05, so replacing it is safe).
//
// A fault is one file (faults/<name>.cpp) that defines kFault: a description and an install
// function that edits the wrapped tables; entries it replaces call base() for the correct
// behaviour. The fault's name and the rule it breaks come from CMake (NDKCT_FAULT_NAME,
// NDKCT_FAULT_RULE), where the ctest that proves the suite catches it is declared.
#pragma once

#include <string>

#include "ndkct/provider.h"

namespace ndkct::faulty {

// One copy of every dispatch table.
struct Tables {
    NDK_ADAPTER_DISPATCH adapter{};
    NDK_PD_DISPATCH pd{};
    NDK_CQ_DISPATCH cq{};
    NDK_MR_DISPATCH mr{};
    NDK_MW_DISPATCH mw{};
    NDK_QP_DISPATCH qp{};
    NDK_SRQ_DISPATCH srq{};
    NDK_CONNECTOR_DISPATCH connector{};
    NDK_LISTENER_DISPATCH listener{};
    NDK_SHARED_ENDPOINT_DISPATCH shared_endpoint{};
};

struct Fault {
    const char* name;         // NDKCT_FAULT_NAME: the provider is "faulty-<name>"
    const char* rule;         // NDKCT_FAULT_RULE: the rule ID it breaks
    const char* description;  // what it does wrong, one line
    // Edits the wrapped tables. Called once per object type, on a fresh copy of base(), before
    // the first object of that type is handed out; only assign entries here.
    void (*install)(Tables& wrapped);
    // Optional: edits each object after it is wrapped, before the consumer sees it.
    void (*on_object)(NDK_OBJECT_HEADER* object) = nullptr;
    // Optional: the profile the reference provider opens with, from the one the consumer gave
    // (the JSON text with defaults applied): a fault of an adapter other than the profile's
    // (read_sink_not_required.hpp). The consumer's oracle still reads the adapter from
    // NdkQueryAdapterInfo, as it does for any provider.
    std::string (*adapter_profile)(const std::string& json) = nullptr;
};

// Each faulty provider defines exactly one (faults/<name>.cpp, with NDKCT_DEFINE_FAULT).
extern const Fault kFault;

// The correct behaviour: the reference provider's tables, with the wrapper's own interposers on
// the create functions (the objects they create are wrapped). A type's table is filled when the
// first object of that type is wrapped, so an entry of an object's own type is always there.
const Tables& base();

// The NdkCloseObject entry of base() for an object's type.
NDK_FN_CLOSE_OBJECT* base_close(const NDK_OBJECT_HEADER* object);

// The NDK_ADAPTER_INFO the reference reported when the (last) adapter opened.
const NDK_ADAPTER_INFO& adapter_info();

}  // namespace ndkct::faulty

// In a fault's file: NDKCT_DEFINE_FAULT("description", install[, on_object]);
#define NDKCT_DEFINE_FAULT(description, ...)                         \
    const ::ndkct::faulty::Fault ndkct::faulty::kFault {             \
        NDKCT_FAULT_NAME, NDKCT_FAULT_RULE, description, __VA_ARGS__ \
    }
