import Foundation
import HealthModel
import Synchronization
import TestSupport
import Testing

@testable import HealthImport

/// Reads of a ``CountingSource``, readable after the source is gone.
final class ReadCounter: Sendable {
    let reads = Atomic<Int>(0)
    var value: Int { reads.load(ordering: .relaxed) }
}

/// A source of `pieces` pieces of 100 KiB (byte i of the stream is `i % 251`), failing after `failAfter` pieces
/// when set, counting its reads. Used by one thread at a time.
final class CountingSource: ExportByteSource {
    static let pieceBytes = 100 << 10
    let pieces: Int
    let failAfter: Int?
    let counter: ReadCounter
    private var produced = 0
    private(set) var bytesRead: Int64 = 0
    var totalBytes: Int64 { Int64(pieces * CountingSource.pieceBytes) }

    init(pieces: Int, failAfter: Int? = nil, counter: ReadCounter = ReadCounter()) {
        self.pieces = pieces
        self.failAfter = failAfter
        self.counter = counter
    }

    func read(into output: inout [UInt8]) throws -> Bool {
        counter.reads.add(1, ordering: .relaxed)
        if let failAfter, produced == failAfter { throw HealthError(.malformedPayload, "piece \(produced) is damaged") }
        guard produced < pieces else { return false }
        let first = produced * CountingSource.pieceBytes
        output.append(contentsOf: (first..<first + CountingSource.pieceBytes).map { UInt8($0 % 251) })
        produced += 1
        bytesRead = Int64(produced * CountingSource.pieceBytes)
        return true
    }
}

@Suite("Read-ahead of the export's bytes")
struct ReadAheadTests {
    @Test("the bytes, the bytes consumed and the end arrive as the wrapped source gives them")
    func sameBytes() throws {
        let source = ReadAheadByteSource(CountingSource(pieces: 9))
        var all: [UInt8] = []
        var consumed: [Int64] = []
        while try source.read(into: &all) { consumed.append(source.bytesRead) }
        #expect(all.count == 9 * CountingSource.pieceBytes)
        #expect(all.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
        #expect(consumed == consumed.sorted() && consumed.last == Int64(all.count))
        #expect(source.bytesRead == source.totalBytes)
        #expect(try !source.read(into: &all))
    }

    @Test("an error of the wrapped source arrives after the bytes before it")
    func failure() throws {
        let source = ReadAheadByteSource(CountingSource(pieces: 9, failAfter: 5))
        var all: [UInt8] = []
        let error = #expect(throws: HealthError.self) {
            while try source.read(into: &all) {}
        }
        #expect(error?.message == "piece 5 is damaged")
        #expect(all.count == 5 * CountingSource.pieceBytes)
    }

    @Test("reading ahead stops at a few pieces, and freeing the reader ends the thread")
    func bounded() async throws {
        let counter = ReadCounter()
        var inner: CountingSource? = CountingSource(pieces: 1_000, counter: counter)
        weak let watched = inner
        var source: ReadAheadByteSource? = ReadAheadByteSource(inner!)
        inner = nil
        var first: [UInt8] = []
        _ = try source?.read(into: &first)
        try await waitUntil("the read-ahead thread to fill its places") { counter.value >= 9 }
        source = nil
        // The thread held the wrapped source: it is freed once the thread has ended.
        try await waitUntil("the read-ahead thread to end") { watched == nil }
        // One piece taken, `depth` waiting, one being gathered when the stop came; 3 reads of 100 KiB a piece.
        #expect(counter.value <= (ReadAheadByteSource.depth + 2) * 3)
        #expect(source == nil)
    }
}
