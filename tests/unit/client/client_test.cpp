// The API client's error map (client/client.h), shared by the CLI and the agent.
#include <gtest/gtest.h>

#include "client/client.h"

namespace gf {
namespace {

TEST(ClientErrors, TheServersTypeDecidesTheCode) {
  EXPECT_EQ(error_code_of("ConflictException", 400), ErrorCode::kConflict);
  EXPECT_EQ(error_code_of("ThrottlingException", 500), ErrorCode::kThrottling);
  EXPECT_EQ(error_code_of("ServiceUnavailableException", 500), ErrorCode::kUnavailable);
}

TEST(ClientErrors, WithoutATypeTheStatusDecides) {
  EXPECT_EQ(error_code_of("", 400), ErrorCode::kValidation);
  EXPECT_EQ(error_code_of("", 401), ErrorCode::kUnauthenticated);
  EXPECT_EQ(error_code_of("", 403), ErrorCode::kForbidden);
  EXPECT_EQ(error_code_of("", 404), ErrorCode::kNotFound);
  EXPECT_EQ(error_code_of("", 413), ErrorCode::kPayloadTooLarge);
  EXPECT_EQ(error_code_of("", 429), ErrorCode::kThrottling);
  EXPECT_EQ(error_code_of("", 503), ErrorCode::kUnavailable);
  EXPECT_EQ(error_code_of("", 502), ErrorCode::kInternal);
  EXPECT_EQ(error_code_of("NoSuchException", 418), ErrorCode::kValidation);
}

TEST(ClientErrors, AnUnreachableServerIsUnavailableAndSaysWhere) {
  Client c(ClientOptions{"http://127.0.0.1:1", "me", 1, "", ""});
  Result<Json> r = c.get("/healthz");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(r.status().message().find("cannot reach gpufleet at http://127.0.0.1:1"),
            std::string::npos);
}

}  // namespace
}  // namespace gf
