// commands_registered_addressing.hpp: property commands for NdkRegisterMr's addressing and lifetime
// (issue 13).
//
// The other data-path commands name a registered region by its virtual address and reach it
// while it is registered. These name it by the bare offset (RemoteAddress = offset, not VA +
// offset), which must not reach it (RMR-VA-02: NdkRegisterMr has no zero-based addressing), or
// reach it through its tokens after NdkDeregisterMr completed, which must not either
// (RMR-DEREG-01). And an MR is registered twice in a row: after a first registration that
// lacked resources the second is a first registration (RMR-ST-03).
#pragma once

#include "commands.hpp"
#include "commands_fast_register.hpp"

namespace ndkct::properties {

// NdkWrite to a region registered with NdkRegisterMr naming the bare offset, through the
// region's remote token (RMR-VA-02). BareOffsetWrite's call, aimed at a plain MR.
struct RegisteredBareOffsetWrite : BareOffsetWrite {
    explicit RegisteredBareOffsetWrite(const World& w);
    void show(std::ostream& os) const override;
};

// A region registered and named by its bare offset at once: NdkCreateMr, NdkRegisterMr (as
// RegisterMr draws it, with remote write added mostly, so that a provider answering the offset
// lets the write land) and RegisteredBareOffsetWrite of it. Alone (as shrinking leaves it) it
// runs on a QP no earlier failure has put in error.
struct RegisteredBareOffsetAccess : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const RegisterMr> register_mr;
    std::shared_ptr<const RegisteredBareOffsetWrite> write;
    explicit RegisteredBareOffsetAccess(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

// NdkWrite through the remote token a plain MR's last registration had, to where its region was
// (its VA plus an offset), whether or not it is still registered: after its NdkDeregisterMr
// completed the write must fail and touch nothing (RMR-DEREG-01). Write's arguments otherwise.
struct WriteAfterDeregister : Write {
    explicit WriteAfterDeregister(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// A region registered, deregistered and written through its old token at once: NdkCreateMr,
// NdkRegisterMr (with remote write added mostly), NdkDeregisterMr, WriteAfterDeregister.
struct DeregisteredRegionAccess : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const RegisterMr> register_mr;
    std::shared_ptr<const DeregisterMr> deregister_mr;
    std::shared_ptr<const WriteAfterDeregister> write;
    explicit DeregisteredRegionAccess(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

// An MR registered twice at once: NdkCreateMr, NdkRegisterMr (RegisterMr's draw, mostly made a
// chain of two MDLs, a shape a provider may lack resources for) and NdkRegisterMr of it again.
// Where the first succeeded the second is the consumer's error (RMR-PRE-01, any failure); where it
// reported STATUS_INSUFFICIENT_RESOURCES the MR is unregistered and the second is valid
// (RMR-ST-03).
struct RegisterTwice : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const RegisterMr> first, second;
    explicit RegisterTwice(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

// An MR registered again and used locally at once: NdkCreateMr and NdkRegisterMr of a target
// with remote write; NdkCreateMr, NdkRegisterMr, NdkDeregisterMr and NdkRegisterMr again of a
// source; then NdkWrite from the source (through the local token its second registration
// reported, RMR-TOK-01) to the target.
struct ReregisteredSourceWrite : Composite {
    std::shared_ptr<const CreateMr> create_target, create_source;
    std::shared_ptr<const RegisterMr> register_target, register_source, register_again;
    std::shared_ptr<const DeregisterMr> deregister_source;
    std::shared_ptr<const Write> write;
    explicit ReregisteredSourceWrite(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
