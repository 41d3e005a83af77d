import Foundation
import HealthModel
import HealthWire
import Synchronization
import TestSupport
import Testing

@testable import HealthServer

/// A table of identities shared by several registries (cluster mode's nodes), through an in-memory storage with
/// the settings bucket's rule: a write names the version it read, and loses to any write since.
@Suite("IdentityRegistry over a shared storage")
struct SharedIdentityTests {
    /// Versioned bytes in memory, counting the writes refused as conflicts.
    final class MemoryStorage: IdentityStorage {
        let stored = Mutex<(bytes: [UInt8], version: UInt64)?>(nil)
        let conflicts = Atomic(0)
        /// Makes the next load find nothing, as when two nodes read before either wrote.
        let hideOnce = Atomic(false)
        var name: String { "memory/identities" }
        var isShared: Bool { true }

        func load() throws -> (bytes: [UInt8], version: UInt64)? {
            hideOnce.exchange(false, ordering: .relaxed) ? nil : stored.withLock { $0 }
        }

        func store(_ bytes: [UInt8], replacing version: UInt64?) throws -> UInt64? {
            let written: UInt64? = stored.withLock { current in
                guard current?.version == version else { return nil }
                let next = (current?.version ?? 0) + 1
                current = (bytes, next)
                return next
            }
            if written == nil { conflicts.add(1, ordering: .relaxed) }
            return written
        }
    }

    static func open(_ storage: MemoryStorage, _ directory: TestDirectory) throws -> IdentityRegistry {
        try IdentityRegistry.open(storage, directory: directory.path, resetAdmin: false, existingData: nil) { _ in }
    }

    @Test("two nodes starting together agree on one table and one admin; only the first writes admin.token")
    func firstWriterWins() throws {
        let storage = MemoryStorage()
        let (first, second) = (try TestDirectory(prefix: "ids-a"), try TestDirectory(prefix: "ids-b"))
        let a = try Self.open(storage, first)
        // b read before a wrote: its own table with its own admin loses to a's.
        storage.hideOnce.store(true, ordering: .relaxed)
        let b = try Self.open(storage, second)
        #expect(storage.conflicts.load(ordering: .relaxed) == 1)
        let listed = { (registry: IdentityRegistry) in
            try registry.perform(.list).identities.map(\.spec.name)
        }
        #expect(try listed(a) == ["admin"])
        #expect(try listed(b) == ["admin"])
        #expect(FileManager.default.fileExists(atPath: first.path + "/admin.token"))
        #expect(!FileManager.default.fileExists(atPath: second.path + "/admin.token"))
    }

    @Test("changes made on two nodes from stale tables both survive: the loser runs its change again on the winner's")
    func concurrentChangesBothSurvive() throws {
        let storage = MemoryStorage()
        let a = try Self.open(storage, try TestDirectory(prefix: "ids-a"))
        let b = try Self.open(storage, try TestDirectory(prefix: "ids-b"))
        _ = try a.perform(.create(IdentitySpec(name: "from-a")))
        // b has not reloaded: its table is one write behind, so its first store is refused and retried.
        let created = try b.perform(.create(IdentitySpec(name: "from-b")))
        #expect(storage.conflicts.load(ordering: .relaxed) == 1)
        #expect(try b.perform(.list).identities.map(\.spec.name) == ["admin", "from-a", "from-b"])
        try a.refresh()
        #expect(try a.perform(.list).identities.map(\.spec.name) == ["admin", "from-a", "from-b"])
        // The ids differ: the retry drew its id from the winner's table.
        let token = try #require(AccessToken(created.token))
        #expect(try a.identity(provenFor: token.identityID).name == "from-b")
        // A name taken meanwhile on the other node is refused after the reload, not duplicated.
        _ = try a.perform(.create(IdentitySpec(name: "twice")))
        #expect(throws: HealthError.self) { try b.perform(.create(IdentitySpec(name: "twice"))) }
        #expect(try b.perform(.list).identities.filter { $0.spec.name == "twice" }.count == 1)
    }

    @Test("a token id this node does not know makes it reload at once; a revocation applies after refresh()")
    func unknownIdsReloadAndRevocationsApply() throws {
        let storage = MemoryStorage()
        let a = try Self.open(storage, try TestDirectory(prefix: "ids-a"))
        let b = try Self.open(storage, try TestDirectory(prefix: "ids-b"))
        let created = try a.perform(.create(IdentitySpec(name: "agent")))
        let id = try #require(AccessToken(created.token)).identityID
        let identity = try b.identity(provenFor: id)
        #expect(identity.name == "agent")
        _ = try a.perform(.revoke(name: "agent"))
        #expect(throws: Never.self) { _ = try b.access(for: identity) }
        try b.refresh()
        #expect {
            _ = try b.access(for: identity)
        } throws: { ($0 as? HealthError)?.code == .tokenRevoked }
    }
}
