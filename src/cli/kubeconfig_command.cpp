// `gpufleet kubeconfig`: a kubeconfig for the server this CLI talks to (its URL, the CA of an https
// server, the bearer token), so `export KUBECONFIG=…` is all kubectl and the Kubernetes clients
// need (docs/kubernetes.md). And `kubectl-amc`, the `kubectl amc` plugin of the product document
// (a link to this binary under that name): `kubectl amc get pytorchjob -M` reads the kubeconfig's
// current context and answers as `gpufleet get pytorchjob -M` does.
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/app.h"
#include "cli/command_support.h"
#include "core/json.h"

namespace gf {
namespace {

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> unbase64(const std::string& text) {
  std::string out(3 * (text.size() / 4) + 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return validation_error("certificate-authority-data: not base64");
  size_t pad = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) ++pad;
  out.resize(static_cast<size_t>(n) - std::min<size_t>(pad, static_cast<size_t>(n)));
  return out;
}

Result<std::string> read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) return validation_error(what + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct KubeconfigArgs {
  std::string file;
  std::string name = "gpufleet";
  std::string ns;
};

Result<std::string> kubeconfig_text(const GlobalOptions& g, const KubeconfigArgs& a) {
  Json cluster{{"server", g.server}};
  if (!g.ca_cert.empty()) {
    GF_ASSIGN_OR_RETURN(std::string pem, read_file(g.ca_cert, "--ca-cert"));
    cluster["certificate-authority-data"] = base64(pem);
  }
  Json user = Json::object();
  if (!g.token.empty()) user["token"] = g.token;
  Json context{{"cluster", a.name}, {"user", a.name}};
  if (!a.ns.empty()) context["namespace"] = a.ns;
  Json doc{{"apiVersion", "v1"},
           {"kind", "Config"},
           {"clusters", Json::array({{{"name", a.name}, {"cluster", cluster}}})},
           {"users", Json::array({{{"name", a.name}, {"user", user}}})},
           {"contexts", Json::array({{{"name", a.name}, {"context", context}}})},
           {"current-context", a.name},
           {"preferences", Json::object()}};
  // JSON is YAML: kubectl and the clients read it as it is.
  return doc.dump(2) + "\n";
}

// The current context of the kubeconfig kubectl would use ($KUBECONFIG's first file, else
// ~/.kube/config): its server, CA (written to a private file when given as data) and token.
Result<GlobalOptions> from_kubeconfig(GlobalOptions g, std::string& ca_tmp) {
  std::string path;
  if (const char* k = std::getenv("KUBECONFIG"); k && *k) {
    path = k;
    path = path.substr(0, path.find(':'));
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    path = std::string(home) + "/.kube/config";
  }
  GF_ASSIGN_OR_RETURN(std::string text, read_file(path, "kubeconfig"));
  GF_ASSIGN_OR_RETURN(Json doc, parse_yaml(text));
  if (!doc.is_object()) return validation_error(path + ": not a kubeconfig");
  const std::string current = doc.value("current-context", "");
  auto named = [&](const char* list, const std::string& name, const char* inner) -> Json {
    for (const Json& e : doc.value(list, Json::array()))
      if (e.is_object() && e.value("name", "") == name) return e.value(inner, Json::object());
    return Json::object();
  };
  const Json ctx = named("contexts", current, "context");
  if (ctx.empty())
    return validation_error(path + ": no current context (current-context: " + current + ")");
  const Json cluster = named("clusters", ctx.value("cluster", ""), "cluster");
  const Json user = named("users", ctx.value("user", ""), "user");
  g.server = cluster.value("server", g.server);
  g.token = user.value("token", "");
  if (cluster.contains("certificate-authority"))
    g.ca_cert = cluster.value("certificate-authority", "");
  if (cluster.contains("certificate-authority-data")) {
    GF_ASSIGN_OR_RETURN(std::string pem, unbase64(cluster.value("certificate-authority-data", "")));
    char tmpl[] = "/tmp/kubectl-amc-ca-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) return validation_error("cannot write the kubeconfig's CA to /tmp");
    const bool written = write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size());
    close(fd);
    ca_tmp = tmpl;
    if (!written) return validation_error("cannot write the kubeconfig's CA to " + ca_tmp);
    g.ca_cert = ca_tmp;
  }
  return g;
}

}  // namespace

void register_kubeconfig_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<KubeconfigArgs>();
  auto* cmd = app.add_subcommand(
      "kubeconfig",
      "print a kubeconfig for this server (URL, CA, token): export KUBECONFIG=FILE and kubectl "
      "works against gpufleet (docs/kubernetes.md)");
  cmd->add_option("--file", args->file,
                  "write it to FILE (mode 0600: it holds the token; missing folders are made)");
  cmd->add_option("--name", args->name, "the name of its cluster, user and context")
      ->capture_default_str();
  cmd->add_option("-n,--namespace", args->ns, "the context's default namespace");
  cmd->callback([&ctx, args] {
    ctx.run = [&ctx, args]() -> int {
      auto text = kubeconfig_text(ctx.global, *args);
      if (!text.ok()) return print_error(text.status());
      if (args->file.empty()) {
        std::cout << *text;
        return 0;
      }
      std::error_code ec;  // a missing folder is made, as kubectl makes ~/.kube
      const std::filesystem::path parent = std::filesystem::path(args->file).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent, ec);
      std::ofstream out(args->file, std::ios::trunc);
      if (!out || !(out << *text) || (out.close(), !out)) {
        std::cerr << "error: --file: cannot write " << args->file << "\n";
        return 1;
      }
      ::chmod(args->file.c_str(), 0600);
      std::cerr << "wrote " << args->file << "; export KUBECONFIG=" << args->file << "\n";
      return 0;
    };
  });
}

int run_kubectl_amc(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words.front() == "-h" || words.front() == "--help") {
    std::cout
        << "kubectl amc: the member clusters' copies, as the ACK One Fleet plugin shows them\n"
           "  kubectl amc get pytorchjob -M\n"
           "  kubectl amc get pod -M\n"
           "  kubectl amc get pytorchjob NAME -m MEMBER -oyaml\n"
           "It reads the kubeconfig's current context (docs/kubernetes.md) and runs "
           "gpufleet's own get.\n";
    return words.empty() ? 2 : 0;
  }
  if (words.front() != "get") {
    std::cerr << "error: kubectl amc: only get is served (got \"" << words.front()
              << "\"); see kubectl amc --help\n";
    return 2;
  }
  std::string ca_tmp;
  auto g = from_kubeconfig(GlobalOptions{}, ca_tmp);
  if (!g.ok()) {
    std::cerr << "error: kubectl amc: " << g.status().message() << "\n";
    return 1;
  }
  ::setenv("GPUFLEET_SERVER", g->server.c_str(), 1);
  if (!g->token.empty()) ::setenv("GPUFLEET_TOKEN", g->token.c_str(), 1);
  if (!g->ca_cert.empty()) ::setenv("GPUFLEET_CA_CERT", g->ca_cert.c_str(), 1);
  // kubectl writes -oyaml as one word; gpufleet's -o takes its value either way.
  std::vector<std::string> args = {"gpufleet"};
  for (const std::string& w : words) args.push_back(w);
  std::vector<char*> ptrs;
  for (std::string& a : args) ptrs.push_back(a.data());
  const int rc = run_cli(static_cast<int>(ptrs.size()), ptrs.data());
  if (!ca_tmp.empty()) ::unlink(ca_tmp.c_str());
  return rc;
}

}  // namespace gf
