// ndkct/spec/quotes.hpp: the catalog's quotes against the documentation pages.
//
// Every must and consumer-duty rule carries the sentences of the docs that state it (Rule::quotes),
// verbatim. The pages themselves are not part of ndkct; a developer who has them checks every
// quote with `ndkct-spec verify-quotes DIR...` (never in CI), and a reviewer reads a page's
// statements beside their rules with `ndkct-spec rules --page NdkBuildLam`.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ndkct/spec/catalog.hpp"

namespace ndkct::spec {

// A page or a quote as plain text, so that a quote matches its page however the page is marked
// up: HTML tags and markdown emphasis, escapes and link targets are dropped, entities decoded and
// every run of white space made one space. Applied to both sides before they are compared.
std::string normalize_documentation_text(std::string_view text);

// The catalog's name of a documentation file, from its path and text: "ddi/<stem>" for a page
// under a ddi/, concepts/ or sdk/ folder; "seed/nc-ndkpi-ndk_fn_<name>" for a seed page (any other
// file whose title names an NDK_FN_<NAME>); "" when it is neither.
std::string page_name_of_file(std::string_view path, std::string_view text);

// Checks every quote of the catalog against the pages (name -> normalized text). One line per
// problem: a quote whose page is missing from `pages`, or whose text is not on its page.
struct QuoteCheck {
    size_t quotes = 0, verified = 0;
    std::vector<std::string> problems;
};
QuoteCheck verify_quotes(const Catalog& catalog, const std::map<std::string, std::string>& pages);

// The pages a function's statements are on: its seed page (when it is one of the five) and its
// DDI page, named as in pages.txt. "NdkBuildLam" (or "NdkBuildLAM") gives
// {"seed/nc-ndkpi-ndk_fn_build_lam", "ddi/nc-ndkpi-ndk_fn_build_lam"}; a page name is itself.
std::vector<std::string> pages_of(std::string_view function_or_page);

// A page's statements with the rules that quote them, in catalog order, for auditing a page.
struct Statement {
    std::string page, text;
    std::vector<std::string> rules;
};
std::vector<Statement> statements_on(const Catalog& catalog, const std::vector<std::string>& pages);

}  // namespace ndkct::spec
