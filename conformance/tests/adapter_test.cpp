// Adapter information and object basics (AI-*, GEN-*, CLOSE-*).
#include "ndkct/conformance/suite.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(Adapter);

NDKCT_TEST(Adapter, InfoIsComplete, "ndk.adapter.query_info.complete", "AI-01", "AI-02", "AI-06") {
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    EXPECT_STATUS(STATUS_SUCCESS, session().query_adapter_info(&info, &size));
    EXPECT_EQ(size, sizeof info);
    EXPECT_GE(info.FRMRPageCount, 16u);
    EXPECT_GT(info.MaxCqDepth, 0u);
    EXPECT_GT(info.MaxInitiatorQueueDepth, 0u);
    EXPECT_GT(info.MaxReceiveQueueDepth, 0u);
}

NDKCT_TEST(Adapter, InfoBufferTooSmall, "ndk.adapter.query_info.buffer_too_small", "AI-05") {
    for (ULONG given : {0u, 1u, 95u}) {
        NDK_ADAPTER_INFO info{};
        ULONG size = given;
        EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, session().query_adapter_info(&info, &size)) << given;
        EXPECT_GE(size, NDK_ADAPTER_INFO_V1_SIZE) << "the required size is written back";
    }
}

NDKCT_TEST(Adapter, CreateAndCloseEveryObject, "ndk.objects.create_close", "CPD-01", "CQ-CREATE-02",
           "CMR-02", "MW-01", "CONN-01", "CONN-05", "CLOSE-01", "GEN-CREATE-06") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto cq = session().create_cq(64);
    ASSERT_TRUE(cq.object);
    auto mr = session().create_mr(pd.object, false);
    auto fr = session().create_mr(pd.object, true);
    auto mw = session().create_mw(pd.object);
    auto connector = session().create_connector();
    auto listener = session().create_listener();
    EXPECT_TRUE(mr.object && fr.object && mw.object && connector.object && listener.object);
    for (void* o : {static_cast<void*>(listener.object), static_cast<void*>(connector.object),
                    static_cast<void*>(mw.object), static_cast<void*>(fr.object),
                    static_cast<void*>(mr.object), static_cast<void*>(cq.object),
                    static_cast<void*>(pd.object)}) {
        Done d = session().close(o);
        EXPECT_TRUE(d.status == STATUS_SUCCESS || d.status == STATUS_PENDING);
        EXPECT_STATUS(STATUS_SUCCESS, d.final_status);
    }
}

NDKCT_TEST(Adapter, CloseOfAnAntecedentWaitsForItsSuccessors, "ndk.lifetime.close_antecedent_pends",
           "CLOSE-02", "LIFE-TREE-03") {
    auto pd = session().create_pd();
    auto mr = session().create_mr(pd.object, false);
    ASSERT_TRUE(pd.object && mr.object);
    // The PD's close cannot finish while its MR is open: it must pend, and complete only after
    // the MR is closed.
    NTSTATUS pd_close = session().close_async(pd.object);
    EXPECT_STATUS(STATUS_PENDING, pd_close);
    Done mr_close = session().close(mr.object);
    EXPECT_STATUS(STATUS_SUCCESS, mr_close.final_status);
    Done d = session().wait_close(pd.object);
    EXPECT_STATUS(STATUS_SUCCESS, d.final_status);
}

}  // namespace
}  // namespace ndkct::conformance
