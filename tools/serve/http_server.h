// The HTTP/1.1 transport (Boost.Beast, synchronous, one thread per connection): accepting on a
// loopback or given address, reading each request within header / body size limits and a read
// timeout, keep-alive, and writing plain or streamed (chunked) responses. What a request means
// is the Router's business; this file knows nothing of OpenAI.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>

namespace rf::serve {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using Headers = std::vector<std::pair<std::string, std::string>>;

class TimedStream; // the connection's socket with a deadline on every read and write (http_server.cpp)

// One exchange on a connection, as the router sees it.
class Exchange {
public:
    Exchange(TimedStream &stream, bool keep_alive) : stream_(stream), keep_alive_(keep_alive) {}
    // A whole response. Returns false when the client is gone.
    bool respond(int status, const std::string &content_type, const std::string &body, const Headers &extra = {});
    // A streamed response: the header (chunked), then chunks, then the last chunk.
    bool start_stream(int status, const std::string &content_type);
    bool write_chunk(const std::string &data);
    bool end_stream();
    // True once the peer closed or reset its side (checked without blocking).
    bool client_gone() const;
    int status() const { return status_; } // 0 until a response was started
    bool failed() const { return failed_; } // a write failed: the connection is unusable

private:
    TimedStream &stream_;
    bool keep_alive_;
    int status_ = 0;
    bool failed_ = false;
};

struct HttpLimits {
    uint32_t max_header_bytes = 16 * 1024;
    uint64_t max_body_bytes = 1024 * 1024;
    std::chrono::seconds read_timeout{30}; // a request's bytes, and an idle keep-alive connection
    int max_connections = 256;             // more are answered 503 and closed
};

class HttpServer {
public:
    using Router = std::function<void(const HttpRequest &, Exchange &)>;
    // Binds and listens; throws rf::Error when the address cannot be used.
    HttpServer(const std::string &host, uint16_t port, const HttpLimits &limits, Router router);
    uint16_t port() const { return port_; }
    // Accepts until stop_accepting(); returns then.
    void accept_loop();
    // Closes the listening socket (from any thread), wakes idle keep-alive connections so they close.
    void stop_accepting();
    // Waits until every connection thread has ended, at most `timeout`. False on timeout.
    bool wait_connections(std::chrono::milliseconds timeout);

private:
    void serve_connection(boost::asio::ip::tcp::socket socket);
    void set_idle(int fd, bool idle);

    boost::asio::io_context io_;
    boost::asio::ip::tcp::acceptor acceptor_;
    uint16_t port_ = 0;
    HttpLimits limits_;
    Router router_;
    std::atomic<bool> stopping_{false};
    std::mutex mutex_;
    std::condition_variable connections_done_;
    int connections_ = 0;
    std::set<int> idle_fds_; // connections waiting for their next request
};

} // namespace rf::serve
