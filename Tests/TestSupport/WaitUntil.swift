import Foundation

/// A condition a test waited for did not hold within its timeout.
public struct WaitTimeout: Error, CustomStringConvertible {
    /// What the test waited for, in the test's words.
    public var condition: String
    /// How long it waited.
    public var timeout: Duration
    /// Where the wait was written.
    public var file: String
    public var line: Int

    public var description: String {
        "timed out after \(timeout) waiting for \(condition) (\((file as NSString).lastPathComponent):\(line))"
    }
}

/// How often ``waitUntil(timeout:_:file:line:_:)`` looks at the state it waits on.
public let waitPollInterval: Duration = .milliseconds(5)

/// Waits until `condition` holds, looking every few milliseconds; throws ``WaitTimeout`` naming `what` if it
/// still does not hold after `timeout`.
///
/// This is the one place in the tests that sleeps to synchronise: every test that waits for a server, a log
/// line, a subscription or a thread waits on *state* through this helper, never for a fixed time. The sleep
/// between looks is a short polling interval (``waitPollInterval``), not a guess of how long something takes,
/// so a loaded machine only makes the wait longer, and the timeout is generous (30 s by default) because
/// reaching it means the test fails. Sleeping suspends the task, so the two-thread test pool keeps running
/// other tests meanwhile.
///
/// - Parameters:
///   - timeout: how long to wait before failing.
///   - what: what is waited for, for the failure message ("hkd to log \"listening on\"").
///   - condition: the state to wait for; evaluated once more after the deadline.
public func waitUntil(
    timeout: Duration = .seconds(30), _ what: @autoclosure () -> String, file: String = #filePath, line: Int = #line,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        // Polling interval of the one documented polling helper; not a wait for some behaviour.
        try await Task.sleep(for: waitPollInterval)
    }
    if try await condition() { return }
    throw WaitTimeout(condition: what(), timeout: timeout, file: file, line: line)
}
