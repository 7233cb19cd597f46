// Quotes against pages: the normalization both sides go through, the page names of documentation
// files, the check itself, and the statements of a page listed for a review. (The real pages are
// not part of ndkct: `ndkct-spec verify-quotes DIR` is a developer's check; these tests use
// pages written here.)
#include <gtest/gtest.h>

#include "ndkct/spec/quotes.hpp"

namespace ndkct::spec {
namespace {

TEST(Quotes, NormalizationDropsMarkupButKeepsTheWords) {
    EXPECT_EQ(normalize_documentation_text(
                  "The <i>NdkBind</i> (<i>NDK_FN_BIND</i>) function\n   binds a <b>window</b>."),
              "The NdkBind (NDK_FN_BIND) function binds a window.");
    EXPECT_EQ(normalize_documentation_text("See [NDK_SGE](https://example/x) and **Note** `x`."),
              "See NDK_SGE and Note x.");
    EXPECT_EQ(normalize_documentation_text("the value of <i>*pLAMSize</i> &lt; 16 &amp; more"),
              "the value of pLAMSize < 16 & more");
    EXPECT_EQ(
        normalize_documentation_text("NDK\\_CQ\\_DISPATCH and _RequestCompletion_ (NDK_FN_X)"),
        "NDK_CQ_DISPATCH and RequestCompletion (NDK_FN_X)");
    // "<=" is not a tag; table pipes and headings are separators.
    EXPECT_EQ(normalize_documentation_text("| **IRQL** | <=DISPATCH_LEVEL |\n## Remarks"),
              "IRQL <=DISPATCH_LEVEL Remarks");
}

TEST(Quotes, PageNamesOfFiles) {
    EXPECT_EQ(page_name_of_file("/x/ndkpi-docs/ddi/nc-ndkpi-ndk_fn_bind.md", ""),
              "ddi/nc-ndkpi-ndk_fn_bind");
    EXPECT_EQ(page_name_of_file("docs/concepts/ndkpi-terminology.md", ""),
              "concepts/ndkpi-terminology");
    EXPECT_EQ(page_name_of_file("/s/004_4b81.txt", "NDK_FN_BUILD_LAM función de devolución"),
              "seed/nc-ndkpi-ndk_fn_build_lam");
    EXPECT_EQ(page_name_of_file("/s/notes.txt", "nothing here"), "");
}

TEST(Quotes, EachQuoteIsFoundOnItsPageOrReported) {
    Catalog catalog({Rule{.id = "X-01",
                          .quotes = {{"ddi/a", "The <i>QP</i> is not connected."},
                                     {"ddi/a", "A sentence that is not there."},
                                     {"ddi/missing", "Anything."}}}});
    std::map<std::string, std::string> pages{
        {"ddi/a", normalize_documentation_text("STATUS_CONNECTION_INVALID\n\nThe QP is not\n"
                                               "connected.")}};
    QuoteCheck check = verify_quotes(catalog, pages);
    EXPECT_EQ(check.quotes, 3u);
    EXPECT_EQ(check.verified, 1u);
    ASSERT_EQ(check.problems.size(), 2u);
    EXPECT_NE(check.problems[0].find("not on ddi/a"), std::string::npos) << check.problems[0];
    EXPECT_NE(check.problems[1].find("ddi/missing is not among the pages given"),
              std::string::npos);
}

TEST(Quotes, AFunctionsPagesAreItsSeedAndItsDdiPage) {
    EXPECT_EQ(pages_of("NdkBuildLam"), (std::vector<std::string>{"seed/nc-ndkpi-ndk_fn_build_lam",
                                                                 "ddi/nc-ndkpi-ndk_fn_build_lam"}));
    EXPECT_EQ(pages_of("NdkBuildLAM"), pages_of("NdkBuildLam"));
    EXPECT_EQ(pages_of("NdkInitializeFastRegisterMr")[1],
              "ddi/nc-ndkpi-ndk_fn_initialize_fast_register_mr");
    EXPECT_EQ(pages_of("ddi/nc-ndkpi-ndk_fn_bind"),
              (std::vector<std::string>{"ddi/nc-ndkpi-ndk_fn_bind"}));
}

// The built-in catalog: a seed page's statements, each with the rules that quote it.
TEST(Quotes, TheBuiltinCatalogListsEachSeedPagesStatements) {
    for (const char* function : {"NdkInitializeFastRegisterMr", "NdkRegisterMr", "NdkCreateQp",
                                 "NdkFastRegister", "NdkBuildLam"}) {
        auto statements = statements_on(builtin_catalog(), pages_of(function));
        EXPECT_GE(statements.size(), 12u) << function;
        for (const auto& s : statements) {
            EXPECT_EQ(s.page.rfind("seed/", 0), 0u) << function << ": " << s.page;
            EXPECT_FALSE(s.rules.empty());
        }
    }
}

}  // namespace
}  // namespace ndkct::spec
