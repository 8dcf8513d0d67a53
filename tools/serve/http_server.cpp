#include "http_server.h"

#include <poll.h>
#include <sys/socket.h>

#include <thread>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "api_error.h"
#include "rocmforge/error.h"

namespace rf::serve {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

// Asio's blocking reads and writes ignore SO_RCVTIMEO (they poll again on EAGAIN), so the
// deadline is enforced here: each read_some / write_some first polls until the deadline, and a
// slow or silent client gets timed_out instead of holding its thread forever.
class TimedStream {
public:
    TimedStream(asio::ip::tcp::socket &socket, std::chrono::milliseconds timeout) : socket_(socket), timeout_(timeout) {}
    using executor_type = asio::ip::tcp::socket::executor_type;
    executor_type get_executor() { return socket_.get_executor(); }
    int fd() { return socket_.native_handle(); }
    void restart_clock() { deadline_ = std::chrono::steady_clock::now() + timeout_; }

    template <class Buffers> size_t read_some(const Buffers &b, error_code &ec) {
        if (!wait(POLLIN, ec)) return 0;
        return socket_.read_some(b, ec);
    }
    template <class Buffers> size_t write_some(const Buffers &b, error_code &ec) {
        if (!wait(POLLOUT, ec)) return 0;
        return socket_.write_some(b, ec);
    }
    template <class Buffers> size_t read_some(const Buffers &b) { return throw_on(read_some(b, last_), last_); }
    template <class Buffers> size_t write_some(const Buffers &b) { return throw_on(write_some(b, last_), last_); }

private:
    static size_t throw_on(size_t n, const error_code &ec) {
        if (ec) throw boost::system::system_error(ec);
        return n;
    }
    bool wait(short events, error_code &ec) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
        pollfd p{socket_.native_handle(), events, 0};
        const int r = left.count() > 0 ? ::poll(&p, 1, (int)left.count()) : 0;
        if (r > 0) return true;
        ec = r == 0 ? asio::error::timed_out : error_code(errno, boost::system::system_category());
        return false;
    }
    asio::ip::tcp::socket &socket_;
    std::chrono::milliseconds timeout_;
    std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::now();
    error_code last_;
};

namespace {

void common_headers(http::fields &f, const std::string &content_type, bool keep_alive) {
    f.set(http::field::server, "rocmforge");
    f.set(http::field::content_type, content_type);
    f.set(http::field::connection, keep_alive ? "keep-alive" : "close");
}

} // namespace

bool Exchange::respond(int status, const std::string &content_type, const std::string &body, const Headers &extra) {
    status_ = status;
    http::response<http::string_body> res{(http::status)status, 11};
    common_headers(res.base(), content_type, keep_alive_);
    for (const auto &[k, v] : extra) res.set(k, v);
    res.body() = body;
    res.prepare_payload();
    error_code ec;
    stream_.restart_clock();
    http::write(stream_, res, ec);
    failed_ = failed_ || ec;
    return !ec;
}

bool Exchange::start_stream(int status, const std::string &content_type) {
    status_ = status;
    http::response<http::empty_body> res{(http::status)status, 11};
    common_headers(res.base(), content_type, keep_alive_);
    res.set(http::field::cache_control, "no-cache");
    res.chunked(true);
    http::response_serializer<http::empty_body> sr{res};
    error_code ec;
    stream_.restart_clock();
    http::write_header(stream_, sr, ec);
    failed_ = failed_ || ec;
    return !ec;
}

bool Exchange::write_chunk(const std::string &data) {
    error_code ec;
    stream_.restart_clock();
    asio::write(stream_, http::make_chunk(asio::buffer(data)), ec);
    failed_ = failed_ || ec;
    return !ec;
}

bool Exchange::end_stream() {
    error_code ec;
    stream_.restart_clock();
    asio::write(stream_, http::make_chunk_last(), ec);
    failed_ = failed_ || ec;
    return !ec;
}

bool Exchange::client_gone() const {
    pollfd p{stream_.fd(), POLLRDHUP, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

HttpServer::HttpServer(const std::string &host, uint16_t port, const HttpLimits &limits, Router router)
    : acceptor_(io_), limits_(limits), router_(std::move(router)) {
    error_code ec;
    const asio::ip::address addr = asio::ip::make_address(host, ec);
    if (ec) throw UsageError("--host '" + host + "' is not an IP address (use 127.0.0.1, ::1 or 0.0.0.0)");
    const asio::ip::tcp::endpoint ep{addr, port};
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw Error("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
}

void HttpServer::accept_loop() {
    while (!stopping_) {
        // Polled with a short timeout so that stop_accepting() needs no cross-thread close.
        pollfd p{acceptor_.native_handle(), POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        error_code ec;
        asio::ip::tcp::socket socket{io_};
        acceptor_.accept(socket, ec);
        if (ec || stopping_) continue;
        std::unique_lock lock(mutex_);
        if (connections_ >= limits_.max_connections) {
            lock.unlock();
            TimedStream stream{socket, std::chrono::milliseconds(1000)};
            Exchange ex{stream, false};
            ex.respond(503, "application/json", error_body({503, "too many connections", "server_error", ""}),
                       {{"Retry-After", "1"}});
            continue;
        }
        ++connections_;
        std::thread([this, s = std::move(socket)]() mutable { serve_connection(std::move(s)); }).detach();
    }
    error_code ec;
    acceptor_.close(ec);
}

void HttpServer::stop_accepting() {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (int fd : idle_fds_) ::shutdown(fd, SHUT_RDWR); // their pending read ends at once
}

bool HttpServer::wait_connections(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return connections_done_.wait_for(lock, timeout, [&] { return connections_ == 0; });
}

void HttpServer::set_idle(int fd, bool idle) {
    std::lock_guard lock(mutex_);
    if (!idle) idle_fds_.erase(fd);
    else if (stopping_) ::shutdown(fd, SHUT_RDWR);
    else idle_fds_.insert(fd);
}

void HttpServer::serve_connection(asio::ip::tcp::socket socket) {
    TimedStream stream{socket, std::chrono::duration_cast<std::chrono::milliseconds>(limits_.read_timeout)};
    boost::beast::flat_buffer buffer;
    for (;;) {
        http::request_parser<http::string_body> parser;
        parser.header_limit(limits_.max_header_bytes);
        parser.body_limit(limits_.max_body_bytes);
        error_code ec;
        set_idle(stream.fd(), true);
        stream.restart_clock();
        http::read(stream, buffer, parser, ec);
        set_idle(stream.fd(), false);
        if (ec) {
            // Tell the client what was wrong with its request; a closed or silent one gets nothing.
            ApiError err;
            if (ec == http::error::body_limit)
                err = {413, "request body over " + std::to_string(limits_.max_body_bytes) + " bytes", "invalid_request_error", ""};
            else if (ec == http::error::header_limit)
                err = {431, "request headers over " + std::to_string(limits_.max_header_bytes) + " bytes",
                       "invalid_request_error", ""};
            else if (ec.category() == error_code(http::error::end_of_stream).category() && ec != http::error::end_of_stream &&
                     ec != http::error::partial_message)
                err = {400, "malformed HTTP request: " + ec.message(), "invalid_request_error", ""};
            if (!err.message.empty()) {
                Exchange ex{stream, false};
                ex.respond(err.status, "application/json", error_body(err));
            }
            break;
        }
        HttpRequest req = parser.release();
        Exchange ex{stream, req.keep_alive() && !stopping_};
        router_(req, ex);
        if (!req.keep_alive() || stopping_ || ex.status() == 0 || ex.failed()) break;
    }
    error_code ec;
    socket.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    socket.close(ec);
    std::lock_guard lock(mutex_);
    if (--connections_ == 0) connections_done_.notify_all();
}

} // namespace rf::serve
