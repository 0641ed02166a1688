// Signature V4 against AWS's published test suite (aws-sig-v4-test-suite: get-vanilla,
// post-vanilla, get-vanilla-query-order-key-case; credentials AKIDEXAMPLE, us-east-1, service
// "service", 2015-08-30T12:36:00Z) and against requests the AWS SDK for JavaScript v3 signed
// (@smithy/signature-v4) with the same credentials: a SageMaker JSON call and a Batch call with a
// header whose spaces SigV4 collapses.
#include "api/sigv4.h"

#include <gtest/gtest.h>

namespace gf {
namespace {

constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

Time suite_time() { return *parse_iso8601("2015-08-30T12:36:00Z"); }

HttpRequest suite_request(std::string method, std::string signed_headers, std::string signature) {
  HttpRequest r;
  r.method = std::move(method);
  r.path = "/";
  r.headers["host"] = "example.amazonaws.com";
  r.headers["x-amz-date"] = "20150830T123600Z";
  r.headers["authorization"] =
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
      "SignedHeaders=" +
      signed_headers + ", Signature=" + signature;
  return r;
}

Status check(const HttpRequest& r, std::string_view secret, Time now) {
  auto auth = sigv4::parse(r.header_or("authorization", ""));
  if (!auth.ok()) return auth.status();
  return sigv4::verify(r, *auth, secret, now);
}

TEST(SigV4, GetVanillaFromAwsTestSuiteVerifies) {
  HttpRequest r = suite_request("GET", "host;x-amz-date",
                                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(sigv4::canonical_request(r, {"host", "x-amz-date"}),
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_TRUE(check(r, kSecret, suite_time()).ok());
}

TEST(SigV4, PostVanillaFromAwsTestSuiteVerifies) {
  HttpRequest r = suite_request("POST", "host;x-amz-date",
                                "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
  EXPECT_TRUE(check(r, kSecret, suite_time()).ok());
}

TEST(SigV4, QueryIsSortedByKeyAsTheSuiteSays) {
  HttpRequest r = suite_request("GET", "host;x-amz-date",
                                "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
  r.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  EXPECT_TRUE(check(r, kSecret, suite_time()).ok());
}

TEST(SigV4, SdkSignedSageMakerJsonCallVerifies) {
  HttpRequest r = suite_request("POST", "content-type;host;x-amz-date;x-amz-target",
                                "6e25cebea8e57ed850edad0b47ad367ea1b76e934d376d365db88f1327cefd3a");
  r.headers["content-type"] = "application/x-amz-json-1.1";
  r.headers["x-amz-target"] = "SageMaker.ListClusters";
  r.body = R"({"MaxResults":5})";
  EXPECT_TRUE(check(r, kSecret, suite_time()).ok());
  r.body = R"({"MaxResults":6})";  // the body is signed too
  EXPECT_EQ(check(r, kSecret, suite_time()).code(), ErrorCode::kInvalidSignature);
}

TEST(SigV4, HeaderValuesAreTrimmedAndTheirSpacesCollapsed) {
  HttpRequest r = suite_request("POST", "content-type;host;my-header1;x-amz-date",
                                "57145fe54be90a4ab20e0b1384a5f13dad62966b15d68e7d0417523eeea914af");
  r.path = "/v1/listservicejobs";
  r.headers["content-type"] = "application/json";
  r.headers["my-header1"] = "  a   b   c  ";
  r.body = R"({"jobQueue":"q"})";
  EXPECT_TRUE(check(r, kSecret, suite_time()).ok());
}

TEST(SigV4, TheTargetAsItArrivedIsSignedWithEscapesRepeatedNamesAndAPlus) {
  // Signed by @smithy/signature-v4 with path "/v1/clusters/a%3Ab" and query {k: "a+b c",
  // j: ["2", "1"]}, sent as the target below.
  HttpRequest r = suite_request("GET", "host;x-amz-date",
                                "ef443085e1716ee6109afd6ba3c30c8681b8b9911fce53ddf79c953d7c615c20");
  r.target = "/v1/clusters/a%3Ab?k=a%2Bb%20c&j=2&j=1";
  r.path = "/v1/clusters/a:b";
  r.query = {{"k", "a+b c"}, {"j", "1"}};
  EXPECT_TRUE(check(r, kSecret, suite_time()).ok()) << check(r, kSecret, suite_time()).to_string();
}

TEST(SigV4, TheTargetAndIdempotencyKeyMustBeSignedWhenSent) {
  HttpRequest r = suite_request("POST", "host;x-amz-date",
                                "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
  r.headers["x-amz-target"] = "SageMaker.DeleteCluster";  // swapped into a captured request
  const Status st = check(r, kSecret, suite_time());
  EXPECT_EQ(st.code(), ErrorCode::kIncompleteSignature);
  EXPECT_NE(st.message().find("x-amz-target"), std::string::npos) << st.message();
  r.headers.erase("x-amz-target");
  r.headers["idempotency-key"] = "k1";
  EXPECT_EQ(check(r, kSecret, suite_time()).code(), ErrorCode::kIncompleteSignature);
}

TEST(SigV4, ASignedHeaderTheRequestLacksIsRefused) {
  HttpRequest r = suite_request("GET", "host;my-header;x-amz-date",
                                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  const Status st = check(r, kSecret, suite_time());
  EXPECT_EQ(st.code(), ErrorCode::kIncompleteSignature);
  EXPECT_NE(st.message().find("my-header"), std::string::npos) << st.message();
}

TEST(SigV4, WrongSecretIsInvalidSignatureException) {
  HttpRequest r = suite_request("GET", "host;x-amz-date",
                                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  const Status st = check(r, "not-the-secret-0000000000", suite_time());
  EXPECT_EQ(st.code(), ErrorCode::kInvalidSignature);
  EXPECT_EQ(http_status(st.code()), 403);
  EXPECT_EQ(error_type_name(st.code()), "InvalidSignatureException");
}

TEST(SigV4, DateMustBeWithinFifteenMinutesOfTheServerClock) {
  HttpRequest r = suite_request("GET", "host;x-amz-date",
                                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_TRUE(check(r, kSecret, suite_time() + minutes(15)).ok());
  EXPECT_TRUE(check(r, kSecret, suite_time() - minutes(15)).ok());
  const Status late = check(r, kSecret, suite_time() + minutes(16));
  EXPECT_EQ(late.code(), ErrorCode::kInvalidSignature);
  EXPECT_NE(late.message().find("Signature expired"), std::string::npos) << late.message();
  EXPECT_EQ(check(r, kSecret, suite_time() - minutes(16)).code(), ErrorCode::kInvalidSignature);
}

TEST(SigV4, HostAndDateMustBeSigned) {
  HttpRequest r = suite_request("GET", "x-amz-date",
                                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  const Status st = check(r, kSecret, suite_time());
  EXPECT_EQ(st.code(), ErrorCode::kIncompleteSignature);
  EXPECT_NE(st.message().find("host"), std::string::npos);
}

TEST(SigV4, ScopeDateMustBeTheDayOfTheRequest) {
  HttpRequest r = suite_request("GET", "host;x-amz-date",
                                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  r.headers["x-amz-date"] = "20150831T000100Z";
  EXPECT_EQ(check(r, kSecret, suite_time()).code(), ErrorCode::kInvalidSignature);
}

TEST(SigV4, MalformedAuthorizationIsIncompleteSignatureNamingThePart) {
  struct Case {
    const char* header;
    const char* names;
  };
  for (const Case& c : {
           Case{"AWS4-HMAC-SHA256 SignedHeaders=host, Signature=00", "Credential"},
           Case{"AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, Signature=00",
                "SignedHeaders"},
           Case{"AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=host",
                "Signature"},
           Case{"AWS4-HMAC-SHA256 Credential=A/2015/r/s/aws4_request, SignedHeaders=host, "
                "Signature=00",
                "YYYYMMDD"},
           Case{"AWS4-HMAC-SHA256 Credential=A/20150830/r/aws4_request, SignedHeaders=host, "
                "Signature=00",
                "Credential"},
           Case{"AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=Host, "
                "Signature=00",
                "lower-case"},
           Case{"AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, "
                "SignedHeaders=x-amz-date;host, Signature=00",
                "sorted"},
           Case{"AWS4-HMAC-SHA256 Credential=A/20150830/r/s/aws4_request, SignedHeaders=host, "
                "Signature=XYZ",
                "64 lower-case hex"},
           Case{"AWS4-HMAC-SHA256 Credential=A\xff<>/20150830/r/s/aws4_request, "
                "SignedHeaders=host, Signature=00",
                "letters and digits"},
       }) {
    auto parsed = sigv4::parse(c.header);
    ASSERT_FALSE(parsed.ok()) << c.header;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kIncompleteSignature);
    EXPECT_NE(parsed.status().message().find(c.names), std::string::npos)
        << c.header << " → " << parsed.status().message();
  }
  EXPECT_FALSE(sigv4::is_sigv4("Bearer gf_x"));
  EXPECT_FALSE(sigv4::is_sigv4("AWS4-HMAC-SHA256"));
}

TEST(SigV4, AmzDateShapeIsChecked) {
  EXPECT_TRUE(sigv4::parse_amz_date("20150830T123600Z").ok());
  for (const char* bad : {"2015-08-30T12:36:00Z", "20150830T123600", "20151330T123600Z", ""}) {
    EXPECT_EQ(sigv4::parse_amz_date(bad).status().code(), ErrorCode::kIncompleteSignature) << bad;
  }
}

TEST(SigV4, UriEncodingKeepsUnreservedAndOptionallySlashes) {
  EXPECT_EQ(sigv4::uri_encode("a-b_c.d~e/f g", true), "a-b_c.d~e/f%20g");
  EXPECT_EQ(sigv4::uri_encode("a/b=c", false), "a%2Fb%3Dc");
}

}  // namespace
}  // namespace gf
