import Foundation
import HealthModel
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Linux network namespaces on one bridge, for network-partition tests on one host: namespace `i` has the
/// address `10.213.S.(i+1)/24` (S a subnet no interface uses yet) on a veth pair whose other end is on the bridge, which holds `10.213.S.254` in
/// this process's namespace, so the test reaches every namespace while ``cut(_:from:)`` drops the traffic
/// between two of them (blackhole routes on both sides: packets vanish, as in a real partition, and
/// connections time out). Needs root and `ip` (iproute2); ``unavailableReason`` says why not without root. Everything made is deleted by ``remove()``, called on release too.
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
        let tag = "\(getpid())"
        // A subnet no interface here uses yet (another test process's network, or one a killed run left).
        let free = try (0..<250).map { (Int(getpid()) + $0) % 250 }.first { candidate in
            try Self.run(["-o", "-4", "addr", "show", "to", "10.213.\(candidate).0/24"]).isEmpty
        }
        guard let free else { throw HealthError(.internalError, "no free subnet in 10.213.0.0/16 for namespaces") }
        let subnet = "10.213.\(free)"
        names = (0..<count).map { "hk\(tag)n\($0)" }
        addresses = (0..<count).map { "\(subnet).\($0 + 1)" }
        bridge = "hkbr\(tag)"
        bridgeAddress = "\(subnet).254"
        do {
            try Self.run(["link", "add", bridge, "type", "bridge"])
            try Self.run(["addr", "add", "\(bridgeAddress)/24", "dev", bridge])
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

    deinit { remove() }

    /// Drops all traffic between namespace `index` and each of `others` (both directions), leaving their traffic
    /// with this process's namespace alone.
    public func cut(_ index: Int, from others: [Int]) throws {
        for other in others {
            try Self.run(["-n", names[index], "route", "add", "blackhole", "\(addresses[other])/32"])
            try Self.run(["-n", names[other], "route", "add", "blackhole", "\(addresses[index])/32"])
        }
    }

    /// Undoes ``cut(_:from:)``.
    public func heal(_ index: Int, from others: [Int]) throws {
        for other in others {
            try Self.run(["-n", names[index], "route", "del", "blackhole", "\(addresses[other])/32"])
            try Self.run(["-n", names[other], "route", "del", "blackhole", "\(addresses[index])/32"])
        }
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
