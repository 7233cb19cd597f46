// ndkct/model/page_rules.hpp: the rules a function's own page states for the generic completion,
// callback-context and IRQL contract (GEN-ASYNC-01/03, GEN-CB-03, GEN-IRQL-01). The seed pages
// restate that contract per function (RMR-ST-01, LAM-CTX-01, CQP-IRQL-01 ...); a violation of it
// by such a function names the page's rule first, the generic rule beside it.
#pragma once

#include <string_view>

#include "ndkct/model/verdict.hpp"

namespace ndkct::model {

// Which part of the contract an observation breaks.
enum class Contract {
    callback_after_success,  // a callback for a request finished inline with STATUS_SUCCESS
    callback_after_failure,  // a callback for a request that failed inline
    callback_not_once,       // after STATUS_PENDING: a second callback, none, or STATUS_PENDING
    callback_context,        // the callback's Context is not the request's RequestContext
    irql,                    // the call blocked where it may be called at DISPATCH_LEVEL
};

// The page rule of `function` (an NDK name, "NdkRegisterMr") for that part of the contract, or
// nullptr where its page states none beyond the generic rule.
const char* page_rule(std::string_view function, Contract part);

// `generic` with the page's rule (if any) put first.
RuleIds with_page_rule(std::string_view function, Contract part, RuleIds generic);

}  // namespace ndkct::model
