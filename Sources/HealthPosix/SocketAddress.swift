// An IPv4 or IPv6 socket address, and host-name resolution.
#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 address with a port, as the kernel stores it.
public struct SocketAddress: Sendable, CustomStringConvertible {
    private let storage: sockaddr_storage
    private let length: socklen_t

    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { Int32(storage.ss_family) == AF_INET6 }

    /// The address family (AF_INET or AF_INET6).
    var family: Int32 { Int32(storage.ss_family) }

    /// The port, in host byte order.
    public var port: Int {
        withSockAddr { pointer, _ in
            if isIPv6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin_port))
            }
        }
    }

    /// The numeric host, such as `127.0.0.1` or `::1`.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withSockAddr { pointer, _ in
            if isIPv6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                }
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `host:port`, with IPv6 hosts in brackets (`[::1]:7420`).
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Calls `body` with a `sockaddr` pointer and length for this address.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        try withUnsafePointer(to: storage) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, length) }
        }
    }

    /// Resolves `host` (an IPv4 or IPv6 literal, optionally in brackets, `localhost`, or a DNS name; empty or
    /// `*` means every local address) and `port` to stream-socket addresses, in the resolver's order.
    /// May block on DNS for non-literal names: never call it on an event-loop thread with such a name.
    public static func resolve(host: String, port: Int) throws(SystemError) -> [SocketAddress] {
        guard (0...65535).contains(port) else {
            throw SystemError(code: EINVAL, call: "resolve(\(host):\(port))", message: "port out of range")
        }
        var name = host
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        let passive = name.isEmpty || name == "*"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status =
            passive
            ? getaddrinfo(nil, String(port), &hints, &list)
            : getaddrinfo(name, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let message = String(cString: gai_strerror(status))
            throw SystemError(code: status, call: "getaddrinfo(\(host))", message: message)
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            let family = entry.pointee.ai_family
            if let raw = entry.pointee.ai_addr, family == AF_INET || family == AF_INET6 {
                var storage = sockaddr_storage()
                let length = min(Int(entry.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: length))
                }
                addresses.append(SocketAddress(storage: storage, length: socklen_t(length)))
            }
            cursor = entry.pointee.ai_next
        }
        if passive { addresses.sort { $0.isIPv6 && !$1.isIPv6 } }  // "::" also accepts IPv4 on Linux
        return addresses
    }
}
