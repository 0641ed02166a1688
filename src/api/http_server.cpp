#include "api/http_server.h"

#define BOOST_BEAST_USE_STD_STRING_VIEW 1
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace gf {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

HttpResponse plain_error(const Status& st) {
  HttpResponse r = error_response(st);
  r.route = "unmatched";
  return r;
}

}  // namespace

Result<std::pair<std::string, int>> parse_listen_address(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return validation_error("--listen: expected HOST:PORT such as 127.0.0.1:8470, got \"" + text +
                            "\"");
  }
  int port = -1;
  const char* b = text.data() + colon + 1;
  const char* e = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(b, e, port);
  if (ec != std::errc() || ptr != e || port < 0 || port > 65535) {
    return validation_error("--listen: port must be 0-65535, got \"" + text.substr(colon + 1) +
                            "\"");
  }
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return std::make_pair(host, port);
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const asio::ip::address a = asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

struct HttpServer::Impl {
  HttpServer::Handler handle;
  HttpServerOptions options;
  // Before the io_context: sessions it still owns at destruction decrement these.
  std::atomic<size_t> connections{0};
  std::atomic<size_t> queued{0};
  std::atomic<size_t> streams{0};
  std::atomic<bool> stopping{false};
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  std::unique_ptr<ssl::context> tls;
  asio::thread_pool workers;
  std::vector<std::thread> io_threads;

  Impl(HttpServer::Handler h, HttpServerOptions o)
      : handle(std::move(h)),
        options(std::move(o)),
        workers(static_cast<size_t>(std::max(1, options.worker_threads))) {}

  void accept();
  template <class Stream>
  void start_session(Stream stream, std::string peer);
};

namespace {

// One connection. Reads a request under a deadline (headers, then body), hands it to a worker,
// writes the answer on the connection's strand, and repeats while the client keeps it alive.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(HttpServer::Impl& server, Stream stream, std::string peer)
      : server_(server),
        stream_(std::move(stream)),
        peer_(std::move(peer)),
        heartbeat_(stream_.get_executor()) {}
  ~Session() {
    server_.connections.fetch_sub(1);
    if (body_) server_.streams.fetch_sub(1);
  }

  void run() {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      beast::get_lowest_layer(stream_).expires_after(server_.options.header_timeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return;  // not TLS, or too slow: drop it
                                self->read_header(self->server_.options.header_timeout);
                              });
    } else {
      read_header(server_.options.header_timeout);
    }
  }

 private:
  using Parser = http::request_parser<http::string_body>;

  void read_header(std::chrono::milliseconds deadline) {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(server_.options.max_header_bytes));
    parser_->body_limit(server_.options.max_body_bytes);
    beast::get_lowest_layer(stream_).expires_after(deadline);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (ec) return fail_read(ec);
    const auto& req = parser_->get();
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      // curl waits a second for this before sending a body over 1 KiB.
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                     req.version());
      beast::get_lowest_layer(stream_).expires_after(server_.options.write_timeout);
      http::async_write(stream_, *cont,
                        [self = this->shared_from_this(), cont](beast::error_code wec, size_t) {
                          if (wec) return;
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    if (parser_->is_done()) return dispatch();
    beast::get_lowest_layer(stream_).expires_after(server_.options.body_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->fail_read(ec);
                       self->dispatch();
                     });
  }

  // A request that could not be read: answer what the client can act on, then close.
  void fail_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::operation_aborted || ec == beast::error::timeout ||
        ec == asio::error::connection_reset) {
      return close();
    }
    Status st;
    if (ec == http::error::body_limit) {
      st = Status(ErrorCode::kPayloadTooLarge,
                  fmt::format("request body is over the server's limit of {} bytes",
                              server_.options.max_body_bytes - 1));
    } else if (ec == http::error::header_limit) {
      st = validation_error(fmt::format("request headers are over the server's limit of {} bytes",
                                        server_.options.max_header_bytes));
    } else {
      st = validation_error("malformed HTTP request: " + ec.message());
    }
    HttpResponse r = plain_error(st);
    if (ec == http::error::header_limit) r.status = 431;
    keep_alive_ = false;
    drain_after_write_ = true;
    write(std::move(r), 11);
  }

  // After refusing a request whose body is still arriving, read and drop what the client sends
  // (bounded in bytes and time) before closing: closing with unread data makes the kernel reset
  // the connection, and the client would see a reset instead of the answer.
  void drain_then_close() {
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_send, ignored_);
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
    drain_buffer_.resize(64 << 10);
    drain_some();
  }
  void drain_some() {
    stream_.async_read_some(asio::buffer(drain_buffer_),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > (64u << 20)) return;
                              self->drain_some();
                            });
  }

  HttpRequest to_request() {
    auto& req = parser_->get();
    HttpRequest r;
    r.method = std::string(req.method_string());
    const std::string_view target = req.target();
    r.target = std::string(target);
    const size_t q = target.find('?');
    r.path = percent_decode(target.substr(0, q), false);
    if (q != std::string_view::npos) {
      std::string_view query = target.substr(q + 1);
      while (!query.empty()) {
        const size_t amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        const size_t eq = pair.find('=');
        if (!pair.empty()) {
          r.query[percent_decode(pair.substr(0, eq), true)] =
              eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1), true);
        }
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
      }
    }
    for (const auto& field : req) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      r.headers[name] = std::string(field.value());
    }
    r.body = std::move(req.body());
    r.peer = peer_;
    return r;
  }

  void dispatch() {
    keep_alive_ = parser_->get().keep_alive();
    const unsigned version = parser_->get().version();
    HttpRequest request = to_request();
    parser_.reset();
    // Liveness never waits for a worker: it answers even when every worker waits on the loop.
    if (request.method == "GET" && request.path == "/healthz") {
      return write(server_.handle(std::move(request)), version);
    }
    if (server_.queued.fetch_add(1) >= server_.options.max_queued_requests) {
      server_.queued.fetch_sub(1);
      return write(
          plain_error(unavailable_error("the server is at its limit of queued requests; retry")),
          version);
    }
    asio::post(server_.workers, [self = this->shared_from_this(), request = std::move(request),
                                 version]() mutable {
      HttpResponse r = self->server_.handle(std::move(request));
      self->server_.queued.fetch_sub(1);
      asio::post(self->stream_.get_executor(), [self, r = std::move(r), version]() mutable {
        self->write(std::move(r), version);
      });
    });
  }

  void write(HttpResponse r, unsigned version) {
    if (r.stream) {
      if (server_.streams.fetch_add(1) >= server_.options.max_streams) {
        server_.streams.fetch_sub(1);
        HttpResponse busy = plain_error(unavailable_error(fmt::format(
            "the server is at its limit of {} open streams; retry", server_.options.max_streams)));
        busy.headers["Retry-After"] = "5";
        return write(std::move(busy), version);
      }
      return start_stream(std::move(r), version);
    }
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), version);
    res->set(http::field::server, "gpufleet");
    res->set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive_ && !server_.stopping.load());
    res->prepare_payload();
    beast::get_lowest_layer(stream_).expires_after(server_.options.write_timeout);
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res](beast::error_code ec, size_t) {
                        if (ec) return;
                        if (self->drain_after_write_) return self->drain_then_close();
                        if (!res->keep_alive()) return self->close();
                        self->read_header(self->server_.options.idle_timeout);
                      });
  }

  void close() {
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  // A streamed answer (docs/api.md "Watching"): the head with chunked transfer, then each piece
  // the body gives as one chunk, one write at a time. With nothing to send it waits for the
  // body's wake or the heartbeat timer, whichever first, without a thread; a client that stopped
  // reading is dropped by the write timeout. The connection closes when the body ends.
  void start_stream(HttpResponse r, unsigned version) {
    body_ = std::move(r.stream);
    auto head = std::make_shared<http::response<http::empty_body>>(
        static_cast<http::status>(r.status), version);
    head->set(http::field::server, "gpufleet");
    head->set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) head->set(k, v);
    head->keep_alive(false);
    // HTTP/1.0 has no chunks: the body runs until the connection closes.
    chunked_ = version >= 11;
    head->chunked(chunked_);
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*head);
    beast::get_lowest_layer(stream_).expires_after(server_.options.write_timeout);
    http::async_write_header(
        stream_, *sr, [self = this->shared_from_this(), head, sr](beast::error_code ec, size_t) {
          if (ec) return;
          self->watch_peer();
          self->stream_more();
        });
  }

  // A client that goes away while its stream waits is noticed at once, not at the next heartbeat:
  // the socket turning readable with nothing to read is its close. The session then ends and its
  // descriptor is closed (docs/security.md "Connections"). A stream's client sends nothing, so
  // bytes that do come are dropped.
  void watch_peer() {
    auto& socket = beast::get_lowest_layer(stream_).socket();
    socket.async_wait(
        tcp::socket::wait_read, [self = this->shared_from_this()](beast::error_code ec) {
          if (ec) return;  // the session is closing
          const int fd = beast::get_lowest_layer(self->stream_).socket().native_handle();
          char buf[512];
          const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
          if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)))
            return self->watch_peer();
          self->peer_gone();
        });
  }

  void peer_gone() {
    waiting_ = false;
    heartbeat_.cancel();
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().close(ec);
  }

  void stream_more() {
    if (server_.stopping.load()) return close();
    bool end = false;
    std::string piece;
    try {
      piece = body_->next(end);
    } catch (const std::exception& e) {
      spdlog::error("http: a stream failed: {}", e.what());
      end = true;
    }
    if (!piece.empty()) return write_chunk(std::move(piece), end);
    if (end) return finish_stream();
    waiting_ = true;
    auto weak = this->weak_from_this();
    auto exec = stream_.get_executor();
    body_->when_ready([weak, exec] {
      asio::post(exec, [weak] {
        if (auto self = weak.lock()) self->on_stream_wake();
      });
    });
    arm_heartbeat();
  }

  void arm_heartbeat() {
    heartbeat_.expires_after(server_.options.stream_heartbeat);
    // The wait holds the session: while it waits, nothing else does.
    heartbeat_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec) return;  // cancelled: woken
      self->on_heartbeat();
    });
  }

  void on_stream_wake() {
    if (!waiting_) return;
    waiting_ = false;
    heartbeat_.cancel();
    if (!writing_) stream_more();
  }

  void on_heartbeat() {
    if (!waiting_ || writing_) return;
    if (body_->expired()) {
      waiting_ = false;
      return finish_stream();
    }
    write_chunk(body_->heartbeat(), false);
  }

  void write_chunk(std::string piece, bool end) {
    writing_ = true;
    auto data = std::make_shared<std::string>(std::move(piece));
    beast::get_lowest_layer(stream_).expires_after(server_.options.write_timeout);
    auto done = [self = this->shared_from_this(), data, end](beast::error_code ec, size_t) {
      self->writing_ = false;
      if (ec) return;
      beast::get_lowest_layer(self->stream_).expires_never();
      if (end) return self->finish_stream();
      if (self->waiting_) return self->arm_heartbeat();  // a heartbeat went out
      self->stream_more();
    };
    if (chunked_) {
      asio::async_write(stream_, http::make_chunk(asio::buffer(*data)), std::move(done));
    } else {
      asio::async_write(stream_, asio::buffer(*data), std::move(done));
    }
  }

  void finish_stream() {
    if (!chunked_) return close();
    beast::get_lowest_layer(stream_).expires_after(server_.options.write_timeout);
    asio::async_write(
        stream_, http::make_chunk_last(),
        [self = this->shared_from_this()](beast::error_code, size_t) { self->close(); });
  }

  HttpServer::Impl& server_;
  Stream stream_;
  std::string peer_;
  std::shared_ptr<ResponseStream> body_;  // a streamed answer's body, once one is written
  asio::steady_timer heartbeat_;
  bool waiting_ = false;  // for the body's wake or the heartbeat
  bool writing_ = false;  // a chunk is being written
  bool chunked_ = true;   // HTTP/1.1: pieces as chunks; HTTP/1.0: raw, ended by closing
  beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  bool keep_alive_ = true;
  bool drain_after_write_ = false;
  std::vector<char> drain_buffer_;
  size_t drained_ = 0;
  beast::error_code ignored_;
};

}  // namespace

template <class Stream>
void HttpServer::Impl::start_session(Stream stream, std::string peer) {
  std::make_shared<Session<Stream>>(*this, std::move(stream), std::move(peer))->run();
}

void HttpServer::Impl::accept() {
  acceptor.async_accept(asio::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || stopping.load()) return;
      // EMFILE and friends: retry after a pause (not in a busy loop); the kernel's queue holds
      // the waiting connections meanwhile.
      spdlog::warn("http: accept failed: {}; retrying in 100 ms", ec.message());
      auto timer = std::make_shared<asio::steady_timer>(ioc, std::chrono::milliseconds(100));
      timer->async_wait([this, timer](beast::error_code) {
        if (!stopping.load()) accept();
      });
      return;
    }
    if (connections.fetch_add(1) >= options.max_connections) {
      connections.fetch_sub(1);
      beast::error_code ignored;
      socket.close(ignored);
      return accept();
    }
    beast::error_code ignored;
    // Close-on-exec: no process this server starts holds a caller's connection
    // (docs/security.md "Descriptors").
    ::fcntl(socket.native_handle(), F_SETFD, FD_CLOEXEC);
    socket.set_option(tcp::no_delay(true), ignored);
    std::string peer;
    auto ep = socket.remote_endpoint(ignored);
    if (!ignored) peer = ep.address().to_string();
    if (tls) {
      start_session(
          beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *tls),
          std::move(peer));
    } else {
      start_session(beast::tcp_stream(std::move(socket)), std::move(peer));
    }
    accept();
  });
}

HttpServer::HttpServer(Api& api, HttpServerOptions options)
    : HttpServer([&api](HttpRequest r) { return api.handle(std::move(r)); },
                 api.options().max_body_bytes, std::move(options)) {}

HttpServer::HttpServer(Handler handler, size_t api_max_body_bytes, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(handler), std::move(options))) {
  impl_->options.max_body_bytes = std::max(impl_->options.max_body_bytes, api_max_body_bytes + 1);
}

HttpServer::~HttpServer() { stop(); }

bool HttpServer::tls() const { return impl_ && impl_->tls != nullptr; }

Status HttpServer::start(const std::string& host, int port) {
  Impl& s = *impl_;
  if (!s.options.tls_cert_file.empty() || !s.options.tls_key_file.empty()) {
    if (s.options.tls_cert_file.empty() || s.options.tls_key_file.empty()) {
      return validation_error("--tls-cert and --tls-key: give both, or neither");
    }
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    boost::system::error_code ec;
    ctx->use_certificate_chain_file(s.options.tls_cert_file, ec);
    if (ec)
      return validation_error("--tls-cert: cannot load " + s.options.tls_cert_file + ": " +
                              ec.message());
    ctx->use_private_key_file(s.options.tls_key_file, ssl::context::pem, ec);
    if (ec)
      return validation_error("--tls-key: cannot load " + s.options.tls_key_file + ": " +
                              ec.message());
    s.tls = std::move(ctx);
  }
  boost::system::error_code ec;
  const std::string resolved = host == "localhost" ? "127.0.0.1" : host;
  const asio::ip::address addr = asio::ip::make_address(resolved, ec);
  if (ec) return validation_error("--listen: \"" + host + "\" is not an IP address");
  const tcp::endpoint endpoint(addr, static_cast<unsigned short>(port));
  s.acceptor.open(endpoint.protocol(), ec);
  // Close-on-exec: an agent this server starts must not hold its port after it stops, or a
  // restarted server could not bind it (docs/security.md "Descriptors").
  if (!ec) ::fcntl(s.acceptor.native_handle(), F_SETFD, FD_CLOEXEC);
  if (!ec) s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor.bind(endpoint, ec);
  if (ec) {
    return unavailable_error(fmt::format(
        "cannot listen on {}:{}: {}{}", host, port, ec.message(),
        ec == asio::error::address_in_use ? " (is another gpufleet serve running there?)" : ""));
  }
  s.acceptor.listen(s.options.backlog, ec);
  if (ec)
    return unavailable_error(fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
  port_ = s.acceptor.local_endpoint().port();
  s.work.emplace(asio::make_work_guard(s.ioc));
  s.accept();
  for (int i = 0; i < std::max(1, s.options.io_threads); ++i) {
    s.io_threads.emplace_back([&s] { s.ioc.run(); });
  }
  return ok_status();
}

void HttpServer::stop() {
  if (!impl_) return;
  Impl& s = *impl_;
  if (s.stopping.exchange(true)) return;
  asio::post(s.ioc, [&s] {
    beast::error_code ignored;
    s.acceptor.close(ignored);
  });
  s.work.reset();
  // Handlers still running finish (their writes are answered or time out); nothing new starts.
  s.workers.join();
  s.ioc.stop();
  for (std::thread& t : s.io_threads) {
    if (t.joinable()) t.join();
  }
}

}  // namespace gf
