import Foundation

/// How a program a test ran ended, and what it printed.
public struct ChildOutcome: Sendable {
    /// The exit status (or the signal's number when it was killed).
    public var status: Int32
    /// Its standard output.
    public var output: String
    /// Its standard error.
    public var errors: String

    /// Standard output, then standard error: for tools whose messages may go to either.
    public var printed: String { output + errors }
}

/// Runs `executable` with `arguments` and waits for it without blocking a thread: Swift Testing runs tests on a
/// pool of two threads here, and a test blocked in a wait or a pipe read there stalls every other test.
///
/// Standard output and error go to temporary files, so neither can fill a pipe while the other is read;
/// `input` is standard input (none when `nil`). `environment` replaces the environment when given;
/// `currentDirectory` defaults to a fresh temporary directory, so that a program looking in its working
/// directory (hkq for `./hkd-data`) does not find the package's. `started`, if given, is called once the program
/// runs, with the path of the file its standard error goes to (there until this returns), for a test that waits
/// on what the program says while it runs.
public func runChild(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil,
    currentDirectory: String? = nil, started: (@Sendable (_ errorsFile: String) -> Void)? = nil
) async throws -> ChildOutcome {
    let scratch = try TestDirectory(prefix: "hk-child")
    let outPath = scratch.appending("out")
    let errPath = scratch.appending("err")
    guard FileManager.default.createFile(atPath: outPath, contents: nil),
        FileManager.default.createFile(atPath: errPath, contents: nil)
    else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: scratch.path]) }
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    defer {
        try? out.close()
        try? err.close()
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory ?? scratch.path)
    if let input {
        let inPath = scratch.appending("in")
        try Data(input.utf8).write(to: URL(fileURLWithPath: inPath))
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
    } else {
        process.standardInput = FileHandle.nullDevice
    }
    process.standardOutput = out
    process.standardError = err
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do {
            try process.run()
            started?(errPath)
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    let printed = { (path: String) in
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }
    return ChildOutcome(status: status, output: printed(outPath), errors: printed(errPath))
}

/// ``runChild(_:_:environment:input:currentDirectory:started:)`` for a program found on `PATH`: `arguments[0]` names it.
public func runTool(_ arguments: [String], input: String? = nil) async throws -> ChildOutcome {
    try await runChild("/usr/bin/env", arguments, input: input)
}
