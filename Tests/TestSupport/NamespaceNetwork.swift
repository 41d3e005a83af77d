import Foundation
import HealthModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Linux network namespaces on one bridge, for network-partition tests on one host: namespace `i` has the
/// address `10.213.S.(i+1)/24` (S a subnet no interface uses yet) on a veth pair whose other end is on the
/// bridge, which holds `10.213.S.254` in this process's namespace, so the test reaches every namespace while
/// ``cut(_:from:port:)`` drops traffic between two of them (blackhole rules on both sides: packets vanish, as in
/// a real partition, and connections time out), all of it or only one TCP port's. Needs root and `ip`
/// (iproute2); ``unavailableReason`` says why not without root. Names carry the process id and a count of the
/// networks this process made, so networks made at once (tests running in parallel, or in two processes) never
/// share a name or a subnet. Everything made is deleted by ``remove()``, called on release too.
public final class NamespaceNetwork: Sendable {
    /// `ip`, which runs commands in a namespace (`ip netns exec NAME …`, the command keeping its process id).
    public static let ip = URL(fileURLWithPath: "/usr/sbin/ip")

    /// The namespaces' names, and each one's address.
    public let names: [String]
    public let addresses: [String]
    /// The bridge, and this process's address on it.
    public let bridge: String
    public let bridgeAddress: String
    private let removed = Mutex<Bool>(false)

    /// Why namespaces cannot be used here: only without root (a developer's own account). As root, where CI runs,
    /// a missing `ip` (`.ci/run` installs iproute2) or a refused `ip netns add` fails the test instead of
    /// skipping it.
    public static let unavailableReason: String? =
        geteuid() == 0 ? nil : "network namespaces need root (ip netns add); running as uid \(geteuid())"

    /// `count` namespaces on a new bridge, each with its address, loopback up.
    public init(count: Int) throws {
        // Interface names have at most 15 bytes: "hkv", the process id and the count in base 36, "a" or "b", index.
        let tag = String(getpid(), radix: 36) + "_" + String(Self.made.add(1, ordering: .relaxed).oldValue, radix: 36)
        names = (0..<count).map { "hk\(tag)n\($0)" }
        bridge = "hkbr\(tag)"
        // Chosen and taken under one lock: two networks of this process never pick the same subnet.
        let subnet = try Self.choosing.withLock { _ in
            // A subnet no interface here uses yet (another test process's network, or one a killed run left).
            let free = try (0..<250).map { (Int(getpid()) + $0) % 250 }.first { candidate in
                try Self.run(["-o", "-4", "addr", "show", "to", "10.213.\(candidate).0/24"]).isEmpty
            }
            guard let free else { throw HealthError(.internalError, "no free subnet in 10.213.0.0/16 for namespaces") }
            try Self.run(["link", "add", "hkbr\(tag)", "type", "bridge"])
            do {
                try Self.run(["addr", "add", "10.213.\(free).254/24", "dev", "hkbr\(tag)"])
            } catch {
                _ = try? Self.run(["link", "del", "hkbr\(tag)"])
                throw error
            }
            return "10.213.\(free)"
        }
        addresses = (0..<count).map { "\(subnet).\($0 + 1)" }
        bridgeAddress = "\(subnet).254"
        do {
            try Self.run(["link", "set", bridge, "up"])
            for (index, name) in names.enumerated() {
                let (outside, inside) = ("hkv\(tag)a\(index)", "hkv\(tag)b\(index)")
                try Self.run(["netns", "add", name])
                try Self.run(["link", "add", outside, "type", "veth", "peer", "name", inside])
                try Self.run(["link", "set", inside, "netns", name])
                try Self.run(["link", "set", outside, "master", bridge, "up"])
                try Self.run(["-n", name, "addr", "add", "\(addresses[index])/24", "dev", inside])
                try Self.run(["-n", name, "link", "set", inside, "up"])
                try Self.run(["-n", name, "link", "set", "lo", "up"])
            }
        } catch {
            remove()
            throw error
        }
    }

    /// How many networks this process made: part of every name.
    private static let made = Atomic<Int>(0)
    /// Held while a network picks its subnet and takes it.
    private static let choosing = Mutex<Void>(())

    deinit { remove() }

    /// Drops the traffic between namespace `index` and each of `others` (both directions): all of it, or with
    /// `port` only TCP segments from or to that port (the routes between NATS servers, say, while their clients'
    /// connections stay up). Traffic with this process's namespace is left alone.
    public func cut(_ index: Int, from others: [Int], port: Int? = nil) throws {
        for (namespace, address) in pairs(index, others) {
            for selector in Self.selectors(address, port: port) {
                try Self.run(["-n", namespace, "rule", "add"] + selector + ["blackhole"])
            }
        }
    }

    /// Undoes ``cut(_:from:port:)`` (given the same arguments).
    public func heal(_ index: Int, from others: [Int], port: Int? = nil) throws {
        for (namespace, address) in pairs(index, others) {
            for selector in Self.selectors(address, port: port) {
                try Self.run(["-n", namespace, "rule", "del"] + selector + ["blackhole"])
            }
        }
    }

    /// Each namespace of the cut with the address it must no longer send to.
    private func pairs(_ index: Int, _ others: [Int]) -> [(String, String)] {
        others.flatMap { other in [(names[index], addresses[other]), (names[other], addresses[index])] }
    }

    /// The `ip rule` selectors of the packets a namespace drops: those to `address`, or with `port` those to
    /// `address` from or to that TCP port.
    private static func selectors(_ address: String, port: Int?) -> [[String]] {
        guard let port else { return [["to", address]] }
        return ["dport", "sport"].map { ["to", address, "ipproto", "tcp", $0, "\(port)"] }
    }

    /// Deletes the namespaces and the bridge (the veth pairs go with them). Stop the processes in them first.
    /// Idempotent.
    public func remove() {
        guard
            !removed.withLock({ done in
                defer { done = true }; return done
            })
        else { return }
        for name in names { _ = try? Self.run(["netns", "del", name]) }
        _ = try? Self.run(["link", "del", bridge])
    }

    /// Runs `ip` with `arguments` and returns what it printed; throws with it unless it exits 0.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = ip
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HealthError(
                .internalError,
                "ip \(arguments.joined(separator: " ")): exit \(process.terminationStatus): "
                    + String(decoding: output, as: UTF8.self))
        }
        return String(decoding: output, as: UTF8.self)
    }
}
