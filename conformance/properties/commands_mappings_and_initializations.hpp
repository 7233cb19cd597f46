// commands_mappings_and_initializations.hpp: property commands for NdkBuildLam's chain and IRQL
// rules and for NdkInitializeFastRegisterMr's overlapping initializations (issue 13).
//
// BuildLam draws its chains whole, split or broken inside the range it maps: none is broken only
// past Length, where a provider that checks the whole chain refuses what it must map
// (LAM-MDL-04). BuildLamBeforeABreak maps the first piece of a chain with a hole after it. And
// CallFromNotification makes NdkRegisterMr and NdkInitializeFastRegisterMr inside a CQ's
// notification callback, never NdkBuildLam (LAM-IRQL-01: it may not wait there):
// LamFromNotification does, on a CQ of its own that has an entry to notify for (NotifiedLam).
// Every command waits for each initialization before the next; InitializationsFromNotification
// issues two of different MRs back to back inside a notification callback, where a consumer
// waits for nothing (IFR-CONC-01: each must complete on its own; OverlappingInitializations).
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkBuildLam of `length` bytes of a chain whose two pieces have `gap` bytes of the buffer
// skipped between them: the first piece is the whole range mapped, so the chain is valid.
struct BuildLamBeforeABreak : Command {
    uint8_t buffer;
    uint32_t offset;
    uint32_t length;  // the first piece, all that is mapped
    uint32_t gap;     // bytes skipped after it
    uint32_t after;   // the second piece, past Length
    uint32_t buffer_size;
    explicit BuildLamBeforeABreak(const World& w);
    uint32_t pages() const { return (offset % PAGE_SIZE + length + PAGE_SIZE - 1) / PAGE_SIZE; }
    void apply(World& w) const override {
        Slot s{Kind::lam};
        s.pages = pages();
        w.add(s);
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// NdkArmCq of `cq`, and from its notification callback NdkBuildLam (as BuildLam draws it; with
// a completion callback, so that what pends there finishes afterwards): it must return at once
// (LAM-IRQL-01, GEN-IRQL-01). Where no notification is owed the build is made after the arm.
struct LamFromNotification : Command {
    int cq;
    std::shared_ptr<const BuildLam> build_lam;
    LamFromNotification(const World& w, int only_cq);
    explicit LamFromNotification(const World& w) : LamFromNotification(w, -1) {}
    void checkPreconditions(const World& w) const override;
    void apply(World& w) const override { build_lam->apply(w); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// A CQ of its own with an entry to notify for (CqWithAnEntry), then LamFromNotification on that
// CQ.
struct NotifiedLam : Composite {
    std::optional<CqWithAnEntry> entry;
    std::shared_ptr<const LamFromNotification> call;
    explicit NotifiedLam(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

// NdkArmCq of `cq`, and from its notification callback NdkInitializeFastRegisterMr of two MRs,
// one right after the other (the first may still be pending): each must complete on its own
// (IFR-CONC-01). What pended finishes afterwards.
struct InitializationsFromNotification : Command {
    int cq;
    std::shared_ptr<const InitializeFastRegisterMr> first, second;
    InitializationsFromNotification(const World& w, int only_cq);
    explicit InitializationsFromNotification(const World& w)
        : InitializationsFromNotification(w, -1) {}
    void checkPreconditions(const World& w) const override;
    void apply(World& w) const override {
        first->apply(w);
        second->apply(w);
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// Two fast-register MRs initialized at once: a CQ with an entry to notify for (CqWithAnEntry),
// NdkCreateMr (FastRegister) twice, then InitializationsFromNotification of those two MRs on
// that CQ.
struct OverlappingInitializations : Composite {
    std::optional<CqWithAnEntry> entry;
    std::shared_ptr<const CreateMr> create_first, create_second;
    std::shared_ptr<const InitializationsFromNotification> call;
    explicit OverlappingInitializations(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

// NdkSend on the setup pair's qp2 from the first logical page of LAM `lam`, with pd0's
// privileged token (LAM-USE-02: logical addresses of a live mapping are local sources with it),
// `bytes` at most (no further than the page's end).
struct SendFromLam : Command {
    int lam;
    uint32_t bytes;
    explicit SendFromLam(const World& w);
    void checkPreconditions(const World& w) const override;
    void apply(World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// NdkBuildLam of a whole chain into the exact buffer it needs.
std::shared_ptr<BuildLam> whole_mapping(const World& w);

// The sink of a send from a mapping: NdkCreateMr on pd0 (slot `mr`), NdkRegisterMr of a whole
// region with local write, NdkReceive of all of it on qp3; each generated in `after`, which it
// then leaves changed (as a Composite generates its calls).
struct ReceiveSink {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const RegisterMr> register_mr;
    std::shared_ptr<const Receive> receive;
    uint32_t length() const { return uint32_t(register_mr->length); }
    // The three calls of `owner`'s steps(base), their MR slot moved as owner.moved() says.
    std::vector<std::shared_ptr<const Command>> steps(const Composite& owner, int base) const;
};
ReceiveSink receive_sink(World& after, int mr);

// A send from a mapping into a receive: whole_mapping, the ReceiveSink, then SendFromLam on qp2
// from that mapping.
struct SendFromMapping : Composite {
    std::shared_ptr<const BuildLam> build_lam;
    ReceiveSink sink;
    std::shared_ptr<const SendFromLam> send;
    explicit SendFromMapping(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
