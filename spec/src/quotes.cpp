// The catalog's quotes against the documentation pages (quotes.hpp).
#include "ndkct/spec/quotes.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace ndkct::spec {

namespace {

std::string replace_all(std::string text, const std::regex& pattern, const char* with) {
    return std::regex_replace(text, pattern, with);
}

void decode_entities(std::string& text) {
    static const std::pair<const char*, const char*> named[] = {
        {"&lt;", "<"},   {"&gt;", ">"},   {"&quot;", "\""}, {"&#39;", "'"},
        {"&apos;", "'"}, {"&nbsp;", " "}, {"&amp;", "&"}};  // &amp; last: it may introduce the
                                                            // others
    for (const auto& [entity, character] : named)
        for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
            text.replace(at, std::char_traits<char>::length(entity), character);
}

std::string snake_case(std::string_view camel) {
    std::string out;
    for (size_t i = 0; i < camel.size(); ++i) {
        char c = camel[i];
        bool upper = std::isupper(static_cast<unsigned char>(c));
        bool after_lower = i > 0 && (std::islower(static_cast<unsigned char>(camel[i - 1])) ||
                                     std::isdigit(static_cast<unsigned char>(camel[i - 1])));
        if (upper && after_lower) out += '_';
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

}  // namespace

std::string normalize_documentation_text(std::string_view input) {
    std::string t(input);
    // Inline tags go without a trace (<i>NdkFastRegister</i> (...) reads "NdkFastRegister (...)"),
    // block tags leave a space; "<=DISPATCH_LEVEL" is not a tag.
    static const std::regex inline_tags(R"(</?(i|b|em|strong|code|a|span|sup|sub)(\s[^>]*)?>)",
                                        std::regex::icase);
    static const std::regex tags(R"(</?[A-Za-z!][^>]*>)");
    static const std::regex links(R"(\[([^\]]*)\]\([^)]*\))");
    static const std::regex escapes(R"(\\([\\`*_{}\[\]()#+.!|-]))");
    static const std::regex underscore_emphasis(
        R"((^|[^A-Za-z0-9_])_([A-Za-z][A-Za-z0-9]*)_(?![A-Za-z0-9_]))");
    static const std::regex heading_marks(R"((^|\n)[ \t]*#+[ \t]*)");
    static const std::regex spaces(R"([ \t\r\n]+)");
    t = replace_all(t, inline_tags, "");
    t = replace_all(t, tags, " ");
    t = replace_all(t, links, "$1");
    t = replace_all(t, escapes, "$1");
    t.erase(std::remove_if(t.begin(), t.end(), [](char c) { return c == '*' || c == '`'; }),
            t.end());
    t = replace_all(t, underscore_emphasis, "$1$2");
    decode_entities(t);
    t = replace_all(t, heading_marks, "$1");
    std::replace(t.begin(), t.end(), '|', ' ');
    for (size_t at = t.find("\xC2\xA0"); at != std::string::npos; at = t.find("\xC2\xA0", at))
        t.replace(at, 2, " ");  // U+00A0
    t = replace_all(t, spaces, " ");
    size_t first = t.find_first_not_of(' '), last = t.find_last_not_of(' ');
    return first == std::string::npos ? std::string() : t.substr(first, last - first + 1);
}

std::string page_name_of_file(std::string_view path, std::string_view text) {
    std::string p(path);
    size_t slash = p.find_last_of('/');
    std::string file = slash == std::string::npos ? p : p.substr(slash + 1);
    std::string folder;
    if (slash != std::string::npos) {
        size_t before = p.find_last_of('/', slash - 1);
        folder = p.substr(before == std::string::npos ? 0 : before + 1,
                          slash - (before == std::string::npos ? 0 : before + 1));
    }
    if ((folder == "ddi" || folder == "concepts" || folder == "sdk") && file.ends_with(".md"))
        return folder + "/" + file.substr(0, file.size() - 3);
    // A seed page: its title names the function's type, NDK_FN_<NAME>.
    static const std::regex title(R"(NDK_FN_([A-Z_]+))");
    std::string head(text.substr(0, std::min<size_t>(text.size(), 3000)));
    std::smatch m;
    if (!std::regex_search(head, m, title)) return "";
    std::string name = m[1];
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return "seed/nc-ndkpi-ndk_fn_" + name;
}

QuoteCheck verify_quotes(const Catalog& catalog, const std::map<std::string, std::string>& pages) {
    QuoteCheck check;
    for (const auto& rule : catalog.rules())
        for (const auto& quote : rule.quotes) {
            ++check.quotes;
            auto page = pages.find(quote.page);
            if (page == pages.end()) {
                check.problems.push_back(rule.id + ": " + quote.page +
                                         " is not among the pages given");
                continue;
            }
            if (page->second.find(normalize_documentation_text(quote.text)) == std::string::npos) {
                check.problems.push_back(rule.id + ": not on " + quote.page + ": \"" + quote.text +
                                         "\"");
                continue;
            }
            ++check.verified;
        }
    return check;
}

std::vector<std::string> pages_of(std::string_view name) {
    std::string n(name);
    if (n.find('/') != std::string::npos) return {n};
    if (n.starts_with("Ndk")) n = n.substr(3);
    std::string stem = "nc-ndkpi-ndk_fn_" + snake_case(n);
    return {"seed/" + stem, "ddi/" + stem};
}

std::vector<Statement> statements_on(const Catalog& catalog,
                                     const std::vector<std::string>& pages) {
    std::vector<Statement> out;
    for (const auto& rule : catalog.rules())
        for (const auto& quote : rule.quotes) {
            if (std::find(pages.begin(), pages.end(), quote.page) == pages.end()) continue;
            auto same = std::find_if(out.begin(), out.end(), [&](const Statement& s) {
                return s.page == quote.page && s.text == quote.text;
            });
            if (same == out.end()) {
                out.push_back({quote.page, quote.text, {rule.id}});
            } else if (std::find(same->rules.begin(), same->rules.end(), rule.id) ==
                       same->rules.end()) {
                same->rules.push_back(rule.id);
            }
        }
    return out;
}

}  // namespace ndkct::spec
