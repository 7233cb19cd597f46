// ndkct/conformance/dispatch_trap.hpp: the consumer overwrites objects' Dispatch (GEN-CREATE-05).
//
// "Once an object has been handed out the provider never reads its Dispatch member again; the
// consumer is free to overwrite it, and every later call on the object must work as before."
// A DispatchTrap points the Dispatch of each object given to install() at a trap table of the
// same type, owned by the harness. Every trap entry finds the object's original table (saved at
// install) and forwards the call to it, so the consumer's own calls keep working through the
// overwritten member; Session calls therefore still go through the object's Dispatch and the
// oracle judges them as usual.
//
// What the trap tells apart: a call the consumer makes through the trap (on the consumer's
// thread or inside a Session hook, not nested in another trapped call) is the consumer's. A
// trap entry reached while a trapped call is running on the same thread, or on any other
// thread outside a hook, can only be the provider calling through the object's Dispatch: a
// GEN-CREATE-05 violation. So is a provider that writes the member (the trap table no longer
// there when checked).
//
// One DispatchTrap at a time per process (the trap tables are plain function pointers and find
// their state globally). The thread that constructs it is the consumer's thread; calls made
// from provider callbacks count as the consumer's only inside Session hooks (Session::in_hook).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ndkct/conformance/session.hpp"

namespace ndkct::conformance {

class DispatchTrap {
  public:
    explicit DispatchTrap(Session& session);
    // Restores the Dispatch of every trapped object that has not been closed through the trap
    // (the Session closes the rest later through the provider's own tables), and reports what
    // the trap saw (report()).
    ~DispatchTrap();
    DispatchTrap(const DispatchTrap&) = delete;
    DispatchTrap& operator=(const DispatchTrap&) = delete;

    // Points the object's Dispatch at the trap table of its type (by Header.ObjectType; the
    // adapter included) and remembers the original. Idempotent.
    void install(void* object);

    // How many calls the consumer made through the trap tables so far (all of them forwarded):
    // proof that the overwritten member was really used.
    size_t consumer_calls() const;
    // The provider's calls through a trap table (and Dispatch members it rewrote), one line each.
    std::vector<std::string> provider_calls() const;
    // Hands every provider call seen and not yet reported to the Session as a GEN-CREATE-05
    // violation (the oracle's verdict); returns how many.
    size_t report();

  private:
    Session& session_;
};

}  // namespace ndkct::conformance
