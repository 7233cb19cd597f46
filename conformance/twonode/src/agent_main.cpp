// ndkct-agent: node B of a two-node run. Listens on a TCP port (the side channel, as perftest's
// servers do) and serves each connection from node A's split provider in a process of its own,
// so that a session that dies (the fault tests end one on purpose) leaves the agent listening.
//
//   ndkct-agent --listen PORT [--bind ADDRESS] [--provider SPEC] [--device NAME]
//               [--address IPV4] [--address6 IPV6] [--interface NAME] [--once] [--verbose]
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent.hpp"
#include "ndkct/conformance/provider_spec.hpp"
#include "split.hpp"
#if NDKCT_AGENT_HAS_VERBS
#include "ndkct/adapters/verbs_provider.hpp"
#endif

namespace {

const NDKCT_PROVIDER_ENTRY_POINTS* open_provider(const std::string& text, std::string& error) {
    try {
        auto specs = ndkct::conformance::parse_provider_specs(text);
        return &ndkct::conformance::entry_points_for(specs.at(0));
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

int usage(const char* why) {
    std::fprintf(stderr,
                 "ndkct-agent: %s\n"
                 "usage: ndkct-agent --listen PORT [--bind ADDRESS] [--provider SPEC] "
                 "[--device NAME]\n"
                 "                   [--address IPV4] [--address6 IPV6] [--interface NAME] "
                 "[--once] [--verbose]\n",
                 why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    // The agent opens its provider itself; it is never split in turn.
    ::unsetenv("NDKCT_PEER");
#if NDKCT_AGENT_HAS_VERBS
    ndkct::conformance::register_builtin_provider("verbs", &ndkct::adapters::verbs::entry_points());
#endif
    ndkct::twonode::AgentOptions options;
    std::string port, bind_address;
    bool once = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&](const char* name) -> std::string {
            if (i + 1 >= argc) std::exit(usage((std::string(name) + " needs a value").c_str()));
            return argv[++i];
        };
        if (arg == "--listen")
            port = value("--listen");
        else if (arg == "--bind")
            bind_address = value("--bind");
        else if (arg == "--provider")
            options.provider = value("--provider");
        else if (arg == "--device")
            options.device = value("--device");
        else if (arg == "--address")
            options.address4 = value("--address");
        else if (arg == "--address6")
            options.address6 = value("--address6");
        else if (arg == "--interface")
            options.interface = value("--interface");
        else if (arg == "--once")
            once = true;
        else if (arg == "--verbose" || arg == "-v")
            options.verbose = true;
        else if (arg == "--help" || arg == "-h")
            return usage("runs node B of a two-node run") ? 0 : 0;
        else
            return usage(("unknown argument '" + arg + "'").c_str());
    }
    if (port.empty()) return usage("--listen PORT is required");
    char* end = nullptr;
    long p = std::strtol(port.c_str(), &end, 10);
    if (*end || p < 1 || p > 65535) return usage("--listen wants a port number 1-65535");
    if (options.address4.empty())
        if (const char* v = std::getenv("NDKCT_RDMA_ADDR")) options.address4 = v;
    if (options.address6.empty())
        if (const char* v = std::getenv("NDKCT_RDMA_ADDR6")) options.address6 = v;
    if (options.address4.empty()) {
        std::string v6;
        ndkct::twonode::device_addresses(options.address4, v6);
        if (options.address6.empty()) options.address6 = v6;
    }

    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    hints.ai_family = bind_address.empty() ? AF_INET6 : AF_UNSPEC;
    addrinfo* list = nullptr;
    int rc = ::getaddrinfo(bind_address.empty() ? nullptr : bind_address.c_str(), port.c_str(),
                           &hints, &list);
    if (rc != 0) {
        std::fprintf(stderr, "ndkct-agent: cannot use %s: %s\n", bind_address.c_str(),
                     gai_strerror(rc));
        return 1;
    }
    int fd = ::socket(list->ai_family, list->ai_socktype | SOCK_CLOEXEC, list->ai_protocol);
    int one = 1, zero = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (list->ai_family == AF_INET6)
        ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (fd < 0 || ::bind(fd, list->ai_addr, list->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
        std::fprintf(stderr, "ndkct-agent: cannot listen on port %s: %s\n", port.c_str(),
                     std::strerror(errno));
        return 1;
    }
    ::freeaddrinfo(list);
    std::fprintf(stderr, "ndkct-agent: listening on port %s (provider %s, link address %s%s%s)\n",
                 port.c_str(),
                 options.provider.empty() ? "as node A names it" : options.provider.c_str(),
                 options.address4.empty() ? "from the side channel" : options.address4.c_str(),
                 options.address6.empty() ? "" : ", ", options.address6.c_str());
    std::fflush(stderr);

    if (!once) ::signal(SIGCHLD, SIG_IGN);  // sessions are reaped by the kernel
    for (;;) {
        sockaddr_storage from{};
        socklen_t len = sizeof from;
        int conn = ::accept4(fd, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC);
        if (conn < 0) {
            if (errno == EINTR) continue;
            std::fprintf(stderr, "ndkct-agent: accept failed: %s\n", std::strerror(errno));
            return 1;
        }
        if (options.verbose) std::fprintf(stderr, "ndkct-agent: a session starts\n");
        if (once) {
            ::close(fd);
            return ndkct::twonode::serve_connection(conn, options, open_provider);
        }
        pid_t child = ::fork();
        if (child == 0) {
            ::close(fd);
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the sessions end with the agent
            ::signal(SIGCHLD, SIG_DFL);
            std::_Exit(ndkct::twonode::serve_connection(conn, options, open_provider));
        }
        if (child < 0) std::fprintf(stderr, "ndkct-agent: fork failed: %s\n", std::strerror(errno));
        ::close(conn);
    }
}
