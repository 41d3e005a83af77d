import HKQKit
import HealthClient
import HealthModel
import Testing

/// hkq's statuses (`ExitStatus`; Swift Testing has a type of that name too).
typealias Status = HKQKit.ExitStatus

@Suite struct ExitStatusTests {
    @Test(
        "each error code class has its status",
        arguments: [
            (ErrorCode.noData, Status.noData), (.invalidUnit, .badInput), (.unknownQuantityType, .badInput),
            (.invalidSample, .badInput), (.malformedPayload, .badInput), (.unauthenticated, .refused),
            (.forbidden, .refused), (.tokenRevoked, .refused), (.serverUnverified, .refused),
            (.fingerprintMismatch, .refused), (.connectionLost, .unavailable), (.timedOut, .unavailable),
            (.busy, .unavailable), (.shuttingDown, .unavailable), (.tlsRequired, .failure), (.internalError, .failure),
        ])
    func codes(code: ErrorCode, status: Status) {
        #expect(Status(for: code) == status)
        #expect(Status(for: HealthError(code, "x")) == status)
        #expect(Status(for: HealthClientError(.server, HealthError(code, "x"))) == status)
    }

    @Test("usage errors, command exits and unreadable sample files keep their own statuses")
    func errorKinds() {
        #expect(Status(for: UsageError("bad")) == .usage)
        #expect(Status(for: CommandExit(.partialImport)) == .partialImport)
        #expect(Status(for: ImportError(file: "a.csv", line: 2, message: "malformed CSV header")) == .badInput)
        struct Other: Error {}
        #expect(Status(for: Other()) == .failure)
    }

    @Test("the statuses are distinct, 0 and 1 as every tool has them, 64 and up from sysexits.h")
    func numbers() {
        let values = Status.allCases.map(\.rawValue)
        #expect(values == [0, 1, 2, 3, 64, 65, 69, 77])
        #expect(Set(Status.allCases.map(\.meaning)).count == values.count)
    }
}
