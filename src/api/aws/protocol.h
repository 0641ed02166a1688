// The AWS SDKs' front doors (docs/aws-compatibility.md): SageMaker's awsJson1_1 (`POST /` with
// `X-Amz-Target: SageMaker.<Operation>`) and AWS Batch's REST-JSON (`POST /v1/<operation>`).
// Neither is a second implementation: each call becomes the gpufleet REST request that does the
// same (Api::dispatch_inner), and its answer is reshaped into what the SDK models — timestamps,
// names of fields, errors, pages.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "api/api.h"
#include "api/door.h"
#include "api/http.h"
#include "core/json.h"

namespace gf::aws {

// The input of a call: its JSON body, an object ({} when the body is empty).
Result<Json> read_input(const HttpRequest& outer);

using door::Answer;
using door::call;
using door::Inner;

// Whether an operation only reads: AWS names those Describe*, List* and Get* (any case).
bool is_read_operation(std::string_view operation);

// SageMaker's timestamps: every ISO 8601 string under a key that ends in "Time", anywhere in
// `body`, becomes epoch seconds (a number; fractions for sub-second times).
void iso_times_to_epoch(Json& body);
// A timestamp an SDK sent (epoch seconds, or an ISO 8601 string) as ISO 8601 for a query; the
// error names `field`.
Result<std::string> epoch_to_iso(const Json& value, const std::string& field);

// A string field of `input`: "" when absent; an error naming it when not a string, or when
// `required` and absent or empty.
Result<std::string> string_field(const Json& input, const std::string& field, bool required);
// A name that goes into a REST path as one segment: 1-256 characters, no `/`. The error names
// `field`.
Status check_segment(const std::string& value, const std::string& field);

// One page of `body[list_field]` as AWS pages lists: at most `max_results` (1..`limit`, `limit`
// when absent) from where `next_token` left off; `body[token_field]` is set to the next page's
// token unless this is the last. `key` names an item; a token names the position and the item
// before it, so a page stays right when items before it come or go. Errors name `max_field` /
// `token_field`.
Status page(Json& body, const std::string& list_field, const Json& input,
            const std::string& max_field, const std::string& token_field, int64_t limit,
            const std::function<std::string(const Json&)>& key);

// An AWS ARN-like name for a Batch object in gpufleet's ARN form (`arn:gpufleet:...`).
std::string batch_arn(const std::string& type, const std::string& name);

void register_sagemaker(Api& api);
void register_batch(Api& api);

}  // namespace gf::aws
